//! Both sides, measured by the gate (docs/gate.md): the experiment's recorded base commit
//! and its head commit are written from git's object database into scratch directories
//! in the system temp directory — no ignored or untracked file, no `.factory/`, the fixed
//! surfaces taken from the base in both — and each side is measured k times,
//! interleaved (base, head, base, head, …). Nothing is read from or written to the
//! project's store here: the caller records the comparison once both sides finished.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::PrecheckError;
use crate::eval::{self, EvalReport, EvalResult, EvalSettings, Measurement, Tier};
use crate::guards::Patterns;
use crate::sys::process::run_shell;
use crate::worktrees::scratch::{entries, write_entry};

/// Below this a difference of means is no difference at all.
const EPSILON: f64 = 1e-9;

/// One side's scratch checkout; removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    /// Where the project lies inside the checkout (the repository's `subdir`).
    code: PathBuf,
    /// The commit checked out (hex).
    pub commit: String,
}

impl Scratch {
    /// The project's directory inside the checkout: the eval's working directory.
    pub fn code(&self) -> &Path {
        &self.code
    }
    /// The checkout's root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

/// Writes `commit`'s tree into a new directory in the system temp directory, with every
/// path matching `fixed` taken from `fixed_from` instead (present there or absent).
/// `subdir` is where the project lies inside the repository.
pub fn materialise(
    repo: &Repository,
    commit: Oid,
    fixed_from: Oid,
    fixed: &Patterns,
    subdir: &Path,
    label: &str,
) -> Result<Scratch, PrecheckError> {
    let fail = |reason: String| PrecheckError::Scratch {
        side: label.to_string(),
        commit: commit.to_string(),
        reason,
    };
    let dir = tempfile::Builder::new()
        .prefix(&format!("factory-gate-{label}-"))
        .tempdir()
        .map_err(|e| fail(format!("cannot create a scratch directory: {e}")))?;
    let own = entries(repo, commit).map_err(fail)?;
    let from_base = if fixed.is_empty() {
        Vec::new()
    } else {
        entries(repo, fixed_from).map_err(fail)?
    };
    let chosen = own
        .iter()
        .filter(|e| !fixed.matches(&e.path))
        .chain(from_base.iter().filter(|e| fixed.matches(&e.path)));
    for entry in chosen {
        write_entry(repo, dir.path(), entry).map_err(fail)?;
    }
    let code = dir.path().join(subdir);
    fs::create_dir_all(&code).map_err(|e| fail(format!("{}: {e}", code.display())))?;
    Ok(Scratch {
        dir,
        code,
        commit: commit.to_string(),
    })
}

/// One side's composites over its k runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideStats {
    /// The commit measured.
    pub commit: String,
    /// Every run's composite, in the order measured.
    pub runs: Vec<f64>,
    pub mean: f64,
    /// Largest minus smallest composite.
    pub spread: f64,
}

impl SideStats {
    fn new(commit: &str, runs: Vec<f64>) -> Self {
        let n = runs.len().max(1) as f64;
        let mean = runs.iter().sum::<f64>() / n;
        let max = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let spread = if runs.is_empty() { 0.0 } else { max - min };
        // Equal runs have that value as their mean exactly, not a rounded sum over n.
        let mean = if spread == 0.0 && !runs.is_empty() {
            runs[0]
        } else {
            mean
        };
        Self {
            commit: commit.to_string(),
            runs,
            mean,
            spread,
        }
    }
}

/// The gate's comparison of head with base (docs/gate.md, "Noise").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Runs per side (k).
    pub runs: u32,
    pub base: SideStats,
    pub head: SideStats,
    /// Head mean minus base mean.
    pub margin: f64,
    /// The measured noise: the larger of the two spreads.
    pub noise: f64,
    /// The margin exceeds the noise (with no noise, any strict improvement).
    pub improved: bool,
}

impl Comparison {
    /// The rule: keep needs `margin > max(spread_base, spread_head)`; with both spreads 0
    /// (a deterministic eval) any strict improvement counts and equal is no improvement.
    pub fn new(runs: u32, base: SideStats, head: SideStats) -> Self {
        let margin = head.mean - base.mean;
        let noise = base.spread.max(head.spread);
        Self {
            runs,
            improved: margin > noise + EPSILON,
            margin,
            noise,
            base,
            head,
        }
    }
}

/// `Eval command` values that mean "factory's own eval": nothing extra runs.
pub fn is_builtin_eval(command: &str) -> bool {
    let c = command.trim();
    c.is_empty() || c == "factory eval" || c.starts_with("factory eval ")
}

/// The score an eval command printed: a JSON object's `score` (the whole output or its
/// last JSON line), else a bare JSON number, else the last number in the text. Other
/// fields (booleans, counts) are details, never scores. It must lie in 0..=1.
pub fn parse_eval_output(stdout: &str) -> Result<f64, String> {
    let json = serde_json::from_str::<serde_json::Value>(stdout.trim())
        .ok()
        .filter(|v| v.is_object() || v.is_number())
        .or_else(|| {
            stdout.lines().rev().find_map(|l| {
                serde_json::from_str::<serde_json::Value>(l.trim())
                    .ok()
                    .filter(|v| v.is_object())
            })
        });
    let score = match json {
        Some(serde_json::Value::Object(map)) => map
            .get("score")
            .and_then(serde_json::Value::as_f64)
            .ok_or("printed a JSON object without a numeric `score`")?,
        Some(v) => v
            .as_f64()
            .ok_or("printed a JSON value that is not a number")?,
        None => last_number(stdout).ok_or("printed no score (no JSON `score`, no number)")?,
    };
    if !score.is_finite() || !(0.0..=1.0).contains(&score) {
        return Err(format!("printed the score {score}, outside 0..=1"));
    }
    Ok(score)
}

fn last_number(text: &str) -> Option<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .filter_map(|t| t.trim_matches('.').parse::<f64>().ok())
        .rfind(|n| n.is_finite())
}

/// Runs the declared eval command in `dir`; a crash, timeout or unparsable output is an
/// error (the precheck cannot measure, so nothing may be kept), never a low score.
pub fn run_eval_command(
    dir: &Path,
    command: &str,
    timeout: Duration,
) -> Result<EvalResult, String> {
    let out = run_shell(command, dir, timeout).map_err(|e| e.to_string())?;
    if out.timed_out {
        return Err(format!(
            "`{command}` timed out after {}s and was killed",
            timeout.as_secs()
        ));
    }
    if !out.success() {
        return Err(format!(
            "`{command}` exited with {:?}: {}",
            out.code,
            out.tail(3)
        ));
    }
    let score = parse_eval_output(&out.stdout).map_err(|why| format!("`{command}` {why}"))?;
    Ok(EvalResult::new(
        "eval_command",
        Tier::Project,
        score,
        1.0,
        true,
        format!("`{command}` printed {score}"),
    ))
}

/// What measuring both sides produced.
#[derive(Debug)]
pub struct Measured {
    pub comparison: Comparison,
    /// The head's last run, scored against the base (a keep records it as the baseline).
    pub head_report: EvalReport,
}

/// Measures `base` and `head` `k` times each, interleaved; growth on both sides is scored
/// against the base's first run, so the base's own growth is parity.
pub fn measure_sides(
    base: &Scratch,
    head: &Scratch,
    settings: &EvalSettings,
    eval_command: Option<&str>,
    k: u32,
) -> Result<Measured, PrecheckError> {
    let k = k.max(1);
    let mut runs: [Vec<Measurement>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..k {
        for (i, (side, scratch)) in [("base", base), ("head", head)].into_iter().enumerate() {
            let mut m = eval::measure(scratch.code(), settings);
            if let Some(cmd) = eval_command {
                let r = run_eval_command(scratch.code(), cmd, settings.test_timeout).map_err(
                    |reason| PrecheckError::Measurement {
                        side: side.into(),
                        commit: scratch.commit.clone(),
                        reason,
                    },
                )?;
                m.push_project(r);
            }
            runs[i].push(m);
        }
    }
    let [base_runs, head_runs] = runs;
    let reference = base_runs
        .first()
        .map(|m| m.as_baseline(&format!("base commit {}", base.commit)));
    let score = |m: &Measurement| m.score(reference.as_ref(), settings);
    let base_totals = base_runs.iter().map(|m| score(m).composite.total).collect();
    let head_reports: Vec<EvalReport> = head_runs.iter().map(score).collect();
    let head_totals = head_reports.iter().map(|r| r.composite.total).collect();
    let comparison = Comparison::new(
        k,
        SideStats::new(&base.commit, base_totals),
        SideStats::new(&head.commit, head_totals),
    );
    let head_report =
        head_reports
            .into_iter()
            .last()
            .ok_or_else(|| PrecheckError::Measurement {
                side: "head".into(),
                commit: head.commit.clone(),
                reason: "no run was made".into(),
            })?;
    Ok(Measured {
        comparison,
        head_report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_come_from_json_score_or_the_last_number() {
        assert_eq!(
            parse_eval_output("{\"score\": 0.25, \"ok\": true}"),
            Ok(0.25)
        );
        assert_eq!(parse_eval_output("log\n{\"score\": 0.5}\n"), Ok(0.5));
        assert_eq!(parse_eval_output("0.75\n"), Ok(0.75));
        assert_eq!(
            parse_eval_output("accuracy: 0.8 (n=1)\nscore 0.6.\n"),
            Ok(0.6)
        );
        assert!(parse_eval_output("{\"passed\": true}").is_err());
        assert!(parse_eval_output("all good").is_err());
        assert!(parse_eval_output("{\"score\": 3}").is_err());
    }

    #[test]
    fn the_margin_must_exceed_the_noise() {
        let side = |runs: &[f64]| SideStats::new("c", runs.to_vec());
        let c = Comparison::new(3, side(&[0.5, 0.5, 0.5]), side(&[0.5, 0.5, 0.5]));
        assert!(!c.improved, "equal is no improvement");
        let c = Comparison::new(3, side(&[0.5; 3]), side(&[0.51; 3]));
        assert!(c.improved, "deterministic: any strict improvement");
        let c = Comparison::new(3, side(&[0.4, 0.5, 0.6]), side(&[0.5, 0.6, 0.7]));
        assert!(!c.improved, "a margin inside the spread is noise");
        let c = Comparison::new(3, side(&[0.4, 0.45, 0.5]), side(&[0.7, 0.75, 0.8]));
        assert!(c.improved);
        assert!((c.noise - 0.1).abs() < 1e-9 && (c.margin - 0.3).abs() < 1e-9);
    }
}
