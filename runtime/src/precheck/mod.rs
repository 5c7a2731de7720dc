//! Precheck (spec §8.16): the non-overridable gate before a keep verdict. It aggregates
//! score direction and threshold, the guards (scope, fixed surfaces, eval/ immutability,
//! tests kept, clean tree, experiment branch), anti-pattern similarity, hard constraints,
//! and proof that QA ran. One failing check fails the whole: there is no partial pass.

mod base_cache;
mod cause;
mod checks;
mod commands;
mod direction;
mod qa;
pub mod sides;
mod threshold;

pub use cause::{gate_config, revert_cause};

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use direction::VerdictClass;
pub use sides::{Comparison, SideStats};

use checks::{
    anti_pattern_check, experiment_hypothesis, guard_checks, guard_outcomes, guard_results,
};
use commands::{guard_commands, hard_constraints};
use direction::{changed_paths, score_direction};

pub use qa::{
    QA_ROLES, REQUIRED_QA_ROLES, check_qa_execution, confirmed_behaviour_changes,
    last_qa_completion, qa_completion, qa_outcome,
};

use crate::eval::{self, EvalReport, EvalSettings};
use crate::guards;
use crate::guards::tests_kept::{KeptBaseTests, attribution};
use crate::project::config::{FactoryConfig, Threshold};
use crate::store::{GateConfig, Verdict, load_history};

/// Below this a score counts as lower (floating-point noise is not a regression).
const SCORE_EPSILON: f64 = 1e-9;

/// One aggregated check.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CheckOutcome {
    pub name: String,
    pub passed: bool,
    /// Why it failed, or what it verified.
    pub details: Vec<String>,
}

impl CheckOutcome {
    pub fn pass(name: &str, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            passed: true,
            details: vec![detail.into()],
        }
    }
    pub fn fail(name: &str, details: Vec<String>) -> Self {
        Self {
            name: name.into(),
            passed: false,
            details,
        }
    }
}

/// The aggregate.
#[derive(Debug, Clone, Serialize)]
pub struct PrecheckReport {
    pub passed: bool,
    /// Names of the failed checks.
    pub failures: Vec<String>,
    pub checks: Vec<CheckOutcome>,
    /// The composite the score checks used.
    pub score: Option<f64>,
    /// What that composite was compared with: the recorded baseline, else the last
    /// kept experiment's score; `None` before anything was measured or kept.
    pub score_before: Option<f64>,
    /// The eval the score checks used (a keep records it as the new baseline).
    #[serde(skip)]
    pub eval: Option<EvalReport>,
    /// With `--exp`: both sides' runs, means, spreads, the margin and the noise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// With `--exp`, when it passed: why it may be kept — `improved` (the score rose
    /// beyond the noise) or `neutral` (no regression, and evidence the eval cannot
    /// score: a fail-to-pass test, every base test passing, docs or config only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<VerdictClass>,
    /// The gate configuration judged under (factory.md and eval profile); `None`
    /// without a factory.md.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateConfig>,
}

impl PrecheckReport {
    fn from_checks(
        checks: Vec<CheckOutcome>,
        eval: Option<EvalReport>,
        score_before: Option<f64>,
    ) -> Self {
        let score = eval.as_ref().map(|r| r.composite.total);
        let failures: Vec<String> = checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name.clone())
            .collect();
        Self {
            passed: failures.is_empty(),
            failures,
            checks,
            score,
            score_before,
            eval,
            comparison: None,
            class: None,
            gate: None,
        }
    }

    /// One line per check, then the verdict.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            let mark = if c.passed { "pass" } else { "FAIL" };
            out.push_str(&format!("{mark}  {}\n", c.name));
            for d in &c.details {
                out.push_str(&format!("      {}\n", d.replace('\n', "\n      ")));
            }
        }
        if self.passed {
            out.push_str("precheck passed\n");
        } else {
            out.push_str(&format!("precheck FAILED: {}\n", self.failures.join(", ")));
        }
        out
    }
}

/// What to check beyond the configuration.
#[derive(Debug, Clone, Default)]
pub struct PrecheckOptions {
    /// Where "now running …" lines go (nowhere by default).
    pub progress: crate::sys::progress::Progress,
    /// The experiment being judged; enables the QA-execution check and supplies the
    /// hypothesis for anti-pattern matching.
    pub exp_id: Option<u32>,
    /// Overrides the experiment's hypothesis text.
    pub hypothesis: Option<String>,
    /// Score a previously written `.factory/last_eval.json` instead of running eval.
    /// Off by default: a file in the project is not proof of anything.
    pub use_last_eval: bool,
    /// Skip the clean-tree guard (uncommitted work is allowed).
    pub allow_dirty: bool,
    /// Where the code under judgement is checked out (an experiment's worktree);
    /// `None` means the project root. Config, history, baseline and the event log are
    /// always the project's.
    pub code_dir: Option<PathBuf>,
    /// The commit the changed files are measured from (an experiment's recorded base);
    /// `None` means the merge base with `target_branch`.
    pub base_commit: Option<String>,
    /// Overrides the configured `target_branch` (the branch the experiment really
    /// started from, when the configured one did not exist).
    pub target_branch: Option<String>,
    /// Where the gate's commands run (docs/sandbox.md); `None`: factory.md's
    /// `## Placement` at the base, else the host. In the sandbox each side's commands
    /// are confined to its own scratch checkout, without network.
    pub placement: Option<crate::placement::Placement>,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum PrecheckError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Eval(#[from] eval::EvalError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] crate::events::EventsError),
    /// A side could not be written into its scratch checkout.
    #[error("cannot check out the {side} commit {commit} for measuring: {reason}")]
    #[diagnostic(
        code(factory::precheck::scratch),
        help(
            "the gate measures pristine checkouts in the system temp directory; check that it is writable (TMPDIR) and that fixed_surfaces patterns are valid"
        )
    )]
    Scratch {
        side: String,
        commit: String,
        reason: String,
    },
    /// The declared eval could not produce a score: the precheck is an error, not a fail.
    #[error("the eval could not measure the {side} commit {commit}: {reason}")]
    #[diagnostic(
        code(factory::precheck::measurement),
        help(
            "factory.md's `Eval command` must exit 0 and print a score between 0 and 1 (a JSON object's `score`, or a number) within test_timeout; run it by hand in a clean checkout of that commit"
        )
    )]
    Measurement {
        side: String,
        commit: String,
        reason: String,
    },
    /// A `## Setup` command failed in a side's checkout: nothing there can be measured.
    #[error(
        "could not measure the {side} commit {commit}: its `## Setup` command `{command}` failed: {reason}"
    )]
    #[diagnostic(
        code(factory::precheck::setup),
        help(
            "each `## Setup` command in factory.md (as committed at the base) must exit 0 in a clean checkout of the commit within test_timeout; try it by hand (`git worktree add /tmp/try <commit>`, then run it there) and check the whole set-up with `factory doctor`"
        )
    )]
    Setup {
        side: String,
        commit: String,
        command: String,
        reason: String,
    },
    /// The provenance probe could not show that the code under test comes from the side's
    /// own checkout.
    #[error(
        "could not measure the {side} commit {commit}: the code under test does not come from its checkout: {reason}"
    )]
    #[diagnostic(
        code(factory::precheck::provenance),
        help(
            "give each side its own environment through factory.md's `## Setup` (docs/gate.md, \"Set-up and provenance\"), then check it with `factory doctor`"
        )
    )]
    Provenance {
        side: String,
        commit: String,
        reason: String,
    },
    /// An eval check could not start in a side's checkout (a program or module missing),
    /// or the build fails at the base: a score of 0 would compare environments.
    #[error("could not measure the {side} commit {commit}: the {check} check `{command}` {cause}")]
    #[diagnostic(
        code(factory::precheck::cannot_start),
        help(
            "install what the check needs in each side's checkout through factory.md's `## Setup` (`npm ci`, a per-side .venv with the project installed), or fix the base; `factory doctor` sets up and probes a clean checkout of HEAD"
        )
    )]
    CannotStart {
        side: String,
        commit: String,
        check: String,
        command: String,
        cause: String,
    },
}

/// Runs every check for the project at `root` under `config`.
pub fn run_precheck(
    root: &Path,
    config: &FactoryConfig,
    opts: &PrecheckOptions,
) -> Result<PrecheckReport, PrecheckError> {
    let mut checks = Vec::new();
    let code = opts.code_dir.as_deref().unwrap_or(root);

    let settings = EvalSettings::from_config(config).with_profile_of(root);
    let report = if opts.use_last_eval {
        eval::load_last_eval(root)
    } else {
        Some(eval::run_eval_at(code, root, &settings)?)
    };
    // The project's own factory.md: what `precheck --exp` reads at the base commit.
    let factory_md =
        std::fs::read(crate::project::layout::FactoryPaths::new(root).factory_md()).ok();
    let gate = gate_config(factory_md.as_deref(), settings.profile.as_ref());
    let history = load_history(root)?;
    let kept_score = history
        .with_verdict(Verdict::Keep)
        .filter_map(|r| r.score_after)
        .last();
    let (score_results, score_before) =
        score_checks(root, report.as_ref(), config.eval_threshold, kept_score)?;
    checks.extend(score_results);

    checks.extend(guard_checks(code, config, opts));
    checks.push(anti_pattern_check(&history, opts, gate.as_ref()));
    checks.push(hard_constraints(code, config));
    checks.push(check_qa_execution(root, opts.exp_id)?);
    let mut report = PrecheckReport::from_checks(checks, report, score_before);
    report.gate = gate;
    Ok(report)
}

/// Meets the threshold and does not fall below the last kept score. Also returns the
/// score compared with.
fn score_checks(
    root: &Path,
    report: Option<&EvalReport>,
    threshold: Threshold,
    kept_score: Option<f64>,
) -> Result<(Vec<CheckOutcome>, Option<f64>), PrecheckError> {
    let Some(report) = report else {
        let why = format!(
            "no readable {}; run `factory eval` first",
            eval::last_eval_path(root).display()
        );
        return Ok((
            vec![
                CheckOutcome::fail("threshold", vec![why.clone()]),
                CheckOutcome::fail("score_direction", vec![why]),
            ],
            None,
        ));
    };
    let total = report.composite.total;
    let reference = eval::load_baseline(root)
        .map_err(eval::EvalError::from)?
        .and_then(|b| b.composite.map(|c| (c, format!("baseline ({})", b.source))))
        .or_else(|| kept_score.map(|s| (s, "last kept experiment".to_string())));
    let before = reference.as_ref().map(|(b, _)| *b);
    let mut threshold_check = match threshold.floor(before) {
        None => CheckOutcome::pass(
            "threshold",
            format!("threshold `{threshold}`: no baseline yet, so nothing to fall below"),
        ),
        Some(floor) if total + SCORE_EPSILON >= floor => CheckOutcome::pass(
            "threshold",
            format!("composite {total:.4} ≥ threshold {floor:.4} (`{threshold}`)"),
        ),
        Some(floor) => CheckOutcome::fail(
            "threshold",
            vec![format!(
                "composite {total:.4} is below the threshold {floor:.4} (`{threshold}`)"
            )],
        ),
    };
    if !report.composite.below_floors.is_empty() {
        threshold_check.passed = false;
        threshold_check
            .details
            .extend(report.composite.below_floors.iter().cloned());
    }
    let direction = match reference {
        None => CheckOutcome::pass(
            "score_direction",
            "no baseline yet; nothing to regress from",
        ),
        Some((before, what)) if total + SCORE_EPSILON >= before => CheckOutcome::pass(
            "score_direction",
            format!("composite {total:.4} ≥ {what} {before:.4}"),
        ),
        Some((before, what)) => CheckOutcome::fail(
            "score_direction",
            vec![format!(
                "composite {total:.4} regressed below {what} {before:.4} ({:+.4})",
                total - before
            )],
        ),
    };
    Ok((vec![threshold_check, direction], before))
}

/// What the experiment gate measures: the project's store, the experiment's worktree
/// (for the git-derived guards), and the two commits it compares.
#[derive(Clone)]
pub struct ExperimentSides<'a> {
    /// The project (history, event log).
    pub project: &'a Path,
    /// The experiment's worktree, project subdirectory included.
    pub code: &'a Path,
    /// The repository holding both commits.
    pub repo: &'a git2::Repository,
    /// The base commit `begin` recorded.
    pub base: git2::Oid,
    /// The experiment's head commit.
    pub head: git2::Oid,
    /// Where the project lies inside the repository.
    pub subdir: &'a Path,
    /// The target branch's tip now, when it is no longer the recorded base.
    pub target_moved: Option<(String, String)>,
}

/// The gate for an experiment (docs/gate.md): `config` is factory.md as committed at
/// the base; both sides are measured by the gate itself in scratch checkouts, k times
/// interleaved, and the head must beat the base by more than the measured noise. A
/// side the declared eval cannot measure is an error ([`PrecheckError::Measurement`]),
/// never a verdict.
pub fn run_experiment_precheck(
    config: &FactoryConfig,
    sides: &ExperimentSides<'_>,
    opts: &PrecheckOptions,
) -> Result<PrecheckReport, PrecheckError> {
    // Each scratch checkout builds into its own directory: a shared cargo target could
    // hand one side the other's binaries.
    let _isolated = crate::sys::process::IsolatedBuilds::enter();
    let mut checks = Vec::new();
    checks.push(match &sides.target_moved {
        None => CheckOutcome::pass(
            "base_commit",
            format!("measured against the recorded base {}", sides.base),
        ),
        Some((branch, tip)) => CheckOutcome::pass(
            "base_commit",
            format!(
                "target branch `{branch}` moved to {tip} after begin; measured against the recorded base {} (a moved ref is reported, never followed)",
                sides.base
            ),
        ),
    });
    checks.push(factory_md_check(config, sides));

    let fixed =
        guards::Patterns::new(&config.fixed_surfaces).map_err(|e| PrecheckError::Scratch {
            side: "head".into(),
            commit: sides.head.to_string(),
            reason: e.to_string(),
        })?;
    let none = guards::Patterns::new(&[]).map_err(|e| PrecheckError::Scratch {
        side: "base".into(),
        commit: sides.base.to_string(),
        reason: e.to_string(),
    })?;
    let base = sides::materialise(
        sides.repo,
        sides.base,
        sides.base,
        &none,
        sides.subdir,
        "base",
    )?;
    let head = sides::materialise(
        sides.repo,
        sides.head,
        sides.base,
        &fixed,
        sides.subdir,
        "head",
    )?;
    // From here on, every command of a side runs confined to that side's checkout.
    let (_placed, placement) = gate_placement(opts, config, sides.project, &base, &head);
    checks.push(placement);
    let timeout = Duration::from_secs(config.test_timeout.max(1));
    let mut settings = EvalSettings::from_config(config).with_profile_of(sides.project);
    settings.progress = opts.progress.clone();
    let command =
        (!sides::is_builtin_eval(&config.eval_command)).then_some(config.eval_command.as_str());
    // A base measured before under the same configuration, set-up and toolchain is kept
    // (its eval when nothing varies, and its test run): a base with both kept is not
    // set up or run at all, unless a failure at the head must be confirmed on it.
    let base_cache = base_cache::BaseCache::new(
        sides.project,
        &sides.base.to_string(),
        &settings,
        &config.setup,
        command,
    );
    let varying = eval::has_varying(base.code(), &settings, command.is_some())
        || eval::has_varying(head.code(), &settings, command.is_some());
    let kept_base = (!varying).then(|| base_cache.load(base.code())).flatten();
    let base_all_kept = kept_base.is_some() && base_cache.tests_file().is_file();
    checks.push(sides::prepare_sides(
        &base,
        &head,
        &config.setup,
        timeout,
        &opts.progress,
        base_all_kept,
    )?);
    checks.push(eval_profile_check(&settings));

    // The guards run first: the tests' evidence decides what the score may count.
    let history = load_history(sides.project)?;
    let declared = attribution::Declared {
        changes: experiment_hypothesis(&history, opts)
            .as_deref()
            .map(attribution::declared_changes)
            .unwrap_or_default(),
        confirmed: opts
            .exp_id
            .map(|id| confirmed_behaviour_changes(sides.project, id))
            .unwrap_or_default(),
    };
    opts.progress.say(
        "guards: every commit from base to head, and the tests at both and across sides (tests_kept)",
    );
    let guards = guard_results(
        sides.code,
        config,
        opts,
        declared,
        Some(checks::GateCheckouts {
            base: base.root().to_path_buf(),
            head: head.root().to_path_buf(),
            kept_base_tests: Some(KeptBaseTests {
                file: base_cache.tests_file(),
                set_up_first: base_all_kept,
            }),
        }),
    );
    let evidence = guards.iter().find_map(|g| g.evidence.clone());
    let unproven = evidence
        .as_ref()
        .map_or(0, |e| e.proves_nothing.len() as u64);

    let gate = gate_config(
        factory_md_at(sides, sides.base).as_deref(),
        settings.profile.as_ref(),
    );
    // The test guard ran each side's suite in these checkouts: the eval's `tests`
    // check reads a run that passed instead of making another. A side with a failure
    // is run by the eval itself, which tells a suite that could not start (an error)
    // from one that failed (a score).
    let known_tests = evidence.as_ref().and_then(|e| e.side_runs.as_ref());
    let passing = |i: usize| {
        known_tests
            .map(|k| &k[i])
            .filter(|k| k.failed == 0 && !k.timed_out && k.passed > 0)
    };
    let measured = sides::measure_sides(
        &base,
        &head,
        &settings,
        command,
        config.eval_runs,
        unproven,
        sides::Reuse {
            known_tests: [passing(0), passing(1)],
            base_cache: Some(&base_cache),
            kept_base: kept_base.as_ref(),
        },
    )?;
    let cmp = measured.comparison.clone();

    checks.push(threshold::threshold_check(
        config.eval_threshold,
        &cmp,
        &measured.below_floors,
    ));
    let summary = format!(
        "head mean {:.4} (spread {:.4}) vs base mean {:.4} (spread {:.4}) over {} interleaved run(s) each: margin {:+.4}, noise {:.4}{}",
        cmp.head.mean,
        cmp.head.spread,
        cmp.base.mean,
        cmp.base.spread,
        cmp.runs,
        cmp.margin,
        cmp.noise,
        cmp.extra_runs
            .as_deref()
            .map(|why| format!(" ({why})"))
            .unwrap_or_default()
    );
    let tests_passed = guards.iter().any(|g| g.name == "tests_kept" && g.passed);
    let changed = changed_paths(sides);
    let (direction, class) = score_direction(
        &cmp,
        &summary,
        &measured.regressed,
        tests_passed.then_some(evidence.as_ref()).flatten(),
        &changed,
    );
    let mut direction = direction;
    direction.details.extend(
        measured
            .tolerated
            .iter()
            .map(|t| format!("dimension threshold: {t}")),
    );
    if !cmp.improved
        && let Some(warning) = measured.head_report.saturation()
    {
        direction.details.push(warning);
    }
    checks.push(direction);

    checks.extend(guard_outcomes(&guards));
    if !config.guards.is_empty() {
        opts.progress.say("guard commands on the head commit");
    }
    // Guard commands and hard constraints run in the head's own environment, as its
    // eval did.
    let head_env = || crate::worktrees::setup::enter(head.code());
    {
        let _env = head_env();
        let mut already = measured.head_commands.clone();
        // A guard naming the plain form of the test runner is the test guard's run.
        if let Some(head_tests) = passing(1) {
            already.extend(
                head_tests
                    .plain_commands()
                    .iter()
                    .map(|c| (c.to_string(), true)),
            );
        }
        checks.push(guard_commands(head.code(), config, &already));
    }
    checks.push(anti_pattern_check(&history, opts, gate.as_ref()));
    {
        let _env = head_env();
        checks.push(hard_constraints(head.code(), config));
    }
    checks.push(check_qa_execution(sides.project, opts.exp_id)?);
    drop(base);
    drop(head);
    let mut report =
        PrecheckReport::from_checks(checks, Some(measured.head_report), Some(cmp.base.mean));
    report.score = Some(cmp.head.mean);
    report.comparison = Some(cmp);
    report.class = report.passed.then_some(class).flatten();
    report.gate = gate;
    Ok(report)
}

/// The gate's sandbox scope when its placement is `sandbox` (the options', else
/// factory.md's), and the `placement` check that records where its commands ran. A
/// sandbox that cannot be used here is said loudly and the gate runs on the host.
fn gate_placement(
    opts: &PrecheckOptions,
    config: &FactoryConfig,
    project: &Path,
    base: &sides::Scratch,
    head: &sides::Scratch,
) -> (Option<crate::sys::placer::Placed>, CheckOutcome) {
    use crate::placement::{Placement, Sandbox, gate::GateSandbox};
    let wanted = opts
        .placement
        .or(config.placement)
        .unwrap_or(Placement::Host);
    if wanted == Placement::Host {
        let check = CheckOutcome::pass(
            "placement",
            "host: the gate's commands ran with your rights (`--placement sandbox` or factory.md `## Placement` confines each side to its own checkout)",
        );
        return (None, check);
    }
    match Sandbox::prepare() {
        Ok(sandbox) => {
            let bound = sandbox.pids_text();
            if sandbox.fallback.is_some() {
                eprintln!(
                    "warning: the gate's commands are confined by {}",
                    crate::sys::redact::redact(&sandbox.engine_text())
                );
            }
            let engine = sandbox.engine_text();
            let gate = GateSandbox::new(
                sandbox,
                project,
                vec![base.root().to_path_buf(), head.root().to_path_buf()],
            );
            let check = CheckOutcome::pass(
                "placement",
                format!(
                    "sandbox: each side's eval, test, guard and set-up commands ran under {engine}, writable only in their own scratch checkout and the build tools' caches, with no network but a set-up's; the other side, the store and $FACTORY_HOME out of reach; {bound}"
                ),
            );
            (Some(gate.enter()), check)
        }
        Err(why) => {
            let why = crate::sys::redact::redact(&why.to_string()).into_owned();
            eprintln!(
                "warning: the sandbox cannot be used here, so the gate's commands run on the host with your full rights: {why}"
            );
            let check = CheckOutcome::pass(
                "placement",
                format!("host: the sandbox was asked for and cannot be used here ({why})"),
            );
            (None, check)
        }
    }
}

/// factory.md's bytes as committed at `commit`, if it is there.
fn factory_md_at(sides: &ExperimentSides<'_>, commit: git2::Oid) -> Option<Vec<u8>> {
    let path = sides.subdir.join("factory.md");
    let tree = sides.repo.find_commit(commit).ok()?.tree().ok()?;
    let entry = tree.get_path(&path).ok()?;
    let blob = sides.repo.find_blob(entry.id()).ok()?;
    Some(blob.content().to_vec())
}

/// factory.md is the gate's configuration: changing it inside the experiment is a scope
/// violation unless the base's scope names `factory.md` itself.
fn factory_md_check(config: &FactoryConfig, sides: &ExperimentSides<'_>) -> CheckOutcome {
    let path = sides.subdir.join("factory.md");
    let blob_at = |commit: git2::Oid| {
        sides
            .repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .ok()
            .and_then(|t| t.get_path(&path).ok().map(|e| e.id()))
    };
    if blob_at(sides.base) == blob_at(sides.head) {
        return CheckOutcome::pass("factory_md", "factory.md is unchanged from the base commit");
    }
    let allowed = config
        .scope
        .iter()
        .any(|s| s.trim().trim_start_matches("./") == "factory.md");
    if allowed {
        CheckOutcome::pass(
            "factory_md",
            "factory.md changed and is in scope; this precheck still used the base commit's",
        )
    } else {
        CheckOutcome::fail(
            "factory_md",
            vec![format!(
                "{}: factory.md was changed by the experiment; it is the gate's configuration and the base's scope does not name it (this precheck used factory.md as committed at {})",
                path.display(),
                sides.base
            )],
        )
    }
}

/// The eval profile both sides were measured with must be the approved one: a profile
/// never approved, or edited since, is named and refused.
fn eval_profile_check(settings: &EvalSettings) -> CheckOutcome {
    const NAME: &str = "eval_profile";
    match (settings.profile_state(), &settings.profile) {
        (eval::ProfileState::Approved, Some(p)) => {
            CheckOutcome::pass(NAME, format!("approved profile {}", p.content_hash()))
        }
        (eval::ProfileState::Pending, _) => CheckOutcome::fail(
            NAME,
            vec![
                ".factory/eval_profile.json is pending review (never approved, or changed since): \
                 review it, then run `factory discover --approve`"
                    .to_string(),
            ],
        ),
        _ => CheckOutcome::pass(NAME, "no eval profile: the checks introspection finds"),
    }
}
