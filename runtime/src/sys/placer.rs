//! Where the commands started on this thread run: a scope that rewrites each command
//! into another program's argv before it starts (the gate's sandbox, made by the
//! placement room). This module knows nothing of sandboxes: it only applies the
//! rewrite a caller installed, and says whether the command is an install (a set-up
//! step, which may need the network).

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// What a placer sees of a command about to start.
#[derive(Debug)]
pub struct Started<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// Its working directory.
    pub dir: &'a Path,
    /// Whether it runs inside an [`Installing`] scope (a set-up step).
    pub installing: bool,
}

/// Rewrites a command into the program and arguments that run it in its place.
pub type Placer = Arc<dyn Fn(&Started<'_>) -> (String, Vec<String>) + Send + Sync>;

thread_local! {
    static PLACER: RefCell<Option<Placer>> = const { RefCell::new(None) };
    static INSTALLING: Cell<bool> = const { Cell::new(false) };
}

/// While alive, commands started on this thread through [`super::process`] run as
/// the placer rewrites them. Entering a new scope replaces the previous one until it
/// ends.
#[must_use = "the placement applies only while the guard is alive"]
pub struct Placed(Option<Placer>);

impl Placed {
    pub fn enter(placer: Placer) -> Self {
        Self(PLACER.replace(Some(placer)))
    }
}

impl Drop for Placed {
    fn drop(&mut self) {
        PLACER.set(self.0.take());
    }
}

/// While alive, commands started on this thread are set-up steps (installs), which a
/// placer may give the network that tests and evals do not get.
#[must_use = "the marking applies only while the guard is alive"]
pub struct Installing(bool);

impl Installing {
    pub fn enter() -> Self {
        Self(INSTALLING.replace(true))
    }
}

impl Drop for Installing {
    fn drop(&mut self) {
        INSTALLING.set(self.0);
    }
}

/// `cmd` as the current scope runs it in `dir`: unchanged without a placer; else a new
/// command for the placer's program, with `cmd`'s variables set and removed on it
/// (the placer's program passes its environment on).
pub(crate) fn place(cmd: Command, dir: &Path) -> Command {
    let Some(placer) = PLACER.with_borrow(Clone::clone) else {
        return cmd;
    };
    let program = cmd.get_program().to_string_lossy().into_owned();
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (program, args) = placer(&Started {
        program: &program,
        args: &args,
        dir,
        installing: INSTALLING.get(),
    });
    let mut placed = Command::new(program);
    placed.args(args);
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => placed.env(key, v),
            None => placed.env_remove(key),
        };
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placed_command_keeps_its_environment_and_runs_through_the_placer() {
        let dir = tempfile::tempdir().unwrap();
        let _placed = Placed::enter(Arc::new(|s: &Started<'_>| {
            let mut args = vec!["-c".to_string(), "echo placed \"$X\" \"$0\"".to_string()];
            args.push(format!(
                "{}{}",
                s.program,
                if s.installing { "+net" } else { "" }
            ));
            ("sh".to_string(), args)
        }));
        let mut cmd = Command::new("true");
        cmd.env("X", "kept");
        let out = super::super::process::run_command(
            cmd,
            "true",
            dir.path(),
            std::time::Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout.trim(), "placed kept true");
        let _install = Installing::enter();
        let out =
            super::super::process::run_shell("x", dir.path(), std::time::Duration::from_secs(10))
                .unwrap();
        assert_eq!(out.stdout.trim(), "placed  sh+net");
    }

    #[test]
    fn a_scope_ends_with_its_guard() {
        {
            let _placed = Placed::enter(Arc::new(|_: &Started<'_>| ("false".into(), vec![])));
        }
        let dir = tempfile::tempdir().unwrap();
        let out = super::super::process::run_shell(
            "echo free",
            dir.path(),
            std::time::Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout.trim(), "free");
    }
}
