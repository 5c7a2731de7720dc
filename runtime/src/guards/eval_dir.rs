//! `check_eval_immutable` (spec §8.6): the project's `eval/` directory is a fixed surface
//! for the running experiment. A snapshot maps every file under `eval/` to its git blob id
//! and mode; the one taken before the change must equal the one taken after.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use serde::{Deserialize, Serialize};

use super::{GuardError, GuardResult};

const EVAL_DIR: &str = "eval";

/// `path → "mode blob-id"` for every file under `eval/`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalSnapshot {
    pub entries: BTreeMap<String, String>,
}

/// The `eval/` tree at a commit (a `git ls-tree -r <commit> eval/`).
pub fn eval_snapshot_at(repo: &Repository, commit: Oid) -> Result<EvalSnapshot, GuardError> {
    let git = |e: git2::Error| GuardError::Git(e.message().to_string());
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git)?;
    let mut snap = EvalSnapshot::default();
    let Ok(entry) = tree.get_path(Path::new(EVAL_DIR)) else {
        return Ok(snap);
    };
    if entry.kind() != Some(ObjectType::Tree) {
        snap.entries.insert(
            EVAL_DIR.into(),
            format!("{:o} {}", entry.filemode(), entry.id()),
        );
        return Ok(snap);
    }
    let sub = repo.find_tree(entry.id()).map_err(git)?;
    sub.walk(TreeWalkMode::PreOrder, |dir, e| {
        if e.kind() == Some(ObjectType::Blob) {
            let name = e.name().unwrap_or("?");
            snap.entries.insert(
                format!("{EVAL_DIR}/{dir}{name}"),
                format!("{:o} {}", e.filemode(), e.id()),
            );
        }
        TreeWalkResult::Ok
    })
    .map_err(git)?;
    Ok(snap)
}

/// The `eval/` directory as it is on disk now, hashed the way git would store it.
/// Ignored files and Python bytecode caches are left out: running the eval writes them.
pub fn eval_snapshot_workdir(repo: &Repository) -> Result<EvalSnapshot, GuardError> {
    let mut snap = EvalSnapshot::default();
    let Some(root) = repo.workdir() else {
        return Ok(snap);
    };
    let dir = root.join(EVAL_DIR);
    if let Ok(meta) = dir.symlink_metadata() {
        if !meta.is_dir() {
            snap.entries
                .insert(EVAL_DIR.into(), hash_entry(&dir, &meta)?);
            return Ok(snap);
        }
        walk(repo, root, &dir, &mut snap)?;
    }
    Ok(snap)
}

fn walk(
    repo: &Repository,
    root: &Path,
    dir: &Path,
    snap: &mut EvalSnapshot,
) -> Result<(), GuardError> {
    let io = |source| GuardError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let name = entry.file_name();
        if name == "__pycache__"
            || rel.ends_with(".pyc")
            || repo.is_path_ignored(Path::new(&rel)).unwrap_or(false)
        {
            continue;
        }
        let meta = entry
            .path()
            .symlink_metadata()
            .map_err(|source| GuardError::Io {
                path: path.clone(),
                source,
            })?;
        if meta.is_dir() {
            walk(repo, root, &path, snap)?;
        } else {
            snap.entries.insert(rel, hash_entry(&path, &meta)?);
        }
    }
    Ok(())
}

fn hash_entry(path: &Path, meta: &std::fs::Metadata) -> Result<String, GuardError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |source| GuardError::Io {
        path: path.to_path_buf(),
        source,
    };
    let git = |e: git2::Error| GuardError::Git(e.message().to_string());
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(io)?;
        let id =
            Oid::hash_object(ObjectType::Blob, target.to_string_lossy().as_bytes()).map_err(git)?;
        return Ok(format!("120000 {id}"));
    }
    let mode = if meta.permissions().mode() & 0o111 != 0 {
        "100755"
    } else {
        "100644"
    };
    let id = Oid::hash_file(ObjectType::Blob, path).map_err(git)?;
    Ok(format!("{mode} {id}"))
}

/// Any file added, removed or changed under `eval/` between the two snapshots.
pub fn check_eval_immutable(before: &EvalSnapshot, after: &EvalSnapshot) -> GuardResult {
    let mut v = Vec::new();
    for (path, id) in &before.entries {
        match after.entries.get(path) {
            None => v.push(format!("{path}: removed from eval/")),
            Some(now) if now != id => v.push(format!("{path}: modified in eval/")),
            _ => {}
        }
    }
    for path in after
        .entries
        .keys()
        .filter(|p| !before.entries.contains_key(*p))
    {
        v.push(format!("{path}: added to eval/"));
    }
    GuardResult::from_violations("eval_immutable", v)
}
