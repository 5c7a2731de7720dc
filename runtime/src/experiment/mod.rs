//! The experiment lifecycle across the layers below it: `begin` allocates the
//! experiment in the store and gives it a branch and worktree; `eval` and `precheck`
//! measure that worktree and record into the project's `.factory/`; `finalize` records
//! the verdict, enforces the keep rule, moves the growth baseline on a keep (spec §8.5)
//! and removes the worktree.
//!
//! **Keep is enforced here, not by the graph:** a keep needs a passing precheck
//! recorded at the exact commit being kept, after the experiment's last QA completion,
//! and its scores come from that record, never from the caller.

mod begin;
mod diffstat;
pub mod evidence;
mod finalize;
pub mod kept;
mod precheck;
pub mod pull_request;

pub use begin::{Started, begin};
pub use diffstat::{DiffStat, FileStat, diff_stat};
pub use finalize::{BaselineUpdate, Cleanup, Finalized, finalize};
pub use precheck::{
    PrecheckRecord, eval, eval_settings, load_precheck, load_precheck_eval, precheck,
};

use std::path::{Path, PathBuf};

use crate::store::{ExperimentInfo, ExperimentStore, Verdict, Workspace};
use crate::worktrees;

/// Experiment `id`'s record and its workspace, refusing experiments without one.
pub(crate) fn workspace_of(
    project: &Path,
    id: u32,
) -> Result<(ExperimentInfo, Workspace), ExperimentError> {
    let info = ExperimentStore::with_registry(project, None)
        .info(id)?
        .ok_or(ExperimentError::NoWorkspace { id })?;
    let ws = info
        .workspace
        .clone()
        .ok_or(ExperimentError::NoWorkspace { id })?;
    Ok((info, ws))
}

/// Where experiment `id`'s code is checked out, when its worktree exists. The path is
/// derived from the project, not read from the record, so a moved project still works.
pub fn code_dir(project: &Path, id: u32) -> Result<PathBuf, ExperimentError> {
    let (info, ws) = workspace_of(project, id)?;
    if let Some(verdict) = info.verdict {
        return Err(ExperimentError::Finalized { id, verdict });
    }
    let dir = worktrees::worktree_path(project, id).join(&ws.subdir);
    if !dir.is_dir() {
        return Err(ExperimentError::WorktreeMissing { id, path: dir });
    }
    Ok(dir)
}

/// Why an experiment step could not run.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ExperimentError {
    /// experiment.json's base commit is not the one `factory begin` chained.
    #[error(
        "experiment {id}'s recorded base commit {recorded} is not the base its begin chained ({chained})"
    )]
    #[diagnostic(
        code(factory::experiment::base_rewritten),
        help(
            "experiments/NNN/experiment.json was edited after begin, so the gate would measure against the wrong base; nothing is measured. Finalize it with --verdict error and begin again"
        )
    )]
    BaseRewritten {
        id: u32,
        /// What experiment.json says.
        recorded: String,
        /// What the chained `experiment.workspace` says.
        chained: String,
    },
    /// The experiment has no branch or worktree on record.
    #[error("experiment {id} has no worktree on record")]
    #[diagnostic(
        code(factory::experiment::no_workspace),
        help(
            "`factory begin` records the branch and worktree; experiments begun by an older factory have none — begin a new one"
        )
    )]
    NoWorkspace {
        /// The experiment.
        id: u32,
    },
    /// The worktree directory is gone though the experiment is open.
    #[error("experiment {id}'s worktree {path} does not exist")]
    #[diagnostic(
        code(factory::experiment::worktree_missing),
        help(
            "run `factory begin` again with the same --run-key (or hypothesis) to recreate it on the experiment's branch"
        )
    )]
    WorktreeMissing {
        /// The experiment.
        id: u32,
        /// The expected directory.
        path: PathBuf,
    },
    /// The experiment already has a verdict; nothing of it can be measured any more.
    #[error("experiment {id} is already finalized with verdict `{verdict}`")]
    #[diagnostic(
        code(factory::experiment::finalized),
        help("begin a new experiment to try again; `factory history` shows the record")
    )]
    Finalized {
        /// The experiment.
        id: u32,
        /// Its verdict.
        verdict: Verdict,
    },
    /// A keep was given scores on the command line.
    #[error("a keep records the scores its precheck measured, not scores given as arguments")]
    #[diagnostic(
        code(factory::experiment::keep_scores_from_arguments),
        help(
            "drop --score-before, --score-after and --delta; `factory precheck --exp N` records the scores a keep uses"
        )
    )]
    ScoresFromArguments,
    /// The keep rule refused.
    #[error("experiment {id} cannot be kept: {reason}")]
    #[diagnostic(code(factory::experiment::keep_refused))]
    KeepRefused {
        /// The experiment.
        id: u32,
        /// Why.
        reason: String,
        /// What to do about it.
        #[help]
        fix: String,
    },
    /// The store refused.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::StoreError),
    /// Git refused.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Worktree(#[from] worktrees::WorktreeError),
    /// The configuration could not be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] crate::project::config::ConfigError),
    /// The eval could not run.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Eval(#[from] crate::eval::EvalError),
    /// The precheck could not run.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Precheck(#[from] crate::precheck::PrecheckError),
    /// The event log could not be read or written.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] crate::events::EventsError),
    /// The file system refused an operation.
    #[error("cannot access {path}: {source}")]
    #[diagnostic(
        code(factory::experiment::io),
        help("check that the project's .factory/ directory exists and is writable")
    )]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> ExperimentError + '_ {
    move |source| ExperimentError::Io {
        path: path.to_path_buf(),
        source,
    }
}
