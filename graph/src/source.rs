//! The project's files as git sees them: tracked paths from the index (ignored and
//! untracked files stay out), read from the working tree, and HEAD.

use std::fs;
use std::path::{Path, PathBuf};

use git2::Repository;

use crate::GraphError;

/// A project root inside a git repository.
pub struct Project {
    repo: Repository,
    /// The root, relative to the repository's working directory, `/`-separated and
    /// empty when the root is the working directory itself.
    prefix: String,
    root: PathBuf,
}

impl Project {
    /// Opens the repository holding `root` (which may be a subdirectory of it).
    pub fn open(root: &Path) -> Result<Self, GraphError> {
        let not_repo = || GraphError::NotARepository {
            path: root.to_path_buf(),
        };
        let canonical = root.canonicalize().map_err(|source| GraphError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let repo = Repository::discover(&canonical).map_err(|_| not_repo())?;
        let workdir = repo
            .workdir()
            .ok_or_else(not_repo)?
            .canonicalize()
            .map_err(|source| GraphError::Io {
                path: root.to_path_buf(),
                source,
            })?;
        let rel = canonical.strip_prefix(&workdir).map_err(|_| not_repo())?;
        let prefix = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        Ok(Project {
            repo,
            prefix,
            root: canonical,
        })
    }

    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    /// The root's path inside the repository (`""` for the top).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The commit HEAD points at, if any.
    pub fn head(&self) -> Option<String> {
        let commit = self.repo.head().ok()?.peel_to_commit().ok()?;
        Some(commit.id().to_string())
    }

    /// Tracked paths under the root, relative to it, sorted. Submodules and symbolic
    /// links are left out.
    pub fn tracked_paths(&self) -> Result<Vec<String>, GraphError> {
        let index = self.repo.index()?;
        let mut out = Vec::new();
        for entry in index.iter() {
            let mode = entry.mode & 0o170000;
            if mode == 0o160000 || mode == 0o120000 {
                continue;
            }
            let Ok(path) = std::str::from_utf8(&entry.path) else {
                continue;
            };
            let rel = if self.prefix.is_empty() {
                path
            } else {
                match path
                    .strip_prefix(self.prefix.as_str())
                    .and_then(|p| p.strip_prefix('/'))
                {
                    Some(p) => p,
                    None => continue,
                }
            };
            out.push(rel.to_owned());
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// Reads a tracked file from the working tree; `None` when it was deleted there.
pub fn read(root: &Path, path: &str) -> Result<Option<Vec<u8>>, GraphError> {
    let full = root.join(path);
    match fs::read(&full) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(GraphError::Io { path: full, source }),
    }
}
