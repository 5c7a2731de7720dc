//! `begin`: allocate the experiment, then give it its branch and worktree.

use std::path::Path;

use super::ExperimentError;
use crate::project::config::{self, ConfigError, default_target_branch};
use crate::project::layout::LayoutError;
use crate::store::{ExperimentInfo, ExperimentStore, StoreError, Workspace};
use crate::worktrees;

/// What [`begin`] produced.
#[derive(Debug, Clone)]
pub struct Started {
    /// The experiment's id.
    pub id: u32,
    /// True when an existing experiment (same run key, or same open hypothesis) was
    /// returned instead of a new one.
    pub resumed: bool,
    /// Its record, workspace included.
    pub info: ExperimentInfo,
}

impl Started {
    /// The branch and worktree (absent only for an already finalized experiment
    /// found by its run key that never had one).
    pub fn workspace(&self) -> Option<&Workspace> {
        self.info.workspace.as_ref()
    }
}

/// Starts (or resumes) an experiment in the project at `project`: allocates it in the
/// store (see [`ExperimentStore::begin_keyed`]) and creates its branch `factory/exp-NNN`
/// from the target branch's tip with a worktree at `.factory/worktrees/exp-NNN`.
///
/// The repository is checked before an id is allocated, so a project that is not a git
/// repository (or has no commit) gets a clear error and no orphan experiment. An
/// experiment found by its run key that is already finalized is returned as it is:
/// its worktree is not recreated.
pub fn begin(
    project: &Path,
    hypothesis: &str,
    run_key: Option<&str>,
) -> Result<Started, ExperimentError> {
    if !project.is_dir() {
        return Err(StoreError::from(LayoutError::NoProject(project.to_path_buf())).into());
    }
    let target = match config::load(project) {
        Ok(c) => c.target_branch,
        // begin works before factory.md exists; experiments then start from `main`
        // or, failing that, the current branch.
        Err(ConfigError::Missing { .. } | ConfigError::MissingFactoryMd { .. }) => {
            default_target_branch()
        }
        Err(e) => return Err(e.into()),
    };
    worktrees::resolve_base(project, &target)?;
    let store = ExperimentStore::open(project);
    // A new experiment never adopts a branch it did not make: one left by an earlier
    // `.factory/` (removed since) holds another experiment's commits.
    let begun = store.begin_avoiding(hypothesis, run_key, |id| {
        worktrees::branch_tip(project, id).is_ok_and(|tip| tip.is_some())
    })?;
    // None for an open experiment begun before experiment.json existed (adopted by
    // its hypothesis): it gets its workspace like any other.
    let recorded = store.info(begun.id)?;
    if let Some(info) = recorded.as_ref().filter(|i| i.verdict.is_some()) {
        return Ok(Started {
            id: begun.id,
            resumed: begun.resumed,
            info: info.clone(),
        });
    }
    let previous = recorded.as_ref().and_then(|i| i.workspace.as_ref());
    if recorded.is_some() && previous.is_none() {
        // Recorded but never given its workspace: an earlier begin of this experiment
        // was killed while making the worktree, and nothing has run in it since (agents
        // start only after begin). Whatever that left is half a checkout.
        worktrees::discard_unfinished(project, begun.id)?;
    }
    let mut ws = worktrees::create(project, begun.id, &target)?;
    if let Some(previous) = previous {
        // The first begin saw the true base; a later target tip is not it.
        ws.base_commit = previous.base_commit.clone();
        ws.target_branch = previous.target_branch.clone();
    }
    let info = match recorded {
        Some(info) if info.workspace.as_ref() == Some(&ws) => info,
        _ => store.set_workspace(begun.id, ws)?,
    };
    Ok(Started {
        id: begun.id,
        resumed: begun.resumed,
        info,
    })
}
