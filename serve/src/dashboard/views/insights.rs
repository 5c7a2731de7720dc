//! `/insights`: keep rate, mean delta, revert reasons and failing checks across the
//! projects (the runtime's `insights`, the same figures `factory insights` prints).

use std::path::PathBuf;

use factory_runtime::insights::{Count, gather};

use super::super::layout::{degraded, delta, esc, page as shell};

pub fn page(projects: &[PathBuf]) -> String {
    let i = gather(projects);
    let pct = |r: Option<f64>| r.map_or("–".to_string(), |r| format!("{:.0}%", r * 100.0));
    let mut body = format!(
        "<p class=\"big\"><span>keep rate <strong>{}</strong></span> \
         <span>mean delta <strong>{}</strong></span> <span><strong>{}</strong> experiments with a verdict</span> \
         <span><strong>{}</strong> projects</span></p>",
        pct(i.keep_rate),
        delta(i.mean_delta),
        i.finalized,
        i.projects.len()
    );
    body.push_str(
        "<table><thead><tr><th>project</th><th>finalized</th><th>kept</th><th>reverted</th>\
         <th>keep rate</th><th>mean delta</th></tr></thead><tbody>",
    );
    for (n, p) in i.projects.iter().enumerate() {
        match &p.error {
            Some(e) => body.push_str(&format!(
                "<tr><td><a href=\"/p/{n}/\">{}</a></td><td colspan=\"5\">{}</td></tr>",
                esc(&p.name),
                degraded("history", e)
            )),
            None => body.push_str(&format!(
                "<tr><td><a href=\"/p/{n}/\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&p.name),
                p.finalized,
                p.kept,
                p.reverted,
                pct(p.keep_rate),
                delta(p.mean_delta)
            )),
        }
    }
    body.push_str("</tbody></table>");
    body.push_str(&counts("Most common revert reasons", &i.revert_reasons));
    body.push_str(&counts(
        "Checks that fail prechecks most",
        &i.failing_checks,
    ));
    shell("Insights", &[], &body)
}

fn counts(title: &str, list: &[Count]) -> String {
    let mut s = format!("<h2>{}</h2>", esc(title));
    if list.is_empty() {
        s.push_str("<p class=\"muted\">none</p>");
        return s;
    }
    s.push_str("<table><tbody>");
    for c in list {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td></tr>",
            c.count,
            esc(&c.name)
        ));
    }
    s + "</tbody></table>"
}
