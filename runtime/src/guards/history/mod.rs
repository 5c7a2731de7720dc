//! What changed is every commit (issue 10, point 5): from the experiment's base commit
//! (exclusive) to its head, every commit is walked and every path any of them added,
//! modified, deleted, renamed or re-moded is collected — with the blob, the file modes,
//! symbolic links and submodules (gitlinks). Uncommitted work in the working tree is one
//! more pseudo-commit. A change that a later commit reverts still counts: the branch holds
//! it, and keeping the branch keeps it.
//!
//! Scope, fixed surfaces, symlinks, submodules and the secret scan all judge this set.
//! Nothing is read through the file system except uncommitted files, and symlinks are
//! resolved inside git trees, never followed on disk.
//!
//! Here: collecting the touches. [`rules`] judges their paths and content (scope,
//! fixed surfaces, submodules, secrets); [`links`] resolves symlinks inside git trees.

mod links;
mod rules;
#[cfg(test)]
mod tests;

pub use links::{check_symlinks, link_escape};
pub use rules::{check_fixed_surfaces, check_scope, check_secrets, check_submodules};

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository, Sort, Tree};

use super::GuardError;
use super::changes::ChangeKind;

/// Git's mode for a symbolic link.
pub const MODE_LINK: u32 = 0o120000;
/// Git's mode for a submodule (a gitlink: a commit id, no content).
pub const MODE_GITLINK: u32 = 0o160000;
/// What uncommitted work is called where a commit id would stand.
pub const WORKING_TREE: &str = "the working tree";

/// Where a touched path's new content can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A blob in the object database.
    Blob(Oid),
    /// An uncommitted file (or link) in the working tree.
    File(PathBuf),
    /// Nothing to read: a deletion, or a submodule's commit id.
    None,
}

/// One path one commit touched.
#[derive(Debug, Clone)]
pub struct Touch {
    /// The commit's short id, or [`WORKING_TREE`].
    pub commit: String,
    /// The commit whose tree the path is resolved in (the head for uncommitted work).
    pub tree_commit: Oid,
    pub path: String,
    /// For a rename: where it came from.
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    /// Git file modes (0 when that side does not exist).
    pub old_mode: u32,
    pub new_mode: u32,
    pub content: Content,
    /// The blob this change replaced (for secrets already there).
    pub old_blob: Option<Oid>,
}

impl Touch {
    /// Every path this touch changes (both sides of a rename).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.old_path.as_deref())
    }

    pub fn is_symlink(&self) -> bool {
        self.kind != ChangeKind::Deleted && self.new_mode == MODE_LINK
    }

    pub fn is_submodule(&self) -> bool {
        self.kind != ChangeKind::Deleted && self.new_mode == MODE_GITLINK
    }

    /// Only the permission bits changed (e.g. a file made executable).
    pub fn mode_changed(&self) -> bool {
        self.kind == ChangeKind::Modified && self.old_mode != 0 && self.old_mode != self.new_mode
    }

    /// "in commit abc1234" / "in the working tree".
    pub fn at(&self) -> String {
        if self.commit == WORKING_TREE {
            format!("in {WORKING_TREE}")
        } else {
            format!("in commit {}", self.commit)
        }
    }

    /// What happened to `path`, in the words violations use.
    fn what(&self, path: &str) -> String {
        let renamed_away = self.old_path.as_deref() == Some(path);
        match self.kind {
            ChangeKind::Added => "added".to_string(),
            ChangeKind::Deleted => "deleted".to_string(),
            ChangeKind::Renamed if renamed_away => "renamed away".to_string(),
            ChangeKind::Renamed => "renamed into place".to_string(),
            ChangeKind::TypeChanged => "type changed".to_string(),
            ChangeKind::Modified if self.mode_changed() => {
                format!("mode changed {:o} → {:o}", self.old_mode, self.new_mode)
            }
            ChangeKind::Modified => "changed".to_string(),
        }
    }
}

fn git(e: git2::Error) -> GuardError {
    GuardError::Git(e.message().to_string())
}

fn short(id: Oid) -> String {
    let hex = id.to_string();
    hex.get(..7).unwrap_or(&hex).to_string()
}

fn kind_of(status: Delta) -> Option<ChangeKind> {
    Some(match status {
        Delta::Added | Delta::Untracked | Delta::Copied => ChangeKind::Added,
        Delta::Modified => ChangeKind::Modified,
        Delta::Deleted => ChangeKind::Deleted,
        Delta::Renamed => ChangeKind::Renamed,
        Delta::Typechange => ChangeKind::TypeChanged,
        _ => return None,
    })
}

fn path_str(p: Option<&Path>) -> Option<String> {
    p.map(|p| p.to_string_lossy().replace('\\', "/"))
}

/// The touches of one diff; `workdir` is set for a diff whose new side is the working tree.
fn touches_of(
    diff: &git2::Diff<'_>,
    commit: &str,
    tree_commit: Oid,
    workdir: Option<&Path>,
) -> Vec<Touch> {
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let Some(kind) = kind_of(delta.status()) else {
            continue;
        };
        let new_path = path_str(delta.new_file().path());
        let old_path = path_str(delta.old_file().path());
        let path = match kind {
            ChangeKind::Deleted => old_path.clone(),
            _ => new_path.or_else(|| old_path.clone()),
        };
        let Some(path) = path else { continue };
        let new_mode = if kind == ChangeKind::Deleted {
            0
        } else {
            u32::from(delta.new_file().mode())
        };
        let old_mode = if kind == ChangeKind::Added {
            0
        } else {
            u32::from(delta.old_file().mode())
        };
        let new_id = delta.new_file().id();
        let content = match (kind, workdir) {
            (ChangeKind::Deleted, _) => Content::None,
            _ if new_mode == MODE_GITLINK => Content::None,
            (_, Some(root)) => Content::File(root.join(&path)),
            _ if new_id.is_zero() => Content::None,
            _ => Content::Blob(new_id),
        };
        let old_id = delta.old_file().id();
        out.push(Touch {
            commit: commit.to_string(),
            tree_commit,
            old_path: (kind == ChangeKind::Renamed).then_some(old_path).flatten(),
            path,
            kind,
            old_mode,
            new_mode,
            content,
            old_blob: (!old_id.is_zero() && kind != ChangeKind::Added).then_some(old_id),
        });
    }
    out
}

fn diff_options() -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    opts
}

fn find_renames(diff: &mut git2::Diff<'_>, untracked: bool) -> Result<(), GuardError> {
    let mut find = DiffFindOptions::new();
    find.renames(true).for_untracked(untracked);
    diff.find_similar(Some(&mut find)).map_err(git)
}

/// Every path every commit from `base` (exclusive) to `head` touched, oldest commit first.
/// A merge commit contributes only what differs from all of its parents (its own
/// resolution); what it brings in is walked as the commits it merges.
pub fn committed_touches(
    repo: &Repository,
    base: Oid,
    head: Oid,
) -> Result<Vec<Touch>, GuardError> {
    let mut walk = repo.revwalk().map_err(git)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)
        .map_err(git)?;
    walk.push(head).map_err(git)?;
    walk.hide(base).map_err(git)?;
    let mut out = Vec::new();
    for id in walk {
        let id = id.map_err(git)?;
        let commit = repo.find_commit(id).map_err(git)?;
        let tree = commit.tree().map_err(git)?;
        let label = short(id);
        let parents: Vec<Tree<'_>> = commit
            .parents()
            .map(|p| p.tree())
            .collect::<Result<_, _>>()
            .map_err(git)?;
        if parents.is_empty() {
            let mut diff = repo
                .diff_tree_to_tree(None, Some(&tree), Some(&mut diff_options()))
                .map_err(git)?;
            find_renames(&mut diff, false)?;
            out.extend(touches_of(&diff, &label, id, None));
            continue;
        }
        let mut per_parent = Vec::new();
        for parent in &parents {
            let mut diff = repo
                .diff_tree_to_tree(Some(parent), Some(&tree), Some(&mut diff_options()))
                .map_err(git)?;
            find_renames(&mut diff, false)?;
            per_parent.push(touches_of(&diff, &label, id, None));
        }
        let mut first = per_parent.remove(0);
        if !per_parent.is_empty() {
            let in_all = |p: &str| {
                per_parent
                    .iter()
                    .all(|ts| ts.iter().any(|t| t.paths().any(|q| q == p)))
            };
            first.retain(|t| t.paths().any(in_all));
        }
        out.extend(first);
    }
    Ok(out)
}

/// What the working tree (index included, untracked files too) changes relative to `head`.
pub fn uncommitted_touches(repo: &Repository, head: Oid) -> Result<Vec<Touch>, GuardError> {
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        return Ok(Vec::new());
    };
    let tree = repo.find_commit(head).and_then(|c| c.tree()).map_err(git)?;
    let mut opts = diff_options();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let mut diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(git)?;
    find_renames(&mut diff, true)?;
    let mut touches = touches_of(&diff, WORKING_TREE, head, Some(&workdir));
    // The project's own state directory is never part of a change.
    touches.retain(|t| !t.paths().any(|p| p.starts_with(".factory/")));
    Ok(touches)
}

/// Every touch from `base` to the working tree: each commit's, then uncommitted work's.
pub fn all_touches(repo: &Repository, base: Oid) -> Result<Vec<Touch>, GuardError> {
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git)?
        .id();
    let mut touches = committed_touches(repo, base, head)?;
    touches.extend(uncommitted_touches(repo, head)?);
    Ok(touches)
}

/// Reads what a touch's symlink points to, without following it.
pub(super) fn link_target(repo: &Repository, t: &Touch) -> Option<Vec<u8>> {
    match &t.content {
        Content::Blob(id) => repo.find_blob(*id).ok().map(|b| b.content().to_vec()),
        Content::File(path) => {
            use std::os::unix::ffi::OsStrExt;
            fs::read_link(path)
                .ok()
                .map(|p| p.as_os_str().as_bytes().to_vec())
        }
        Content::None => None,
    }
}

/// `v` without repeats, in first-seen order.
pub(super) fn dedup(v: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    v.into_iter().filter(|s| seen.insert(s.clone())).collect()
}
