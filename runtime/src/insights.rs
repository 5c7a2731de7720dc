//! Cross-project insights (spec §8.17): across the projects given (the user's
//! registered ones, by default), how often experiments are kept, the mean score delta,
//! the most common reasons for reverts and the checks that fail prechecks most.
//! Read-only: every figure comes from the store's history and the precheck records.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::experiment::load_precheck;
use crate::store::{self, Verdict};

/// How many revert reasons and failing checks are listed.
pub const TOP: usize = 5;

/// One project's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectInsights {
    pub path: PathBuf,
    pub name: String,
    /// Experiments with a verdict.
    pub finalized: usize,
    pub kept: usize,
    pub reverted: usize,
    /// Kept over finalized; `None` before the first verdict.
    pub keep_rate: Option<f64>,
    /// The mean of the recorded deltas; `None` when none was recorded.
    pub mean_delta: Option<f64>,
    /// Why the history could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A reason or check and how many experiments it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Count {
    pub name: String,
    pub count: usize,
}

/// The insights over all projects.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Insights {
    pub projects: Vec<ProjectInsights>,
    pub finalized: usize,
    pub kept: usize,
    pub keep_rate: Option<f64>,
    pub mean_delta: Option<f64>,
    /// The notes of reverted experiments (first line, as written), most common first.
    pub revert_reasons: Vec<Count>,
    /// Checks named as failures in precheck records, most common first.
    pub failing_checks: Vec<Count>,
}

/// The insights over `projects` (each read best-effort: an unreadable history is
/// reported on its project and counts as nothing).
pub fn gather(projects: &[PathBuf]) -> Insights {
    let mut out = Insights::default();
    let mut deltas = Vec::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut checks: BTreeMap<String, usize> = BTreeMap::new();
    for path in projects {
        let mut p = ProjectInsights {
            path: path.clone(),
            name: display_name(path),
            ..ProjectInsights::default()
        };
        match store::load_history(path) {
            Ok(history) => {
                let mut own = Vec::new();
                for r in &history.records {
                    p.finalized += 1;
                    match r.verdict {
                        Verdict::Keep => p.kept += 1,
                        Verdict::Revert => {
                            p.reverted += 1;
                            *reasons.entry(reason(&r.notes)).or_default() += 1;
                        }
                        _ => {}
                    }
                    own.extend(r.delta);
                    if let Ok(Some(pre)) = load_precheck(path, r.id) {
                        for f in pre.failures {
                            *checks.entry(f).or_default() += 1;
                        }
                    }
                }
                p.keep_rate = ratio(p.kept, p.finalized);
                p.mean_delta = mean(&own);
                deltas.extend(own);
            }
            Err(e) => p.error = Some(e.to_string()),
        }
        out.finalized += p.finalized;
        out.kept += p.kept;
        out.projects.push(p);
    }
    out.keep_rate = ratio(out.kept, out.finalized);
    out.mean_delta = mean(&deltas);
    out.revert_reasons = top(reasons);
    out.failing_checks = top(checks);
    out
}

/// A plain-text report of `insights`.
pub fn render(insights: &Insights) -> String {
    use std::fmt::Write;
    let pct = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{:.0}%", r * 100.0));
    let delta = |d: Option<f64>| d.map_or("-".to_string(), |d| format!("{d:+.4}"));
    let mut s = String::new();
    if insights.projects.is_empty() {
        s.push_str(
            "no projects: run an experiment (it registers its project) or pass --project DIR\n",
        );
        return s;
    }
    let _ = writeln!(
        s,
        "{} experiments with a verdict across {} project(s): keep rate {}, mean delta {}",
        insights.finalized,
        insights.projects.len(),
        pct(insights.keep_rate),
        delta(insights.mean_delta)
    );
    s.push('\n');
    for p in &insights.projects {
        match &p.error {
            Some(e) => {
                let _ = writeln!(s, "  {:<24} unreadable: {e}", p.name);
            }
            None => {
                let _ = writeln!(
                    s,
                    "  {:<24} {:>4} finalized  {:>4} kept  keep rate {:>4}  mean delta {}",
                    p.name,
                    p.finalized,
                    p.kept,
                    pct(p.keep_rate),
                    delta(p.mean_delta)
                );
            }
        }
    }
    for (title, list) in [
        ("Most common revert reasons", &insights.revert_reasons),
        ("Most failing checks", &insights.failing_checks),
    ] {
        let _ = writeln!(s, "\n{title}:");
        if list.is_empty() {
            s.push_str("  (none)\n");
        }
        for c in list {
            let _ = writeln!(s, "  {:>4}  {}", c.count, c.name);
        }
    }
    s
}

/// The projects insights cover by default: those in the registry under `home`,
/// after the ones given explicitly (duplicates dropped).
pub fn project_list(explicit: &[PathBuf], home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let registered = home
        .and_then(|h| crate::project::registry::load(h).ok())
        .map(|r| r.projects.into_iter().map(|p| p.path).collect::<Vec<_>>())
        .unwrap_or_default();
    for p in explicit.iter().cloned().chain(registered) {
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A revert's reason as counted: the first reason of its notes (a failing check and
/// what it found, before the figures: `score_direction: no measurable improvement`),
/// so reverts for the same cause count together.
fn reason(notes: &str) -> String {
    let Some(first) = notes.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return "(no reason recorded)".to_string();
    };
    let first = first.split("; ").next().unwrap_or(first);
    let cut = first
        .match_indices(':')
        .nth(1)
        .map_or(first.len(), |(i, _)| i);
    first[..cut].trim().to_string()
}

fn ratio(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| store::round6(xs.iter().sum::<f64>() / xs.len() as f64))
}

fn top(counts: BTreeMap<String, usize>) -> Vec<Count> {
    let mut v: Vec<Count> = counts
        .into_iter()
        .map(|(name, count)| Count { name, count })
        .collect();
    // Most common first; ties alphabetically (the map's order, kept by a stable sort).
    v.sort_by_key(|c| std::cmp::Reverse(c.count));
    v.truncate(TOP);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ExperimentStore, Outcome};

    #[test]
    fn keep_rate_delta_reasons_and_failing_checks_across_projects() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let sa = ExperimentStore::with_registry(a.path(), Some(home.path().into()));
        let sb = ExperimentStore::with_registry(b.path(), Some(home.path().into()));
        let x = sa.begin("one").unwrap().id;
        sa.finalize(
            x,
            Outcome::new(Verdict::Revert)
                .scores(0.5, 0.4)
                .notes("tests fail\nmore"),
        )
        .unwrap();
        let y = sa.begin("two").unwrap().id;
        sa.finalize(
            y,
            Outcome::new(Verdict::Revert)
                .scores(0.5, 0.5)
                .notes("tests fail"),
        )
        .unwrap();
        let z = sb.begin("three").unwrap().id;
        sb.finalize(z, Outcome::new(Verdict::Revert).notes("too slow"))
            .unwrap();
        std::fs::write(
            b.path().join(".factory/experiments/001/precheck.json"),
            r#"{"exp_id":1,"passed":false,"failures":["secrets"],"commit":"c","score_before":null,"score_after":null,"timestamp":"t"}"#,
        )
        .unwrap();
        let projects = project_list(&[], Some(home.path()));
        assert_eq!(projects.len(), 2, "both registered: {projects:?}");
        let i = gather(&projects);
        assert_eq!(i.finalized, 3);
        assert_eq!(i.keep_rate, Some(0.0));
        assert_eq!(i.mean_delta, Some(-0.05));
        assert_eq!(
            i.revert_reasons[0],
            Count {
                name: "tests fail".into(),
                count: 2
            }
        );
        assert_eq!(
            i.failing_checks,
            vec![Count {
                name: "secrets".into(),
                count: 1
            }]
        );
        let text = render(&i);
        assert!(text.contains("keep rate 0%"), "{text}");
        let missing = gather(&[a.path().join("nope")]);
        assert!(missing.projects[0].error.is_some());
    }
}
