//! The gate's own commands in the sandbox: every eval, test, guard and set-up command
//! `factory precheck` runs in a side's scratch checkout is confined to that checkout.
//! The head's code cannot reach the base's checkout (nor the base the head's), the
//! store, `$FACTORY_HOME` or the network; only a set-up step (an install) gets the
//! network. Installed as a [`crate::sys::placer`] scope, so the commands themselves
//! (in `eval`, `guards`, `worktrees::setup`) need not know where they run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::policy::Network;
use super::{Policy, Sandbox};
use crate::sys::placer::{Placed, Placer, Started};

/// The sandbox of one precheck: its two sides' scratch roots and the project.
#[derive(Debug, Clone)]
pub struct GateSandbox {
    sandbox: Sandbox,
    project: PathBuf,
    sides: Vec<PathBuf>,
    /// Where factory makes its scratch directories.
    temp: PathBuf,
}

impl GateSandbox {
    pub fn new(sandbox: Sandbox, project: &Path, sides: Vec<PathBuf>) -> Self {
        GateSandbox {
            sandbox,
            project: project.to_path_buf(),
            sides,
            temp: std::env::temp_dir(),
        }
    }

    /// The policy of a command started in `dir`: writable only the side checkout that
    /// holds `dir`, the other side hidden. Outside both, in a directory factory made
    /// in the temp directory (the test guard's cross-side checkouts, `factory-tests-*`):
    /// that directory writable, both sides hidden. Anywhere else (factory's own probes,
    /// `rustc --version` in the temp directory): nothing writable, both sides readable.
    pub fn policy_for(&self, dir: &Path, installing: bool) -> Policy {
        let side = self
            .sides
            .iter()
            .filter(|root| dir.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
            .cloned();
        let own = side.clone().or_else(|| self.scratch_of(dir));
        let network = if installing {
            Network::Agent
        } else {
            Network::None
        };
        let (others, readable): (Vec<PathBuf>, Vec<PathBuf>) = match own {
            Some(_) => (
                self.sides
                    .iter()
                    .filter(|s| Some(*s) != side.as_ref())
                    .cloned()
                    .collect(),
                Vec::new(),
            ),
            None => (Vec::new(), self.sides.clone()),
        };
        let mut policy = self
            .sandbox
            .gate_policy(own.as_deref(), &others, &self.project, network);
        policy.readable = readable;
        policy
    }

    /// The directory directly under the temp directory that holds `dir`, unless it
    /// holds a side or the project.
    fn scratch_of(&self, dir: &Path) -> Option<PathBuf> {
        let rest = dir.strip_prefix(&self.temp).ok()?;
        let first = rest.components().next()?;
        let scratch = self.temp.join(first);
        let holds = |p: &PathBuf| p.starts_with(&scratch);
        (!self.sides.iter().any(holds) && !holds(&self.project)).then_some(scratch)
    }

    /// While alive, every command this thread starts runs confined by [`policy_for`].
    ///
    /// [`policy_for`]: GateSandbox::policy_for
    pub fn enter(&self) -> Placed {
        let gate = self.clone();
        let placer: Placer = Arc::new(move |s: &Started<'_>| {
            let policy = gate.policy_for(s.dir, s.installing);
            gate.sandbox
                .confine(policy)
                .command(s.program, s.args, s.dir, &[])
        });
        Placed::enter(placer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(root: &Path) -> GateSandbox {
        let sandbox = Sandbox {
            engine: crate::placement::Engine::Bubblewrap("bwrap".into()),
            fallback: None,
            home: None,
            factory_home: None,
            pids: Err("none in a unit test".into()),
        };
        GateSandbox {
            temp: root.to_path_buf(),
            ..GateSandbox::new(
                sandbox,
                &root.join("project"),
                vec![root.join("gate-base"), root.join("gate-head")],
            )
        }
    }

    #[test]
    fn each_side_writes_only_its_own_checkout_and_cannot_see_the_other() {
        let t = tempfile::tempdir().unwrap();
        for d in [
            "gate-base/src",
            "gate-head",
            "project/.factory",
            "tests-x/cross",
        ] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let g = gate(t.path());
        let head = g.policy_for(&t.path().join("gate-head"), false);
        assert_eq!(head.writable, vec![t.path().join("gate-head")]);
        assert_eq!(
            head.hidden,
            vec![
                t.path().join("gate-base"),
                t.path().join("project/.factory")
            ]
        );
        assert_eq!(head.network, Network::None);
        assert!(head.readable.is_empty());
        let base = g.policy_for(&t.path().join("gate-base/src"), true);
        assert_eq!(base.writable, vec![t.path().join("gate-base")]);
        assert!(base.hidden.contains(&t.path().join("gate-head")));
        assert_eq!(base.network, Network::Agent, "a set-up step may install");
        // A checkout factory made elsewhere in the temp directory writes its scratch
        // directory and sees neither side; a command in the temp directory itself
        // writes nothing and reads both.
        let cross = g.policy_for(&t.path().join("tests-x/cross"), false);
        assert_eq!(cross.writable, vec![t.path().join("tests-x")]);
        assert!(cross.hidden.contains(&t.path().join("gate-base")));
        assert!(cross.hidden.contains(&t.path().join("gate-head")));
        let temp = g.policy_for(t.path(), false);
        assert!(temp.writable.is_empty(), "{:?}", temp.writable);
        assert_eq!(temp.readable.len(), 2);
        let elsewhere = g.policy_for(&t.path().join("project"), false);
        assert!(elsewhere.writable.is_empty());
    }
}
