//! Pristine copies of commits in scratch directories outside the project: what the
//! keep gate measures and the test guard runs. Written from git's object database, so
//! no ignored or untracked file, no `.factory/` and no build output comes along. One
//! implementation for every caller, because writing a tree an agent made is itself an
//! attack surface (paths that climb out, files under a symlink the tree just made).

use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

/// One file of a commit's tree.
pub struct Entry {
    /// Its path in the repository.
    pub path: String,
    pub oid: Oid,
    pub mode: i32,
}

/// Every file (blobs, symlinks, submodules) of `commit`'s tree.
pub fn entries(repo: &Repository, commit: Oid) -> Result<Vec<Entry>, String> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| format!("cannot read commit {commit}: {}", e.message()))?;
    let mut out = Vec::new();
    tree.walk(TreeWalkMode::PreOrder, |root, entry| {
        if entry.kind() != Some(ObjectType::Tree)
            && let Ok(name) = entry.name()
        {
            out.push(Entry {
                path: format!("{root}{name}"),
                oid: entry.id(),
                mode: entry.filemode(),
            });
        }
        TreeWalkResult::Ok
    })
    .map_err(|e| format!("cannot walk commit {commit}: {}", e.message()))?;
    Ok(out)
}

/// A repository path that stays inside the checkout: relative, no `..`, no `.`.
fn safe_relative(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    p.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| p.to_path_buf())
}

/// Writes one entry under `root`: never outside it, never through a symlink an earlier
/// entry made; executables keep their mode, symlinks stay links, a submodule is an
/// empty directory.
pub fn write_entry(repo: &Repository, root: &Path, entry: &Entry) -> Result<(), String> {
    let rel = safe_relative(&entry.path).ok_or_else(|| {
        format!(
            "the tree holds a path that leaves the checkout: {}",
            entry.path
        )
    })?;
    let to = root.join(&rel);
    // Never write through a symlink an earlier entry created.
    let mut at = root.to_path_buf();
    for c in rel.parent().into_iter().flat_map(Path::components) {
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} lies under the symlink {}; refusing to write through it",
                    entry.path,
                    at.display()
                ));
            }
            _ => {}
        }
    }
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    match entry.mode {
        // A submodule: its commit is not in this repository; an empty directory stands in.
        0o160000 => fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display())),
        mode => {
            let blob = repo
                .find_blob(entry.oid)
                .map_err(|e| format!("cannot read {}: {}", entry.path, e.message()))?;
            if mode == 0o120000 {
                let target = String::from_utf8_lossy(blob.content()).into_owned();
                #[cfg(unix)]
                return std::os::unix::fs::symlink(&target, &to)
                    .map_err(|e| format!("{}: {e}", to.display()));
                #[cfg(not(unix))]
                return fs::write(&to, target).map_err(|e| format!("{}: {e}", to.display()));
            }
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&to)
                .map_err(|e| format!("{}: {e}", to.display()))?;
            file.write_all(blob.content())
                .map_err(|e| format!("{}: {e}", to.display()))?;
            #[cfg(unix)]
            if mode == 0o100755 {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(&to, fs::Permissions::from_mode(0o755))
                    .map_err(|e| format!("{}: {e}", to.display()))?;
            }
            Ok(())
        }
    }
}

/// Writes all of `commit`'s tree into `dest` (created when missing), leaving out
/// `.factory/`.
pub fn write_commit(repo: &Repository, commit: Oid, dest: &Path) -> Result<(), String> {
    fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    for entry in entries(repo, commit)? {
        if entry.path == ".factory" || entry.path.starts_with(".factory/") {
            continue;
        }
        write_entry(repo, dest, &entry)?;
    }
    Ok(())
}

/// Writes `commit`'s tree into `dest` as [`write_commit`] does, except that every path
/// `take` selects comes from `other` instead (present there or absent): the tests of one
/// commit over the code of another.
pub fn write_commit_with(
    repo: &Repository,
    commit: Oid,
    other: Oid,
    take: &dyn Fn(&str) -> bool,
    dest: &Path,
) -> Result<(), String> {
    fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let own = entries(repo, commit)?;
    // Nothing to take, or from the same commit: one walk of the tree is enough.
    let theirs = if other == commit {
        Vec::new()
    } else {
        entries(repo, other)?
    };
    let take = |p: &str| other != commit && take(p);
    let chosen = own
        .iter()
        .filter(|e| !take(&e.path))
        .chain(theirs.iter().filter(|e| take(&e.path)));
    for entry in chosen {
        if entry.path == ".factory" || entry.path.starts_with(".factory/") {
            continue;
        }
        write_entry(repo, dest, entry)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_written_as_committed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        fs::write(dir.path().join("run.sh"), "echo hi\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir.path().join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("src/lib.rs", dir.path().join("link")).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        let commit = repo
            .commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap();
        // Written after the commit: never part of a copy.
        fs::write(dir.path().join("untracked.txt"), "x").unwrap();

        let out = tempfile::tempdir().unwrap();
        write_commit(&repo, commit, out.path()).unwrap();
        assert_eq!(
            fs::read_to_string(out.path().join("src/lib.rs")).unwrap(),
            "pub fn a() {}\n"
        );
        let mode = fs::metadata(out.path().join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the executable bit is kept");
        assert_eq!(
            fs::read_link(out.path().join("link")).unwrap(),
            PathBuf::from("src/lib.rs")
        );
        assert!(!out.path().join("untracked.txt").exists());
        assert!(!out.path().join(".git").exists());
    }

    #[test]
    fn paths_that_leave_the_checkout_are_refused() {
        assert!(safe_relative("../x").is_none());
        assert!(safe_relative("/etc/passwd").is_none());
        assert_eq!(safe_relative("a/b"), Some(PathBuf::from("a/b")));
    }
}
