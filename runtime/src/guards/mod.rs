//! Guard checks (spec §8.5, §13.2): the non-negotiable safety checks that must pass
//! before an experiment can be kept. All go through git2; the changed-file list comes
//! from git, never from what an agent says it changed.

pub mod changes;
pub mod eval_dir;
pub mod history;
pub mod patterns;
pub mod secrets;
pub mod tests_kept;

use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{Oid, Repository, StatusOptions};
use serde::Serialize;

pub use changes::{Change, ChangeKind, base_commit, changed_files, open_repo};
pub use eval_dir::{EvalSnapshot, check_eval_immutable, eval_snapshot_at, eval_snapshot_workdir};
pub use patterns::{Patterns, is_lock_file};

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum GuardError {
    #[error("{path} is not inside a git repository: {message}")]
    #[diagnostic(help(
        "guards compare against git history; run factory inside the project's git repository"
    ))]
    NotARepo { path: PathBuf, message: String },
    #[error("cannot resolve `{rev}`: {message}")]
    #[diagnostic(help(
        "create that branch, or set `target_branch` in factory.md and run `factory init --reparse`"
    ))]
    NoRevision { rev: String, message: String },
    #[error("invalid glob pattern `{pattern}`: {message}")]
    #[diagnostic(help(
        "fix the pattern under scope / fixed_surfaces in factory.md, then run `factory init --reparse`"
    ))]
    BadPattern { pattern: String, message: String },
    #[error("git failed: {0}")]
    #[diagnostic(help("check that the repository is readable (`git status` should work)"))]
    Git(String),
    #[error("could not read {path}: {source}")]
    #[diagnostic(help("check the file's permissions"))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The outcome of one guard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardResult {
    pub name: String,
    pub passed: bool,
    pub violations: Vec<String>,
    /// What the guard saw that did not fail it but a reader should know (flaky tests,
    /// tests that prove nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `tests_kept` only: what the tests showed, for the verdict's class.
    #[serde(skip)]
    pub evidence: Option<tests_kept::Evidence>,
}

impl GuardResult {
    pub fn from_violations(name: &str, violations: Vec<String>) -> Self {
        Self {
            name: name.to_string(),
            passed: violations.is_empty(),
            violations,
            notes: Vec::new(),
            evidence: None,
        }
    }
}

/// No uncommitted changes (untracked files included; `.factory/` and ignored files excluded).
pub fn check_git_clean(repo: &Repository) -> Result<GuardResult, GuardError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| GuardError::Git(e.message().to_string()))?;
    let dirty: Vec<String> = statuses
        .iter()
        .filter_map(|s| s.path().ok().map(str::to_string))
        .filter(|p| !p.starts_with(".factory/"))
        .map(|p| format!("{p}: uncommitted change"))
        .collect();
    Ok(GuardResult::from_violations("git_clean", dirty))
}

/// HEAD is a branch other than `target_branch`, rooted at `base`: an experiment's
/// recorded base commit when given (the target branch may move on after `begin`; that is
/// the `base_commit` check's report, not a violation here), else the target's tip.
pub fn check_experiment_branch(
    repo: &Repository,
    target_branch: &str,
    base: Option<Oid>,
) -> Result<GuardResult, GuardError> {
    let mut v = Vec::new();
    let head = repo
        .head()
        .map_err(|e| GuardError::Git(e.message().to_string()))?;
    if !head.is_branch() {
        v.push("HEAD is detached; experiments run on their own branch".to_string());
    } else if head.shorthand().ok() == Some(target_branch) {
        v.push(format!(
            "HEAD is on the target branch `{target_branch}`; experiments run on their own branch"
        ));
    }
    let head_id = head.target();
    let rooted_at = |root: Oid| {
        head_id.is_some_and(|h| h == root || repo.graph_descendant_of(h, root).unwrap_or(false))
    };
    match base {
        Some(base) => {
            if !rooted_at(base) {
                v.push(format!(
                    "the branch does not descend from the base commit {base} recorded at begin; rebase it onto {base}"
                ));
            }
        }
        None => match repo
            .find_branch(target_branch, git2::BranchType::Local)
            .ok()
            .and_then(|b| b.get().target())
        {
            None => v.push(format!("target branch `{target_branch}` does not exist")),
            Some(target) => {
                if !rooted_at(target) {
                    v.push(format!("the branch is not rooted at the tip of `{target_branch}`; rebase it onto `{target_branch}`"));
                }
            }
        },
    }
    Ok(GuardResult::from_violations("experiment_branch", v))
}

/// Every changed file must match a scope pattern (lock files excepted); nothing may escape
/// the repository (`..` paths, symlinks pointing outside).
pub fn check_scope(root: &Path, changes: &[Change], scope: &Patterns) -> GuardResult {
    let mut v = Vec::new();
    for change in changes {
        if let Some(reason) = changes::escape_reason(root, change) {
            v.push(reason);
        }
        for path in change.paths() {
            if !is_lock_file(path) && !scope.matches(path) {
                let what = match (change.kind, change.old_path.as_deref() == Some(path)) {
                    (ChangeKind::Deleted, _) => "deleted",
                    (ChangeKind::Renamed, true) => "renamed away",
                    (ChangeKind::Renamed, false) => "renamed into place",
                    _ => "changed",
                };
                v.push(format!(
                    "{path}: {what} outside scope ({})",
                    scope.sources.join(", ")
                ));
            }
        }
    }
    GuardResult::from_violations("scope", v)
}

/// No changed file (either side of a rename, deletions included) may match a fixed surface.
pub fn check_fixed_surfaces(changes: &[Change], fixed: &Patterns) -> GuardResult {
    let v = changes
        .iter()
        .flat_map(|c| c.paths().map(move |p| (c, p)))
        .filter(|(_, p)| !is_lock_file(p) && fixed.matches(p))
        .map(|(c, p)| format!("{p}: fixed surface {}", c.kind.as_str()))
        .collect();
    GuardResult::from_violations("fixed_surfaces", v)
}

/// Sacred Rule 1: tests kept by identity between `base` and HEAD, every test change
/// attributed (see [`tests_kept`]).
pub fn check_tests_kept(
    repo: &Repository,
    root: &Path,
    base: Oid,
    changes: &[Change],
    inputs: &GuardInputs,
) -> GuardResult {
    let found = tests_kept::tests_kept(repo, root, base, changes, inputs);
    let mut result = GuardResult::from_violations("tests_kept", found.violations);
    result.notes = found
        .evidence
        .as_ref()
        .map(|e| e.notes())
        .unwrap_or_default();
    result.evidence = found.evidence;
    result
}

/// Sacred Rule 3: no changed file gains a credential-shaped string.
pub fn check_no_secrets(repo: &Repository, root: &Path, changes: &[Change]) -> GuardResult {
    GuardResult::from_violations(
        "no_secrets",
        secrets::introduced_secrets(repo, root, changes),
    )
}

/// What the diff-based guards need.
#[derive(Debug, Clone)]
pub struct GuardInputs {
    /// The branch experiments start from (`target_branch`, usually `main`).
    pub target_branch: String,
    pub scope: Vec<String>,
    pub fixed_surfaces: Vec<String>,
    /// Whether uncommitted changes are a violation (true before finalize; false while
    /// an experiment's work is still in the tree).
    pub require_clean: bool,
    /// The commit changes are measured from (an experiment's recorded base); `None`
    /// means the merge base of HEAD and `target_branch`.
    pub base_commit: Option<String>,
    /// Each test-runner run's limit (factory.md's `test_timeout`); `None` means 900 s.
    pub test_timeout: Option<Duration>,
    /// Behaviour changes the hypothesis declared and QA confirmed, by test name.
    pub declared: tests_kept::attribution::Declared,
    /// factory.md's `## Setup`, run in the test guard's checkouts.
    pub setup: Vec<String>,
    /// Checkouts of the base and head commits (repository roots) already set up and
    /// probed — the gate's own: the test guard runs its tests there instead of writing
    /// and setting up two more.
    pub checkouts: Option<(PathBuf, PathBuf)>,
    /// The base's test run kept between experiments on one base, with the gate's
    /// checkouts only.
    pub kept_base_tests: Option<tests_kept::KeptBaseTests>,
}

/// Runs every guard for the repository at `root`. Errors only when git itself cannot be
/// read or a pattern is invalid; violations are results, not errors.
pub fn run_guards(root: &Path, inputs: &GuardInputs) -> Result<Vec<GuardResult>, GuardError> {
    let repo = open_repo(root)?;
    let workdir = repo
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.to_path_buf());
    let scope = Patterns::new(&inputs.scope)?;
    let fixed = Patterns::new(&inputs.fixed_surfaces)?;
    let base = match &inputs.base_commit {
        Some(hex) => Oid::from_str(hex)
            .and_then(|oid| repo.find_commit(oid).map(|c| c.id()))
            .map_err(|e| GuardError::NoRevision {
                rev: hex.clone(),
                message: e.message().to_string(),
            })?,
        None => base_commit(&repo, &inputs.target_branch)?,
    };
    let changes = changed_files(&repo, base)?;
    // Every commit from the base to the head, and uncommitted work: not only the final tree.
    let touches = history::all_touches(&repo, base)?;
    let mut results = Vec::new();
    if inputs.require_clean {
        results.push(check_git_clean(&repo)?);
    }
    let recorded = inputs.base_commit.is_some().then_some(base);
    results.push(check_experiment_branch(
        &repo,
        &inputs.target_branch,
        recorded,
    )?);
    // An empty scope matches nothing, so any change at all is out of scope (spec §6.2).
    results.push(history::check_scope(&touches, &scope));
    results.push(history::check_fixed_surfaces(&touches, &fixed));
    results.push(history::check_symlinks(&repo, base, &touches));
    results.push(history::check_submodules(&touches));
    let before = eval_snapshot_at(&repo, base)?;
    let after = eval_snapshot_workdir(&repo)?;
    results.push(check_eval_immutable(&before, &after));
    results.push(check_tests_kept(&repo, &workdir, base, &changes, inputs));
    results.push(history::check_secrets(&repo, &touches));
    Ok(results)
}
