//! `/`: every project with its state, last score, last verdict and latest run.

use std::path::PathBuf;
use std::time::Duration;

use factory_runtime::detect::{DetectOptions, detect};
use factory_runtime::exec::checkpoint::list_runs;
use factory_runtime::store;

use super::super::layout::{esc, page as shell, score, verdict_tag};
use super::name_of;

/// Bound on `gh` when a project's state needs it: a page must not hang on it.
const GH_TIMEOUT: Duration = Duration::from_secs(2);

pub fn page(projects: &[PathBuf]) -> String {
    if projects.is_empty() {
        return shell(
            "Projects",
            &[],
            "<p class=\"degraded\">No projects yet. A project is registered by its first \
             experiment (<code>factory run improve</code>), or pass <code>--project DIR</code>.</p>",
        );
    }
    let options = DetectOptions {
        gh_timeout: GH_TIMEOUT,
        ..DetectOptions::default()
    };
    let mut rows = String::new();
    for (i, path) in projects.iter().enumerate() {
        let state = detect(path, &options).state;
        let (last_score, last_verdict, count) = match store::load_history(path) {
            Ok(h) => {
                // The latest verdict is the last one recorded, not the highest id:
                // parallel branches are begun together and finalized in any order.
                let last = h
                    .records
                    .iter()
                    .max_by(|a, b| a.timestamp.cmp(&b.timestamp).then(a.id.cmp(&b.id)));
                (
                    score(last.and_then(|r| r.score_after)),
                    last.map_or("–".into(), |r| verdict_tag(r.verdict.as_str())),
                    format!("{}", h.records.len()),
                )
            }
            Err(e) => (
                "–".into(),
                format!("<span class=\"fail\">{}</span>", esc(&e.to_string())),
                "–".into(),
            ),
        };
        let run = list_runs(path)
            .pop()
            .map(|r| {
                format!(
                    "<a href=\"/p/{i}/run/{id}\">{status}</a> <span class=\"muted\">{wf}</span>",
                    id = esc(&r.run_id),
                    status = esc(&r.status),
                    wf = esc(&r.workflow)
                )
            })
            .unwrap_or_else(|| "–".into());
        rows.push_str(&format!(
            "<tr data-project=\"{i}\"><td><a href=\"/p/{i}/\">{name}</a><div class=\"muted\">{path}</div></td>\
             <td><span class=\"tag\">{state}</span></td><td>{last_score}</td><td>{last_verdict}</td>\
             <td>{count}</td><td>{run}</td></tr>",
            name = esc(&name_of(path)),
            path = esc(&path.display().to_string()),
        ));
    }
    shell(
        "Projects",
        &[],
        &format!(
            "<table><thead><tr><th>project</th><th>state</th><th>last score</th>\
             <th>last verdict</th><th>experiments</th><th>latest run</th></tr></thead>\
             <tbody>{rows}</tbody></table>"
        ),
    )
}
