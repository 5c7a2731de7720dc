//! The commands factory.md declares that must exit 0: `Guards` on the head's checkout,
//! and hard constraints.

use std::path::Path;
use std::time::Duration;

use super::CheckOutcome;
use crate::project::config::FactoryConfig;
use crate::sys::process::run_shell;

/// Every hard constraint's check must exit 0; a failure is a mandatory revert.
pub(super) fn hard_constraints(root: &Path, config: &FactoryConfig) -> CheckOutcome {
    if config.hard_constraints.is_empty() {
        return CheckOutcome::pass("hard_constraints", "none declared");
    }
    let timeout = Duration::from_secs(config.test_timeout.max(1));
    let mut failed = Vec::new();
    for hc in &config.hard_constraints {
        match run_shell(&hc.check, root, timeout) {
            Ok(out) if out.success() => {}
            Ok(out) if out.timed_out => failed.push(format!(
                "{}: `{}` timed out after {}s",
                hc.name,
                hc.check,
                timeout.as_secs()
            )),
            Ok(out) => failed.push(format!(
                "{}: `{}` failed ({}): {}",
                hc.name,
                hc.check,
                out.exit_text(),
                out.tail(3)
            )),
            Err(e) => failed.push(format!("{}: {e}", hc.name)),
        }
    }
    if failed.is_empty() {
        CheckOutcome::pass(
            "hard_constraints",
            format!("{} passed", config.hard_constraints.len()),
        )
    } else {
        CheckOutcome::fail("hard_constraints", failed)
    }
}

/// factory.md's `Guards` commands, each of which must exit 0 in the head's checkout.
/// A guard that is the same command as an eval check which passed on the head's
/// checkout reuses that run (`already`) instead of running again.
pub(super) fn guard_commands(
    dir: &Path,
    config: &FactoryConfig,
    already: &[(String, bool)],
) -> CheckOutcome {
    if config.guards.is_empty() {
        return CheckOutcome::pass("guard_commands", "none declared");
    }
    let timeout = Duration::from_secs(config.test_timeout.max(1));
    let mut failed = Vec::new();
    let mut reused = Vec::new();
    for g in &config.guards {
        if already.iter().any(|(c, ok)| *ok && c.trim() == g.trim()) {
            reused.push(format!("`{g}`"));
            continue;
        }
        match run_shell(g, dir, timeout) {
            Ok(out) if out.success() => {}
            Ok(out) if out.timed_out => failed.push(format!(
                "`{g}` timed out after {}s on the head commit",
                timeout.as_secs()
            )),
            Ok(out) => failed.push(format!(
                "`{g}` failed ({}) on the head commit: {}",
                out.exit_text(),
                out.tail(3)
            )),
            Err(e) => failed.push(format!("`{g}`: {e}")),
        }
    }
    if failed.is_empty() {
        let mut outcome = CheckOutcome::pass(
            "guard_commands",
            format!("{} passed on the head commit", config.guards.len()),
        );
        if !reused.is_empty() {
            outcome.details.push(format!(
                "{} passed as the eval's own run of the same command (not run again)",
                reused.join(", ")
            ));
        }
        outcome
    } else {
        CheckOutcome::fail("guard_commands", failed)
    }
}
