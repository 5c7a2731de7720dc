//! Applying an experiment onto the target branch's current tip, for the re-check a
//! parallel winner gets before it is kept. The experiment's commits are replayed onto
//! the tip in memory (git2's cherry-pick into an index: no checkout is touched); a
//! conflict is reported with its files and changes nothing. When they apply, the
//! experiment's branch is moved to the replayed commits and its own worktree checked
//! out there (its own repository: [`super::repo`]), so the precheck measures exactly what a human would merge. Only
//! factory's own branch and worktree move; the target branch and the user's checkout
//! are never written.

use std::path::Path;

use git2::{BranchType, Commit, Oid, Repository};

use super::{WorktreeError, branch_name, git, lock, open, worktree_path};
use crate::project::layout::ensure_factory_dir;

/// What applying onto the tip did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The target has not moved since the experiment began: nothing to replay.
    AlreadyOnTip { tip: String },
    /// The commits were replayed; the branch moved from `from` to `to`.
    Replayed {
        tip: String,
        from: String,
        to: String,
        commits: usize,
    },
    /// A commit does not apply onto the tip; nothing was changed.
    Conflict {
        tip: String,
        commit: String,
        files: Vec<String>,
    },
}

/// Replays experiment `id`'s commits since `base` onto the tip of `target`.
pub fn onto_tip(
    project: &Path,
    id: u32,
    base: &str,
    target: &str,
) -> Result<Applied, WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let repo = open(project)?;
    let tip = repo
        .find_branch(target, BranchType::Local)
        .map_err(git)?
        .get()
        .peel_to_commit()
        .map_err(git)?;
    let base = Oid::from_str(base).map_err(git)?;
    if tip.id() == base {
        return Ok(Applied::AlreadyOnTip {
            tip: tip.id().to_string(),
        });
    }
    if worktree_path(project, id).join(".git").exists() {
        super::repo::import_locked(&repo, project, id)?;
    }
    let head = branch_head(&repo, id)?;
    let mut walk = repo.revwalk().map_err(git)?;
    walk.push(head).map_err(git)?;
    walk.hide(base).map_err(git)?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
        .map_err(git)?;
    let commits: Vec<Oid> = walk.collect::<Result<_, _>>().map_err(git)?;
    let mut onto: Commit<'_> = tip.clone();
    for oid in &commits {
        let commit = repo.find_commit(*oid).map_err(git)?;
        // A merge commit replays against its first parent, as `git rebase` would.
        let mainline = if commit.parent_count() > 1 { 1 } else { 0 };
        let mut index = repo
            .cherrypick_commit(&commit, &onto, mainline, None)
            .map_err(git)?;
        if index.has_conflicts() {
            let mut files: Vec<String> = index
                .conflicts()
                .map_err(git)?
                .flatten()
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .collect();
            files.sort();
            files.dedup();
            return Ok(Applied::Conflict {
                tip: tip.id().to_string(),
                commit: oid.to_string(),
                files,
            });
        }
        let tree = repo
            .find_tree(index.write_tree_to(&repo).map_err(git)?)
            .map_err(git)?;
        let new = repo
            .commit(
                None,
                &commit.author(),
                &commit.committer(),
                commit.message().unwrap_or(""),
                &tree,
                &[&onto],
            )
            .map_err(git)?;
        onto = repo.find_commit(new).map_err(git)?;
    }
    move_branch(&repo, project, id, onto.id())?;
    Ok(Applied::Replayed {
        tip: tip.id().to_string(),
        from: head.to_string(),
        to: onto.id().to_string(),
        commits: commits.len(),
    })
}

/// Puts experiment `id`'s branch (and its worktree, when it has one) back at `commit`:
/// undoes a replay whose re-check failed, so the branch left to look at is the one
/// that passed on its own base.
pub fn reset_branch(project: &Path, id: u32, commit: &str) -> Result<(), WorktreeError> {
    let paths = ensure_factory_dir(project)?;
    let _lock = lock(&paths)?;
    let repo = open(project)?;
    move_branch(&repo, project, id, Oid::from_str(commit).map_err(git)?)
}

fn branch_head(repo: &Repository, id: u32) -> Result<Oid, WorktreeError> {
    repo.find_branch(&branch_name(id), BranchType::Local)
        .map_err(git)?
        .get()
        .peel_to_commit()
        .map(|c| c.id())
        .map_err(git)
}

/// Moves factory's branch of `id` to `to` and checks its worktree out there.
fn move_branch(repo: &Repository, project: &Path, id: u32, to: Oid) -> Result<(), WorktreeError> {
    let refname = format!("refs/heads/{}", branch_name(id));
    repo.reference(&refname, to, true, "factory: onto the target's tip")
        .map_err(git)?;
    let dir = worktree_path(project, id);
    if dir.join(".git").exists() {
        super::repo::move_to(&dir, id, to)?;
    }
    Ok(())
}

/// Lines added plus lines removed from `base` to the head of experiment `id`'s
/// branch: the tie-break between equal scores (a smaller change wins).
pub fn changed_lines(project: &Path, id: u32, base: &str) -> Result<usize, WorktreeError> {
    let repo = open(project)?;
    let head = repo.find_commit(branch_head(&repo, id)?).map_err(git)?;
    let base = repo
        .find_commit(Oid::from_str(base).map_err(git)?)
        .map_err(git)?;
    let diff = repo
        .diff_tree_to_tree(
            Some(&base.tree().map_err(git)?),
            Some(&head.tree().map_err(git)?),
            None,
        )
        .map_err(git)?;
    let stats = diff.stats().map_err(git)?;
    Ok(stats.insertions() + stats.deletions())
}
