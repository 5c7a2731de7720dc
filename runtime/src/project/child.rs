//! The contract between a run and the processes its nodes start — `factory begin`,
//! `precheck`, `finalize`, `agent` or any command: the variables a node's child gets
//! and what they mean, the run key a `begin` takes from them, and the file a child may
//! publish values back through. The executor writes this environment and every reader
//! parses it here; nothing else spells these names. Whether the executor starts
//! `factory begin` as a child or a parallel node begins its branches in-process, both
//! go through `experiment::begin` with a key from [`run_key`].

use std::path::{Path, PathBuf};

/// The run the node belongs to.
pub const RUN_ID: &str = "FACTORY_RUN_ID";
/// The node's id.
pub const NODE: &str = "FACTORY_NODE";
/// Which visit of the node this is (1 for the first).
pub const VISIT: &str = "FACTORY_VISIT";
/// The project's root.
pub const PROJECT: &str = "FACTORY_PROJECT";
/// The experiment the run is in, once one is begun.
pub const EXP_ID: &str = "FACTORY_EXP_ID";
/// The experiment's worktree and branch.
pub const WORKTREE: &str = "FACTORY_WORKTREE";
pub const BRANCH: &str = "FACTORY_BRANCH";
/// A parallel branch's own key for its experiment (it wins over run/node/visit).
pub const RUN_KEY: &str = "FACTORY_RUN_KEY";
/// Where the run's gate commands run (`host` or `sandbox`): the run's placement after
/// its probe, which `factory precheck` follows over factory.md's `## Placement`.
pub const PLACEMENT: &str = "FACTORY_RUN_PLACEMENT";
/// Where a node's command may publish values for later nodes: a JSON object of
/// strings (`factory begin` writes the experiment's `exp_id`, `branch`, `worktree`).
pub const VARS_FILE: &str = "FACTORY_VARS_FILE";

/// The key that identifies one `begin` of one run: `{run_id}/{node}/{visit}`. A run
/// that is resumed calls `begin` again with the same key and gets the same experiment.
pub fn run_key(run_id: &str, node: &str, visit: impl std::fmt::Display) -> String {
    format!("{run_id}/{node}/{visit}")
}

/// The run id a [`run_key`] names.
pub fn run_of_key(key: &str) -> Option<&str> {
    key.split('/').next().filter(|r| !r.is_empty())
}

/// What a process learns from the environment its node gave it (an empty value counts
/// as absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    pub run_id: Option<String>,
    pub node: Option<String>,
    pub visit: Option<String>,
    pub exp_id: Option<String>,
    pub run_key: Option<String>,
    pub vars_file: Option<PathBuf>,
}

impl ChildEnv {
    /// This process's environment.
    pub fn current() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The environment `lookup` answers for (a request's variables, say).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        Self {
            run_id: get(RUN_ID),
            node: get(NODE),
            visit: get(VISIT),
            exp_id: get(EXP_ID),
            run_key: get(RUN_KEY),
            vars_file: get(VARS_FILE).map(PathBuf::from),
        }
    }

    /// The key a `factory begin` started by a node uses: a parallel branch's own key,
    /// else its run, node and visit; `None` outside a run.
    pub fn begin_key(&self) -> Option<String> {
        if let Some(key) = &self.run_key {
            return Some(key.clone());
        }
        let run = self.run_id.as_deref()?;
        Some(run_key(
            run,
            self.node.as_deref().unwrap_or("begin"),
            self.visit.as_deref().unwrap_or("1"),
        ))
    }

    /// Publishes `vars` to the run that started this process (the executor reads them
    /// back after the node). Outside a run this does nothing.
    pub fn publish(&self, vars: &[(&str, String)]) -> std::io::Result<()> {
        let Some(path) = &self.vars_file else {
            return Ok(());
        };
        let map: serde_json::Map<String, serde_json::Value> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(v.as_str())))
            .collect();
        let bytes = serde_json::to_vec(&map).map_err(std::io::Error::other)?;
        crate::sys::files::atomic_write(Path::new(path), &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_key_wins_then_run_node_visit_and_nothing_outside_a_run() {
        let env = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            ChildEnv::from_lookup(move |n| {
                pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
            })
        };
        assert_eq!(env(&[]).begin_key(), None);
        assert_eq!(
            env(&[(RUN_ID, "r1"), (NODE, "exp.begin"), (VISIT, "2")]).begin_key(),
            Some("r1/exp.begin/2".into())
        );
        assert_eq!(
            env(&[(RUN_ID, "r1")]).begin_key(),
            Some("r1/begin/1".into())
        );
        assert_eq!(
            env(&[(RUN_ID, "r1"), (RUN_KEY, "r1/branches/b2")]).begin_key(),
            Some("r1/branches/b2".into())
        );
        assert_eq!(env(&[(RUN_ID, " ")]).begin_key(), None, "empty is absent");
        assert_eq!(run_of_key("r1/exp.begin/2"), Some("r1"));
    }
}
