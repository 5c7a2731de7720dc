//! Experiment isolation (ARCHITECTURE.md, "Experiments and the user's repository"):
//! each experiment gets a branch `factory/exp-NNN` from the target branch's tip and a
//! repository of its own for it at `.factory/worktrees/exp-NNN` ([`repo`]: the
//! project's objects borrowed, nothing else shared), whose commits factory imports
//! into the project's `factory/exp-NNN`. Everything goes through git2.
//!
//! The user's checkout is never touched: creating a branch and an experiment
//! repository change neither HEAD, the index nor the working tree of the main
//! checkout, and nothing here stashes, resets or checks out there. Both operations are
//! idempotent, so an interrupted run can simply call them again. (A project begun by an
//! older factory may still hold git worktrees named `factory-exp-NNN`: they are used,
//! listed and removed like experiment repositories.) [`scratch`] writes pristine
//! copies of commits outside the project; [`setup`] prepares such a copy for measuring
//! (factory.md's `## Setup`, the provenance probe, the checkout's own environment).

pub mod clean;
pub mod integrate;
pub mod inventory;
pub mod pristine;
pub mod repo;
pub mod scratch;
pub mod setup;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{BranchType, ErrorCode, Oid, Repository, WorktreePruneOptions};

use crate::project::layout::{FactoryPaths, LayoutError, ensure_factory_dir};
use crate::store::Verdict;
pub use crate::store::Workspace;
use crate::sys::files::FileLock;

/// The branch of experiment `id`: `factory/exp-NNN`.
pub fn branch_name(id: u32) -> String {
    format!("factory/exp-{id:03}")
}

/// Where experiment `id`'s worktree lives: `<project>/.factory/worktrees/exp-NNN`.
pub fn worktree_path(project: &Path, id: u32) -> PathBuf {
    FactoryPaths::new(project)
        .worktrees_dir()
        .join(format!("exp-{id:03}"))
}

/// The prefix of git's own name for an experiment's worktree (its directory under
/// `.git/worktrees/`), so it cannot collide with worktrees the user made by hand.
const ADMIN_PREFIX: &str = "factory-exp-";

fn admin_name(id: u32) -> String {
    format!("{ADMIN_PREFIX}{id:03}")
}

/// Whether a finished experiment's branch goes with its worktree: a revert's or an
/// error's work is discarded; every other verdict leaves the branch for a human (a
/// keep to merge, superseded work a later experiment may build on, a quarantined
/// branch to look at).
pub fn branch_goes_with(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::Revert | Verdict::Error)
}

/// The commit an experiment starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The branch used.
    pub branch: String,
    /// Its tip.
    pub commit: Oid,
    /// Set when the configured target branch did not exist and HEAD's branch was used.
    pub note: Option<String>,
}

/// Resolves the tip of `target_branch` in the repository holding `project`, falling
/// back to the branch HEAD is on when `target_branch` does not exist locally.
pub fn resolve_base(project: &Path, target_branch: &str) -> Result<Base, WorktreeError> {
    let repo = open(project)?;
    resolve_in(&repo, project, target_branch)
}

fn resolve_in(repo: &Repository, project: &Path, target: &str) -> Result<Base, WorktreeError> {
    if let Ok(branch) = repo.find_branch(target, BranchType::Local)
        && let Ok(commit) = branch.get().peel_to_commit()
    {
        return Ok(Base {
            branch: target.to_owned(),
            commit: commit.id(),
            note: None,
        });
    }
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
            return Err(WorktreeError::NoCommits {
                path: project.to_path_buf(),
            });
        }
        Err(e) => return Err(git(e)),
    };
    let branch = head
        .is_branch()
        .then(|| head.shorthand().ok().map(str::to_owned))
        .flatten()
        .ok_or_else(|| WorktreeError::NoTargetBranch {
            target: target.to_owned(),
        })?;
    let commit = head.peel_to_commit().map_err(git)?;
    Ok(Base {
        note: Some(format!(
            "target branch `{target}` does not exist here; experiments start from the current branch `{branch}`"
        )),
        branch,
        commit: commit.id(),
    })
}

/// Creates (or finds) experiment `id`'s branch and worktree. The branch is made from
/// the tip of `target_branch` (see [`resolve_base`]) only when it does not exist yet:
/// an existing branch may already hold the experiment's work and is used as it is.
pub fn create(project: &Path, id: u32, target_branch: &str) -> Result<Workspace, WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let repo = open(project)?;
    let base = resolve_in(&repo, project, target_branch)?;
    let name = branch_name(id);
    let branch = match repo.find_branch(&name, BranchType::Local) {
        Ok(b) => b,
        Err(e) if e.code() == ErrorCode::NotFound => {
            let commit = repo.find_commit(base.commit).map_err(git)?;
            repo.branch(&name, &commit, false).map_err(git)?
        }
        Err(e) => return Err(git(e)),
    };
    let tip = branch.get().peel_to_commit().map_err(git)?.id();
    // On an existing branch the base is where it left the target line.
    let base_commit = if tip == base.commit {
        tip
    } else {
        repo.merge_base(tip, base.commit).unwrap_or(base.commit)
    };
    let path = worktree_path(project, id);
    // An existing experiment repository (or an older factory's worktree) may hold the
    // agent's uncommitted work: it is used as it is.
    let usable = path.join(".git").exists() && repo::open_experiment(&path).is_ok();
    if !usable {
        if let Ok(stale) = repo.find_worktree(&admin_name(id)) {
            // An older factory's worktree whose directory is gone: forget it.
            stale
                .prune(Some(WorktreePruneOptions::new().valid(true).locked(true)))
                .map_err(git)?;
        }
        clear_leftover(&path)?;
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        repo::init(&repo, &path, &name, tip)?;
    }
    Ok(Workspace {
        branch: name,
        base_commit: base_commit.to_string(),
        worktree: absolute(&path),
        target_branch: base.branch,
        subdir: subdir_of(&repo, project),
        note: base.note,
    })
}

/// Removes what a killed [`create`] of experiment `id` may have left — git's record of
/// the worktree and its directory under `.factory/worktrees/` — keeping the branch and
/// any commits on it. Only for an experiment whose workspace was never recorded: no
/// agent has worked there.
pub fn discard_unfinished(project: &Path, id: u32) -> Result<(), WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let repo = open(project)?;
    if let Ok(wt) = repo.find_worktree(&admin_name(id)) {
        wt.prune(Some(WorktreePruneOptions::new().valid(true).locked(true)))
            .map_err(git)?;
    }
    let path = worktree_path(project, id);
    match fs::remove_dir_all(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_at(&path)(e)),
    }
}

/// What [`remove`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Removed {
    /// A worktree was there and is gone now.
    pub worktree: bool,
    /// The branch was there and is deleted now.
    pub branch: bool,
}

/// Removes experiment `id`'s worktree (and git's record of it) and, when
/// `delete_branch`, its branch. Whatever is already gone is fine.
pub fn remove(project: &Path, id: u32, delete_branch: bool) -> Result<Removed, WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let repo = open(project)?;
    let mut removed = Removed::default();
    let path = worktree_path(project, id);
    if !delete_branch && path.join(".git").exists() {
        // The branch stays: it must hold what the agent committed there.
        repo::import_locked(&repo, project, id)?;
    }
    if let Ok(wt) = repo.find_worktree(&admin_name(id)) {
        wt.prune(Some(
            WorktreePruneOptions::new()
                .valid(true)
                .locked(true)
                .working_tree(true),
        ))
        .map_err(git)?;
        removed.worktree = true;
    }
    if path.exists() {
        // Only ever our own directory under .factory/worktrees/.
        fs::remove_dir_all(&path).map_err(io_at(&path))?;
        removed.worktree = true;
    }
    if delete_branch {
        match repo.find_branch(&branch_name(id), BranchType::Local) {
            Ok(mut b) => {
                if b.is_head() {
                    return Err(WorktreeError::BranchCheckedOut {
                        branch: branch_name(id),
                    });
                }
                b.delete().map_err(git)?;
                removed.branch = true;
            }
            Err(e) if e.code() == ErrorCode::NotFound => {}
            Err(e) => return Err(git(e)),
        }
    }
    Ok(removed)
}

/// Where an errored experiment's work is kept: `factory/failed/exp-NNN`.
pub fn failed_branch_name(id: u32) -> String {
    format!("factory/failed/exp-{id:03}")
}

/// `factory/failed/exp-NNN`, then `-2`, `-3`, …: the names an errored experiment's work
/// may be set aside under, in the order they are taken.
fn failed_names(id: u32) -> impl Iterator<Item = String> {
    (1..100).map(move |n| match n {
        1 => failed_branch_name(id),
        n => format!("{}-{n}", failed_branch_name(id)),
    })
}

/// Before an `error` verdict removes experiment `id`'s branch: a branch that carries
/// commits (its tip is not `base`, or `base` is unknown) is renamed to
/// [`failed_branch_name`] (`-2`, `-3`, … when taken) instead, and its new name returned.
/// A fault of the harness never costs the agent's work.
pub fn set_aside_work(
    project: &Path,
    id: u32,
    base: Option<&str>,
) -> Result<Option<String>, WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let repo = open(project)?;
    if worktree_path(project, id).join(".git").exists() {
        repo::import_locked(&repo, project, id)?;
    }
    let mut branch = match repo.find_branch(&branch_name(id), BranchType::Local) {
        Ok(b) => b,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(git(e)),
    };
    let tip = branch.get().peel_to_commit().map_err(git)?.id().to_string();
    if base.is_some_and(|b| b == tip) {
        return Ok(None);
    }
    let free = failed_names(id)
        .find(|name| repo.find_branch(name, BranchType::Local).is_err())
        .unwrap_or_else(|| format!("{}-{}", failed_branch_name(id), std::process::id()));
    branch.rename(&free, false).map_err(git)?;
    Ok(Some(free))
}

/// The branch experiment `id`'s work was last set aside on by [`set_aside_work`].
pub fn set_aside_branch(project: &Path, id: u32) -> Option<String> {
    let repo = open(project).ok()?;
    failed_names(id)
        .take_while(|name| repo.find_branch(name, BranchType::Local).is_ok())
        .last()
}

/// The commit experiment `id`'s branch points at, `None` when the branch is gone.
pub fn branch_tip(project: &Path, id: u32) -> Result<Option<String>, WorktreeError> {
    let repo = open(project)?;
    match repo.find_branch(&branch_name(id), BranchType::Local) {
        Ok(b) => Ok(Some(
            b.get().peel_to_commit().map_err(git)?.id().to_string(),
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(git(e)),
    }
}

/// Makes `dir` a new git repository on `main` with everything in it committed, as
/// `who` (the demo project, a bench project's scratch copy).
pub fn init_committed(dir: &Path, who: &str, message: &str) -> Result<(), git2::Error> {
    let mut opts = git2::RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = Repository::init_opts(dir, &opts)?;
    let mut index = repo.index()?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = git2::Signature::now(who, "factory@factory.invalid")?;
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &[])?;
    Ok(())
}

/// The commit checked out in the worktree at `dir`.
pub fn head_commit(dir: &Path) -> Result<String, WorktreeError> {
    let repo = open(dir)?;
    let head = repo.head().map_err(git)?;
    Ok(head.peel_to_commit().map_err(git)?.id().to_string())
}

/// The commit experiment `id`'s own repository has checked out.
pub fn experiment_head(project: &Path, id: u32) -> Result<String, WorktreeError> {
    let repo = repo::open_experiment(&worktree_path(project, id))?;
    let head = repo.head().map_err(git)?;
    Ok(head.peel_to_commit().map_err(git)?.id().to_string())
}

/// Opens the repository holding `project`; "not a repository" names `git init`.
pub fn open(project: &Path) -> Result<Repository, WorktreeError> {
    Repository::discover(project).map_err(|e| {
        if e.code() == ErrorCode::NotFound {
            WorktreeError::NotARepo {
                path: project.to_path_buf(),
            }
        } else {
            git(e)
        }
    })
}

fn lock(paths: &FactoryPaths) -> Result<FileLock, WorktreeError> {
    // git2 is safe per process but refs and .git/worktrees are shared: concurrent
    // factory processes take turns.
    let path = paths.dir().join(".worktrees.lock");
    FileLock::acquire(&path).map_err(io_at(&path))
}

/// An empty directory left at the worktree path (a crash mid-add) is removed; anything
/// with content is not ours to delete.
fn clear_leftover(path: &Path) -> Result<(), WorktreeError> {
    match fs::read_dir(path) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(WorktreeError::PathTaken {
                    path: path.to_path_buf(),
                });
            }
            fs::remove_dir(path).map_err(io_at(path))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_at(path)(e)),
    }
}

/// Where `project` lies inside `repo`'s working directory (empty at its root).
pub(crate) fn subdir_of(repo: &Repository, project: &Path) -> PathBuf {
    let (Some(workdir), Ok(project)) = (repo.workdir(), project.canonicalize()) else {
        return PathBuf::new();
    };
    let workdir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_path_buf());
    project
        .strip_prefix(&workdir)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn absolute(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn git(e: git2::Error) -> WorktreeError {
    WorktreeError::Git(e.message().to_owned())
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> WorktreeError + '_ {
    move |source| WorktreeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Why a branch or worktree could not be made or removed.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum WorktreeError {
    /// The project is not inside a git repository.
    #[error("not a git repository: {path}")]
    #[diagnostic(
        code(factory::worktrees::not_a_repo),
        help(
            "experiments run on their own git branch; run `git init` in the project and commit, e.g. `git init && git add -A && git commit -m init`"
        )
    )]
    NotARepo {
        /// The project directory.
        path: PathBuf,
    },
    /// The repository has no commit to branch from.
    #[error("the git repository at {path} has no commits yet")]
    #[diagnostic(
        code(factory::worktrees::no_commits),
        help(
            "experiments branch from a commit; commit the project first, e.g. `git add -A && git commit -m init`"
        )
    )]
    NoCommits {
        /// The project directory.
        path: PathBuf,
    },
    /// Neither the target branch nor a current branch exists (detached HEAD).
    #[error("target branch `{target}` does not exist and HEAD is not on a branch")]
    #[diagnostic(
        code(factory::worktrees::no_target_branch),
        help(
            "create the branch, check out a branch, or set `target_branch` in factory.md and run `factory init --reparse`"
        )
    )]
    NoTargetBranch {
        /// The configured target branch.
        target: String,
    },
    /// Something that is not our worktree sits where it belongs.
    #[error("{path} exists and is not an experiment worktree")]
    #[diagnostic(
        code(factory::worktrees::path_taken),
        help(
            "move that directory away; factory keeps experiment worktrees under .factory/worktrees/"
        )
    )]
    PathTaken {
        /// The worktree path.
        path: PathBuf,
    },
    /// The user checked the experiment branch out in their own checkout.
    #[error("branch `{branch}` is checked out in the project's own checkout")]
    #[diagnostic(
        code(factory::worktrees::branch_checked_out),
        help(
            "switch the checkout to another branch (e.g. `git switch main`), then finalize again"
        )
    )]
    BranchCheckedOut {
        /// The branch.
        branch: String,
    },
    /// An experiment's repository was configured to check out somewhere else.
    #[error(
        "the experiment repository at {path} has its working tree set to {}",
        workdir.as_deref().unwrap_or("nothing (bare)")
    )]
    #[diagnostic(
        code(factory::worktrees::reconfigured),
        help(
            "something in the experiment changed its git configuration (`core.worktree` or `core.bare`); factory does not write through it — finalize the experiment with --verdict error"
        )
    )]
    Reconfigured {
        /// The experiment repository.
        path: PathBuf,
        /// Where its configuration points.
        workdir: Option<String>,
    },
    /// `.factory/` could not be prepared.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Layout(#[from] LayoutError),
    /// libgit2 refused an operation.
    #[error("git failed: {0}")]
    #[diagnostic(
        code(factory::worktrees::git),
        help("check that the repository is readable and writable (`git status` should work)")
    )]
    Git(String),
    /// The file system refused an operation.
    #[error("cannot access {path}: {source}")]
    #[diagnostic(
        code(factory::worktrees::io),
        help("check that the project's .factory/ directory is writable")
    )]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

#[cfg(test)]
mod tests;
