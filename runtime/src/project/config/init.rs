//! `factory init [--reparse]`: derive `.factory/config.json` from `factory.md` and
//! keep `.factory/` out of git (spec §9.1, §9.4).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{ConfigError, read_factory_md, write_config};
use crate::project::layout::{FactoryPaths, LayoutError, ensure_factory_dir};
use crate::sys::files::atomic_write;

/// What [`init_project`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitReport {
    /// `.factory/config.json`.
    pub config_path: PathBuf,
    /// True when config.json was (re)written; false when it already existed and
    /// `reparse` was not asked for.
    pub wrote_config: bool,
    /// Where the previous config.json was kept, when `--reparse` replaced a
    /// different one.
    pub backup: Option<PathBuf>,
    /// True when `.factory/` was added to `.gitignore` now.
    pub gitignore_updated: bool,
}

/// Prepares `.factory/`, writes `config.json` from `factory.md` (only if absent,
/// unless `reparse`), and adds `.factory/` to the project's `.gitignore`.
///
/// `factory.md` is parsed before anything is written, so a broken `factory.md`
/// leaves the project untouched. With `reparse`, a previous `config.json` that
/// differs from the new one is kept as `config.json.bak`.
pub fn init_project(project: &Path, reparse: bool) -> Result<InitReport, ConfigError> {
    if !project.is_dir() {
        return Err(LayoutError::NoProject(project.to_path_buf()).into());
    }
    let paths = FactoryPaths::new(project);
    let config_path = paths.config_json();
    let exists = config_path.is_file();
    let config = if exists && !reparse {
        // Present is not the same as usable: a damaged one is named, not passed over.
        super::read_config(project)?;
        None
    } else {
        Some(read_factory_md(project)?)
    };
    ensure_factory_dir(project)?;
    let mut backup = None;
    if let Some(config) = &config {
        if exists {
            let old = fs::read(&config_path).map_err(|source| ConfigError::Io {
                path: config_path.clone(),
                source,
            })?;
            let new = serde_json::to_vec_pretty(config).unwrap_or_default();
            if old.trim_ascii() != new.trim_ascii() {
                let bak = config_path.with_extension("json.bak");
                atomic_write(&bak, &old).map_err(|source| ConfigError::Io {
                    path: bak.clone(),
                    source,
                })?;
                backup = Some(bak);
            }
        }
        write_config(project, config)?;
    }
    let gitignore_updated = add_to_gitignore(project).map_err(|source| ConfigError::Io {
        path: project.join(".gitignore"),
        source,
    })?;
    Ok(InitReport {
        config_path,
        wrote_config: config.is_some(),
        backup,
        gitignore_updated,
    })
}

/// Adds a `.factory/` line to `<project>/.gitignore` unless an equivalent line
/// (`.factory`, `.factory/`, `/.factory`, `/.factory/`) is already there. Creates the
/// file if needed and keeps everything else in it. Returns true when it changed.
pub fn add_to_gitignore(project: &Path) -> io::Result<bool> {
    let path = project.join(".gitignore");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let covered = text
        .lines()
        .map(str::trim)
        .any(|l| matches!(l, ".factory" | ".factory/" | "/.factory" | "/.factory/"));
    if covered {
        return Ok(false);
    }
    let mut new = text;
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str(".factory/\n");
    atomic_write(&path, new.as_bytes())?;
    Ok(true)
}
