//! Each pristine checkout gets its own environment, and proof that the code under test
//! comes from it (docs/gate.md, "Set-up and provenance"). One implementation for every
//! checkout factory measures: the gate's two sides (`precheck`), the test guard's own
//! copies (`tests_kept`) and `factory doctor`'s copy of HEAD.
//!
//! 1. [`run_setup`]: factory.md's `## Setup` commands, in order, in the checkout, each
//!    limited to `test_timeout`; one that fails is a [`SideError::Setup`].
//! 2. [`probe`]: the provenance probe — the project's Python packages import from the
//!    checkout, its declared npm dependencies resolve to the checkout's own
//!    `node_modules`; anything else is a [`SideError::Provenance`] naming the cause.
//! 3. [`enter`]: the environment every later command in the checkout runs with — its
//!    `.venv/bin` first on `PATH` when it has one, no inherited `NODE_PATH`.
//!
//! [`cannot_start`] tells a command that could not start (a missing program or
//! module) from one that ran and failed.

mod probe;
mod start;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use probe::{Provenance, probe};
pub use start::{StartCause, StartFailure, StartKind, cannot_start};

use crate::sys::process::{ScopedEnv, run_shell};
use crate::sys::progress::Progress;

/// Where a side's own Python environment lives, relative to the project's directory in
/// the checkout (`python3 -m venv .venv`).
pub const VENV: &str = ".venv";

/// The set-up factory recommends for a Python project (docs/configuration.md).
pub const PYTHON_SETUP: &str = "python3 -m venv .venv && .venv/bin/pip install -e .";

/// One checkout being prepared.
#[derive(Debug, Clone, Copy)]
pub struct Checkout<'a> {
    /// Which side it is, for messages: `base`, `head`, `HEAD`.
    pub side: &'a str,
    /// The project's directory inside the checkout: where every command runs.
    pub code: &'a Path,
    /// The checkout's root: what the code under test resolves to must lie inside it.
    pub root: &'a Path,
}

/// Why a checkout cannot be measured: an error, never a verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SideError {
    #[error("its `## Setup` command `{command}` failed in the {side} checkout: {reason}")]
    Setup {
        side: String,
        command: String,
        reason: String,
    },
    #[error("the code under test in the {side} checkout does not come from it: {reason}")]
    Provenance { side: String, reason: String },
}

/// The side's own Python interpreter, when its checkout has a `.venv`.
pub fn venv_python(code: &Path) -> Option<PathBuf> {
    let bin = code.join(VENV).join("bin");
    ["python", "python3"]
        .iter()
        .map(|n| bin.join(n))
        .find(|p| p.is_file())
}

/// The variables set (`Some`) or removed (`None`) for every command run in the checkout
/// at `code`: with a `.venv` there, its `bin` first on `PATH`, `VIRTUAL_ENV` pointing at
/// it and no `PYTHONHOME`; always no `NODE_PATH` (node must resolve packages from the
/// checkout, not from wherever factory's caller pointed it).
pub fn side_env(code: &Path) -> Vec<(OsString, Option<OsString>)> {
    let mut vars: Vec<(OsString, Option<OsString>)> = vec![("NODE_PATH".into(), None)];
    if venv_python(code).is_some() {
        let venv = code.join(VENV);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(venv.join("bin")).chain(std::env::split_paths(&path));
        // A directory with `:` in its name cannot go on PATH; the interpreter is then
        // still found by path ([`side_python`]), only bare `python3` is not the venv's.
        if let Ok(joined) = std::env::join_paths(dirs) {
            vars.push(("PATH".into(), Some(joined)));
        }
        vars.push(("VIRTUAL_ENV".into(), Some(venv.into_os_string())));
        vars.push(("PYTHONHOME".into(), None));
    }
    vars
}

/// While alive, commands started on this thread run in the checkout's environment
/// ([`side_env`]).
pub fn enter(code: &Path) -> ScopedEnv {
    ScopedEnv::enter(side_env(code))
}

/// The `python3` a command in the checkout at `code` runs: its `.venv`'s, else the one
/// on `PATH`.
pub fn side_python(code: &Path) -> Option<PathBuf> {
    venv_python(code)
        .or_else(|| crate::sys::process::which("python3"))
        .or_else(|| crate::sys::process::which("python"))
}

/// Runs factory.md's `## Setup` commands in order in the checkout, each limited to
/// `timeout`. Each command gets the checkout's environment as it is when it starts, so
/// once one has made `.venv`, the next finds its `pip` and `python3` first on `PATH`.
pub fn run_setup(
    c: &Checkout<'_>,
    commands: &[String],
    timeout: Duration,
    progress: &Progress,
) -> Result<(), SideError> {
    for command in commands {
        progress.say(&format!("setup in the {} checkout: `{command}`", c.side));
        let fail = |reason: String| SideError::Setup {
            side: c.side.to_string(),
            command: command.clone(),
            reason,
        };
        let out = {
            let _env = enter(c.code);
            // An install: where the gate's commands are confined, it may use the network.
            let _installing = crate::sys::placer::Installing::enter();
            run_shell(command, c.code, timeout).map_err(|e| fail(e.to_string()))?
        };
        if out.timed_out {
            return Err(fail(format!(
                "timed out after {}s (factory.md's `test_timeout`) and was killed; its output: {}",
                timeout.as_secs(),
                useful_lines(&out, 3)
            )));
        }
        if !out.success() {
            return Err(fail(format!(
                "{} after {:.1}s: {}",
                out.exit_text(),
                out.elapsed.as_secs_f64(),
                useful_lines(&out, 3)
            )));
        }
    }
    Ok(())
}

/// [`run_setup`], then [`probe`]: what one checkout needs before anything is measured
/// in it (`factory doctor`'s copy of HEAD, the test guard's copies).
pub fn prepare(
    c: &Checkout<'_>,
    commands: &[String],
    timeout: Duration,
    progress: &Progress,
) -> Result<Provenance, SideError> {
    run_setup(c, commands, timeout, progress)?;
    probe(c, timeout)
}

/// [`prepare`] for a checkout written at `dir` (the whole repository) with the `## Setup`
/// `commands` of the gate's configuration (factory.md as committed at the base), for
/// callers whose errors are sentences (the test guard).
pub fn prepare_checkout(
    dir: &Path,
    commands: &[String],
    side: &str,
    timeout: Duration,
) -> Result<Provenance, String> {
    let c = Checkout {
        side,
        code: dir,
        root: dir,
    };
    prepare(&c, commands, timeout, &Progress::none()).map_err(|e| format!("could not measure: {e}"))
}

// The first lines that say what went wrong: a rule about any command's output.
pub use crate::sys::process::useful_lines;

#[cfg(test)]
mod tests;
