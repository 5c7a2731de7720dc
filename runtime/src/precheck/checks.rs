//! The guards as precheck checks, and the anti-pattern check: what the hypothesis of the
//! experiment is, and whether a revert measured under the same configuration resembles it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{CheckOutcome, PrecheckOptions};
use crate::guards::tests_kept::attribution;
use crate::guards::{self, GuardInputs, GuardResult};
use crate::project::config::FactoryConfig;
use crate::store::GateConfig;
use crate::strategy::{ANTI_PATTERN_THRESHOLD, find_anti_patterns};

pub(super) fn guard_checks(
    code: &Path,
    config: &FactoryConfig,
    opts: &PrecheckOptions,
) -> Vec<CheckOutcome> {
    guard_outcomes(&guard_results(code, config, opts, Default::default(), None))
}

/// The gate's own checkouts of base and head, for the test guard to run in.
pub(super) struct GateCheckouts {
    pub base: PathBuf,
    pub head: PathBuf,
    pub kept_base_tests: Option<guards::tests_kept::KeptBaseTests>,
}

/// The guards' results; guards that cannot run at all are one failed `guards` result.
pub(super) fn guard_results(
    code: &Path,
    config: &FactoryConfig,
    opts: &PrecheckOptions,
    declared: attribution::Declared,
    checkouts: Option<GateCheckouts>,
) -> Vec<GuardResult> {
    let (checkouts, kept_base_tests) = match checkouts {
        Some(c) => (Some((c.base, c.head)), c.kept_base_tests),
        None => (None, None),
    };
    let inputs = GuardInputs {
        target_branch: opts
            .target_branch
            .clone()
            .unwrap_or_else(|| config.target_branch.clone()),
        scope: config.scope.clone(),
        fixed_surfaces: config.fixed_surfaces.clone(),
        require_clean: !opts.allow_dirty,
        base_commit: opts.base_commit.clone(),
        test_timeout: Some(Duration::from_secs(config.test_timeout.max(1))),
        declared,
        setup: config.setup.clone(),
        checkouts,
        kept_base_tests,
    };
    // Guards that cannot run fail closed.
    guards::run_guards(code, &inputs)
        .unwrap_or_else(|e| vec![GuardResult::from_violations("guards", vec![e.to_string()])])
}

/// Each guard as a check: its violations, then what it noted.
pub(super) fn guard_outcomes(results: &[GuardResult]) -> Vec<CheckOutcome> {
    results
        .iter()
        .map(|g| {
            let mut outcome = if g.passed {
                CheckOutcome::pass(&g.name, "no violations")
            } else {
                CheckOutcome::fail(&g.name, g.violations.clone())
            };
            outcome.details.extend(g.notes.iter().cloned());
            outcome
        })
        .collect()
}

/// The hypothesis of the experiment being judged: given, pending or recorded.
pub(super) fn experiment_hypothesis(
    history: &crate::store::History,
    opts: &PrecheckOptions,
) -> Option<String> {
    opts.hypothesis.clone().or_else(|| {
        let id = opts.exp_id?;
        history
            .pending
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.hypothesis.clone())
            .or_else(|| {
                history
                    .records
                    .iter()
                    .find(|r| r.id == id)
                    .map(|r| r.hypothesis.clone())
            })
    })
}

pub(super) fn anti_pattern_check(
    history: &crate::store::History,
    opts: &PrecheckOptions,
    gate: Option<&GateConfig>,
) -> CheckOutcome {
    let Some(h) = experiment_hypothesis(history, opts) else {
        return CheckOutcome::pass("anti_patterns", "no hypothesis given; nothing to compare");
    };
    let others: Vec<_> = history
        .records
        .iter()
        .filter(|r| Some(r.id) != opts.exp_id)
        .cloned()
        .collect();
    let found = find_anti_patterns(&h, &others, ANTI_PATTERN_THRESHOLD, gate);
    let skipped = found.skipped_line();
    if found.matches.is_empty() {
        let mut outcome = CheckOutcome::pass(
            "anti_patterns",
            "no revert measured under this configuration resembles this hypothesis",
        );
        outcome.details.extend(skipped);
        return outcome;
    }
    let mut details: Vec<String> = found
        .matches
        .iter()
        .map(|a| {
            format!(
                "resembles experiment {}, reverted on a measurement under this configuration ({:.2} similar): {}",
                a.id, a.similarity, a.hypothesis
            )
        })
        .collect();
    details.extend(skipped);
    details.push(
        "a different approach needs a different hypothesis; if the revert no longer applies, `factory history forget N` clears it"
            .to_owned(),
    );
    CheckOutcome::fail("anti_patterns", details)
}
