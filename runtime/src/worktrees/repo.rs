//! Experiment repositories: each experiment works in a git repository of its own at
//! `.factory/worktrees/exp-NNN`, which borrows the project repository's objects through
//! `objects/info/alternates` and shares nothing else — no config, hooks, `info/`, refs
//! or replace refs. Whatever an agent does to git there (a filter driver, a hook,
//! `git replace`, moving a branch) stays there.
//!
//! factory brings the work home itself ([`import`]): it copies the objects reachable
//! from the experiment's commits that the project lacks, each checked against its id,
//! and points the project's `factory/exp-NNN` at the experiment's branch. No git
//! porcelain runs and no remote is configured, and libgit2 honours neither replace
//! refs nor filter drivers, so what is read is exactly the commit its id names.

use std::fs;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, RepositoryOpenFlags, build::CheckoutBuilder};

use super::{WorktreeError, branch_name, git, io_at, lock, open, worktree_path};
use crate::project::layout::ensure_factory_dir;

/// Makes the experiment repository at `path`: objects borrowed from `user`, its branch
/// `branch` at `commit` checked out. `path` must not exist or be empty.
pub(super) fn init(
    user: &Repository,
    path: &Path,
    branch: &str,
    commit: Oid,
) -> Result<(), WorktreeError> {
    let mut opts = git2::RepositoryInitOptions::new();
    // No template: the user's hooks and info/ stay the user's.
    opts.no_reinit(true)
        .mkdir(true)
        .external_template(false)
        .initial_head(branch);
    let repo = Repository::init_opts(path, &opts).map_err(git)?;
    let info = repo.path().join("objects/info");
    fs::create_dir_all(&info).map_err(io_at(&info))?;
    let objects = absolute(&user.commondir().join("objects"));
    let alternates = info.join("alternates");
    fs::write(&alternates, format!("{}\n", objects.display())).map_err(io_at(&alternates))?;
    copy_identity(user, &repo);
    drop(repo);
    // Reopened, so its object database reads the alternates just written.
    let repo = open_experiment(path)?;
    repo.reference(
        &format!("refs/heads/{branch}"),
        commit,
        true,
        "factory: experiment",
    )
    .map_err(git)?;
    repo.set_head(&format!("refs/heads/{branch}"))
        .map_err(git)?;
    let mut co = CheckoutBuilder::new();
    co.force();
    repo.checkout_head(Some(&mut co)).map_err(git)?;
    Ok(())
}

/// The name and e-mail the user's repository commits with, so an agent's commits there
/// carry them as they did in a shared worktree. Best effort: none set, none copied.
fn copy_identity(user: &Repository, repo: &Repository) {
    let (Ok(from), Ok(mut to)) = (user.config(), repo.config()) else {
        return;
    };
    for key in ["user.name", "user.email"] {
        if let Ok(value) = from.get_string(key) {
            let _ = to.set_str(key, &value);
        }
    }
}

/// Opens the repository at `path` itself (never a search upwards), refusing one whose
/// configuration points its working tree elsewhere: factory checks out into it, and an
/// agent's `core.worktree` must not aim that at the user's checkout.
pub fn open_experiment(path: &Path) -> Result<Repository, WorktreeError> {
    let repo =
        Repository::open_ext(path, RepositoryOpenFlags::NO_SEARCH, &[] as &[&Path]).map_err(git)?;
    let workdir = repo.workdir().map(absolute);
    if workdir.as_deref() != Some(absolute(path).as_path()) {
        return Err(WorktreeError::Reconfigured {
            path: path.to_path_buf(),
            workdir: workdir.map(|w| w.display().to_string()),
        });
    }
    Ok(repo)
}

/// What [`import`] found in the experiment's repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The commit its HEAD is on: what a precheck measures.
    pub head: Oid,
    /// Its `factory/exp-NNN` branch, which the project's branch now matches; `None`
    /// when the agent deleted it (the project's branch is left where it was).
    pub branch: Option<Oid>,
}

/// Brings experiment `id`'s commits into the project's repository and points the
/// project's `factory/exp-NNN` at its branch there (see the module doc).
pub fn import(project: &Path, id: u32) -> Result<Imported, WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let user = open(project)?;
    import_locked(&user, project, id)
}

pub(super) fn import_locked(
    user: &Repository,
    project: &Path,
    id: u32,
) -> Result<Imported, WorktreeError> {
    let exp = open_experiment(&worktree_path(project, id))?;
    let head = exp
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git)?
        .id();
    let name = branch_name(id);
    let branch = exp
        .find_reference(&format!("refs/heads/{name}"))
        .ok()
        .and_then(|r| r.peel_to_commit().ok())
        .map(|c| c.id());
    copy_missing(&exp, user, head)?;
    if let Some(tip) = branch {
        copy_missing(&exp, user, tip)?;
        let refname = format!("refs/heads/{name}");
        let current = user.refname_to_id(&refname).ok();
        if current != Some(tip) {
            user.reference(&refname, tip, true, "factory: import from the experiment")
                .map_err(git)?;
        }
    }
    Ok(Imported { head, branch })
}

/// Copies into `dst` every object reachable from `tip` in `src` that `dst` lacks. An
/// object is written only after everything it points to (a tree after its entries, a
/// commit after its tree and its parents), so whatever `dst` holds is complete even if
/// the copy is killed half-way — and a commit or tree `dst` has ends the walk.
fn copy_missing(src: &Repository, dst: &Repository, tip: Oid) -> Result<(), WorktreeError> {
    let from = src.odb().map_err(git)?;
    let to = dst.odb().map_err(git)?;
    let copy = |oid: Oid| -> Result<(), WorktreeError> {
        let object = from.read(oid).map_err(git)?;
        let written = to.write(object.kind(), object.data()).map_err(git)?;
        if written != oid {
            return Err(WorktreeError::Git(format!(
                "object {oid} of the experiment's repository does not match its content"
            )));
        }
        Ok(())
    };
    // The commits `dst` lacks, newest first; written oldest first.
    let mut missing = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![tip];
    while let Some(oid) = stack.pop() {
        if to.exists(oid) || !seen.insert(oid) {
            continue;
        }
        let commit = src.find_commit(oid).map_err(git)?;
        stack.extend(commit.parent_ids());
        missing.push(oid);
    }
    // Parents before children: the walk above found each commit before its parents.
    let order = topological(src, &missing)?;
    for oid in order {
        let commit = src.find_commit(oid).map_err(git)?;
        copy_tree(src, &to, commit.tree_id(), &copy)?;
        copy(oid)?;
    }
    Ok(())
}

/// `commits` ordered so that each comes after its parents among them.
fn topological(src: &Repository, commits: &[Oid]) -> Result<Vec<Oid>, WorktreeError> {
    let set: std::collections::BTreeSet<Oid> = commits.iter().copied().collect();
    let mut done = std::collections::BTreeSet::new();
    let mut order = Vec::with_capacity(commits.len());
    for &start in commits {
        // Depth first, a commit after its parents (explicit stack: histories are long).
        let mut stack = vec![(start, false)];
        while let Some((oid, parents_done)) = stack.pop() {
            if done.contains(&oid) {
                continue;
            }
            if parents_done {
                done.insert(oid);
                order.push(oid);
                continue;
            }
            stack.push((oid, true));
            let commit = src.find_commit(oid).map_err(git)?;
            for p in commit.parent_ids() {
                if set.contains(&p) && !done.contains(&p) {
                    stack.push((p, false));
                }
            }
        }
    }
    Ok(order)
}

/// Copies tree `oid` after everything under it.
fn copy_tree(
    src: &Repository,
    to: &git2::Odb<'_>,
    oid: Oid,
    copy: &dyn Fn(Oid) -> Result<(), WorktreeError>,
) -> Result<(), WorktreeError> {
    if to.exists(oid) {
        return Ok(());
    }
    let tree = src.find_tree(oid).map_err(git)?;
    for entry in tree.iter() {
        match entry.kind() {
            Some(ObjectType::Tree) => copy_tree(src, to, entry.id(), copy)?,
            Some(ObjectType::Blob) if !to.exists(entry.id()) => copy(entry.id())?,
            // A submodule's commit lives in its own repository.
            _ => {}
        }
    }
    copy(oid)
}

/// Moves the experiment repository's branch (and its checkout) to `to`, a commit the
/// project's repository holds: after a replay onto the target's tip.
pub(super) fn move_to(path: &Path, id: u32, to: Oid) -> Result<(), WorktreeError> {
    let repo = open_experiment(path)?;
    let refname = format!("refs/heads/{}", branch_name(id));
    repo.reference(&refname, to, true, "factory: onto the target's tip")
        .map_err(git)?;
    repo.set_head(&refname).map_err(git)?;
    let mut co = CheckoutBuilder::new();
    co.force();
    repo.checkout_head(Some(&mut co)).map_err(git)
}

fn absolute(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}
