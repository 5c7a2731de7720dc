//! `/p/N/exp/ID`: one experiment — hypothesis, verdict, diff stat, precheck checks,
//! eval dimensions, and the reviews and verdict files of the run that made it.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Component, Path};

use factory_runtime::events::{self, kinds};
use factory_runtime::exec::checkpoint::run_dir;
use factory_runtime::experiment::{diff_stat, load_precheck, load_precheck_eval};
use factory_runtime::project::layout::FactoryPaths;
use factory_runtime::store::{self, ExperimentStore};

use super::super::layout::{degraded, delta, esc, page as shell, score, verdict_tag};
use super::super::markdown;
use super::{eval_table, name_of, pass_fail};

/// Review files larger than this are cut: a page must stay light.
const MAX_FILE: u64 = 256 * 1024;

pub fn page(index: usize, path: &Path, id: u32) -> String {
    let name = name_of(path);
    let crumbs = [
        (name.as_str(), format!("/p/{index}/")),
        (
            &format!("exp {id:03}") as &str,
            format!("/p/{index}/exp/{id}"),
        ),
    ];
    let crumbs: Vec<(&str, &str)> = crumbs.iter().map(|(a, b)| (*a, b.as_str())).collect();
    let title = format!("Experiment {id:03}");
    let info = ExperimentStore::with_registry(path, None).info(id);
    let history = store::load_history(path);
    let record = history
        .as_ref()
        .ok()
        .and_then(|h| h.records.iter().find(|r| r.id == id).cloned());
    let mut body = String::new();
    let hypothesis = match (&info, &record) {
        (Ok(Some(i)), _) => Some(i.hypothesis.clone()),
        (_, Some(r)) => Some(r.hypothesis.clone()),
        _ => None,
    };
    let Some(hypothesis) = hypothesis else {
        let why = match info {
            Err(e) => e.to_string(),
            Ok(_) => format!("experiment {id} is not on record in this project"),
        };
        return shell(&title, &crumbs, &degraded("experiment", &why));
    };
    body.push_str("<h2>Hypothesis</h2>");
    body.push_str(&markdown::render(&hypothesis));
    body.push_str("<h2>Verdict</h2>");
    match &record {
        Some(r) => body.push_str(&format!(
            "<p>{} score {} → {} ({})</p>{}",
            verdict_tag(r.verdict.as_str()),
            score(r.score_before),
            score(r.score_after),
            delta(r.delta),
            if r.notes.is_empty() {
                String::new()
            } else {
                format!("<p>{}</p>", esc(&r.notes))
            }
        )),
        None => body.push_str("<p><span class=\"tag\">open</span> no verdict yet</p>"),
    }
    body.push_str("<h2>Diff stat</h2>");
    body.push_str(&match diff_stat(path, id) {
        Ok(d) => {
            let mut s = format!(
                "<p class=\"muted\">{}..{}</p><table><tbody>",
                esc(&d.base[..d.base.len().min(10)]),
                esc(&d.head[..d.head.len().min(10)])
            );
            for f in &d.files {
                s.push_str(&format!(
                    "<tr><td><code>{}</code></td><td class=\"pass\">+{}</td><td class=\"fail\">-{}</td></tr>",
                    esc(&f.path),
                    f.insertions,
                    f.deletions
                ));
            }
            if d.files.is_empty() {
                s.push_str("<tr><td>no changes</td></tr>");
            }
            s + "</tbody></table>"
        }
        Err(why) => degraded("diff", &why),
    });
    body.push_str("<h2>Precheck</h2>");
    body.push_str(&match load_precheck(path, id) {
        Ok(Some(p)) => {
            let mut s = format!(
                "<p>{} at <code>{}</code></p>",
                if p.passed {
                    "<span class=\"pass\">passed</span>"
                } else {
                    "<span class=\"fail\">failed</span>"
                },
                esc(&p.commit[..p.commit.len().min(10)])
            );
            if let Some(e) = &p.error {
                s.push_str(&degraded("precheck could not measure", e));
            }
            s.push_str("<table><tbody>");
            for c in &p.checks {
                s.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td class=\"details\">{}</td></tr>",
                    pass_fail(c.passed),
                    esc(&c.name),
                    esc(&c.details.join("\n"))
                ));
            }
            s + "</tbody></table>"
        }
        Ok(None) => "<p class=\"muted\">No precheck recorded.</p>".into(),
        Err(e) => degraded("precheck.json", &e.to_string()),
    });
    body.push_str("<h2>Eval dimensions</h2>");
    body.push_str(&match load_precheck_eval(path, id) {
        Ok(Some(report)) => eval_table(&report),
        Ok(None) => {
            "<p class=\"muted\">No eval was scored by a precheck of this experiment.</p>".into()
        }
        Err(why) => degraded("eval", &why),
    });
    body.push_str("<h2>Reviews and verdicts</h2>");
    let run_id = match &info {
        Ok(Some(i)) => i
            .run_key
            .as_deref()
            .and_then(store::run_of_key)
            .map(str::to_string),
        _ => None,
    };
    body.push_str(&reviews(path, id, run_id.as_deref()));
    shell(&title, &crumbs, &body)
}

/// The reports and verdicts the experiment's nodes left, from its own evidence (each
/// path's last version, checked against the SHA-256 the log bound); an experiment from
/// before evidence was kept shows the files as they are on disk now, and says so.
fn reviews(project: &Path, id: u32, run_id: Option<&str>) -> String {
    use factory_runtime::experiment::evidence::{self, Copy};
    let kept = match evidence::latest(project, id) {
        Ok(kept) => kept,
        Err(e) => return degraded("evidence.jsonl", &e.to_string()),
    };
    if kept.is_empty() {
        return on_disk_reviews(project, id, run_id);
    }
    let mut s = String::new();
    for f in &kept {
        let from = format!("{} · visit {}", f.node, f.visit);
        let body = match evidence::read(project, id, f) {
            Copy::Intact(bytes) => markdown::render(&String::from_utf8_lossy(
                &bytes[..bytes.len().min(MAX_FILE as usize)],
            )),
            Copy::NotCopied => format!(
                "<p class=\"muted\">{} bytes: too large to keep a copy (SHA-256 {}).</p>",
                f.bytes,
                esc(&f.sha256)
            ),
            Copy::Missing => degraded("evidence", "the kept copy is gone"),
            Copy::Changed => degraded(
                "evidence",
                "the kept copy was edited after the node finished: it no longer matches the SHA-256 its event recorded",
            ),
        };
        s.push_str(&format!(
            "<details open class=\"review\"><summary><code>{}</code> <span class=\"muted\">{}</span></summary>{}</details>",
            esc(&f.path),
            esc(&from),
            body
        ));
    }
    s
}

/// The review files the experiment's agents wrote and the verdict files of its run's
/// gates, as they are on disk now: for experiments from before evidence was kept.
fn on_disk_reviews(project: &Path, id: u32, run_id: Option<&str>) -> String {
    let paths = FactoryPaths::new(project);
    let mut files: BTreeSet<String> = BTreeSet::new();
    for kind in [kinds::AGENT_COMPLETED, kinds::AGENT_FAILED] {
        let Ok(found) = events::read_kind(&paths, kind) else {
            continue;
        };
        for e in found {
            let Some(ended) = e.data.agent_ended() else {
                continue;
            };
            let ours = ended.exp_id.as_ref().and_then(|x| x.id()) == Some(id as u64)
                || (run_id.is_some() && ended.run_id.as_deref() == run_id);
            if let (true, Some(review)) = (ours, &ended.review) {
                files.insert(review.clone());
            }
        }
    }
    if let Some(run) = run_id
        && let Ok(text) = std::fs::read_to_string(run_dir(&paths, run).join("workflow.fwir"))
        && let Ok((ir, _)) = factory_compiler::ir::parse_text(&text)
    {
        for node in &ir.nodes {
            if let Some(v) = factory_compiler::ir::conventions::verdict_file(node) {
                files.insert(v);
            }
        }
    }
    let mut s = String::new();
    for rel in &files {
        let Some(text) = read_capped(project, rel) else {
            continue;
        };
        s.push_str(&format!(
            "<details open class=\"review\"><summary><code>{}</code></summary>{}</details>",
            esc(rel),
            markdown::render(&text)
        ));
    }
    if s.is_empty() {
        s.push_str("<p class=\"muted\">No review or verdict files for this experiment.</p>");
    } else {
        s.insert_str(
            0,
            "<p class=\"muted\">This experiment kept no evidence of its own (it predates it): these are the files as they are on disk now, which later runs may have overwritten.</p>",
        );
    }
    s
}

/// The file at `rel` under the project's `.factory/`, at most [`MAX_FILE`] bytes;
/// `None` when missing or outside `.factory/`.
fn read_capped(project: &Path, rel: &str) -> Option<String> {
    let rel = Path::new(rel);
    let inside =
        rel.starts_with(".factory") && rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return None;
    }
    let file = std::fs::File::open(project.join(rel)).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
