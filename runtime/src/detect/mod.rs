//! Project state detection (spec §7.1, §8.9, A.5): the one place that classifies a
//! project. The checks run in exactly this order:
//!
//! 1. the path is missing or has no `.git` → [`ProjectState::NoRepo`]
//! 2. `.factory/eval_profile.json` exists and is not human-reviewed →
//!    [`ProjectState::EvalsPendingReview`]
//! 3. `.factory/config.json` exists → [`ProjectState::HasFactory`]
//! 4. `gh` lists an open issue labelled exactly `plan` → [`ProjectState::Incomplete`]
//! 5. otherwise → [`ProjectState::NoFactory`]
//!
//! A missing, failing or hanging `gh` counts as "no open plan issues".

use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::project::layout::FactoryPaths;
use crate::sys::process::{Bounded, run_bounded};

/// Default bound on the `gh issue list` call.
pub const DEFAULT_GH_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a project stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectState {
    /// The path does not exist or is not a git repository.
    NoRepo,
    /// A repository with open `plan` issues: it has not been built yet.
    #[serde(rename = "incomplete")]
    Incomplete,
    /// A built repository without a factory configuration.
    NoFactory,
    /// Evals were discovered but a human has not reviewed them.
    EvalsPendingReview,
    /// Configured: `.factory/config.json` exists.
    HasFactory,
}

impl ProjectState {
    /// The value `factory detect` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoRepo => "no_repo",
            Self::Incomplete => "incomplete",
            Self::NoFactory => "no_factory",
            Self::EvalsPendingReview => "evals_pending_review",
            Self::HasFactory => "has_factory",
        }
    }
}

impl fmt::Display for ProjectState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`detect`] found and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    /// The state.
    pub state: ProjectState,
    /// The path examined.
    pub path: String,
    /// One sentence saying which check decided.
    pub reason: String,
    /// What happened with `gh`, when it was consulted: `open_plan_issues`,
    /// `no_plan_issues`, `missing`, `failed` or `timed_out`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gh: Option<String>,
}

/// How [`detect`] consults GitHub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectOptions {
    /// The `gh` program (looked up on PATH when it has no slash).
    pub gh_program: String,
    /// Bound on the `gh issue list` call; the process group is killed after it.
    pub gh_timeout: Duration,
}

impl Default for DetectOptions {
    fn default() -> Self {
        Self {
            gh_program: "gh".to_owned(),
            gh_timeout: DEFAULT_GH_TIMEOUT,
        }
    }
}

/// Classifies `path` and says why.
pub fn detect(path: &Path, options: &DetectOptions) -> Detection {
    let done = |state, reason: &str, gh: Option<&str>| Detection {
        state,
        path: path.display().to_string(),
        reason: reason.to_owned(),
        gh: gh.map(str::to_owned),
    };
    if !path.is_dir() || !path.join(".git").exists() {
        return done(
            ProjectState::NoRepo,
            "the path is missing or has no .git",
            None,
        );
    }
    let paths = FactoryPaths::new(path);
    if crate::eval::discovery::profile::eval_profile_pending(&paths) == Some(true) {
        return done(
            ProjectState::EvalsPendingReview,
            ".factory/eval_profile.json is not yet human-reviewed",
            None,
        );
    }
    if paths.config_json().is_file() {
        return done(
            ProjectState::HasFactory,
            ".factory/config.json exists",
            None,
        );
    }
    let gh = open_plan_issues(path, options);
    if gh == GhAnswer::OpenPlanIssues {
        return done(
            ProjectState::Incomplete,
            "gh lists open issues labelled `plan`",
            Some(gh.as_str()),
        );
    }
    done(
        ProjectState::NoFactory,
        "a repository without .factory/config.json or open plan issues",
        Some(gh.as_str()),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GhAnswer {
    OpenPlanIssues,
    NoPlanIssues,
    Missing,
    Failed,
    TimedOut,
}

impl GhAnswer {
    fn as_str(self) -> &'static str {
        match self {
            Self::OpenPlanIssues => "open_plan_issues",
            Self::NoPlanIssues => "no_plan_issues",
            Self::Missing => "missing",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
        }
    }
}

/// Asks `gh` for open issues labelled exactly `plan` (not `Plan`, and not
/// `implementation`, the improve-mode backlog label). gh's `--label` filter is
/// case-insensitive, so the labels it returns are checked again here.
fn open_plan_issues(path: &Path, options: &DetectOptions) -> GhAnswer {
    let args = [
        "issue",
        "list",
        "--label",
        "plan",
        "--state",
        "open",
        "--json",
        "number,labels",
        "--limit",
        "50",
    ];
    match run_bounded(&options.gh_program, &args, path, options.gh_timeout) {
        Err(_) => GhAnswer::Missing,
        Ok(Bounded::TimedOut) => GhAnswer::TimedOut,
        Ok(Bounded::Exited { status, .. }) if !status.success() => GhAnswer::Failed,
        Ok(Bounded::Exited { stdout, .. }) => {
            match serde_json::from_str::<Vec<GhIssue>>(stdout.trim()) {
                Ok(issues) if issues.iter().any(GhIssue::is_plan) => GhAnswer::OpenPlanIssues,
                Ok(_) => GhAnswer::NoPlanIssues,
                Err(_) => GhAnswer::Failed,
            }
        }
    }
}

/// The part of `gh issue list --json number,labels` output we read.
#[derive(Deserialize)]
struct GhIssue {
    #[serde(default)]
    labels: Vec<GhLabel>,
}

#[derive(Deserialize)]
struct GhLabel {
    name: String,
}

impl GhIssue {
    fn is_plan(&self) -> bool {
        self.labels.iter().any(|l| l.name == "plan")
    }
}

#[cfg(test)]
mod tests;
