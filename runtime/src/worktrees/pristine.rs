//! A clean checkout of the project's HEAD, written from git as the gate writes each
//! side: what `factory doctor` sets up and probes, and where `factory discover` tries
//! the profile it proposes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::project::config;

/// HEAD written into a scratch directory (removed on drop).
pub struct PristineHead {
    /// The whole repository's tree.
    pub dir: tempfile::TempDir,
    /// The project's directory inside it.
    pub code: PathBuf,
    pub commit: git2::Oid,
    /// factory.md as committed at HEAD (`None`: not committed yet).
    pub config: Option<config::FactoryConfig>,
}

impl PristineHead {
    /// factory.md's `## Setup` at HEAD.
    pub fn setup(&self) -> &[String] {
        self.config.as_ref().map_or(&[], |c| c.setup.as_slice())
    }
    /// factory.md's `test_timeout` at HEAD, or the default.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(
            self.config
                .as_ref()
                .map_or(config::DEFAULT_TEST_TIMEOUT, |c| c.test_timeout)
                .max(1),
        )
    }
    pub fn short(&self) -> String {
        self.commit.to_string()[..10].to_string()
    }
}

/// Why HEAD could not be written: what went wrong, and the fix.
#[derive(Debug)]
pub struct PristineError {
    pub problem: String,
    pub fix: String,
}

fn error(problem: impl Into<String>, fix: impl Into<String>) -> PristineError {
    PristineError {
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// Writes the HEAD commit of the repository holding `project` into a fresh scratch
/// directory (no ignored or untracked files, no `.factory/`).
pub fn write_head(project: &Path) -> Result<PristineHead, PristineError> {
    let repo = git2::Repository::discover(project)
        .map_err(|_| error("no repository", "see the git check"))?;
    let commit = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .ok_or_else(|| error("no commit to check out", "see the git check"))?
        .id();
    let subdir = crate::worktrees::subdir_of(&repo, project);
    let config = match config::read_factory_md_at(&repo, commit, &subdir) {
        Ok(cfg) => Some(cfg),
        Err(config::ConfigError::NotCommitted { .. }) => None,
        Err(e) => {
            return Err(error(
                format!("factory.md at HEAD cannot be read: {e}"),
                "fix factory.md at the line named and commit it",
            ));
        }
    };
    let dir = tempfile::Builder::new()
        .prefix("factory-pristine-")
        .tempdir()
        .map_err(|e| {
            error(
                format!("cannot create a scratch directory: {e}"),
                "make the system temp directory (TMPDIR) writable",
            )
        })?;
    crate::worktrees::scratch::write_commit(&repo, commit, dir.path())
        .map_err(|e| error(format!("cannot check out HEAD: {e}"), "see the git check"))?;
    let code = dir.path().join(&subdir);
    Ok(PristineHead {
        dir,
        code,
        commit,
        config,
    })
}
