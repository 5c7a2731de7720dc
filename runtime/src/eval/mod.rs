//! Eval: hygiene, growth and project dimensions merged into one composite score
//! (spec §6.3, §8.5, Appendix A.1).
//!
//! [`run_eval`] is the entry point: it introspects the project, runs every dimension
//! (each with a timeout, none able to abort the others), merges the tiers, scores them,
//! and writes `.factory/last_eval.json` best-effort.

pub mod declared;
pub mod discovery;
pub mod growth;
pub mod hygiene;
pub mod parse;
pub mod project;
pub mod score;
mod table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use growth::{Baseline, BaselineError, load_baseline, save_baseline};
pub use hygiene::Skipped;
pub use project::{ParseMode, ProjectDimension};
pub use score::{
    CompositeScore, EvalResult, EvalWeights, MergeWeights, Tier, TierWeights, compute_composite,
    not_measured,
};

use crate::eval::discovery::eval_spec::{SpecClass, classify_eval_spec_item, dimension_name};
use crate::eval::discovery::introspect::introspect;
use crate::project::config::{FactoryConfig, Threshold};
use crate::project::layout::FactoryPaths;
use crate::sys::files::atomic_write as write_atomic;

/// What an eval run needs from the project's configuration.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    pub project_dimensions: Vec<ProjectDimension>,
    pub weights: MergeWeights,
    /// factory.md's `Eval threshold`: `base` is read against the baseline's composite.
    pub threshold: Threshold,
    /// factory.md's `Dimension thresholds`.
    pub dimension_thresholds: BTreeMap<String, Threshold>,
    /// Per hygiene check and for `eval/score.py` (factory.md `test_timeout`).
    pub test_timeout: Duration,
    /// factory.md's `Eval command` when it is not factory's own eval: `factory eval`
    /// runs it as the `eval_command` dimension (precheck runs it per side itself).
    pub eval_command: Option<String>,
    /// The project's eval profile: when present its checks are what runs (what was
    /// approved is what is measured); without one, introspection decides.
    pub profile: Option<discovery::EvalProfile>,
    /// Where "now running …" lines go (nowhere by default).
    pub progress: crate::sys::progress::Progress,
}

impl Default for EvalSettings {
    fn default() -> Self {
        Self {
            project_dimensions: Vec::new(),
            weights: MergeWeights::default(),
            threshold: Threshold::default(),
            dimension_thresholds: BTreeMap::new(),
            test_timeout: Duration::from_secs(600),
            eval_command: None,
            profile: None,
            progress: Default::default(),
        }
    }
}

impl EvalSettings {
    /// The eval-relevant part of a project's factory.md configuration.
    pub fn from_config(config: &FactoryConfig) -> Self {
        // Executable eval_spec bullets are promoted to project dimensions (spec §8.6).
        let mut project_dimensions = config.project_eval.clone();
        for item in &config.eval_spec {
            if let SpecClass::Executable { command } = classify_eval_spec_item(item)
                && !project_dimensions.iter().any(|d| d.command == command)
            {
                project_dimensions.push(ProjectDimension {
                    name: dimension_name(&command),
                    command,
                    parse: ParseMode::ExitCode,
                    weight: 1.0,
                    timeout: config.test_timeout.max(1),
                    description: item.clone(),
                    deterministic: None,
                });
            }
        }
        Self {
            project_dimensions,
            weights: MergeWeights {
                eval_weights: config.eval_weights.clone(),
                hygiene_overrides: config.hygiene_weights.clone(),
                growth_overrides: config.growth_weights.clone(),
            },
            threshold: config.eval_threshold,
            dimension_thresholds: config.dimension_thresholds.clone(),
            test_timeout: Duration::from_secs(config.test_timeout.max(1)),
            eval_command: (!declared::is_builtin_eval(&config.eval_command))
                .then(|| config.eval_command.trim().to_string()),
            profile: None,
            progress: Default::default(),
        }
    }

    /// The settings `factory eval` uses for `project`: its factory.md configuration
    /// — what precheck reads — or the defaults when it has none yet, with its eval
    /// profile. A `.factory/config.json` that says something else is refreshed from
    /// factory.md first (its path is returned), or refused when it cannot be
    /// ([`config::load_synced`](crate::project::config::load_synced)).
    pub fn for_project(
        project: &Path,
    ) -> Result<(Self, Option<PathBuf>), crate::project::config::ConfigError> {
        use crate::project::config::{self, ConfigError};
        let (settings, refreshed) = match config::load_synced(project) {
            Ok(synced) => (Self::from_config(&synced.config), synced.refreshed),
            // No factory.md yet: eval still works with the defaults.
            Err(ConfigError::Missing { .. } | ConfigError::MissingFactoryMd { .. }) => {
                (Self::default(), None)
            }
            Err(err) => return Err(err),
        };
        Ok((settings.with_profile_of(project), refreshed))
    }

    /// These settings with the eval profile of the project at `store`, when it has a
    /// readable one.
    pub fn with_profile_of(mut self, store: &Path) -> Self {
        self.profile = discovery::load_profile(store).ok();
        self
    }

    /// Whether the profile in use awaits review (named by every command that scores).
    pub fn profile_state(&self) -> ProfileState {
        match &self.profile {
            None => ProfileState::None,
            Some(p) if p.is_approved() => ProfileState::Approved,
            Some(_) => ProfileState::Pending,
        }
    }
}

/// The eval profile an eval ran with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileState {
    /// No profile: introspection chose the checks.
    #[default]
    None,
    Approved,
    /// Never approved, or changed since: its checks ran, and the result says so.
    Pending,
}

/// The composite plus what the user needs to read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    pub project: PathBuf,
    pub language: String,
    #[serde(flatten)]
    pub composite: CompositeScore,
    /// Dimensions that could not be measured (tool missing, not applicable).
    pub skipped: Vec<Skipped>,
    pub test_count: Option<u64>,
    pub coverage: Option<f64>,
    pub baseline: Option<Baseline>,
    /// The eval profile the checks came from.
    #[serde(default)]
    pub profile: ProfileState,
}

impl EvalReport {
    /// Why this eval cannot score an improvement, when it cannot: the composite is at
    /// its maximum, or every dimension but growth already is (only more tests or
    /// coverage can raise it). Other work is then kept only as neutral with evidence.
    pub fn saturation(&self) -> Option<String> {
        let c = &self.composite;
        if c.results.is_empty() {
            return None;
        }
        if c.total >= 1.0 - 1e-9 {
            return Some(format!(
                "the composite is saturated ({:.3}): no change can score as an improvement; a change is kept only as neutral with evidence (docs/gate.md, \"Neutral keeps\")",
                c.total
            ));
        }
        let fixed: Vec<&EvalResult> = c
            .results
            .iter()
            .filter(|r| r.tier != Tier::Growth)
            .collect();
        (!fixed.is_empty() && fixed.iter().all(|r| r.score >= 1.0 - 1e-9)).then(|| {
            "every dimension but growth is at its maximum: only more tests or coverage can raise the composite; other work is kept only as neutral with evidence (docs/gate.md, \"Neutral keeps\")".to_string()
        })
    }

    /// A plain-text table: one row per dimension, then the composite.
    pub fn render_table(&self) -> String {
        table::render(self)
    }
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum EvalError {
    #[error("{path} does not exist or is not a directory")]
    #[diagnostic(help("pass the project's directory, e.g. `factory eval .`"))]
    NotADirectory { path: PathBuf },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Baseline(#[from] BaselineError),
}

/// Runs every dimension for the project at `root` and scores them.
pub fn run_eval(root: &Path, settings: &EvalSettings) -> Result<EvalReport, EvalError> {
    run_eval_at(root, root, settings)
}

/// Measures the code at `code` (an experiment's worktree) against the baseline in the
/// project at `store`, and records the result in `store`'s `.factory/`: where code is
/// measured and where the record lives are different places once experiments run in
/// worktrees.
pub fn run_eval_at(
    code: &Path,
    store: &Path,
    settings: &EvalSettings,
) -> Result<EvalReport, EvalError> {
    for dir in [code, store] {
        if !dir.is_dir() {
            return Err(EvalError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
    }
    let baseline = load_baseline(store)?;
    let mut measured = measure(code, settings);
    if let Some(command) = &settings.eval_command {
        settings.progress.say(&format!("eval_command: `{command}`"));
        // A crash or unparsable output is a failed dimension here (precheck refuses it).
        let result = declared::run_eval_command(code, command, settings.test_timeout)
            .unwrap_or_else(|why| {
                EvalResult::new("eval_command", Tier::Project, 0.0, 1.0, false, why)
            });
        measured.push_project(result);
    }
    let report = measured.score(baseline.as_ref(), settings);
    write_last_eval(store, &report);
    Ok(report)
}

/// What one run of every dimension produced in a checkout, before growth is scored:
/// growth is relative, so the same measurement can be scored against any reference
/// (the store's baseline for `factory eval`, the base commit's numbers for precheck).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    /// Where it was measured (a cached one is re-rooted at the checkout reusing it).
    #[serde(skip)]
    root: PathBuf,
    language: String,
    hygiene: hygiene::HygieneRun,
    additions: Vec<EvalResult>,
    custom: Vec<EvalResult>,
}

/// Runs every dimension in `code` and nothing else: no file is read from or written to
/// any `.factory/` (the caller decides what the result is compared with).
pub fn measure(code: &Path, settings: &EvalSettings) -> Measurement {
    measure_with(code, settings, None)
}

/// [`measure`], with the `tests` check answered by a test run already made in `code`
/// (the test guard's) when it is the same suite ([`hygiene::KnownTests::serves`]).
pub fn measure_with(
    code: &Path,
    settings: &EvalSettings,
    known: Option<&hygiene::KnownTests>,
) -> Measurement {
    let profile = match &settings.profile {
        Some(p) => p.to_project_profile(),
        None => introspect(code),
    };
    let hygiene = hygiene::run_hygiene_with(
        code,
        &profile,
        settings.test_timeout,
        &settings.progress,
        known,
    );
    let additions = project::run_score_py(code, settings.test_timeout).unwrap_or_default();
    let custom = settings
        .project_dimensions
        .iter()
        .map(|d| {
            settings
                .progress
                .say(&format!("{}: `{}`", d.name, d.command));
            project::run_dimension(code, d)
        })
        .collect();
    Measurement {
        root: code.to_path_buf(),
        language: profile.language.as_str().to_string(),
        hygiene,
        additions,
        custom,
    }
}

/// Whether any dimension of `code` under `settings` varies between runs on the same
/// code: `eval/score.py`, a project dimension not deterministic, or an eval command
/// (`eval_command`, which the gate runs itself). Hygiene checks (build, tests, lint,
/// format, types, coverage) never do: flakiness is the test guard's to measure.
pub fn has_varying(code: &Path, settings: &EvalSettings, eval_command: bool) -> bool {
    eval_command
        || code.join("eval").join("score.py").is_file()
        || settings
            .project_dimensions
            .iter()
            .any(|d| !d.is_deterministic())
}

/// Another run of `first`'s checkout measuring only what varies (see [`has_varying`]):
/// the hygiene checks and deterministic project dimensions are `first`'s results, the
/// rest is measured again. The eval command is the caller's to push.
pub fn remeasure_varying(first: &Measurement, settings: &EvalSettings) -> Measurement {
    let code = first.root.as_path();
    let additions = project::run_score_py(code, settings.test_timeout).unwrap_or_default();
    let custom = settings
        .project_dimensions
        .iter()
        .enumerate()
        .map(|(i, d)| match first.custom.get(i) {
            Some(done) if d.is_deterministic() => done.clone(),
            _ => {
                settings
                    .progress
                    .say(&format!("{}: `{}`", d.name, d.command));
                project::run_dimension(code, d)
            }
        })
        .collect();
    Measurement {
        root: first.root.clone(),
        language: first.language.clone(),
        hygiene: first.hygiene.clone(),
        additions,
        custom,
    }
}

impl Measurement {
    /// This measurement as if made at `code`: a cached base measurement reused in a new
    /// checkout of the same commit, where later runs measure what varies.
    pub fn rooted_at(mut self, code: &Path) -> Self {
        self.root = code.to_path_buf();
        self
    }

    /// The command each hygiene check ran, and whether it succeeded: a guard command
    /// that is the same command reuses this instead of running again.
    pub fn command_results(&self) -> &[(String, bool)] {
        &self.hygiene.commands
    }

    /// The numbers growth dimensions of another measurement are compared with, when
    /// this one is the reference.
    pub fn as_baseline(&self, source: &str) -> Baseline {
        growth::baseline_from(
            self.hygiene.test_counts.map(|c| c.passed),
            self.hygiene.coverage,
            None,
            source,
        )
    }

    /// Takes `n` passing tests off this measurement's count: tests that prove nothing
    /// about the change are no growth.
    pub fn discount_tests(&mut self, n: u64) {
        if let Some(c) = self.hygiene.test_counts.as_mut() {
            c.passed = c.passed.saturating_sub(n);
        }
    }

    /// The checks that could not start in this checkout (a program or module missing),
    /// and a failed build ([`crate::worktrees::setup::StartKind::BuildFailed`]).
    pub fn start_failures(&self) -> &[crate::worktrees::setup::StartFailure] {
        &self.hygiene.start_failures
    }

    /// Adds a project dimension measured outside [`measure`] (the gate's eval command).
    pub fn push_project(&mut self, result: EvalResult) {
        self.custom.push(result);
    }

    /// Scores growth against `baseline` and merges every tier into the composite.
    pub fn score(&self, baseline: Option<&Baseline>, settings: &EvalSettings) -> EvalReport {
        let (growth, growth_skipped) = growth::growth_results(&self.hygiene, baseline);
        let mut skipped = self.hygiene.skipped.clone();
        skipped.extend(
            growth_skipped
                .into_iter()
                .map(|(name, reason)| Skipped { name, reason }),
        );
        let merged = score::merge_all(
            self.hygiene.results.clone(),
            self.additions.clone(),
            growth,
            self.custom.clone(),
            &settings.weights,
        );
        // A threshold relative to the base reads the baseline's composite; with none
        // recorded yet there is nothing to fall below.
        let floor = settings
            .threshold
            .floor(baseline.and_then(|b| b.composite))
            .unwrap_or(0.0);
        let mut composite = compute_composite(merged, Vec::new(), floor);
        composite.below_floors =
            score::below_fixed_floors(&composite.results, &settings.dimension_thresholds);
        composite.passed &= composite.below_floors.is_empty();
        EvalReport {
            project: self.root.clone(),
            language: self.language.clone(),
            composite,
            skipped,
            test_count: self.hygiene.test_counts.map(|c| c.passed),
            coverage: self.hygiene.coverage,
            baseline: baseline.cloned(),
            profile: settings.profile_state(),
        }
    }
}

/// Records `report` as the baseline when none exists yet and `.factory/` does: the
/// first measurement is what growth is measured against until an experiment is kept.
/// Returns the baseline recorded, if any. `factory eval` calls this; precheck does not,
/// so an experiment under review never becomes its own baseline.
pub fn record_first_baseline(
    root: &Path,
    report: &EvalReport,
) -> Result<Option<Baseline>, BaselineError> {
    if report.baseline.is_some()
        || !FactoryPaths::new(root).dir().is_dir()
        || load_baseline(root)?.is_some()
    {
        return Ok(None);
    }
    record_baseline(root, report, "first eval").map(Some)
}

/// Records this report's numbers as the baseline (call after a keep verdict).
pub fn record_baseline(
    root: &Path,
    report: &EvalReport,
    source: &str,
) -> Result<Baseline, BaselineError> {
    let baseline = growth::baseline_from(
        report.test_count,
        report.coverage,
        Some(parity_total(&report.composite)),
        source,
    );
    save_baseline(root, &baseline)?;
    Ok(baseline)
}

/// The composite this state would score measured against itself: growth dimensions are
/// relative to the baseline, so once these numbers *are* the baseline each scores its
/// parity value. Precheck compares the next experiment with this, so an experiment that
/// changes nothing is not a regression merely because the last one grew.
pub fn parity_total(composite: &CompositeScore) -> f64 {
    composite
        .results
        .iter()
        .map(|r| {
            r.weight
                * if r.tier == Tier::Growth {
                    growth::PARITY
                } else {
                    r.score
                }
        })
        .sum()
}

pub fn last_eval_path(root: &Path) -> PathBuf {
    FactoryPaths::new(root).last_eval_json()
}

/// Best-effort: only when `.factory/` exists, and a failed write is ignored (spec §8.5).
fn write_last_eval(root: &Path, report: &EvalReport) {
    let dir = root.join(".factory");
    if !dir.is_dir() {
        return;
    }
    if let Ok(text) = serde_json::to_string_pretty(report)
        && let Err(e) = write_atomic(&last_eval_path(root), text.as_bytes())
    {
        tracing::warn!("could not write .factory/last_eval.json: {e}");
    }
}

/// Reads `.factory/last_eval.json`; `None` when absent or unreadable.
pub fn load_last_eval(root: &Path) -> Option<EvalReport> {
    read_last_eval(root).ok().flatten()
}

/// Reads `.factory/last_eval.json`: `Ok(None)` when absent, `Err` saying why when it
/// cannot be read or is not an eval report (for readers that show the reason).
pub fn read_last_eval(root: &Path) -> Result<Option<EvalReport>, String> {
    read_report(&last_eval_path(root))
}

/// Reads an eval report written by factory (`last_eval.json`, an experiment's
/// `precheck_eval.json`): `Ok(None)` when absent, `Err` saying why it is unusable.
pub fn read_report(path: &Path) -> Result<Option<EvalReport>, String> {
    use crate::sys::files::{JsonFileError, read_json};
    read_json(path).map_err(|e| match e {
        JsonFileError::Io(e) => format!("cannot read {}: {e}", path.display()),
        JsonFileError::Invalid(e) => format!("{} is not an eval report: {e}", path.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(results: Vec<EvalResult>) -> EvalReport {
        EvalReport {
            project: PathBuf::from("."),
            language: "python".into(),
            composite: compute_composite(results, Vec::new(), 0.0),
            skipped: Vec::new(),
            test_count: None,
            coverage: None,
            baseline: None,
            profile: ProfileState::None,
        }
    }

    #[test]
    fn a_saturated_composite_or_one_only_growth_can_move_is_named() {
        let dim =
            |name: &str, tier: Tier, score: f64| EvalResult::new(name, tier, score, 1.0, true, "");
        let full = report(vec![
            dim("lint", Tier::Hygiene, 1.0),
            dim("p", Tier::Project, 1.0),
        ]);
        assert!(full.saturation().unwrap().contains("saturated (1.000)"));
        let growth_only = report(vec![
            dim("lint", Tier::Hygiene, 1.0),
            dim("test_count", Tier::Growth, 0.5),
        ]);
        assert!(
            growth_only
                .saturation()
                .unwrap()
                .contains("only more tests or coverage")
        );
        assert!(
            growth_only
                .render_table()
                .contains("warning: every dimension but growth")
        );
        let room = report(vec![
            dim("lint", Tier::Hygiene, 0.8),
            dim("test_count", Tier::Growth, 0.5),
        ]);
        assert_eq!(room.saturation(), None);
        assert!(!room.render_table().contains("warning:"));
    }
}
