//! Where a node's processes run (docs/sandbox.md). All bubblewrap knowledge lives in
//! this room: the policy a node gets from the graph ([`policy`]), the argv that
//! enforces it ([`bwrap`]), and the probe that decides whether the sandbox can be
//! trusted on this machine ([`probe`]). A dry run prints the same argv the live path
//! runs, because both come from [`Confinement::command`].
//!
//! `host` runs a node with the user's rights (as before this room existed). `sandbox`
//! runs it under bubblewrap: the system read-only, a private `/tmp`, the user's secrets
//! and `$FACTORY_HOME` hidden, and writable only what the node may change.

pub mod bwrap;
pub mod contained;
pub mod gate;
pub mod landlock;
pub mod pids;
pub mod policy;
pub mod probe;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use factory_compiler::ir::Placement;
pub use policy::{Network, Policy};
pub use probe::ProbeFailure;

/// Tells a confined process (and an agent CLI in it) that it already runs sandboxed.
pub const PLACEMENT_ENV: &str = "FACTORY_PLACEMENT";

/// What enforces a confinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// bubblewrap (the program the probe ran): namespaces, a private `/tmp`, binds.
    Bubblewrap(PathBuf),
    /// landlock alone, through factory's own launcher ([`landlock`]): where bubblewrap
    /// cannot run. Writes and secrets confined; no namespaces.
    Landlock(PathBuf),
}

impl Engine {
    /// The program that enforces it, for messages.
    pub fn program(&self) -> &Path {
        match self {
            Engine::Bubblewrap(p) | Engine::Landlock(p) => p,
        }
    }
}

/// Turns the landlock fallback off (`0`): a sandbox bubblewrap cannot make falls back to
/// the host instead.
pub const LANDLOCK_ENV: &str = "FACTORY_SANDBOX_LANDLOCK";

/// The run's sandbox, once its probe passed: what every confined node shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub engine: Engine,
    /// Set when bubblewrap could not be used and landlock alone confines: why.
    pub fallback: Option<String>,
    /// The user's home and `$FACTORY_HOME`, whose secrets a policy hides.
    pub home: Option<PathBuf>,
    pub factory_home: Option<PathBuf>,
    /// The bound on the run's confined processes ([`pids`]): `Err` says why there is
    /// none here.
    pub pids: Result<Arc<pids::PidsLimit>, String>,
}

impl Sandbox {
    /// Finds bubblewrap and probes it: `Ok` when a confined canary came back and could
    /// not write outside. Where it cannot be used, landlock alone is probed the same
    /// way (unless [`LANDLOCK_ENV`] is `0`); when neither confines, why not (the caller
    /// falls back to the host, loudly).
    pub fn prepare() -> Result<Sandbox, ProbeFailure> {
        let bwrap = crate::sys::process::which("bwrap")
            .ok_or(ProbeFailure::Missing)
            .and_then(|b| probe::probe(&b).map(|()| b));
        let (engine, fallback) = match bwrap {
            Ok(b) => (Engine::Bubblewrap(b), None),
            Err(why) => match probe::landlock() {
                Ok(exe) => (Engine::Landlock(exe), Some(why.to_string())),
                Err(landlock) => {
                    return Err(ProbeFailure::Neither {
                        bubblewrap: Box::new(why),
                        landlock,
                    });
                }
            },
        };
        Ok(Sandbox {
            engine,
            fallback,
            home: std::env::var_os("HOME").map(PathBuf::from),
            factory_home: crate::project::registry::user_home(),
            pids: pids::PidsLimit::create().map(Arc::new),
        })
    }

    /// A confinement for `policy`.
    pub fn confine(&self, policy: Policy) -> Confinement {
        Confinement {
            engine: self.engine.clone(),
            policy,
            pids: self.pids.as_ref().ok().cloned(),
        }
    }

    /// What confines, in words, for doctor, warnings and the records.
    pub fn engine_text(&self) -> String {
        match (&self.engine, &self.fallback) {
            (Engine::Bubblewrap(b), _) => format!("bubblewrap ({})", b.display()),
            (Engine::Landlock(_), why) => format!(
                "landlock alone (bubblewrap cannot be used here: {}) — writes and secrets are confined, but there are no pid, network or mount namespaces: a process can outlive its node and an agent node shares the host's network",
                why.as_deref().unwrap_or("not tried")
            ),
        }
    }

    /// The process bound in words, for doctor and the records.
    pub fn pids_text(&self) -> String {
        match &self.pids {
            Ok(limit) => format!("at most {} processes at once (a pids cgroup)", limit.max),
            Err(why) => format!(
                "no process limit ({why}): a fork bomb is bounded only by the node's timeout"
            ),
        }
    }
}

/// A policy with the program that enforces it: what a runner or the executor wraps a
/// command in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub engine: Engine,
    pub policy: Policy,
    /// The run's process bound, which the command joins before it becomes bubblewrap.
    pub pids: Option<Arc<pids::PidsLimit>>,
}

impl Confinement {
    /// `program args` as run in the sandbox, working in `cwd`: bubblewrap's argv with
    /// the command after `--`. `readable` are files the runner made for this run (a
    /// prompt file in the host's temp directory) that the command must see.
    pub fn command(
        &self,
        program: &str,
        args: &[String],
        cwd: &Path,
        readable: &[PathBuf],
    ) -> (String, Vec<String>) {
        // The enforcer resolves paths in the command's working directory, not in
        // factory's: a policy made from a relative project path (`factory precheck .`)
        // would name other places there.
        let policy = self.policy.absolute();
        let (enforcer, argv) = match &self.engine {
            Engine::Bubblewrap(bwrap) => {
                let mut argv = bwrap::args(&policy, cwd, readable);
                argv.push("--".into());
                argv.push(program.into());
                argv.extend(args.iter().cloned());
                (bwrap.display().to_string(), argv)
            }
            Engine::Landlock(exe) => landlock::args(exe, &policy, cwd, program, args),
        };
        match &self.pids {
            Some(limit) => limit.wrap(enforcer, argv),
            None => (enforcer, argv),
        }
    }

    /// The same confinement, with more writable paths (an agent CLI's own state).
    pub fn with_writable(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        for p in paths {
            if !self.policy.writable.contains(&p) {
                self.policy.writable.push(p);
            }
        }
        self
    }
}

/// The run's placement: `--placement`, else factory.md's `## Placement` (the source of
/// truth, read as written), else the host.
pub fn for_run(requested: Option<Placement>, project: &Path) -> Placement {
    use crate::project::config;
    requested
        .or_else(|| {
            config::read_factory_md(project)
                .or_else(|_| config::load(project))
                .ok()
                .and_then(|c| c.placement)
        })
        .unwrap_or(Placement::Host)
}

/// What a node's placement lets it touch, in words, for `factory run --dry-run`: the
/// rules of [`policy`] and [`gate`] as they apply to `node` in a run placed at `run`.
/// `None` for a node that runs on the host with nothing to say.
pub fn describe(node: &factory_compiler::ir::Node, run: Placement) -> Option<String> {
    use factory_compiler::ir::NodeKind;
    let gate = node
        .attrs
        .run
        .as_deref()
        .is_some_and(|r| r.contains("factory precheck"));
    let writes: Vec<&str> = node.attrs.writes.iter().map(|w| w.path.as_str()).collect();
    let writes = if writes.is_empty() {
        String::new()
    } else {
        format!(", the directories of {}", writes.join(", "))
    };
    let out_of_reach = "the store, your checkout and .git config, $FACTORY_HOME and ~/.ssh-like secrets out of reach";
    match for_node(node, run) {
        Placement::Sandbox if matches!(node.kind, NodeKind::Agent | NodeKind::Llm | NodeKind::Gate) && node.attrs.run.is_none() => Some(format!(
            "placement: sandbox (bubblewrap) — writable: its experiment's worktree when in one{writes}; {out_of_reach}; network: agent"
        )),
        Placement::Sandbox => Some(format!(
            "placement: sandbox (bubblewrap) — writable: its experiment's worktree when in one{writes}; {out_of_reach}; network: none"
        )),
        Placement::Host if gate && run == Placement::Sandbox => Some(
            "placement: host; the gate's commands: sandbox — each side writable only in its own scratch checkout, the other side and the store out of reach, network: none (a set-up step: agent)".to_string(),
        ),
        Placement::Host if node.attrs.placement == Some(Placement::Host) && run == Placement::Sandbox => {
            Some("placement: host (the node's own `placement: host`)".to_string())
        }
        Placement::Host => None,
    }
}

/// Which placement a node gets: its own `placement:` attribute, else the run's for
/// agents and agent gates. A mode's own commands (`fn`, `study`, `fn` gates) are the
/// mode's plumbing — `factory begin`, `precheck`, `finalize` — and run on the host
/// unless the node asks for the sandbox.
pub fn for_node(node: &factory_compiler::ir::Node, run: Placement) -> Placement {
    use factory_compiler::ir::{Evaluator, NodeKind};
    if let Some(p) = node.attrs.placement {
        return p;
    }
    match node.kind {
        NodeKind::Agent | NodeKind::Llm => run,
        NodeKind::Gate if node.attrs.evaluator == Some(Evaluator::Agent) => run,
        _ => Placement::Host,
    }
}
