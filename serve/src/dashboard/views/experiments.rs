//! `/p/N/`: one project — its runs, the score chart, the results table and the last
//! eval.

use std::path::Path;

use factory_runtime::eval::read_last_eval;
use factory_runtime::exec::checkpoint::list_runs;
use factory_runtime::store;

use super::super::chart::score_chart;
use super::super::layout::{degraded, delta, esc, page as shell, score, verdict_tag};
use super::{clip, eval_table, name_of};

/// How many of the latest runs are listed.
const RUNS_SHOWN: usize = 15;

pub fn page(index: usize, path: &Path) -> String {
    let name = name_of(path);
    let mut body = format!(
        "<p class=\"muted\">{}</p>",
        esc(&path.display().to_string())
    );
    body.push_str("<h2>Runs</h2>");
    body.push_str(&runs(index, path));
    match store::load_history(path) {
        Ok(history) => {
            body.push_str("<h2>Composite score over experiments</h2>");
            match score_chart(&history.records) {
                Some(svg) => body.push_str(&format!(
                    "{svg}<p class=\"legend\"><span class=\"keep\">●</span> keep \
                     <span class=\"revert\">✕</span> revert <span class=\"other\">■</span> other</p>"
                )),
                None => body.push_str("<p class=\"muted\">No experiment has a score yet.</p>"),
            }
            body.push_str("<h2>Experiments</h2>");
            for w in &history.warnings {
                body.push_str(&degraded("results.tsv", w));
            }
            body.push_str(
                "<table><thead><tr><th>exp</th><th>verdict</th><th>before</th><th>after</th>\
                 <th>delta</th><th>hypothesis</th><th>notes</th><th>finalized</th></tr></thead><tbody>",
            );
            for p in history.pending.iter().rev() {
                body.push_str(&format!(
                    "<tr><td><a href=\"/p/{index}/exp/{id}\">{id:03}</a></td><td><span class=\"tag\">open</span></td>\
                     <td></td><td></td><td></td><td>{h}</td><td></td><td></td></tr>",
                    id = p.id,
                    h = esc(&clip(&p.hypothesis, 120)),
                ));
            }
            for r in history.records.iter().rev() {
                body.push_str(&format!(
                    "<tr><td><a href=\"/p/{index}/exp/{id}\">{id:03}</a></td><td>{v}</td><td>{b}</td>\
                     <td>{a}</td><td>{d}</td><td>{h}</td><td>{n}</td><td class=\"muted\">{t}</td></tr>",
                    id = r.id,
                    v = verdict_tag(r.verdict.as_str()),
                    b = score(r.score_before),
                    a = score(r.score_after),
                    d = delta(r.delta),
                    h = esc(&clip(&r.hypothesis, 120)),
                    n = esc(&clip(&r.notes, 120)),
                    t = esc(&r.timestamp),
                ));
            }
            body.push_str("</tbody></table>");
            if history.records.is_empty() && history.pending.is_empty() {
                body.push_str("<p class=\"muted\">No experiments yet.</p>");
            }
        }
        Err(e) => body.push_str(&degraded("experiments", &e.to_string())),
    }
    body.push_str("<h2>Last eval</h2>");
    match read_last_eval(path) {
        Ok(Some(report)) => body.push_str(&eval_table(&report)),
        Ok(None) => body.push_str("<p class=\"muted\">No .factory/last_eval.json yet (run <code>factory eval</code>).</p>"),
        Err(why) => body.push_str(&degraded("last eval", &why)),
    }
    shell(&name, &[(&name, &format!("/p/{index}/"))], &body)
}

fn runs(index: usize, path: &Path) -> String {
    let all = list_runs(path);
    if all.is_empty() {
        return "<p class=\"muted\">No runs yet.</p>".into();
    }
    let mut s = String::from(
        "<table><thead><tr><th>run</th><th>workflow</th><th>status</th><th>nodes</th>\
         <th>exp</th><th>started</th></tr></thead><tbody>",
    );
    for r in all.iter().rev().take(RUNS_SHOWN) {
        s.push_str(&format!(
            "<tr><td><a href=\"/p/{index}/run/{id}\">{id}</a></td><td>{wf}</td><td>{st}</td>\
             <td>{n}</td><td>{e}</td><td class=\"muted\">{t}</td></tr>",
            id = esc(&r.run_id),
            wf = esc(&r.workflow),
            st = esc(&r.status),
            n = r.nodes_run,
            e = esc(r.exp_id.as_deref().unwrap_or("–")),
            t = esc(&r.started_at),
        ));
    }
    s.push_str("</tbody></table>");
    s
}
