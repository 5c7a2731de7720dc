//! `FactoryConfig` and its nested models (spec §6.2, §6.4, §10.2): the machine form of
//! `factory.md`, stored as `.factory/config.json`.
//!
//! Every struct denies unknown fields and serde performs no coercion (a string is never
//! read as a number), matching the spec's strict models. Range rules serde cannot
//! express (`test_timeout >= 1`, `parallel_hypotheses` in 1..=8, ...) are checked by
//! [`FactoryConfig::validate`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::threshold::Threshold;

/// Default for [`FactoryConfig::test_timeout`], in seconds.
pub const DEFAULT_TEST_TIMEOUT: u64 = 600;

/// A project's factory configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactoryConfig {
    /// What the improvement loop is for, in the user's words.
    pub goal: String,
    /// Glob patterns (`**` recursive) of files experiments may change. A changed file
    /// matching none of them is a scope violation.
    pub scope: Vec<String>,
    /// Shell commands that must succeed for any keep verdict.
    pub guards: Vec<String>,
    /// The command that prints the project's eval score.
    pub eval_command: String,
    /// How low the composite may be: a fixed score (compared with the normalized
    /// total), or relative to the base commit (`base`, `base - 0.02`).
    pub eval_threshold: Threshold,
    /// Rules the agents must respect, in prose.
    pub constraints: Vec<String>,
    /// Backlog-first hypothesis quotas.
    #[serde(default)]
    pub hypothesis_budget: HypothesisBudget,
    /// Branch experiments are based on and merged into.
    #[serde(default = "default_target_branch")]
    pub target_branch: String,
    /// A quick command proving the project still builds/runs.
    #[serde(default)]
    pub smoke_test: String,
    /// User-defined eval dimensions.
    #[serde(default)]
    pub project_eval: Vec<ProjectEvalDimension>,
    /// Floors on single dimensions, by name (`coverage: base - 0.01`, `tests: 1.0`).
    /// Without one a dimension may not regress beyond its noise when nothing improved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dimension_thresholds: BTreeMap<String, Threshold>,
    /// Split of the composite score between tiers.
    #[serde(default)]
    pub eval_weights: EvalWeights,
    /// Research-mode objective.
    #[serde(default)]
    pub research_target: Option<ResearchTarget>,
    /// Multi-run-per-cycle aggregation and plateau detection.
    #[serde(default)]
    pub inner_loop: Option<InnerLoopConfig>,
    /// Outer (graph-evolution) loop settings.
    #[serde(default)]
    pub outer_loop: Option<OuterLoopConfig>,
    /// Files research experiments may change.
    #[serde(default)]
    pub mutable_surfaces: Vec<String>,
    /// Glob patterns no experiment may touch, whatever the scope says.
    #[serde(default)]
    pub fixed_surfaces: Vec<String>,
    /// Research-mode rules, in prose.
    #[serde(default)]
    pub research_constraints: Vec<String>,
    /// Spend caps.
    #[serde(default)]
    pub cost_budget: Option<CostBudgetConfig>,
    /// Checks whose failure forces a revert the CEO cannot override.
    #[serde(default)]
    pub hard_constraints: Vec<HardConstraint>,
    /// Eval specification lines, in prose.
    #[serde(default)]
    pub eval_spec: Vec<String>,
    /// Per-dimension weight overrides in the hygiene tier.
    #[serde(default)]
    pub hygiene_weights: Option<TierWeights>,
    /// Per-dimension weight overrides in the growth tier.
    #[serde(default)]
    pub growth_weights: Option<TierWeights>,
    /// GAN-style generator/discriminator eval loop.
    #[serde(default)]
    pub adversarial: Option<AdversarialConfig>,
    /// Parallel hypotheses.
    #[serde(default)]
    pub parallel: Option<ParallelConfig>,
    /// Open clean pull requests (only chosen paths).
    #[serde(default)]
    pub clean_pr: bool,
    /// Paths a clean PR includes.
    #[serde(default)]
    pub clean_pr_include: Vec<String>,
    /// Paths a clean PR leaves out.
    #[serde(default)]
    pub clean_pr_exclude: Vec<String>,
    /// Seconds a test run may take (at least 1).
    #[serde(default = "default_test_timeout")]
    pub test_timeout: u64,
    /// Shell commands run, in order, in each pristine checkout the gate measures (and
    /// `factory doctor` checks) before any eval or test run there (`## Setup`: `npm ci`,
    /// `python3 -m venv .venv && .venv/bin/pip install -e .`, `go mod download`), each
    /// limited to `test_timeout`. One that fails makes the precheck an error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// How many times precheck measures each side (base and head), interleaved, to
    /// tell an improvement from noise (factory.md `## Eval runs`; 1..=20, default 3).
    #[serde(default = "default_eval_runs")]
    pub eval_runs: u32,
    /// The agent runner for this project (`## Runner`); below the command line and the
    /// environment, above `~/.factory/config.toml` (docs/configuration.md).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub runner: String,
    /// Where the project's runs place their agents and the gate's commands
    /// (`## Placement`: `host` or `sandbox`); below `--placement` (docs/sandbox.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<factory_compiler::ir::Placement>,
    /// `role: model` lines (`## Models`); `default: model` applies to every role.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// Sections of `factory.md` under headings no field knows, keyed by the heading in
    /// lower snake case, so they survive until a field is added for them (spec §9.4).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_sections: BTreeMap<String, String>,
}

/// `main`: the target branch when factory.md names none.
pub fn default_target_branch() -> String {
    "main".to_owned()
}
/// Default for [`FactoryConfig::eval_runs`].
pub const DEFAULT_EVAL_RUNS: u32 = 3;
fn default_eval_runs() -> u32 {
    DEFAULT_EVAL_RUNS
}
fn default_test_timeout() -> u64 {
    DEFAULT_TEST_TIMEOUT
}

/// Backlog-first hypothesis quotas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HypothesisBudget {
    /// Minimum growth hypotheses per cycle.
    #[serde(default = "two")]
    pub min_growth: u32,
    /// Maximum brand-new (non-backlog) hypotheses per cycle.
    #[serde(default = "two")]
    pub max_new: u32,
}
fn two() -> u32 {
    2
}
impl Default for HypothesisBudget {
    fn default() -> Self {
        Self {
            min_growth: 2,
            max_new: 2,
        }
    }
}

/// A check whose non-zero exit is a mandatory revert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardConstraint {
    /// Short name.
    pub name: String,
    /// Shell command; non-zero exit means violated.
    pub check: String,
    /// Why it exists.
    #[serde(default)]
    pub description: String,
}

/// How a project eval's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalParse {
    /// stdout is JSON with a `score`.
    Json,
    /// Exit 0 scores 1.0, anything else 0.0.
    ExitCode,
}

/// A user-defined project eval dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectEvalDimension {
    /// Dimension name.
    pub name: String,
    /// Shell command producing the measurement.
    pub command: String,
    /// How to read the output.
    #[serde(default = "default_parse")]
    pub parse: EvalParse,
    /// Relative weight within the project tier.
    #[serde(default = "one")]
    pub weight: f64,
    /// Seconds before the command is killed.
    #[serde(default = "default_dim_timeout")]
    pub timeout: u64,
    /// What it measures.
    #[serde(default)]
    pub description: String,
    /// Whether it gives the same result every run on the same code. A deterministic
    /// dimension is measured once per side by the gate; one that varies (a timing) is
    /// measured `Eval runs` times, interleaved. Unset: exit-code dimensions are
    /// deterministic, number- and JSON-reading ones are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deterministic: Option<bool>,
}

impl ProjectEvalDimension {
    /// Whether the gate may measure it once per side (see [`Self::deterministic`]).
    pub fn is_deterministic(&self) -> bool {
        self.deterministic
            .unwrap_or(matches!(self.parse, EvalParse::ExitCode))
    }
}

fn default_parse() -> EvalParse {
    EvalParse::ExitCode
}
fn one() -> f64 {
    1.0
}
fn default_dim_timeout() -> u64 {
    300
}

/// Split of the composite score between tiers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalWeights {
    /// Hygiene tier weight.
    #[serde(default = "half")]
    pub hygiene: f64,
    /// Growth tier weight.
    #[serde(default = "half")]
    pub growth: f64,
    /// Project tier weight.
    #[serde(default)]
    pub project: f64,
}
fn half() -> f64 {
    0.5
}
impl Default for EvalWeights {
    fn default() -> Self {
        Self {
            hygiene: 0.5,
            growth: 0.5,
            project: 0.0,
        }
    }
}

/// Sparse per-dimension weight overrides within a tier: dimensions not named keep
/// their default weight.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TierWeights(pub BTreeMap<String, f64>);

/// Research-mode objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResearchTarget {
    /// What is being optimized, in prose.
    pub objective: String,
    /// Metric name.
    pub metric: String,
    /// Value that counts as success, if any.
    #[serde(default)]
    pub target: Option<f64>,
    /// Command that runs one experiment.
    pub run_command: String,
    /// File the run writes its result to.
    #[serde(default)]
    pub result_path: Option<String>,
    /// How to read the result.
    #[serde(default)]
    pub result_parser: Option<String>,
    /// Seconds before the run is killed.
    #[serde(default = "default_research_timeout")]
    pub timeout: u64,
    /// Whether higher metric values are better.
    #[serde(default = "yes")]
    pub higher_is_better: bool,
}
fn default_research_timeout() -> u64 {
    3600
}
fn yes() -> bool {
    true
}

/// How repeated runs of one cycle are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregateMethod {
    /// Arithmetic mean.
    Mean,
    /// Median.
    Median,
    /// Best run.
    Max,
    /// Every run must pass.
    AllPass,
}

/// Multi-run-per-cycle aggregation and plateau detection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InnerLoopConfig {
    /// Runs per cycle.
    #[serde(default = "one_u32")]
    pub runs_per_cycle: u32,
    /// How runs are combined.
    #[serde(default = "default_aggregate")]
    pub aggregate: AggregateMethod,
    /// Cycles without improvement that count as a plateau.
    #[serde(default = "default_plateau")]
    pub plateau_threshold: u32,
}
fn one_u32() -> u32 {
    1
}
fn default_aggregate() -> AggregateMethod {
    AggregateMethod::Mean
}
fn default_plateau() -> u32 {
    3
}

/// Outer (graph-evolution) loop settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OuterLoopConfig {
    /// Maximum outer cycles.
    #[serde(default = "default_outer_cycles")]
    pub max_outer_cycles: u32,
    /// Surfaces the inner loop may change.
    #[serde(default)]
    pub inner_mutable_surfaces: Vec<String>,
    /// Surfaces the outer loop may change.
    #[serde(default)]
    pub outer_mutable_surfaces: Vec<String>,
}
fn default_outer_cycles() -> u32 {
    5
}

/// Spend caps in US dollars.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostBudgetConfig {
    /// Cap per cycle.
    #[serde(default)]
    pub per_cycle_usd: Option<f64>,
    /// Cap over all cycles.
    #[serde(default)]
    pub total_usd: Option<f64>,
}

/// Which side of the adversarial loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdversarialRole {
    /// Produces the thing being judged.
    Generator,
    /// Judges it.
    Discriminator,
}

impl AdversarialRole {
    /// The other role.
    pub fn other(self) -> Self {
        match self {
            Self::Generator => Self::Discriminator,
            Self::Discriminator => Self::Generator,
        }
    }
}

/// One side of a GAN-style eval loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdversarialComponent {
    /// Generator or discriminator.
    pub role: AdversarialRole,
    /// Command that scores this side.
    pub eval_command: String,
    /// Name of the metric it reports.
    pub metric_name: String,
    /// Score at or above which a round counts as "above".
    pub threshold: f64,
    /// Files this side may change.
    #[serde(default)]
    pub scope: Vec<String>,
    /// Seconds before the eval is killed.
    #[serde(default = "default_dim_timeout")]
    pub timeout: u64,
}

/// A generator/discriminator pair with hysteresis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdversarialConfig {
    /// The generator side.
    pub generator: AdversarialComponent,
    /// The discriminator side.
    pub discriminator: AdversarialComponent,
    /// Consecutive above-threshold rounds before the active role switches.
    #[serde(default = "default_hysteresis")]
    pub hysteresis: u32,
    /// Stop after this many rounds, if set.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// Both roles' streaks must reach this to declare convergence.
    #[serde(default = "default_window")]
    pub convergence_window: u32,
}
fn default_hysteresis() -> u32 {
    3
}
fn default_window() -> u32 {
    5
}

/// How a best branch is picked among parallel hypotheses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionStrategy {
    /// Highest composite score wins.
    #[default]
    BestScore,
}

impl SelectionStrategy {
    /// Every strategy, for parsing and for messages listing them.
    pub const ALL: &'static [SelectionStrategy] = &[SelectionStrategy::BestScore];

    /// The name written in factory.md and config.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BestScore => "best_score",
        }
    }

    /// The strategy named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.as_str() == name)
    }
}

/// The `## Parallel` section of factory.md: how parallel improve fans out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelConfig {
    /// How many hypotheses run at once (1..=[`MAX_PARALLEL`]); `None` leaves it to the
    /// workflow's `parallel` count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_hypotheses: Option<u32>,
    /// How the winner is chosen.
    #[serde(default)]
    pub selection_strategy: SelectionStrategy,
}

pub use factory_compiler::ir::conventions::MAX_PARALLEL;

/// Why `n` cannot be `parallel_hypotheses`, if it cannot: the compiler's rule for a
/// `parallel` count, so factory.md and the workflow agree.
pub fn parallel_hypotheses_problem(n: i64) -> Option<String> {
    (!factory_compiler::ir::conventions::parallel_count_ok(n)).then(|| {
        format!("`parallel_hypotheses` is {n}; write a whole number from 1 to {MAX_PARALLEL} (e.g. `parallel_hypotheses: 3`)")
    })
}

impl FactoryConfig {
    /// Checks the rules serde cannot: ranges and non-empty required text. Returns
    /// every problem found, each naming the field.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        if self.goal.trim().is_empty() {
            problems.push("`goal` is empty".to_owned());
        }
        if self.eval_command.trim().is_empty() {
            problems.push("`eval_command` is empty".to_owned());
        }
        if self.test_timeout < 1 {
            problems.push("`test_timeout` must be at least 1".to_owned());
        }
        if !(1..=20).contains(&self.eval_runs) {
            problems.push(format!(
                "`eval_runs` is {}; it must be between 1 and 20",
                self.eval_runs
            ));
        }
        if let Some(problem) = self
            .parallel
            .as_ref()
            .and_then(|p| p.parallel_hypotheses)
            .and_then(|n| parallel_hypotheses_problem(i64::from(n)))
        {
            problems.push(format!("`parallel`: {problem}"));
        }
        if let Some(a) = &self.adversarial {
            if a.generator.role != AdversarialRole::Generator {
                problems.push("`adversarial.generator.role` must be `generator`".to_owned());
            }
            if a.discriminator.role != AdversarialRole::Discriminator {
                problems
                    .push("`adversarial.discriminator.role` must be `discriminator`".to_owned());
            }
            if a.hysteresis < 1 || a.convergence_window < 1 {
                problems.push(
                    "`adversarial.hysteresis` and `convergence_window` must be at least 1"
                        .to_owned(),
                );
            }
        }
        for d in &self.project_eval {
            if d.weight < 0.0 || !d.weight.is_finite() {
                problems.push(format!("project eval `{}` has a negative weight", d.name));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}
