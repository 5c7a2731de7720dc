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

/// Key prefix of the built-in modes: `builtin/<name>.fwf`.
pub const BUILTIN_PREFIX: &str = "builtin/";

/// Loads keys as file paths. `std/<name>.fwf` comes from the standard library directory
/// when one is set, else from the copy embedded in the binary; `builtin/<name>.fwf` is
/// an embedded mode.
#[derive(Debug, Clone, Default)]
pub struct FsLoader {
    pub stdlib: Option<PathBuf>,
}

impl Loader for FsLoader {
    fn load(&self, key: &str) -> Option<String> {
        if let Some(rest) = key.strip_prefix("std/") {
            // A file of the directory wins; the embedded library fills in the rest, so an
            // unrelated `stdlib/` above a project does not hide the built-in subgraphs.
            let on_disk = self
                .stdlib
                .as_ref()
                .and_then(|dir| std::fs::read_to_string(dir.join(rest)).ok());
            return on_disk.or_else(|| {
                crate::builtin::stdlib(rest.strip_suffix(".fwf")?).map(str::to_string)
            });
        }
        if let Some(rest) = key.strip_prefix(BUILTIN_PREFIX) {
            return crate::builtin::workflow(rest.strip_suffix(".fwf")?).map(str::to_string);
        }
        std::fs::read_to_string(key).ok()
    }
}

/// A standard library directory on disk overriding the embedded one (docs/language.md,
/// "Imports"): `$FACTORY_STDLIB` when set, else a `stdlib/` directory in `start` or the
/// nearest of its parents that has one. `None`: the embedded standard library.
pub fn find_stdlib(start: &Path) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("FACTORY_STDLIB") {
        return Some(PathBuf::from(dir));
    }
    let start = std::path::absolute(start).ok()?;
    start
        .ancestors()
        .map(|dir| dir.join("stdlib"))
        .find(|dir| dir.is_dir())
}

/// Where a mode comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeSource {
    /// Embedded in the binary.
    BuiltIn,
    /// The project's `.factory/workflows/<name>.fwf` (or a promoted `<name>.fwir`).
    Project(PathBuf),
    /// A candidate of the outer loop, registered for a while as
    /// `.factory/evolve/modes/evolve-gen<N>-<id>.fwir`.
    Evolved(PathBuf),
}

/// A mode available in a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    pub name: String,
    /// Database key of its source.
    pub key: String,
    pub source: ModeSource,
    /// True when a project file overrides a built-in mode of the same name.
    pub overrides: bool,
}

/// Every mode available in `project`: the project's `.factory/workflows/*.fwf` and
/// `*.fwir`, the registered candidates of the outer loop, then the built-in modes they
/// do not override; sorted by name. A name is one mode: a promoted mode has both
/// `NAME.fwir` (the IR as scored) and `NAME.fwf` (its rendering, which compiles to the
/// same IR), and the `.fwf`, the one a person edits, is the mode.
pub fn modes(project: &Path) -> Vec<Mode> {
    let mut out: Vec<Mode> = Vec::new();
    let factory = project.join(".factory");
    // A project's `.fwf` first, so it wins over a promoted `.fwir` of the same name.
    for (dir, ext, evolved) in [
        (factory.join("workflows"), "fwf", false),
        (factory.join("workflows"), "fwir", false),
        (factory.join("evolve").join("modes"), "fwir", true),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        found.sort();
        for path in found {
            let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if out.iter().any(|m| m.name == name) {
                continue;
            }
            out.push(Mode {
                name: name.to_string(),
                key: path.to_string_lossy().into_owned(),
                overrides: crate::builtin::workflow(name).is_some(),
                source: if evolved {
                    ModeSource::Evolved(path.clone())
                } else {
                    ModeSource::Project(path.clone())
                },
            });
        }
    }
    for (name, _) in crate::builtin::workflows() {
        if !out.iter().any(|m| m.name == name) {
            out.push(Mode {
                name: name.to_string(),
                key: format!("{BUILTIN_PREFIX}{name}.fwf"),
                source: ModeSource::BuiltIn,
                overrides: false,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The database key for a workflow argument: an existing file path as given, else a
/// mode name (the project's override first, then the built-in mode).
pub fn resolve_workflow_arg(arg: &str, project: &Path) -> Option<String> {
    let path = Path::new(arg);
    if path.is_file() {
        return Some(arg.to_string());
    }
    if arg.contains('/') || arg.ends_with(".fwf") || arg.ends_with(".fwir") {
        return None;
    }
    modes(project)
        .into_iter()
        .find(|m| m.name == arg)
        .map(|m| m.key)
}

fn find_up(start: &Path, name: &str) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    start
        .ancestors()
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_dir())
}

/// Where a new prompt for role `role` goes, for a workflow file at `key`: the nearest
/// existing `prompts/` directory above it (where [`discover_roles`] finds prompts), else
/// `prompts/` next to it. The quick fix and `factory check --fix` create it here.
pub fn new_prompt_path(key: &str, role: &str) -> Option<PathBuf> {
    let dir = Path::new(key).parent()?;
    let prompts = dir
        .ancestors()
        .map(|d| d.join("prompts"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| dir.join("prompts"));
    Some(prompts.join(format!("{role}.md")))
}

/// The factory home: `$FACTORY_HOME`, else `~/.factory`.
pub fn factory_home() -> Option<PathBuf> {
    match std::env::var_os("FACTORY_HOME") {
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => std::env::home_dir().map(|h| h.join(".factory")),
    }
}

/// Where a role's prompt is looked up for files under `start`, first match wins: the
/// project's `.factory/agents/`, a `prompts/` directory at `start` or above it, then the
/// user's `<home>/agents/prompts/` (the built-in prompts come after all three). The one
/// rule `factory check`, the language server and `factory agent`/`run` share.
pub fn prompt_dirs(start: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    [
        find_up(start, ".factory").map(|d| d.join("agents")),
        find_up(start, "prompts"),
        home.map(|h| h.join("agents").join("prompts")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Roles known for files under `start`: the built-in ones and every prompt in
/// [`prompt_dirs`].
pub fn discover_roles(start: &Path) -> BTreeSet<String> {
    let mut roles: BTreeSet<String> = BUILTIN_ROLES.iter().map(|r| r.to_string()).collect();
    roles.extend(
        crate::builtin::prompts()
            .into_iter()
            .map(|(role, _)| role.to_string()),
    );
    for dir in prompt_dirs(start, factory_home().as_deref()) {
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
