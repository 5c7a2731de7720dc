//! What an experiment was judged under, and why a failed precheck failed: the two facts
//! anti-pattern matching needs to tell a revert that can recur from one that cannot.

use super::CheckOutcome;
use crate::eval::discovery::EvalProfile;
use crate::store::{GateConfig, RevertCause};

/// The gate configuration: SHA-256 of factory.md's bytes (as committed at the base for
/// an experiment) and the eval profile's state and content hash. `None` without a
/// factory.md: nothing to compare.
pub fn gate_config(factory_md: Option<&[u8]>, profile: Option<&EvalProfile>) -> Option<GateConfig> {
    let bytes = factory_md?;
    let factory_md = crate::events::chain::sha256_hex(bytes);
    let eval_profile = match profile {
        None => "none".to_owned(),
        Some(p) if p.is_approved() => format!("approved:{}", p.content_hash()),
        Some(p) => format!("pending:{}", p.content_hash()),
    };
    Some(GateConfig {
        factory_md,
        eval_profile,
    })
}

/// Checks whose failure says nothing about the change: the gate could not measure.
const ENVIRONMENT_CHECKS: &[&str] = &["error", "eval_profile", "guards", "worktree_unchanged"];

/// Checks whose failure is not a measurement of the change: QA had not run, or the
/// hypothesis resembled an earlier revert (which itself still counts).
const PROCESS_CHECKS: &[&str] = &["qa_execution", "anti_patterns"];

/// What a detail says when a tool could not run at all: a command not found or not
/// executable, a runner not installed, a full disk.
const ENVIRONMENT_MARKERS: &[&str] = &[
    "exit code 126",
    "exit code 127",
    "command not found",
    "not installed",
    "could not run",
    "could not start",
    "no space left on device",
    "enospc",
    "os error 28",
    "tests could not be compared",
];

/// Why a precheck (its `passed`, `error` and `checks`, as `precheck.json` records
/// them) failed, for a revert. An error (the eval could not measure a side) is
/// [`RevertCause::Environment`]. Otherwise each failing check is classed: a check
/// that could not run (`error`, `eval_profile`, `guards`, `worktree_unchanged`), or
/// whose every detail shows a tool that could not run (exit 126/127, "command not
/// found", "not installed", a full disk), is environment; one whose every detail
/// starts with "flaky" is flaky; `qa_execution` and `anti_patterns` measure nothing;
/// any other failing check (score_direction, threshold, scope, tests_kept,
/// guard_commands, hard_constraints, ...) is a measurement. One measured failure makes
/// the revert [`RevertCause::Measured`]; else flaky, else environment; a precheck that
/// passed, or failed on QA or resemblance alone, is [`RevertCause::Unmeasured`].
pub fn revert_cause(passed: bool, error: Option<&str>, checks: &[CheckOutcome]) -> RevertCause {
    if error.is_some() {
        return RevertCause::Environment;
    }
    if passed {
        return RevertCause::Unmeasured;
    }
    let classes: Vec<RevertCause> = checks.iter().filter(|c| !c.passed).map(class_of).collect();
    [
        RevertCause::Measured,
        RevertCause::Flaky,
        RevertCause::Environment,
    ]
    .into_iter()
    .find(|c| classes.contains(c))
    .unwrap_or(RevertCause::Unmeasured)
}

fn class_of(check: &CheckOutcome) -> RevertCause {
    let name = check.name.as_str();
    if ENVIRONMENT_CHECKS.contains(&name) {
        return RevertCause::Environment;
    }
    if PROCESS_CHECKS.contains(&name) {
        return RevertCause::Unmeasured;
    }
    let details: Vec<String> = check.details.iter().map(|d| d.to_lowercase()).collect();
    if name.starts_with("flak")
        || (!details.is_empty() && details.iter().all(|d| d.trim_start().starts_with("flaky")))
    {
        return RevertCause::Flaky;
    }
    if !details.is_empty()
        && details
            .iter()
            .all(|d| ENVIRONMENT_MARKERS.iter().any(|m| d.contains(m)))
    {
        return RevertCause::Environment;
    }
    RevertCause::Measured
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(name: &str, details: &[&str]) -> CheckOutcome {
        CheckOutcome::fail(name, details.iter().map(|d| d.to_string()).collect())
    }

    fn pass(name: &str) -> CheckOutcome {
        CheckOutcome::pass(name, "ok")
    }

    #[test]
    fn a_failed_measurement_is_measured_whatever_else_failed() {
        let checks = [
            pass("threshold"),
            fail(
                "score_direction",
                &["no measurable improvement: the margin does not exceed the noise"],
            ),
            fail("qa_execution", &["no QA"]),
            fail(
                "guard_commands",
                &["`make lint` failed (exit code 127) on the head commit"],
            ),
        ];
        assert_eq!(revert_cause(false, None, &checks), RevertCause::Measured);
        let tests = [fail(
            "tests_kept",
            &[
                "tests/test_a.py:3: test `test_x` passed at base and is failed at head; expected it to pass",
            ],
        )];
        assert_eq!(revert_cause(false, None, &tests), RevertCause::Measured);
    }

    #[test]
    fn what_could_not_run_is_the_environment() {
        assert_eq!(
            revert_cause(
                false,
                Some("the eval could not measure the base commit"),
                &[]
            ),
            RevertCause::Environment
        );
        let missing = [
            fail(
                "guard_commands",
                &[
                    "`golangci-lint run` failed (exit code 127) on the head commit: sh: golangci-lint: command not found",
                ],
            ),
            fail(
                "tests_kept",
                &[
                    "tests could not be compared by identity: the project has Python tests but python3 is not installed",
                ],
            ),
            fail(
                "hard_constraints",
                &["disk: `make` failed (exit code 2): No space left on device"],
            ),
        ];
        assert_eq!(
            revert_cause(false, None, &missing),
            RevertCause::Environment
        );
        let pending = [fail(
            "eval_profile",
            &[".factory/eval_profile.json is pending review"],
        )];
        assert_eq!(
            revert_cause(false, None, &pending),
            RevertCause::Environment
        );
        // One detail that is not a missing tool is a measurement.
        let mixed = [fail(
            "guard_commands",
            &["`a` failed (exit code 127)", "`b` failed (exit code 1)"],
        )];
        assert_eq!(revert_cause(false, None, &mixed), RevertCause::Measured);
    }

    #[test]
    fn flaky_failures_and_unmeasured_reverts_are_told_apart() {
        let flaky = [
            fail(
                "tests_kept",
                &["flaky: tests/a.py::test_x failed 1 of 3 runs at base"],
            ),
            fail("eval_profile", &["pending"]),
        ];
        assert_eq!(revert_cause(false, None, &flaky), RevertCause::Flaky);
        let only_process = [
            fail("anti_patterns", &["resembles"]),
            fail("qa_execution", &["no QA"]),
        ];
        assert_eq!(
            revert_cause(false, None, &only_process),
            RevertCause::Unmeasured
        );
        assert_eq!(
            revert_cause(true, None, &[pass("threshold")]),
            RevertCause::Unmeasured
        );
    }

    #[test]
    fn the_configuration_is_factory_md_and_the_profile_state() {
        assert_eq!(gate_config(None, None), None);
        let a = gate_config(Some(b"# Goal\n"), None).unwrap();
        assert_eq!(a.eval_profile, "none");
        assert_eq!(a.factory_md.len(), 64);
        let b = gate_config(Some(b"# Goal!\n"), None).unwrap();
        assert_ne!(a.factory_md, b.factory_md);
        let mut profile: EvalProfile = serde_json::from_value(serde_json::json!({
            "project_type": "rust", "dimensions": [], "tier": "discovered",
            "confidence": 1.0, "human_reviewed": false, "generated_at": "t"
        }))
        .unwrap();
        let pending = gate_config(Some(b"# Goal\n"), Some(&profile)).unwrap();
        assert!(pending.eval_profile.starts_with("pending:"), "{pending:?}");
        profile.human_reviewed = true;
        let approved = gate_config(Some(b"# Goal\n"), Some(&profile)).unwrap();
        assert_eq!(
            approved.eval_profile,
            format!("approved:{}", profile.content_hash())
        );
    }
}
