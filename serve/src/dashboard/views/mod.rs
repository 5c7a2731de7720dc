//! One module per page. Each takes what it shows (paths, ids) and returns the page's
//! HTML; they read through the runtime's readers only and run off the async threads.

pub mod experiment;
pub mod experiments;
pub mod insights;
pub mod projects;
pub mod run;

use std::path::Path;

use factory_runtime::eval::EvalReport;

use super::layout::{esc, score};

/// A project's display name: its directory's name.
pub fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The eval dimensions of `report` as a table, with the composite on top.
pub fn eval_table(report: &EvalReport) -> String {
    let c = &report.composite;
    let mut s = format!(
        "<p>composite <strong>{}</strong> (threshold {}) — {}</p>\
         <table><thead><tr><th>dimension</th><th>tier</th><th>score</th><th>weight</th>\
         <th>result</th><th>details</th></tr></thead><tbody>",
        score(Some(c.total)),
        score(Some(c.threshold)),
        if c.passed {
            "<span class=\"pass\">passed</span>"
        } else {
            "<span class=\"fail\">below threshold</span>"
        },
    );
    for r in &c.results {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td class=\"details\">{}</td></tr>",
            esc(&r.name),
            tier(r.tier),
            score(Some(r.score)),
            r.weight,
            pass_fail(r.passed),
            esc(&clip(&r.details, 300)),
        ));
    }
    s.push_str("</tbody></table>");
    for v in &c.guard_violations {
        s.push_str(&format!(
            "<p class=\"fail\">guard violation: {}</p>",
            esc(v)
        ));
    }
    if !report.skipped.is_empty() {
        let names: Vec<String> = report
            .skipped
            .iter()
            .map(|k| format!("{} ({})", esc(&k.name), esc(&k.reason)))
            .collect();
        s.push_str(&format!(
            "<p class=\"muted\">skipped: {}</p>",
            names.join(", ")
        ));
    }
    s
}

/// `pass` or `FAIL`, coloured.
pub fn pass_fail(passed: bool) -> &'static str {
    if passed {
        "<span class=\"pass\">pass</span>"
    } else {
        "<span class=\"fail\">FAIL</span>"
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

fn tier(t: factory_runtime::eval::Tier) -> &'static str {
    use factory_runtime::eval::Tier;
    match t {
        Tier::Hygiene => "hygiene",
        Tier::Growth => "growth",
        Tier::Project => "project",
    }
}
