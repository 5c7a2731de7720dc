//! The tiered history view (spec §8.8, `format_tiered_history`): the last 3
//! experiments in full, the 7 before them one line each, everything older as
//! aggregate numbers only — enough context for an agent without flooding its prompt.

use std::fmt::Write as _;

use crate::store::{ExperimentRecord, History, PendingExperiment, Verdict};

/// Experiments shown in full.
pub const FULL_TIER: usize = 3;
/// Experiments shown as one line each, after the full tier.
pub const ONE_LINE_TIER: usize = 7;

/// Renders `records` (any order; sorted newest first here) as the three tiers.
pub fn format_tiered_history(records: &[ExperimentRecord]) -> String {
    format_tiers(records, &|_| Vec::new())
}

/// Lines a caller adds under an experiment shown in full (its evidence, say).
pub type Extra<'a> = &'a dyn Fn(u32) -> Vec<String>;

fn format_tiers(records: &[ExperimentRecord], extra: Extra<'_>) -> String {
    let mut newest: Vec<&ExperimentRecord> = records.iter().collect();
    newest.sort_by_key(|r| std::cmp::Reverse(r.id));
    let mut out = String::new();
    if newest.is_empty() {
        out.push_str("No finalized experiments yet.\n");
        return out;
    }
    let full = &newest[..newest.len().min(FULL_TIER)];
    let rest = &newest[full.len()..];
    let one_line = &rest[..rest.len().min(ONE_LINE_TIER)];
    let older = &rest[one_line.len()..];

    let _ = writeln!(out, "Recent experiments (full detail):");
    for r in full {
        write_full(&mut out, r);
        for line in extra(r.id) {
            let _ = writeln!(out, "    {line}");
        }
    }
    if !one_line.is_empty() {
        let _ = writeln!(out, "\nEarlier experiments:");
        for r in one_line {
            let _ = writeln!(
                out,
                "  #{:03} {:<10} {:>10}  {}{}",
                r.id,
                r.verdict.as_str(),
                fmt_delta(r.delta),
                truncate(first_line(&r.hypothesis), 80),
                if r.forgotten_at.is_some() {
                    " (forgotten)"
                } else {
                    ""
                }
            );
        }
    }
    if !older.is_empty() {
        let _ = writeln!(out, "\nOlder experiments (aggregate):");
        let _ = writeln!(out, "  {}", aggregate(older));
    }
    out
}

/// Renders a [`History`]: pending experiments first, then the tiers.
pub fn format_history(history: &History) -> String {
    format_history_with(history, &|_| Vec::new())
}

/// [`format_history`] with `extra` lines under each experiment shown in full.
pub fn format_history_with(history: &History, extra: Extra<'_>) -> String {
    let mut out = String::new();
    if !history.pending.is_empty() {
        let _ = writeln!(out, "In progress (no verdict yet):");
        for PendingExperiment { id, hypothesis } in &history.pending {
            let _ = writeln!(out, "  #{id:03} {}", truncate(first_line(hypothesis), 80));
        }
        out.push('\n');
    }
    out.push_str(&format_tiers(&history.records, extra));
    out
}

fn write_full(out: &mut String, r: &ExperimentRecord) {
    let _ = writeln!(
        out,
        "  #{:03} {} at {}",
        r.id,
        r.verdict.as_str(),
        r.timestamp
    );
    let _ = writeln!(
        out,
        "    hypothesis: {}",
        indent_continuation(&r.hypothesis)
    );
    if r.score_before.is_some() || r.score_after.is_some() {
        let _ = writeln!(
            out,
            "    score: {} -> {} (delta {})",
            fmt_opt(r.score_before),
            fmt_opt(r.score_after),
            fmt_delta(r.delta)
        );
    }
    if !r.change_summary.is_empty() {
        let _ = writeln!(
            out,
            "    change: {}",
            indent_continuation(&r.change_summary)
        );
    }
    if let Some(pr) = r.pr_number {
        let _ = writeln!(out, "    pr: #{pr}");
    }
    if let Some(issue) = r.issue_number {
        let _ = writeln!(out, "    issue: #{issue}");
    }
    if let Some(cost) = r.cost_usd {
        let _ = writeln!(out, "    cost: ${cost:.2}");
    }
    if !r.notes.is_empty() {
        let _ = writeln!(out, "    notes: {}", indent_continuation(&r.notes));
    }
    if let Some(cause) = r.revert_cause {
        let _ = writeln!(out, "    revert cause: {cause}");
    }
    if let Some(at) = &r.forgotten_at {
        let _ = writeln!(
            out,
            "    forgotten: at {at} (`factory history forget`): never matched as an anti-pattern"
        );
    }
}

fn aggregate(records: &[&ExperimentRecord]) -> String {
    let count = |v: Verdict| records.iter().filter(|r| r.verdict == v).count();
    let deltas: Vec<f64> = records.iter().filter_map(|r| r.delta).collect();
    let best = records
        .iter()
        .filter_map(|r| r.score_after)
        .filter(|s| s.is_finite())
        .reduce(f64::max);
    let ids = (
        records.iter().map(|r| r.id).min().unwrap_or(0),
        records.iter().map(|r| r.id).max().unwrap_or(0),
    );
    let mut line = format!(
        "{} experiments (#{:03}-#{:03}): {} keep, {} revert, {} error, {} superseded, {} quarantined",
        records.len(),
        ids.0,
        ids.1,
        count(Verdict::Keep),
        count(Verdict::Revert),
        count(Verdict::Error),
        count(Verdict::Superseded),
        count(Verdict::Quarantined),
    );
    if let Some(b) = best {
        let _ = write!(line, "; best score {b}");
    }
    if !deltas.is_empty() {
        let mean = deltas.iter().sum::<f64>() / deltas.len() as f64;
        let _ = write!(
            line,
            "; mean delta {}",
            fmt_delta(Some(crate::store::round6(mean)))
        );
    }
    line
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| crate::store::round6(v).to_string())
        .unwrap_or_else(|| "?".to_owned())
}

fn fmt_delta(d: Option<f64>) -> String {
    match d.map(crate::store::round6) {
        Some(v) if v > 0.0 => format!("+{v}"),
        Some(v) => v.to_string(),
        None => "-".to_owned(),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn indent_continuation(s: &str) -> String {
    s.replace('\n', "\n      ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: u32, verdict: Verdict, delta: Option<f64>) -> ExperimentRecord {
        ExperimentRecord {
            id,
            timestamp: "2026-11-29T10:00:00Z".into(),
            hypothesis: format!("hypothesis number {id}"),
            change_summary: String::new(),
            issue_number: None,
            pr_number: None,
            score_before: delta.map(|_| 0.5),
            score_after: delta.map(|d| 0.5 + d),
            delta,
            verdict,
            cost_usd: None,
            notes: String::new(),
            research_citations: vec![],
            gate: None,
            revert_cause: None,
            commit: None,
            forgotten_at: None,
        }
    }

    #[test]
    fn scores_and_deltas_never_print_negative_zero_or_float_noise() {
        assert_eq!(fmt_delta(Some(-0.0)), "0");
        assert_eq!(fmt_delta(Some(-1e-9)), "0");
        assert_eq!(fmt_delta(Some(0.1 + 0.2 - 0.3 + 0.05)), "+0.05");
        assert_eq!(fmt_opt(Some(-0.0)), "0");
        assert_eq!(fmt_opt(Some(0.1 + 0.2)), "0.3");
        assert_eq!(fmt_opt(None), "?");
    }

    #[test]
    fn splits_into_full_one_line_and_aggregate_tiers() {
        let verdicts = [Verdict::Keep, Verdict::Revert, Verdict::Quarantined];
        let records: Vec<_> = (1..=15)
            .map(|i| rec(i, verdicts[i as usize % 3], Some(f64::from(i) / 100.0)))
            .collect();
        let text = format_tiered_history(&records);
        let (full, rest) = text.split_once("Earlier experiments:").unwrap();
        let (one_line, older) = rest.split_once("Older experiments (aggregate):").unwrap();
        // Full tier: the three newest, with detail lines.
        for id in [15, 14, 13] {
            assert!(
                full.contains(&format!("hypothesis: hypothesis number {id}")),
                "{full}"
            );
        }
        assert_eq!(full.matches("hypothesis:").count(), 3);
        // One-line tier: the next seven, one line each.
        let lines: Vec<_> = one_line.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 7);
        assert!(lines[0].starts_with("  #012") && lines[6].starts_with("  #006"));
        // Aggregate: the five oldest, no hypotheses.
        assert!(older.contains("5 experiments (#001-#005)"), "{older}");
        assert!(!older.contains("hypothesis number"));
        // Ids 1..=5 have verdicts revert, quarantined, keep, revert, quarantined.
        assert!(
            older.contains("1 keep, 2 revert, 0 error, 0 superseded, 2 quarantined"),
            "{older}"
        );
        assert!(older.contains("best score 0.55"), "{older}");
        assert!(older.contains("mean delta +0.03"), "{older}");
    }

    #[test]
    fn a_forgotten_revert_says_so_in_both_tiers() {
        let mut records: Vec<_> = (1..=5).map(|i| rec(i, Verdict::Revert, None)).collect();
        records[0].forgotten_at = Some("2026-12-02T10:00:00Z".into());
        records[4].forgotten_at = Some("2026-12-02T11:00:00Z".into());
        records[4].revert_cause = Some(crate::store::RevertCause::Environment);
        let text = format_tiered_history(&records);
        assert!(
            text.contains("forgotten: at 2026-12-02T11:00:00Z")
                && text.contains("revert cause: environment"),
            "{text}"
        );
        let one_line = text.lines().find(|l| l.starts_with("  #001")).unwrap();
        assert!(
            one_line.ends_with("hypothesis number 1 (forgotten)"),
            "{one_line}"
        );
        assert_eq!(text.matches("forgotten").count(), 2, "{text}");
    }

    #[test]
    fn short_histories_have_only_the_tiers_they_need() {
        let text = format_tiered_history(&[
            rec(1, Verdict::Keep, None),
            rec(2, Verdict::Revert, Some(-0.1)),
        ]);
        assert!(text.contains("#002 revert") && text.contains("(delta -0.1)"));
        assert!(!text.contains("Earlier") && !text.contains("Older"));
        assert_eq!(
            format_tiered_history(&[]),
            "No finalized experiments yet.\n"
        );
    }
}
