//! The changed-file list, always derived from git (spec §13.2): everything that differs
//! between the experiment's base commit and the working tree — committed on the branch,
//! staged, unstaged or untracked — with renames detected. Nothing an agent reports is used.

use std::path::{Component, Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode, Oid, Repository};
use serde::Serialize;

use super::GuardError;

/// The project's own state directory; never part of a project change.
const STATE_DIR: &str = ".factory/";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    TypeChanged,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
            ChangeKind::TypeChanged => "type changed",
        }
    }
}

/// One changed path. For a rename, `old_path` is where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub path: String,
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    /// True when the new side is a symbolic link.
    pub is_symlink: bool,
    /// The blob at the base commit (for comparing test files), when there was one.
    #[serde(skip)]
    pub old_blob: Option<Oid>,
}

impl Change {
    /// Every path this change touches (both sides of a rename).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.old_path.as_deref())
    }
}

/// Opens the repository containing `root`.
pub fn open_repo(root: &Path) -> Result<Repository, GuardError> {
    Repository::discover(root).map_err(|e| GuardError::NotARepo {
        path: root.to_path_buf(),
        message: e.message().to_string(),
    })
}

/// The commit the experiment started from: the merge base of HEAD and `base_rev`.
pub fn base_commit(repo: &Repository, base_rev: &str) -> Result<Oid, GuardError> {
    let no_rev = |e: git2::Error| GuardError::NoRevision {
        rev: base_rev.to_string(),
        message: e.message().to_string(),
    };
    let base = repo
        .revparse_single(base_rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(no_rev)?;
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| GuardError::Git(e.message().to_string()))?;
    repo.merge_base(head.id(), base.id())
        .map_err(|e| GuardError::NoRevision {
            rev: base_rev.to_string(),
            message: format!("HEAD shares no history with it ({})", e.message()),
        })
}

/// Every change between the base commit and the working tree (index included).
pub fn changed_files(repo: &Repository, base: Oid) -> Result<Vec<Change>, GuardError> {
    let git = |e: git2::Error| GuardError::Git(e.message().to_string());
    let tree = repo.find_commit(base).and_then(|c| c.tree()).map_err(git)?;
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_typechange(true);
    let mut diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(git)?;
    let mut find = DiffFindOptions::new();
    find.renames(true).for_untracked(true);
    diff.find_similar(Some(&mut find)).map_err(git)?;

    let mut changes = Vec::new();
    for delta in diff.deltas() {
        let path_of = |f: git2::DiffFile| f.path().map(|p| p.to_string_lossy().replace('\\', "/"));
        let new_path = path_of(delta.new_file());
        let old_path = path_of(delta.old_file());
        let kind = match delta.status() {
            Delta::Added | Delta::Untracked | Delta::Copied => ChangeKind::Added,
            Delta::Modified => ChangeKind::Modified,
            Delta::Deleted => ChangeKind::Deleted,
            Delta::Renamed => ChangeKind::Renamed,
            Delta::Typechange => ChangeKind::TypeChanged,
            _ => continue,
        };
        let path = match kind {
            ChangeKind::Deleted => old_path.clone(),
            _ => new_path.or_else(|| old_path.clone()),
        };
        let Some(path) = path else { continue };
        if path.starts_with(STATE_DIR) {
            continue;
        }
        let old_blob = (!delta.old_file().id().is_zero()).then(|| delta.old_file().id());
        // The index/tree mode says "link"; an untracked link is only visible on disk.
        let link_in_git = kind != ChangeKind::Deleted && delta.new_file().mode() == FileMode::Link;
        let link_on_disk = repo.workdir().is_some_and(|w| {
            w.join(&path)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        });
        changes.push(Change {
            old_path: if kind == ChangeKind::Renamed {
                old_path
            } else {
                None
            },
            is_symlink: link_in_git || link_on_disk,
            path,
            kind,
            old_blob,
        });
    }
    Ok(changes)
}

/// Resolves `.` and `..` without touching the disk (a link target need not exist).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            // `..` after a `..` (or at the start) climbs further: it never cancels one.
            Component::ParentDir => {
                if out.file_name().is_none() || !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Why a changed path escapes the repository, if it does: a `..` or absolute path, or a
/// symlink whose target lies outside `root`.
pub fn escape_reason(root: &Path, change: &Change) -> Option<String> {
    for p in change.paths() {
        let path = Path::new(p);
        if path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
            return Some(format!("{p}: path leaves the repository"));
        }
    }
    if !change.is_symlink {
        return None;
    }
    let link = root.join(&change.path);
    let target = std::fs::read_link(&link).ok()?;
    let parent = Path::new(&change.path).parent().unwrap_or(Path::new(""));
    let lexical = normalize(&parent.join(&target));
    // Judged lexically, never by following the link on disk (a dangling target counts).
    let outside = target.is_absolute() || lexical.starts_with("..");
    outside.then(|| {
        format!(
            "{}: symlink points outside the repository (to {})",
            change.path,
            target.display()
        )
    })
}
