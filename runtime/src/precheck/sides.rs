//! Both sides, measured by the gate (docs/gate.md): the experiment's recorded base commit
//! and its head commit are written from git's object database into scratch directories
//! in the system temp directory — no ignored or untracked file, no `.factory/`, the fixed
//! surfaces taken from the base in both — and each side is measured k times,
//! interleaved (base, head, base, head, …). Nothing is read from or written to the
//! project's store here: the caller records the comparison once both sides finished.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::PrecheckError;
use crate::eval::{self, EvalReport, EvalSettings, Measurement};
use crate::guards::Patterns;
use crate::project::config::Threshold;
use crate::worktrees::scratch::write_commit_with;
use crate::worktrees::setup::{self, Checkout, SideError, StartKind};

/// Below this a difference of means is no difference at all.
const EPSILON: f64 = 1e-9;

/// After extra runs, the margin must exceed this many standard errors of the difference.
const STANDARD_ERRORS: f64 = 2.5;

/// How every scratch checkout's directory name begins: `factory-gate-<side>-<pid>-<random>`.
const SCRATCH_PREFIX: &str = "factory-gate-";

/// Removes scratch checkouts in `temp` whose process is gone (killed before it could
/// remove them). Only names of the form above with a pid that no longer exists are
/// touched; anything else — a live precheck's, another program's — stays.
fn sweep_orphans(temp: &Path) {
    let Ok(entries) = fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SCRATCH_PREFIX)) else {
            continue;
        };
        // `<side>-<pid>-<random>`: the pid is the second field from the end.
        let mut fields = rest.rsplitn(3, '-');
        let (Some(_random), Some(pid), Some(_side)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if let Ok(pid) = pid.parse::<i32>()
            && pid > 0
            && !process_exists(pid)
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether a process with this id exists (signal 0 checks without sending anything).
fn process_exists(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only reports whether `pid` exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// One side's scratch checkout; removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    /// Where the project lies inside the checkout (the repository's `subdir`).
    code: PathBuf,
    /// The commit checked out (hex).
    pub commit: String,
    /// Which side it is (`base`, `head`).
    pub side: String,
}

impl Scratch {
    /// The checkout as the set-up and the provenance probe see it.
    pub fn checkout(&self) -> Checkout<'_> {
        Checkout {
            side: &self.side,
            code: &self.code,
            root: self.dir.path(),
        }
    }

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
    let temp = std::env::temp_dir();
    sweep_orphans(&temp);
    // The pid in the name lets a later precheck remove this directory if this process is
    // killed before it can (a dropped TempDir is removed; a SIGKILLed one is not).
    let dir = tempfile::Builder::new()
        .prefix(&format!("{SCRATCH_PREFIX}{label}-{}-", std::process::id()))
        .tempdir_in(&temp)
        .map_err(|e| fail(format!("cannot create a scratch directory: {e}")))?;
    write_commit_with(repo, commit, fixed_from, &|p| fixed.matches(p), dir.path()).map_err(fail)?;
    let code = dir.path().join(subdir);
    fs::create_dir_all(&code).map_err(|e| fail(format!("{}: {e}", code.display())))?;
    Ok(Scratch {
        dir,
        code,
        commit: commit.to_string(),
        side: label.to_string(),
    })
}

/// Runs factory.md's `## Setup` in both checkouts, then the provenance probe in both
/// (after both set-ups, so a set-up that installed into a shared environment — a bare
/// `pip install -e .` into the caller's venv — is seen pointing at the other side).
/// Returns the `provenance` check that says what was proven; a failure is an error.
pub fn prepare_sides(
    base: &Scratch,
    head: &Scratch,
    commands: &[String],
    timeout: std::time::Duration,
    progress: &crate::sys::progress::Progress,
    base_kept: bool,
) -> Result<super::CheckOutcome, PrecheckError> {
    let to_error = |scratch: &Scratch, e: SideError| match e {
        SideError::Setup {
            command, reason, ..
        } => PrecheckError::Setup {
            side: scratch.side.clone(),
            commit: scratch.commit.clone(),
            command,
            reason,
        },
        SideError::Provenance { reason, .. } => PrecheckError::Provenance {
            side: scratch.side.clone(),
            commit: scratch.commit.clone(),
            reason,
        },
    };
    // A base whose measurement and test run are kept is neither set up nor probed
    // here: it was when they were made (the test guard sets it up if it must run).
    let sides: &[&Scratch] = if base_kept { &[head] } else { &[base, head] };
    for scratch in sides {
        setup::run_setup(&scratch.checkout(), commands, timeout, progress)
            .map_err(|e| to_error(scratch, e))?;
    }
    let mut details = vec![if commands.is_empty() {
        "no `## Setup` in factory.md: the checkouts are measured as written".to_string()
    } else {
        format!(
            "`## Setup` ran in each checkout: {}",
            commands
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }];
    if base_kept {
        details.push(
            "base: measured and its tests run before under the same configuration, set-up and toolchain (kept in .factory/cache/base): not set up again"
                .to_string(),
        );
    }
    for scratch in sides {
        let proven =
            setup::probe(&scratch.checkout(), timeout).map_err(|e| to_error(scratch, e))?;
        details.push(format!("{}: {}", scratch.side, proven.summary()));
    }
    Ok(super::CheckOutcome {
        name: "provenance".into(),
        passed: true,
        details,
    })
}

/// A check that could not start in `scratch` is an error, never a score — except at
/// the head (whose base started) a failed build or a missing module of the project's
/// own: that is the change's doing, and is scored as the regression it is.
fn refuse_unstarted(
    scratch: &Scratch,
    measured: &Measurement,
    base_code: &Path,
) -> Result<(), PrecheckError> {
    for f in measured.start_failures() {
        let the_change = scratch.side == "head"
            && (f.cause.kind == StartKind::BuildFailed || f.cause.is_project_module(base_code));
        if !the_change {
            return Err(PrecheckError::CannotStart {
                side: scratch.side.clone(),
                commit: scratch.commit.clone(),
                check: f.check.clone(),
                command: f.command.clone(),
                cause: f.cause.describe(),
            });
        }
    }
    Ok(())
}

/// One side's composites over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideStats {
    /// The commit measured.
    pub commit: String,
    /// Every run's composite, in the order measured.
    pub runs: Vec<f64>,
    pub mean: f64,
    /// Largest minus smallest composite.
    pub spread: f64,
    /// The sample standard deviation (0 with fewer than two runs).
    #[serde(default)]
    pub stddev: f64,
}

impl SideStats {
    pub fn new(commit: &str, runs: Vec<f64>) -> Self {
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
        let stddev = if runs.len() < 2 || spread == 0.0 {
            0.0
        } else {
            (runs.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (runs.len() - 1) as f64).sqrt()
        };
        Self {
            commit: commit.to_string(),
            runs,
            mean,
            spread,
            stddev,
        }
    }
}

/// The gate's comparison of head with base (docs/gate.md, "Noise").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Runs per side actually taken: k, or the cap when extra runs were taken.
    pub runs: u32,
    /// k: factory.md's `Eval runs`.
    #[serde(default)]
    pub planned_runs: u32,
    /// Why runs beyond k were taken (absent when each side got exactly k).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_runs: Option<String>,
    pub base: SideStats,
    pub head: SideStats,
    /// Head mean minus base mean.
    pub margin: f64,
    /// The measured noise: after k runs the larger of the two spreads; after extra runs
    /// 2.5 standard errors of the difference of means.
    pub noise: f64,
    /// The margin exceeds the noise (with no noise, any strict improvement).
    pub improved: bool,
}

impl Comparison {
    /// The rule after k runs each: keep needs `margin > max(spread_base, spread_head)`;
    /// with both spreads 0 (a deterministic eval) any strict improvement counts and equal
    /// is no improvement.
    pub fn new(planned: u32, base: SideStats, head: SideStats) -> Self {
        let margin = head.mean - base.mean;
        let noise = base.spread.max(head.spread);
        Self {
            runs: base.runs.len().min(head.runs.len()) as u32,
            planned_runs: planned,
            extra_runs: None,
            improved: margin > noise + EPSILON,
            margin,
            noise,
            base,
            head,
        }
    }

    /// The rule after extra runs (n per side, n > k): keep needs `margin > 2.5 ·
    /// sqrt((s_base² + s_head²) / n)`, 2.5 standard errors of the difference of the
    /// means (about a one-sided 99% test) — a bound that narrows as runs are added,
    /// where the spread only widens.
    pub fn after_extra_runs(planned: u32, why: String, base: SideStats, head: SideStats) -> Self {
        let n = base.runs.len().min(head.runs.len()).max(1) as f64;
        let margin = head.mean - base.mean;
        let noise = STANDARD_ERRORS * ((base.stddev.powi(2) + head.stddev.powi(2)) / n).sqrt();
        Self {
            runs: n as u32,
            planned_runs: planned,
            extra_runs: Some(why),
            improved: margin > noise + EPSILON,
            margin,
            noise,
            base,
            head,
        }
    }

    /// After k runs each, more are needed when the head's mean is above the base's but
    /// not by more than the noise: the spread is large relative to the difference, so k
    /// runs cannot tell an improvement from luck. An equal (or lower) mean is decided.
    pub fn needs_more_runs(&self) -> bool {
        !self.improved && self.margin > EPSILON
    }
}

/// The most runs per side: three times k.
pub fn max_runs(k: u32) -> u32 {
    k.max(1).saturating_mul(3)
}

pub use crate::eval::declared::{is_builtin_eval, parse_eval_output, run_eval_command};

/// What measuring both sides produced.
#[derive(Debug)]
pub struct Measured {
    pub comparison: Comparison,
    /// The head's last run, scored against the base (a keep records it as the baseline).
    pub head_report: EvalReport,
    /// Dimensions whose head mean fell below the base mean by more than their spread:
    /// `name: base → head`.
    pub regressed: Vec<String>,
    /// Dimensions below their floor in factory.md's `Dimension thresholds`.
    pub below_floors: Vec<String>,
    /// Drops within a declared `base - t`, which the comparison counted as no change.
    pub tolerated: Vec<String>,
    /// The commands the head's hygiene checks ran and whether each exited 0: a guard
    /// command that is one of them reuses it.
    pub head_commands: Vec<(String, bool)>,
}

/// What a side's measurement may take from work already done instead of running it.
#[derive(Clone, Copy, Default)]
pub struct Reuse<'a> {
    /// Each side's test run by the test guard (base, head), when it passed.
    pub known_tests: [Option<&'a crate::eval::hygiene::KnownTests>; 2],
    /// Where the base's measurement is kept between experiments.
    pub base_cache: Option<&'a super::base_cache::BaseCache>,
    /// The base's measurement read from there (when nothing varies): its one run.
    pub kept_base: Option<&'a Measurement>,
}

/// Measures `base` and `head` `k` times each, interleaved; growth on both sides is scored
/// against the base's first run, so the base's own growth is parity. When k runs leave
/// an improvement inside the noise ([`Comparison::needs_more_runs`]), more interleaved
/// pairs are run, up to [`max_runs`], and the extended rule decides. `unproven_tests`
/// head tests prove nothing about the change (they pass on the base's code too): they
/// are taken off the head's test count, so they are no growth.
pub fn measure_sides(
    base: &Scratch,
    head: &Scratch,
    settings: &EvalSettings,
    eval_command: Option<&str>,
    k: u32,
    unproven_tests: u64,
    reuse: Reuse<'_>,
) -> Result<Measured, PrecheckError> {
    let Reuse {
        known_tests,
        base_cache,
        kept_base,
    } = reuse;
    let k = k.max(1);
    // Nothing that varies: one run per side decides, whatever `Eval runs` says, and
    // the base's one run can be kept for the next experiment on the same base.
    let varying = eval::has_varying(base.code(), settings, eval_command.is_some())
        || eval::has_varying(head.code(), settings, eval_command.is_some());
    let base_cache = base_cache.filter(|_| !varying);
    let mut runs: [Vec<Measurement>; 2] = [Vec::new(), Vec::new()];
    if let Some(kept) = kept_base.filter(|_| !varying).cloned() {
        settings.progress.say(&format!(
            "the base commit {}: measured before under the same configuration, set-up and toolchain (kept in .factory/cache/base)",
            &base.commit[..base.commit.len().min(10)]
        ));
        runs[0].push(kept);
    }
    let pair = |runs: &mut [Vec<Measurement>; 2]| -> Result<(), PrecheckError> {
        for (i, (side, scratch)) in [("base", base), ("head", head)].into_iter().enumerate() {
            // A kept base measurement stands for the base's one run.
            if i == 0 && !varying && !runs[0].is_empty() {
                continue;
            }
            settings.progress.say(&format!(
                "measuring the {side} commit {} (run {})",
                &scratch.commit[..scratch.commit.len().min(10)],
                runs[i].len() + 1
            ));
            // Every command of this side runs in its checkout's own environment.
            let env = setup::enter(scratch.code());
            // Deterministic dimensions are measured once per side; later runs measure
            // only what varies.
            let first = runs[i].first();
            let mut m = match first {
                Some(first) => eval::remeasure_varying(first, settings),
                None => eval::measure_with(scratch.code(), settings, known_tests[i]),
            };
            if first.is_none() {
                refuse_unstarted(scratch, &m, base.code())?;
            }
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
            drop(env);
            // Later runs carry the first run's (already discounted) test count.
            if i == 1 && first.is_none() {
                m.discount_tests(unproven_tests);
            }
            if i == 0
                && let Some(cache) = base_cache
            {
                cache.save(&m);
            }
            runs[i].push(m);
        }
        Ok(())
    };
    let planned = k;
    let k = if varying { k } else { 1 };
    for _ in 0..k {
        pair(&mut runs)?;
    }
    let reference = runs[0]
        .first()
        .map(|m| m.as_baseline(&format!("base commit {}", base.commit)));
    let score = |ms: &[Measurement]| -> Vec<EvalReport> {
        ms.iter()
            .map(|m| m.score(reference.as_ref(), settings))
            .collect()
    };
    let floors = &settings.dimension_thresholds;
    let totals = |rs: &[EvalReport]| rs.iter().map(|r| r.composite.total).collect();
    // A drop factory.md tolerates (`coverage: base - 0.01`) is no regression of the
    // composite either: the head's totals count that dimension at the base's mean.
    let head_totals =
        |b: &[EvalReport], h: &[EvalReport]| forgiving_totals(h, &tolerated_drops(b, h, floors));
    let (mut base_reports, mut head_reports) = (score(&runs[0]), score(&runs[1]));
    let mut comparison = Comparison::new(
        planned,
        SideStats::new(&base.commit, totals(&base_reports)),
        SideStats::new(&head.commit, head_totals(&base_reports, &head_reports)),
    );
    let cap = max_runs(k);
    if comparison.needs_more_runs() && cap > k {
        let why = format!(
            "after {k} run(s) each the head's mean was above the base's by {:+.4}, inside the noise {:.4} (spread {:.4} vs {:.4}): {} more interleaved run(s) each, {cap} in all, decided on 2.5 standard errors of the difference",
            comparison.margin,
            comparison.noise,
            comparison.base.spread,
            comparison.head.spread,
            cap - k
        );
        for _ in k..cap {
            pair(&mut runs)?;
        }
        (base_reports, head_reports) = (score(&runs[0]), score(&runs[1]));
        comparison = Comparison::after_extra_runs(
            planned,
            why,
            SideStats::new(&base.commit, totals(&base_reports)),
            SideStats::new(&head.commit, head_totals(&base_reports, &head_reports)),
        );
    }
    let tolerated = tolerated_drops(&base_reports, &head_reports, floors)
        .into_iter()
        .map(|d| {
            format!(
                "{}: {:.4} → {:.4}, within `{}` (counted as no change)",
                d.name, d.base_mean, d.head_mean, d.floor
            )
        })
        .collect();
    let regressed = regressed_dimensions(&base_reports, &head_reports, floors);
    let below_floors = dimensions_below_floors(&base_reports, &head_reports, floors);
    let head_commands = runs[1]
        .first()
        .map(|m| m.command_results().to_vec())
        .unwrap_or_default();
    let head_report = head_reports
        .pop()
        .ok_or_else(|| PrecheckError::Measurement {
            side: "head".into(),
            commit: head.commit.clone(),
            reason: "no run was made".into(),
        })?;
    Ok(Measured {
        comparison,
        head_report,
        regressed,
        below_floors,
        tolerated,
        head_commands,
    })
}

/// One dimension's mean and spread (max − min) over a side's runs; `None` when no run
/// measured it.
fn dimension_stats(reports: &[EvalReport], name: &str) -> Option<(f64, f64)> {
    let v: Vec<f64> = reports
        .iter()
        .filter_map(|r| r.composite.results.iter().find(|d| d.name == name))
        .map(|d| d.score)
        .collect();
    if v.is_empty() {
        return None;
    }
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    Some((v.iter().sum::<f64>() / v.len() as f64, max - min))
}

/// Dimensions (by name) whose mean score over the head's runs is below the base's by
/// more than the larger of the two spreads: what a "nothing regressed" verdict must
/// rule out, dimension by dimension rather than on the composite alone. A dimension
/// with a declared threshold is judged by it instead ([`dimensions_below_floors`]).
pub fn regressed_dimensions(
    base: &[EvalReport],
    head: &[EvalReport],
    floors: &BTreeMap<String, Threshold>,
) -> Vec<String> {
    let Some(first) = base.first() else {
        return Vec::new();
    };
    first
        .composite
        .results
        .iter()
        .filter(|d| !floors.contains_key(&d.name))
        .filter_map(|d| {
            let (bm, bs) = dimension_stats(base, &d.name)?;
            let Some((hm, hs)) = dimension_stats(head, &d.name) else {
                return Some(format!("{}: measured at base, missing at head", d.name));
            };
            (hm < bm - bs.max(hs) - EPSILON).then(|| format!("{}: {bm:.4} → {hm:.4}", d.name))
        })
        .collect()
}

/// A dimension whose head mean is below the base's, but within its declared
/// `base - t`.
struct ToleratedDrop {
    name: String,
    floor: Threshold,
    base_mean: f64,
    head_mean: f64,
}

fn tolerated_drops(
    base: &[EvalReport],
    head: &[EvalReport],
    floors: &BTreeMap<String, Threshold>,
) -> Vec<ToleratedDrop> {
    floors
        .iter()
        .filter_map(|(name, floor)| {
            let Threshold::Base { tolerance } = *floor else {
                return None;
            };
            let ((bm, _), (hm, _)) = (dimension_stats(base, name)?, dimension_stats(head, name)?);
            (hm < bm && hm + tolerance + EPSILON >= bm).then(|| ToleratedDrop {
                name: name.clone(),
                floor: *floor,
                base_mean: bm,
                head_mean: hm,
            })
        })
        .collect()
}

/// Each report's composite with every tolerated dimension raised to the base's mean
/// (weights as the composite normalised them).
fn forgiving_totals(reports: &[EvalReport], drops: &[ToleratedDrop]) -> Vec<f64> {
    reports
        .iter()
        .map(|r| {
            let lift: f64 = drops
                .iter()
                .filter_map(|d| {
                    r.composite
                        .results
                        .iter()
                        .find(|x| x.name == d.name)
                        .map(|x| (d, x))
                })
                .map(|(d, x)| x.weight * (d.base_mean - x.score).max(0.0))
                .sum();
            r.composite.total + lift
        })
        .collect()
}

/// Each dimension of factory.md's `Dimension thresholds` the head's mean falls below:
/// a fixed floor as written; `base - t` as the base's mean less `t` and the larger
/// spread. A declared dimension neither side measured is reported (a misspelt name
/// must not pass silently).
pub fn dimensions_below_floors(
    base: &[EvalReport],
    head: &[EvalReport],
    floors: &BTreeMap<String, Threshold>,
) -> Vec<String> {
    floors
        .iter()
        .filter_map(|(name, floor)| {
            let (b, h) = (dimension_stats(base, name), dimension_stats(head, name));
            let Some((hm, hs)) = h else {
                return Some(match (b, head.last()) {
                    (Some(_), _) => format!("{name}: measured at base, missing at head"),
                    (None, Some(r)) => crate::eval::not_measured(name, &r.composite.results),
                    (None, None) => format!("{name}: not measured"),
                });
            };
            let (min, what) = match *floor {
                Threshold::Score(min) => (min, format!("its threshold {min:.4}")),
                Threshold::Base { tolerance } => {
                    let (bm, bs) = b?;
                    (
                        bm - tolerance - bs.max(hs),
                        format!("the base's {bm:.4} less `{floor}` and the noise"),
                    )
                }
            };
            (hm + EPSILON < min).then(|| format!("{name}: {hm:.4} is below {what} ({min:.4})"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run's report: `(dimension, score)` pairs.
    fn run(dims: &[(&str, f64)]) -> EvalReport {
        use crate::eval::{EvalResult, Tier, compute_composite};
        let results = dims
            .iter()
            .map(|(n, s)| EvalResult::new(n, Tier::Hygiene, *s, 1.0, true, ""))
            .collect();
        EvalReport {
            project: PathBuf::from("."),
            language: "go".into(),
            composite: compute_composite(results, Vec::new(), 0.0),
            skipped: Vec::new(),
            test_count: None,
            coverage: None,
            baseline: None,
            profile: Default::default(),
        }
    }

    #[test]
    fn a_declared_dimension_threshold_replaces_the_noise_rule_for_that_dimension() {
        // google/uuid 0e97ed3: coverage 0.877 → 0.873 with a green suite.
        let base = [run(&[("coverage", 0.877), ("tests", 1.0)])];
        let head = [run(&[("coverage", 0.873), ("tests", 1.0)])];
        let none = BTreeMap::new();
        assert_eq!(
            regressed_dimensions(&base, &head, &none),
            vec!["coverage: 0.8770 → 0.8730"]
        );
        assert!(dimensions_below_floors(&base, &head, &none).is_empty());

        let tolerant = BTreeMap::from([("coverage".into(), Threshold::Base { tolerance: 0.01 })]);
        assert!(regressed_dimensions(&base, &head, &tolerant).is_empty());
        assert!(dimensions_below_floors(&base, &head, &tolerant).is_empty());

        let strict = BTreeMap::from([("coverage".into(), Threshold::Base { tolerance: 0.0 })]);
        let below = dimensions_below_floors(&base, &head, &strict);
        assert_eq!(below.len(), 1);
        assert!(
            below[0].starts_with("coverage: 0.8730 is below the base's 0.8770"),
            "{below:?}"
        );

        let fixed = BTreeMap::from([("tests".into(), Threshold::Score(1.0))]);
        assert!(dimensions_below_floors(&base, &head, &fixed).is_empty());
        let failing = [run(&[("coverage", 0.873), ("tests", 0.9)])];
        assert_eq!(dimensions_below_floors(&base, &failing, &fixed).len(), 1);
    }

    #[test]
    fn a_misspelt_dimension_threshold_is_reported_not_ignored() {
        let floors = BTreeMap::from([("covrage".into(), Threshold::Score(0.5))]);
        let below = dimensions_below_floors(
            &[run(&[("coverage", 0.9)])],
            &[run(&[("coverage", 0.9)])],
            &floors,
        );
        assert_eq!(below.len(), 1);
        assert!(
            below[0].contains("not measured (measured: coverage)"),
            "{below:?}"
        );
    }

    #[test]
    fn orphaned_scratch_checkouts_are_swept_and_live_or_foreign_ones_kept() {
        let temp = tempfile::tempdir().unwrap();
        let dead = temp.path().join("factory-gate-head-999999999-a1B2c3");
        let live = temp
            .path()
            .join(format!("factory-gate-base-{}-x9Y8z7", std::process::id()));
        let old_style = temp.path().join("factory-gate-head-q1W2e3");
        let foreign = temp.path().join("someone-else-999999999-zz");
        for d in [&dead, &live, &old_style, &foreign] {
            fs::create_dir_all(d.join("src")).unwrap();
            fs::write(d.join("src/a.txt"), "x").unwrap();
        }
        sweep_orphans(temp.path());
        assert!(!dead.exists(), "the dead process's checkout is removed");
        assert!(live.exists() && old_style.exists() && foreign.exists());
    }

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

    #[test]
    fn only_an_improvement_inside_the_noise_asks_for_more_runs() {
        let side = |runs: &[f64]| SideStats::new("c", runs.to_vec());
        // Deterministic, equal, lower, or clearly better: decided after k runs.
        for (b, h) in [
            ([0.5; 3], [0.5; 3]),
            ([0.5; 3], [0.51; 3]),
            ([0.4, 0.5, 0.6], [0.35, 0.45, 0.55]),
            ([0.4, 0.45, 0.5], [0.7, 0.75, 0.8]),
        ] {
            assert!(!Comparison::new(3, side(&b), side(&h)).needs_more_runs());
        }
        let c = Comparison::new(3, side(&[0.45, 0.55, 0.5]), side(&[0.52, 0.62, 0.57]));
        assert!(c.needs_more_runs(), "{c:?}");
        assert_eq!((c.runs, c.planned_runs), (3, 3));
        // Nine runs each of the same two levels: the standard error decides.
        let b: Vec<f64> = [0.45, 0.55, 0.5].repeat(3);
        let h: Vec<f64> = [0.52, 0.62, 0.57].repeat(3);
        let c = Comparison::after_extra_runs(3, "why".into(), side(&b), side(&h));
        assert_eq!((c.runs, c.planned_runs), (9, 3));
        assert!(c.improved && c.noise < c.margin, "{c:?}");
        assert_eq!(max_runs(3), 9);
        assert!((side(&[1.0, 3.0]).stddev - 2f64.sqrt()).abs() < 1e-12);
    }
}
