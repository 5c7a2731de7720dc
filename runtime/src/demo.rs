//! `factory demo`: the bundled demo project (embedded in the binary), copied to a
//! directory, made a git repository, and improved by the `improve` mode with the
//! replay runner — the same path as `factory run improve --project DIR --runner replay
//! --script DIR/replay.yaml`.

use std::path::{Path, PathBuf};

use crate::eval::{self, EvalSettings};
use crate::project::config;

/// The demo's files, relative path and text.
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../../examples/demo/Cargo.toml")),
    (".gitignore", include_str!("../../examples/demo/.gitignore")),
    ("factory.md", include_str!("../../examples/demo/factory.md")),
    (
        "replay.yaml",
        include_str!("../../examples/demo/replay.yaml"),
    ),
    (
        "replay-parallel.yaml",
        include_str!("../../examples/demo/replay-parallel.yaml"),
    ),
    ("src/lib.rs", include_str!("../../examples/demo/src/lib.rs")),
];

/// The replay script inside a prepared demo.
pub const SCRIPT: &str = "replay.yaml";

/// The modes the demo can run, each with its replay script inside the demo.
pub const MODES: &[(&str, &str)] = &[
    ("improve", SCRIPT),
    ("parallel-improve", "replay-parallel.yaml"),
];

/// The replay script of `mode`, when the demo has one.
pub fn script_for(mode: &str) -> Option<&'static str> {
    MODES.iter().find(|(m, _)| *m == mode).map(|(_, s)| *s)
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DemoError {
    #[error("{0} exists and is not empty")]
    #[diagnostic(
        code(factory::demo::not_empty),
        help("pass a new or empty directory, or none for a fresh one under the temp dir")
    )]
    NotEmpty(PathBuf),
    #[error("cannot write the demo to {path}: {source}")]
    #[diagnostic(code(factory::demo::io), help("check the disk space and permissions"))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot make {path} a git repository: {message}")]
    #[diagnostic(code(factory::demo::git))]
    Git { path: PathBuf, message: String },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] config::ConfigError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Eval(#[from] eval::EvalError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Baseline(#[from] eval::BaselineError),
}

/// A fresh directory for the demo under the system temp dir.
pub fn fresh_dir() -> PathBuf {
    let stamp = jiff::Timestamp::now().as_millisecond();
    std::env::temp_dir().join(format!("factory-demo-{stamp}-{}", std::process::id()))
}

/// Writes the demo to `dir`, commits it on `main`, writes `.factory/config.json` and
/// records the baseline eval the experiment will be compared with.
pub fn prepare(dir: &Path) -> Result<(), DemoError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DemoError::Io { path, source }
    };
    if dir.exists() && std::fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
        return Err(DemoError::NotEmpty(dir.to_path_buf()));
    }
    for (rel, text) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    crate::worktrees::init_committed(dir, "factory demo", "The demo project").map_err(|e| {
        DemoError::Git {
            path: dir.to_path_buf(),
            message: e.message().to_string(),
        }
    })?;
    config::init_project(dir, false)?;
    let cfg = config::load(dir)?;
    let report = eval::run_eval(dir, &EvalSettings::from_config(&cfg).with_profile_of(dir))?;
    eval::record_baseline(dir, &report, "factory demo")?;
    Ok(())
}
