//! A node's sandbox policy, made from what the graph says it may touch: writable only
//! its workspace (a builder's experiment worktree), the directories of its declared
//! writes (and of a gate's verdict file), and a private `/tmp`; the project readable;
//! the user's secrets and `$FACTORY_HOME` hidden; everything else read-only.

use std::path::{Path, PathBuf};

use super::Sandbox;

/// What a confined node may reach over the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Network {
    /// The host's network, which an agent CLI needs to reach its model.
    Agent,
    /// Loopback only: eval, test and guard commands, and a mode's own commands.
    None,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Agent => "agent",
            Network::None => "none",
        }
    }
}

/// What a confined process may touch. Paths are absolute and exist when the policy
/// is made (bubblewrap binds only what exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Readable (bound read-only), on top of the read-only system: the project, which
    /// may live under the private `/tmp`.
    pub readable: Vec<PathBuf>,
    /// Read-write, bound at the same path.
    pub writable: Vec<PathBuf>,
    /// Made empty: a directory becomes an empty tmpfs, a file `/dev/null`.
    pub hidden: Vec<PathBuf>,
    pub network: Network,
}

impl Policy {
    /// The same policy with every path absolute, against factory's working directory.
    pub fn absolute(&self) -> Policy {
        let abs = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths
                .iter()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect()
        };
        Policy {
            readable: abs(&self.readable),
            writable: abs(&self.writable),
            hidden: abs(&self.hidden),
            network: self.network,
        }
    }
}

/// Files and directories under the user's home that hold credentials: hidden from every
/// confined process (an agent CLI's own login is bound back by its runner).
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials.toml",
];

/// Build tools' caches, relative to the home directory (or to `$CARGO_HOME`, `$GOCACHE`
/// and `$GOMODCACHE` where those are set): writable for the gate's commands when they
/// exist. Read-only, a build in a scratch checkout fails on a lock file or starts cold.
/// Both sides share them; their tools address entries by content.
const TOOL_CACHES: &[&str] = &[
    ".cache/go-build",
    "go/pkg/mod",
    ".npm",
    ".cache/pip",
    ".cache/uv",
    ".cache/yarn",
    ".m2/repository",
    ".gradle/caches",
];
/// Cargo's, relative to `$CARGO_HOME` (`~/.cargo`).
const CARGO_CACHES: &[&str] = &[
    "registry",
    "git",
    ".package-cache",
    ".package-cache-mutate",
    ".global-cache",
];

/// What an agent node may touch, from its request.
#[derive(Debug, Clone)]
pub struct AgentScope<'a> {
    /// Where it works: its experiment's worktree, or the project.
    pub cwd: &'a Path,
    pub project: &'a Path,
    /// Whether `cwd` is an experiment's worktree (writable) rather than the user's
    /// checkout (read-only).
    pub in_experiment: bool,
    /// Its declared writes, and a gate's verdict file.
    pub outputs: &'a [PathBuf],
}

impl Sandbox {
    /// The policy of an agent node: its worktree and its outputs' directories writable,
    /// the git state a commit on its own `factory/` branch needs, the host's network.
    pub fn agent_policy(&self, scope: &AgentScope<'_>) -> Policy {
        let mut writable = Vec::new();
        if scope.in_experiment {
            writable.push(scope.cwd.to_path_buf());
            writable.extend(commit_paths(scope.cwd));
        }
        writable.extend(output_dirs(scope.outputs));
        self.policy(scope.project, writable, Network::Agent)
    }

    /// The policy of a command node asking for the sandbox: its outputs' directories
    /// (and its experiment's worktree) writable, no network.
    pub fn command_policy(&self, cwd: &Path, project: &Path, outputs: &[PathBuf]) -> Policy {
        let mut writable = Vec::new();
        if cwd != project {
            writable.push(cwd.to_path_buf());
        }
        writable.extend(output_dirs(outputs));
        self.policy(project, writable, Network::None)
    }

    /// The policy of a gate's command (eval, test, guard, set-up) in one side's scratch
    /// checkout `own`: only that checkout and the tools' caches writable; the `others`
    /// sides' checkouts and the project's store hidden; the project not bound (the
    /// command needs nothing of it); the network only for a set-up step.
    pub fn gate_policy(
        &self,
        own: Option<&Path>,
        others: &[PathBuf],
        project: &Path,
        network: Network,
    ) -> Policy {
        let mut writable: Vec<PathBuf> = own.map(Path::to_path_buf).into_iter().collect();
        writable.extend(self.tool_caches());
        let mut policy = self.policy(project, writable, network);
        policy.readable.clear();
        let mut hidden: Vec<PathBuf> = others.to_vec();
        hidden.push(
            crate::project::layout::FactoryPaths::new(project)
                .dir()
                .to_path_buf(),
        );
        policy
            .hidden
            .extend(hidden.into_iter().filter(|p| p.exists()));
        policy
    }

    pub(super) fn tool_caches(&self) -> Vec<PathBuf> {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        let Some(home) = &self.home else {
            return Vec::new();
        };
        let cargo = var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo"));
        let mut caches: Vec<PathBuf> = TOOL_CACHES.iter().map(|c| home.join(c)).collect();
        caches.extend(CARGO_CACHES.iter().map(|c| cargo.join(c)));
        caches.extend(var("GOCACHE"));
        caches.extend(var("GOMODCACHE"));
        caches
    }

    fn policy(&self, project: &Path, writable: Vec<PathBuf>, network: Network) -> Policy {
        let mut hidden = Vec::new();
        if let Some(home) = &self.home {
            hidden.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
        }
        hidden.extend(self.factory_home.clone());
        let mut hidden: Vec<PathBuf> = hidden.into_iter().filter(|p| p.exists()).collect();
        hidden.sort();
        hidden.dedup();
        let mut writable: Vec<PathBuf> = writable.into_iter().filter(|p| p.exists()).collect();
        writable.sort();
        writable.dedup();
        Policy {
            readable: vec![project.to_path_buf()],
            writable,
            hidden,
            network,
        }
    }
}

/// The directories of `outputs`, made if missing (under the project's `.factory/`,
/// where a node's declared writes go).
fn output_dirs(outputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = outputs
        .iter()
        .filter_map(|o| o.parent())
        .filter(|d| std::fs::create_dir_all(d).is_ok())
        .map(Path::to_path_buf)
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// What a commit in an older factory's git worktree (one that shares the user's
/// repository) writes there: the worktree's git directory (its index and HEAD), the
/// object store, and the `factory/` branches and their logs; the repository's config,
/// hooks, `info/`, replace refs and every other branch stay read-only. None for an
/// experiment repository (its git directory is inside the workspace, and the user's is
/// only read, through its alternates) and for a worktree not on a `factory/` branch.
fn commit_paths(worktree: &Path) -> Vec<PathBuf> {
    let Ok(repo) = git2::Repository::open(worktree) else {
        return Vec::new();
    };
    if !repo.is_worktree() {
        return Vec::new();
    }
    let on_factory_branch = repo
        .head()
        .ok()
        .and_then(|h| h.name().ok().map(|n| n.starts_with("refs/heads/factory/")))
        .unwrap_or(false);
    if !on_factory_branch {
        return Vec::new();
    }
    let common = repo.commondir().to_path_buf();
    let refs = common.join("refs/heads/factory");
    let logs = common.join("logs/refs/heads/factory");
    for dir in [&refs, &logs] {
        let _ = std::fs::create_dir_all(dir);
    }
    vec![
        repo.path().to_path_buf(),
        common.join("objects"),
        refs,
        logs,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bubblewrap resolves a relative path in the command's directory, so the policy
    /// of `factory precheck .` must name its paths absolutely.
    #[test]
    fn a_relative_path_becomes_absolute_against_factorys_directory() {
        let policy = Policy {
            readable: vec![".".into()],
            writable: vec!["/abs/side".into()],
            hidden: vec!["./.factory".into()],
            network: Network::None,
        };
        let cwd = std::env::current_dir().unwrap();
        let abs = policy.absolute();
        assert_eq!(abs.readable, vec![std::path::absolute(".").unwrap()]);
        assert_eq!(abs.writable, vec![PathBuf::from("/abs/side")]);
        assert!(abs.hidden[0].is_absolute() && abs.hidden[0].starts_with(&cwd));
    }
}
