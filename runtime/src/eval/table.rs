//! The human-readable eval table.

use std::fmt::Write;

use super::EvalReport;
use super::score::Tier;

fn tier(t: Tier) -> &'static str {
    match t {
        Tier::Hygiene => "hygiene",
        Tier::Growth => "growth",
        Tier::Project => "project",
    }
}

fn one_line(s: &str, width: usize) -> String {
    let line = s.replace('\n', " | ");
    if line.chars().count() > width {
        format!("{}…", line.chars().take(width - 1).collect::<String>())
    } else {
        line
    }
}

pub fn render(report: &EvalReport) -> String {
    let c = &report.composite;
    let name_w = c
        .results
        .iter()
        .map(|r| r.name.len())
        .chain(report.skipped.iter().map(|s| s.name.len()))
        .max()
        .unwrap_or(9)
        .max(9);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "eval of {} ({})",
        report.project.display(),
        report.language
    );
    let _ = writeln!(
        out,
        "{:<name_w$}  {:<7}  {:>5}  {:>6}  {:<4}  details",
        "dimension", "tier", "score", "weight", "ok"
    );
    for r in &c.results {
        let ok = if r.passed { "pass" } else { "FAIL" };
        let _ = writeln!(
            out,
            "{:<name_w$}  {:<7}  {:>5.2}  {:>6.3}  {:<4}  {}",
            r.name,
            tier(r.tier),
            r.score,
            r.weight,
            ok,
            one_line(&r.details, 100)
        );
    }
    for s in &report.skipped {
        let _ = writeln!(
            out,
            "{:<name_w$}  {:<7}  {:>5}  {:>6}  {:<4}  {}",
            s.name,
            "-",
            "-",
            "-",
            "skip",
            one_line(&s.reason, 100)
        );
    }
    if let Some(warning) = report.saturation() {
        let _ = writeln!(out, "warning: {warning}");
    }
    let verdict = if c.passed {
        "passes"
    } else if c.total + 1e-9 >= c.threshold {
        "a dimension is below its threshold"
    } else {
        "below threshold"
    };
    let _ = writeln!(
        out,
        "composite: {:.3} (threshold {:.3}, {verdict})",
        c.total, c.threshold
    );
    for v in &c.guard_violations {
        let _ = writeln!(out, "guard violation: {v}");
    }
    for b in &c.below_floors {
        let _ = writeln!(out, "dimension threshold: {b}");
    }
    if report.profile == super::ProfileState::Pending {
        let _ = writeln!(
            out,
            "eval profile: pending review (.factory/eval_profile.json was never approved or \
             changed since; precheck refuses it until `factory discover --approve`)"
        );
    }
    out
}
