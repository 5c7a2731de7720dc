//! The `.factory/` directory of one project: where each file lives (ARCHITECTURE.md,
//! "The `.factory/` contract") and how the directory is created safely (spec §13.2).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Name of the per-project state directory.
pub const FACTORY_DIR: &str = ".factory";

/// Paths of everything under one project's `.factory/` directory.
///
/// Holding paths only, it never touches the disk; call [`ensure_factory_dir`] before
/// writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactoryPaths {
    project: PathBuf,
    dir: PathBuf,
}

impl FactoryPaths {
    /// The layout for the project rooted at `project`.
    pub fn new(project: impl Into<PathBuf>) -> Self {
        let project = project.into();
        let dir = project.join(FACTORY_DIR);
        Self { project, dir }
    }

    /// The project root (the directory holding `factory.md` and `.factory/`).
    pub fn project(&self) -> &Path {
        &self.project
    }
    /// `.factory/` itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// `factory.md`, the human-authored config (in the project root, not `.factory/`).
    pub fn factory_md(&self) -> PathBuf {
        self.project.join("factory.md")
    }
    /// `.factory/config.json`, derived from `factory.md` by `factory init`.
    pub fn config_json(&self) -> PathBuf {
        self.dir.join("config.json")
    }
    /// `.factory/events.jsonl`, the append-only event log.
    pub fn events_jsonl(&self) -> PathBuf {
        self.dir.join("events.jsonl")
    }
    /// Lock guarding appends to `events.jsonl`.
    pub fn events_lock(&self) -> PathBuf {
        self.dir.join(".events.lock")
    }
    /// `.factory/results.tsv`, one row per finalized experiment.
    pub fn results_tsv(&self) -> PathBuf {
        self.dir.join("results.tsv")
    }
    /// Lock guarding experiment id allocation and `results.tsv` appends.
    pub fn store_lock(&self) -> PathBuf {
        self.dir.join(".store.lock")
    }
    /// `.factory/experiments/`.
    pub fn experiments_dir(&self) -> PathBuf {
        self.dir.join("experiments")
    }
    /// `.factory/experiments/NNN/` (zero-padded to three digits).
    pub fn experiment_dir(&self, id: u32) -> PathBuf {
        self.experiments_dir().join(format!("{id:03}"))
    }
    /// `.factory/reviews/`.
    pub fn reviews_dir(&self) -> PathBuf {
        self.dir.join("reviews")
    }
    /// `.factory/strategy/`.
    pub fn strategy_dir(&self) -> PathBuf {
        self.dir.join("strategy")
    }
    /// `.factory/archive/`.
    pub fn archive_dir(&self) -> PathBuf {
        self.dir.join("archive")
    }
    /// `.factory/state/` (executor checkpoint, cycle state).
    pub fn state_dir(&self) -> PathBuf {
        self.dir.join("state")
    }
    /// `.factory/worktrees/` (parallel branches).
    pub fn worktrees_dir(&self) -> PathBuf {
        self.dir.join("worktrees")
    }
    /// `.factory/last_eval.json`.
    pub fn last_eval_json(&self) -> PathBuf {
        self.dir.join("last_eval.json")
    }
    /// `.factory/eval_profile.json`, written by eval discovery; gates the
    /// `evals_pending_review` state until `human_reviewed` is true.
    pub fn eval_profile_json(&self) -> PathBuf {
        self.dir.join("eval_profile.json")
    }
    /// `.factory/adversarial_state.json`.
    pub fn adversarial_state_json(&self) -> PathBuf {
        self.dir.join("adversarial_state.json")
    }
}

/// Creates `.factory/` and its standard subdirectories (experiments, reviews,
/// strategy, archive, state), returning the layout.
///
/// A symlink at `.factory` that is broken or circular is removed and replaced by a real
/// directory rather than followed (spec §13.2). A symlink that resolves to a directory
/// is kept: users may deliberately keep state elsewhere. A regular file at `.factory`
/// is an error — it is the user's data and is never deleted.
pub fn ensure_factory_dir(project: &Path) -> Result<FactoryPaths, LayoutError> {
    // Never conjure the project itself: a typo in PATH must not create directories.
    if !project.is_dir() {
        return Err(LayoutError::NoProject(project.to_path_buf()));
    }
    let paths = FactoryPaths::new(project);
    let dir = paths.dir();
    let io_err = |source| LayoutError::Io {
        path: dir.to_path_buf(),
        source,
    };
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            // metadata() follows the link: it fails for a dangling target and for a
            // loop (ELOOP); both mean the link is unusable.
            match fs::metadata(dir) {
                Ok(target) if target.is_dir() => {}
                Ok(_) => return Err(LayoutError::NotADirectory(dir.to_path_buf())),
                Err(_) => {
                    tracing::warn!(path = %dir.display(), "replacing broken .factory symlink");
                    fs::remove_file(dir).map_err(io_err)?;
                }
            }
        }
        Ok(meta) if !meta.is_dir() => return Err(LayoutError::NotADirectory(dir.to_path_buf())),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(e)),
    }
    for sub in [
        paths.experiments_dir(),
        paths.reviews_dir(),
        paths.strategy_dir(),
        paths.archive_dir(),
        paths.state_dir(),
    ] {
        fs::create_dir_all(&sub).map_err(|source| LayoutError::Io { path: sub, source })?;
    }
    Ok(paths)
}

/// Why `.factory/` could not be prepared.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LayoutError {
    /// The project directory does not exist.
    #[error("project directory {0} does not exist or is not a directory")]
    #[diagnostic(
        code(factory::layout::no_project),
        help("pass the path of an existing project (the directory holding factory.md)")
    )]
    NoProject(PathBuf),
    /// Something that is not a directory sits where `.factory/` belongs.
    #[error("{0} exists but is not a directory")]
    #[diagnostic(
        code(factory::layout::not_a_directory),
        help("move or rename that file; factory keeps its state in a .factory/ directory")
    )]
    NotADirectory(PathBuf),
    /// The file system refused an operation.
    #[error("cannot prepare {path}: {source}")]
    #[diagnostic(
        code(factory::layout::io),
        help("check that the project directory exists and is writable")
    )]
    Io {
        /// The path being created or inspected.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn creates_the_standard_subdirectories() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = ensure_factory_dir(tmp.path()).unwrap();
        for d in ["experiments", "reviews", "strategy", "archive", "state"] {
            assert!(paths.dir().join(d).is_dir(), "{d} missing");
        }
        // Idempotent.
        ensure_factory_dir(tmp.path()).unwrap();
    }

    #[test]
    fn replaces_a_broken_symlink_instead_of_following_it() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("gone");
        symlink(&target, tmp.path().join(".factory")).unwrap();
        let paths = ensure_factory_dir(tmp.path()).unwrap();
        let meta = fs::symlink_metadata(paths.dir()).unwrap();
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        assert!(!target.exists(), "the dangling target must not be created");
    }

    #[test]
    fn replaces_a_circular_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join(".factory");
        let b = tmp.path().join("loop");
        symlink(&b, &a).unwrap();
        symlink(&a, &b).unwrap();
        let paths = ensure_factory_dir(tmp.path()).unwrap();
        assert!(
            !fs::symlink_metadata(paths.dir())
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(paths.experiments_dir().is_dir());
    }

    #[test]
    fn keeps_a_symlink_to_a_real_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("elsewhere");
        fs::create_dir(&real).unwrap();
        symlink(&real, tmp.path().join(".factory")).unwrap();
        ensure_factory_dir(tmp.path()).unwrap();
        assert!(real.join("experiments").is_dir());
    }

    #[test]
    fn never_creates_a_missing_project() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("typo");
        assert!(matches!(
            ensure_factory_dir(&missing),
            Err(LayoutError::NoProject(_))
        ));
        assert!(!missing.exists());
    }

    #[test]
    fn refuses_to_delete_a_regular_file() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join(".factory"), "mine").unwrap();
        let err = ensure_factory_dir(tmp.path()).unwrap_err();
        assert!(matches!(err, LayoutError::NotADirectory(_)));
        assert_eq!(
            fs::read_to_string(tmp.path().join(".factory")).unwrap(),
            "mine"
        );
    }
}
