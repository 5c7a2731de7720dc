//! `experiments/NNN/experiment.json`: what an experiment is while it runs — its run
//! key (so a resumed run finds it again) and where its work lives (branch, base commit,
//! worktree). The verdict lives in `verdict.json`; this file is never the verdict.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Verdict;

/// An experiment's branch and worktree (made by the `worktrees` layer, recorded here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workspace {
    /// `factory/exp-NNN`.
    pub branch: String,
    /// The commit the branch was created from (hex).
    pub base_commit: String,
    /// The worktree's root.
    pub worktree: PathBuf,
    /// The branch the experiment started from: the configured target branch, or the
    /// current branch when that does not exist (see `note`).
    pub target_branch: String,
    /// Where the project lies inside the repository (empty when it is the root), so
    /// the project's copy in the worktree is `worktree/subdir`.
    #[serde(default)]
    pub subdir: PathBuf,
    /// Anything the user should be told, e.g. that a fallback branch was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Workspace {
    /// The project's directory inside the worktree: where code is measured.
    pub fn code_dir(&self) -> PathBuf {
        self.worktree.join(&self.subdir)
    }
}

/// The content of `experiments/NNN/experiment.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentInfo {
    /// The experiment's id.
    pub id: u32,
    /// The hypothesis given to `begin`.
    pub hypothesis: String,
    /// The run key given to `begin`, if any (see [`run_key`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_key: Option<String>,
    /// When it was begun (ISO-8601, UTC).
    pub begun_at: String,
    /// Its branch and worktree, once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Workspace>,
    /// The verdict on record, filled in when read (never stored here).
    #[serde(skip)]
    pub verdict: Option<Verdict>,
}
