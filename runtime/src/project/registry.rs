//! The per-user project index `~/.factory/registry.json` (spec §8.10, §6.6).
//!
//! `FACTORY_HOME` overrides `~/.factory`. Projects are keyed by their canonical
//! absolute path, so registering twice is a no-op. The store calls [`register_project`]
//! on `begin` and [`update_project_stats`] on `finalize`, both best-effort: a broken
//! registry never fails an experiment.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sys::clock::now_iso8601;
use crate::sys::files::{FileLock, atomic_write};

/// Environment variable that relocates the per-user directory.
pub const FACTORY_HOME_ENV: &str = "FACTORY_HOME";

/// The per-user directory: `$FACTORY_HOME`, else `~/.factory`. `None` when neither is
/// known (no home directory).
pub fn user_home() -> Option<PathBuf> {
    // One definition, shared with the compiler's role lookup.
    factory_compiler::host::factory_home()
}

/// One registered project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectEntry {
    /// Canonical absolute path of the project root.
    pub path: PathBuf,
    /// The directory's name, for display.
    pub name: String,
    /// When it was first registered.
    pub registered_at: String,
    /// Finalized experiments counted so far.
    #[serde(default)]
    pub experiment_count: u64,
    /// The latest `score_after` recorded.
    #[serde(default)]
    pub latest_score: Option<f64>,
    /// When the latest experiment was finalized.
    #[serde(default)]
    pub last_experiment_at: Option<String>,
}

/// The whole registry file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectRegistry {
    /// Registered projects, in registration order.
    #[serde(default)]
    pub projects: Vec<ProjectEntry>,
}

impl ProjectRegistry {
    /// The entry for `path` (already canonical), if registered.
    pub fn find(&self, path: &Path) -> Option<&ProjectEntry> {
        self.projects.iter().find(|p| p.path == path)
    }
}

/// Why the registry could not be read or written.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RegistryError {
    /// The file system refused an operation.
    #[error("cannot access the project registry {path}: {source}")]
    #[diagnostic(
        code(factory::registry::io),
        help("check that the directory is writable, or point FACTORY_HOME elsewhere")
    )]
    Io {
        /// The registry file or its lock.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

fn registry_file(home: &Path) -> PathBuf {
    home.join("registry.json")
}

/// Reads the registry under `home`. A missing file is an empty registry. A corrupt
/// file is moved aside to `registry.json.corrupt-<time>` (never lost) and read as empty.
pub fn load(home: &Path) -> Result<ProjectRegistry, RegistryError> {
    let path = registry_file(home);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ProjectRegistry::default()),
        Err(source) => return Err(RegistryError::Io { path, source }),
    };
    match serde_json::from_str(&text) {
        Ok(reg) => Ok(reg),
        Err(err) => {
            let aside =
                crate::sys::files::keep_aside(&path).map_err(|source| RegistryError::Io {
                    path: path.clone(),
                    source,
                })?;
            tracing::warn!(file = %path.display(), kept = %aside.display(), %err, "corrupt registry set aside");
            Ok(ProjectRegistry::default())
        }
    }
}

fn update<T>(home: &Path, f: impl FnOnce(&mut ProjectRegistry) -> T) -> Result<T, RegistryError> {
    let path = registry_file(home);
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RegistryError::Io { path, source }
    };
    let _lock = FileLock::acquire(&home.join(".registry.lock")).map_err(io_err(&path))?;
    let mut reg = load(home)?;
    let before = reg.clone();
    let out = f(&mut reg);
    if reg != before {
        let mut text = serde_json::to_string_pretty(&reg).map_err(|e| RegistryError::Io {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        text.push('\n');
        atomic_write(&path, text.as_bytes()).map_err(io_err(&path))?;
    }
    Ok(out)
}

fn canonical(project: &Path) -> PathBuf {
    fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf())
}

/// Registers `project` under `home`; a no-op when its canonical path is already known.
/// Returns true when a new entry was added.
pub fn register_project(home: &Path, project: &Path) -> Result<bool, RegistryError> {
    let path = canonical(project);
    update(home, |reg| {
        if reg.find(&path).is_some() {
            return false;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        reg.projects.push(ProjectEntry {
            path,
            name,
            registered_at: now_iso8601(),
            experiment_count: 0,
            latest_score: None,
            last_experiment_at: None,
        });
        true
    })
}

/// Counts one more finalized experiment for `project` and records its score. A
/// project not in the registry is logged and skipped, never an error (spec §8.10).
/// Returns true when an entry was updated.
pub fn update_project_stats(
    home: &Path,
    project: &Path,
    score_after: Option<f64>,
) -> Result<bool, RegistryError> {
    let path = canonical(project);
    update(home, |reg| {
        let Some(entry) = reg.projects.iter_mut().find(|p| p.path == path) else {
            tracing::info!(project = %path.display(), "not in the registry; stats not updated");
            return false;
        };
        entry.experiment_count += 1;
        if score_after.is_some() {
            entry.latest_score = score_after;
        }
        entry.last_experiment_at = Some(now_iso8601());
        true
    })
}

/// Finds factory-managed projects directly under each of `roots` (and the roots
/// themselves): a directory counts solely by having `.factory/results.tsv` (spec
/// §8.10), whatever the registry says.
pub fn discover_projects(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let managed = |p: &Path| p.join(".factory").join("results.tsv").is_file();
    for root in roots {
        if managed(root) {
            found.push(root.clone());
        }
        if let Ok(entries) = fs::read_dir(root) {
            let mut subs: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir() && managed(p))
                .collect();
            subs.sort();
            found.extend(subs);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registering_twice_is_a_no_op() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        assert!(register_project(home.path(), proj.path()).unwrap());
        // A different spelling of the same directory is the same project.
        let dotted = proj.path().join(".");
        assert!(!register_project(home.path(), &dotted).unwrap());
        assert_eq!(load(home.path()).unwrap().projects.len(), 1);
    }

    #[test]
    fn stats_update_counts_and_skips_unknown_projects() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let stranger = tempfile::tempdir().unwrap();
        assert!(!update_project_stats(home.path(), stranger.path(), Some(1.0)).unwrap());
        register_project(home.path(), proj.path()).unwrap();
        update_project_stats(home.path(), proj.path(), Some(0.5)).unwrap();
        update_project_stats(home.path(), proj.path(), None).unwrap();
        let reg = load(home.path()).unwrap();
        let entry = &reg.projects[0];
        assert_eq!(entry.experiment_count, 2);
        assert_eq!(entry.latest_score, Some(0.5));
        assert!(entry.last_experiment_at.is_some());
    }

    #[test]
    fn corrupt_registry_is_kept_aside() {
        let home = tempfile::tempdir().unwrap();
        fs::write(home.path().join("registry.json"), "{not json").unwrap();
        let proj = tempfile::tempdir().unwrap();
        register_project(home.path(), proj.path()).unwrap();
        let aside: Vec<_> = fs::read_dir(home.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".corrupt"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(fs::read_to_string(aside[0].path()).unwrap(), "{not json");
    }

    #[test]
    fn discovery_uses_results_tsv_only() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        fs::create_dir_all(a.join(".factory")).unwrap();
        fs::write(a.join(".factory/results.tsv"), "").unwrap();
        fs::create_dir_all(root.path().join("b/.factory")).unwrap();
        assert_eq!(discover_projects(&[root.path().to_path_buf()]), vec![a]);
    }
}
