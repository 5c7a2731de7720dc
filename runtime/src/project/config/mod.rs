//! Per-project configuration: `factory.md` (written by people) and its derived,
//! regeneratable machine form `.factory/config.json` (spec §6.2, §8.7, §9.4, §10).
//!
//! - [`load`] is what other modules call: `config.json` if present, else `factory.md`.
//! - [`load_synced`] is what must agree with the gate (`factory eval`, `factory
//!   precheck`): `factory.md`, refreshing a stale `config.json` or refusing.
//! - [`read_config`] reads `config.json` only, strictly.
//! - [`init_project`] is `factory init [--reparse]`.
//!
//! Every error names the file, the problem and the command that fixes it.

mod init;
mod markdown;
pub mod model;
mod parallel;
mod parse;
mod threshold;

pub use init::{InitReport, add_to_gitignore, init_project};
pub use markdown::snake_case;
pub use model::*;
pub use parse::{REQUIRED, SECTION_MAP, field_for_heading};

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::project::layout::FactoryPaths;

/// Why a configuration could not be read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ConfigError {
    /// `.factory/config.json` does not exist.
    #[error("{path} not found: this project has no factory configuration yet")]
    #[diagnostic(
        code(factory::config::missing),
        help(
            "run `factory init` in the project (it reads factory.md and writes .factory/config.json)"
        )
    )]
    Missing {
        /// The config.json path looked for.
        path: PathBuf,
    },
    /// Neither `config.json` nor `factory.md` exists.
    #[error(
        "{path} not found: factory needs a factory.md describing the goal, scope, guards and eval"
    )]
    #[diagnostic(
        code(factory::config::no_factory_md),
        help(
            "write factory.md with at least the sections Goal, Scope, Guards, Eval command, Eval threshold and Constraints (see docs/cli.md, `factory init`), then run `factory init`"
        )
    )]
    MissingFactoryMd {
        /// The factory.md path looked for.
        path: PathBuf,
    },
    /// `config.json` is not valid JSON or does not match the schema.
    #[error("{path} is invalid: {problem}")]
    #[diagnostic(
        code(factory::config::invalid),
        help(
            "regenerate it from factory.md with `factory init --reparse` (config.json is derived; edit factory.md instead)"
        )
    )]
    InvalidJson {
        /// The config.json path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// `factory.md` could not be turned into a configuration.
    #[error("{}{}: {problem}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    #[diagnostic(
        code(factory::config::factory_md),
        help("fix factory.md, then run `factory init --reparse`")
    )]
    FactoryMd {
        /// The factory.md path.
        path: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        problem: String,
    },
    /// The commit the gate reads its configuration from has no factory.md.
    #[error(
        "factory.md is not committed at {commit} ({path}): the gate reads its configuration from the experiment's base commit"
    )]
    #[diagnostic(
        code(factory::config::not_committed),
        help(
            "commit factory.md on the target branch, then begin a new experiment; .factory/config.json is a cache and never the gate's authority"
        )
    )]
    NotCommitted {
        /// The commit looked at.
        commit: String,
        /// factory.md's path inside the repository.
        path: PathBuf,
    },
    /// `config.json` no longer says what `factory.md` says, and could not be rewritten.
    #[error(
        "{config_json} is out of date with {factory_md} (the source of truth) and cannot be refreshed: {reason}"
    )]
    #[diagnostic(
        code(factory::config::stale),
        help(
            "config.json is derived from factory.md: make .factory/ writable and run `factory init --reparse`, or delete .factory/config.json; eval and precheck both read factory.md"
        )
    )]
    Stale {
        /// The config.json path.
        config_json: PathBuf,
        /// The factory.md path.
        factory_md: PathBuf,
        /// Why it could not be rewritten.
        reason: String,
    },
    /// `.factory/` could not be prepared.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Layout(#[from] crate::project::layout::LayoutError),
    /// The file system refused an operation.
    #[error("cannot access {path}: {source}")]
    #[diagnostic(
        code(factory::config::io),
        help("check the path exists and is readable and writable")
    )]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Parses `factory.md` text. `path` is only used in error messages.
pub fn parse_factory_md(text: &str, path: &Path) -> Result<FactoryConfig, ConfigError> {
    parse::parse_factory_md(text).map_err(|p| ConfigError::FactoryMd {
        path: path.to_path_buf(),
        line: p.line,
        problem: p.message,
    })
}

/// Reads and parses the project's `factory.md`.
pub fn read_factory_md(project: &Path) -> Result<FactoryConfig, ConfigError> {
    let path = FactoryPaths::new(project).factory_md();
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ConfigError::MissingFactoryMd { path });
        }
        Err(source) => return Err(ConfigError::Io { path, source }),
    };
    parse_factory_md(&text, &path)
}

/// Parses factory.md as committed at `commit` in `repo`, where the project lies at
/// `subdir` inside the repository: the gate's configuration, which nothing in a working
/// tree (factory.md edits, `.factory/config.json`) can change.
pub fn read_factory_md_at(
    repo: &git2::Repository,
    commit: git2::Oid,
    subdir: &Path,
) -> Result<FactoryConfig, ConfigError> {
    let path = subdir.join("factory.md");
    let missing = || ConfigError::NotCommitted {
        commit: commit.to_string(),
        path: path.clone(),
    };
    let blob = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .and_then(|t| t.get_path(&path))
        .and_then(|e| repo.find_blob(e.id()))
        .map_err(|_| missing())?;
    let text = std::str::from_utf8(blob.content()).map_err(|e| ConfigError::FactoryMd {
        path: path.clone(),
        line: None,
        problem: format!("not UTF-8 at {commit}: {e}"),
    })?;
    parse_factory_md(text, Path::new(&format!("{}@{commit}", path.display())))
}

/// Reads `.factory/config.json` strictly: unknown keys, wrong types and broken range
/// rules are errors pointing at `factory init --reparse`; a missing file points at
/// `factory init`.
pub fn read_config(project: &Path) -> Result<FactoryConfig, ConfigError> {
    let path = FactoryPaths::new(project).config_json();
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ConfigError::Missing { path }),
        Err(source) => return Err(ConfigError::Io { path, source }),
    };
    let config: FactoryConfig =
        serde_json::from_str(&text).map_err(|e| ConfigError::InvalidJson {
            path: path.clone(),
            problem: e.to_string(),
        })?;
    config
        .validate()
        .map_err(|problems| ConfigError::InvalidJson {
            path,
            problem: problems.join("; "),
        })?;
    Ok(config)
}

/// The project's configuration: `.factory/config.json` when it exists (errors in it
/// are reported, never skipped), else parsed from `factory.md`. When neither exists
/// the error says to write `factory.md` and run `factory init`.
pub fn load(project: &Path) -> Result<FactoryConfig, ConfigError> {
    match read_config(project) {
        Err(ConfigError::Missing { .. }) => read_factory_md(project),
        other => other,
    }
}

/// What [`load_synced`] read, and whether it had to refresh `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Synced {
    /// The configuration.
    pub config: FactoryConfig,
    /// Where it came from: factory.md, or config.json when there is no factory.md.
    pub source: PathBuf,
    /// `config.json`'s path when it said something else and was rewritten from
    /// factory.md (the previous one kept as `config.json.bak`).
    pub refreshed: Option<PathBuf>,
}

/// The project's configuration with `factory.md` as the source of truth — what the
/// gate reads — for commands that must agree with it (`factory eval`, `factory
/// precheck` without `--exp`). A `.factory/config.json` that is unreadable, invalid or
/// different from what factory.md yields is rewritten from it atomically, the old one
/// kept beside it as `config.json.bak`; one that cannot be rewritten is
/// [`ConfigError::Stale`], naming both files. A missing config.json is not created
/// (`factory init` does that). Without a factory.md, config.json is read as
/// [`load`] reads it.
pub fn load_synced(project: &Path) -> Result<Synced, ConfigError> {
    let paths = FactoryPaths::new(project);
    let md_path = paths.factory_md();
    let config = match read_factory_md(project) {
        Err(ConfigError::MissingFactoryMd { .. }) => {
            return Ok(Synced {
                config: read_config(project)?,
                source: paths.config_json(),
                refreshed: None,
            });
        }
        other => other?,
    };
    let json_path = paths.config_json();
    let current = match fs::symlink_metadata(&json_path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        _ => read_config(project).is_ok_and(|old| old == config),
    };
    if current {
        return Ok(Synced {
            config,
            source: md_path,
            refreshed: None,
        });
    }
    let stale = |reason: String| ConfigError::Stale {
        config_json: json_path.clone(),
        factory_md: md_path.clone(),
        reason,
    };
    if let Ok(old) = fs::read(&json_path) {
        let bak = json_path.with_extension("json.bak");
        crate::sys::files::atomic_write(&bak, &old)
            .map_err(|e| stale(format!("cannot keep the old one as {}: {e}", bak.display())))?;
    }
    match write_config(project, &config) {
        Ok(path) => Ok(Synced {
            config,
            source: md_path,
            refreshed: Some(path),
        }),
        Err(ConfigError::Io { source, .. }) => Err(stale(source.to_string())),
        Err(other) => Err(stale(other.to_string())),
    }
}

/// Writes `config` to `.factory/config.json` atomically (pretty JSON).
pub fn write_config(project: &Path, config: &FactoryConfig) -> Result<PathBuf, ConfigError> {
    let path = FactoryPaths::new(project).config_json();
    let mut text = serde_json::to_string_pretty(config).map_err(|e| ConfigError::Io {
        path: path.clone(),
        source: io::Error::other(e),
    })?;
    text.push('\n');
    crate::sys::files::atomic_write(&path, text.as_bytes()).map_err(|source| ConfigError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests;
