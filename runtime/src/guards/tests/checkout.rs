//! A pristine copy of one commit's tree in a scratch directory outside the project: no
//! ignored or untracked files, no `.factory/`. Self-contained so that the shared pristine
//! checkouts of `experiment::precheck` can replace it.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

/// A scratch directory removed when dropped.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A new empty directory under the system temp dir.
    pub fn new(label: &str) -> std::io::Result<Self> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("factory-{label}-{}-{nanos}", std::process::id()));
        fs::create_dir_all(&path)?;
        Ok(Self { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Writes `commit`'s tree into `dest` (created if missing): regular and executable files,
/// symlinks as symlinks; submodules are left out; `.factory/` is never written.
pub fn scratch_checkout(repo: &Repository, commit: Oid, dest: &Path) -> Result<(), String> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| format!("cannot read commit {commit}: {}", e.message()))?;
    fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let mut failure: Option<String> = None;
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        let Ok(name) = entry.name() else {
            return TreeWalkResult::Skip;
        };
        let rel = format!("{dir}{name}");
        if rel == ".factory" || rel.starts_with(".factory/") {
            return TreeWalkResult::Skip;
        }
        let path = dest.join(&rel);
        let result = match entry.kind() {
            Some(ObjectType::Tree) => fs::create_dir_all(&path).map_err(|e| e.to_string()),
            Some(ObjectType::Blob) => write_blob(repo, entry.id(), entry.filemode(), &path),
            _ => Ok(()),
        };
        match result {
            Ok(()) => TreeWalkResult::Ok,
            Err(e) => {
                failure = Some(format!("{rel}: {e}"));
                TreeWalkResult::Abort
            }
        }
    })
    .map_err(|e| failure.clone().unwrap_or_else(|| e.message().to_string()))?;
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn write_blob(repo: &Repository, id: Oid, mode: i32, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let blob = repo.find_blob(id).map_err(|e| e.message().to_string())?;
    if mode == i32::from(git2::FileMode::Link) {
        let target = String::from_utf8_lossy(blob.content()).into_owned();
        return std::os::unix::fs::symlink(target, path).map_err(|e| e.to_string());
    }
    fs::write(path, blob.content()).map_err(|e| e.to_string())?;
    if mode == i32::from(git2::FileMode::BlobExecutable) {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    Ok(())
}
