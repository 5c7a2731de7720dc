//! Growth dimensions: test count and coverage measured against the baseline of the last
//! kept experiment, stored in `.factory/eval_baseline.json`.
//!
//! Scoring is relative: matching the baseline scores 0.5, growing by the target amount
//! (10% more tests, 5 coverage points) or more scores 1.0, and shrinking scales down to 0
//! and fails the dimension. With no baseline yet the current numbers become it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::hygiene::HygieneRun;
use super::score::{EvalResult, Tier};
use crate::sys::clock::now_iso8601;
use crate::sys::files::atomic_write as write_atomic;

/// What a growth dimension scores when it matches its baseline exactly.
pub const PARITY: f64 = 0.5;
/// Coverage points that count as full growth.
const COVERAGE_TARGET_POINTS: f64 = 5.0;

/// The numbers the last kept experiment reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub test_count: Option<u64>,
    pub coverage: Option<f64>,
    /// Composite total at that point; precheck's score-direction check compares to it.
    pub composite: Option<f64>,
    pub recorded_at: String,
    /// What set it: "first eval", "kept experiment 7", "manual".
    pub source: String,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum BaselineError {
    #[error("{path} is not a valid eval baseline: {message}")]
    #[diagnostic(help(
        "delete the file and run `factory eval --record-baseline` to record a new one"
    ))]
    Corrupt { path: PathBuf, message: String },
    #[error("could not write {path}: {source}")]
    #[diagnostic(help("check the permissions of the project's .factory/ directory"))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub fn baseline_path(root: &Path) -> PathBuf {
    root.join(".factory").join("eval_baseline.json")
}

/// Reads the baseline; `Ok(None)` when none was recorded yet.
pub fn load_baseline(root: &Path) -> Result<Option<Baseline>, BaselineError> {
    let path = baseline_path(root);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| BaselineError::Corrupt {
            path,
            message: format!("{e}"),
        })
}

/// Writes the baseline atomically into an existing `.factory/`.
pub fn save_baseline(root: &Path, baseline: &Baseline) -> Result<(), BaselineError> {
    let path = baseline_path(root);
    let text = serde_json::to_string_pretty(baseline).unwrap_or_default();
    write_atomic(&path, text.as_bytes()).map_err(|source| BaselineError::Write { path, source })
}

/// The baseline the current measurements would set.
pub fn baseline_from(
    test_count: Option<u64>,
    coverage: Option<f64>,
    composite: Option<f64>,
    source: &str,
) -> Baseline {
    Baseline {
        test_count,
        coverage,
        composite,
        recorded_at: now_iso8601(),
        source: source.to_string(),
    }
}

/// Growth dimensions for this run. Coverage is only scored when a coverage tool ran.
pub fn growth_results(
    run: &HygieneRun,
    baseline: Option<&Baseline>,
) -> (Vec<EvalResult>, Vec<(String, String)>) {
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    // No count (no runner, or it failed before printing one): the `tests` hygiene
    // dimension already scores a failed run, so growth skips rather than double-counting.
    match (run.test_counts, baseline.and_then(|b| b.test_count)) {
        (None, _) => skipped.push((
            "test_count".to_string(),
            run.test_counts_missing
                .clone()
                .unwrap_or_else(|| "no test count available".into()),
        )),
        (Some(c), None) if c.total() == 0 => results.push(EvalResult::failed(
            "test_count",
            Tier::Growth,
            0.5,
            "no tests found",
        )),
        (Some(c), None) => results.push(EvalResult::new(
            "test_count",
            Tier::Growth,
            PARITY,
            0.5,
            true,
            format!("{} passing test(s); no baseline yet", c.passed),
        )),
        // Growth counts passing tests: a failing test is the `tests` check's to score,
        // and adding one is no growth (nor is one failing at the base lost).
        (Some(c), Some(base)) => {
            let target = (base as f64 / 10.0).ceil().max(1.0);
            let (score, passed) = relative(c.passed as f64, base as f64, target);
            results.push(EvalResult::new(
                "test_count",
                Tier::Growth,
                score,
                0.5,
                passed,
                format!(
                    "{} passing tests (baseline {base}, {:+})",
                    c.passed,
                    c.passed as i64 - base as i64
                ),
            ));
        }
    }
    match (run.coverage, baseline.and_then(|b| b.coverage)) {
        (None, _) => skipped.push((
            "coverage".to_string(),
            run.coverage_missing
                .clone()
                .unwrap_or_else(|| "no coverage tool".into()),
        )),
        (Some(pct), None) => results.push(EvalResult::new(
            "coverage",
            Tier::Growth,
            PARITY,
            0.5,
            true,
            format!("{pct:.1}%; no baseline yet"),
        )),
        (Some(pct), Some(base)) => {
            let (score, passed) = relative(pct, base, COVERAGE_TARGET_POINTS);
            results.push(EvalResult::new(
                "coverage",
                Tier::Growth,
                score,
                0.5,
                passed,
                format!("{pct:.1}% (baseline {base:.1}%, {:+.1})", pct - base),
            ));
        }
    }
    (results, skipped)
}

/// [`PARITY`] at the baseline, rising to 1.0 at `target` above it, falling to 0 at zero.
fn relative(now: f64, base: f64, target: f64) -> (f64, bool) {
    if now >= base {
        (
            (PARITY + (1.0 - PARITY) * (now - base) / target).min(1.0),
            true,
        )
    } else if base > 0.0 {
        (PARITY * now / base, false)
    } else {
        (0.0, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::parse::TestCounts;

    fn run_with(tests: u64, coverage: Option<f64>) -> HygieneRun {
        HygieneRun {
            test_counts: Some(TestCounts {
                passed: tests,
                failed: 0,
            }),
            coverage,
            ..Default::default()
        }
    }

    fn base(tests: u64, coverage: Option<f64>) -> Baseline {
        baseline_from(Some(tests), coverage, Some(0.8), "test")
    }

    #[test]
    fn growth_rewards_more_tests_and_punishes_fewer() {
        let b = base(20, Some(50.0));
        let (same, _) = growth_results(&run_with(20, Some(50.0)), Some(&b));
        assert_eq!(same[0].score, 0.5);
        let (more, _) = growth_results(&run_with(22, Some(55.0)), Some(&b));
        assert_eq!(more[0].score, 1.0);
        assert_eq!(more[1].score, 1.0);
        let (fewer, _) = growth_results(&run_with(10, Some(25.0)), Some(&b));
        assert_eq!(fewer[0].score, 0.25);
        assert!(!fewer[0].passed);
        assert!(!fewer[1].passed);
    }

    #[test]
    fn failing_tests_are_no_growth() {
        let b = base(20, None);
        let mut run = run_with(20, None);
        run.test_counts = Some(TestCounts {
            passed: 20,
            failed: 9,
        });
        let (r, _) = growth_results(&run, Some(&b));
        assert_eq!(r[0].score, 0.5, "{}", r[0].details);
        assert!(
            r[0].details.contains("20 passing tests"),
            "{}",
            r[0].details
        );
    }

    #[test]
    fn missing_coverage_is_skipped_not_scored() {
        let (results, skipped) = growth_results(&run_with(3, None), None);
        assert_eq!(results.len(), 1);
        assert_eq!(skipped[0].0, "coverage");
    }

    #[test]
    fn baseline_round_trips_and_corrupt_file_names_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".factory")).unwrap();
        assert_eq!(load_baseline(dir.path()).unwrap(), None);
        let b = base(4, None);
        save_baseline(dir.path(), &b).unwrap();
        assert_eq!(load_baseline(dir.path()).unwrap(), Some(b));
        std::fs::write(baseline_path(dir.path()), "{not json").unwrap();
        let err = load_baseline(dir.path()).unwrap_err();
        assert!(err.to_string().contains("eval_baseline.json"), "{err}");
        let help = miette::Diagnostic::help(&err).unwrap().to_string();
        assert!(help.contains("--record-baseline"), "{help}");
    }
}
