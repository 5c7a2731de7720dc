//! The host side shared by the command line and the language server: reading sources
//! from disk and finding the roles that have prompts. This is the one place the
//! compiler crate touches the file system, and it does so only on behalf of the
//! database's [`Loader`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::db::Loader;

/// Roles whose prompts ship with factory.
pub const BUILTIN_ROLES: &[&str] = &[
    "adversarial_tester",
    "archivist",
    "builder",
    "ceo",
    "code_reviewer",
    "failure_analyst",
    "health_checker",
    "refiner",
    "researcher",
    "spec_annotator",
    "strategist",
];

/// Loads keys as file paths; `std/<name>.fwf` comes from the standard library
/// directory when one is set.
#[derive(Debug, Clone, Default)]
pub struct FsLoader {
    pub stdlib: Option<PathBuf>,
}

impl Loader for FsLoader {
    fn load(&self, key: &str) -> Option<String> {
        let path = match key.strip_prefix("std/") {
            Some(rest) => self.stdlib.as_ref()?.join(rest),
            None => PathBuf::from(key),
        };
        std::fs::read_to_string(path).ok()
    }
}

/// The standard library directory: `$FACTORY_STDLIB`, else a `stdlib/` directory in
/// `start` or one of its ancestors.
pub fn find_stdlib(start: &Path) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("FACTORY_STDLIB") {
        return Some(PathBuf::from(dir));
    }
    find_up(start, "stdlib")
}

fn find_up(start: &Path, name: &str) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    start
        .ancestors()
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_dir())
}

/// Roles known for files under `start`: the built-in ones, `prompts/<role>.md` in
/// `start` or an ancestor, and the project's `.factory/agents/<role>.md`.
pub fn discover_roles(start: &Path) -> BTreeSet<String> {
    let mut roles: BTreeSet<String> = BUILTIN_ROLES.iter().map(|r| r.to_string()).collect();
    for dir in [
        find_up(start, "prompts"),
        find_up(start, ".factory").map(|d| d.join("agents")),
    ]
    .into_iter()
    .flatten()
    {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md")
                && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            {
                roles.insert(stem.to_string());
            }
        }
    }
    roles
}

/// The `.fwf` and `.fwir` files named by `paths`, directories searched recursively, in
/// a stable order.
pub fn collect_sources(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
        if meta.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.') || n == "target");
        if path.is_dir() {
            if !hidden {
                walk(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "fwf" || e == "fwir") {
            out.push(path);
        }
    }
    Ok(())
}
