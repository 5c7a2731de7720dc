//! What a discovered check is: its kind, the command that runs it, how its output is
//! read. Introspection and the per-language toolchains both build these.

use serde::{Deserialize, Serialize};

use crate::sys::process::which;

/// The hygiene checks every project gets, plus coverage (a growth input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Build,
    Tests,
    Lint,
    Format,
    TypeCheck,
    Coverage,
}

impl CheckKind {
    pub const ALL: [CheckKind; 6] = [
        CheckKind::Build,
        CheckKind::Tests,
        CheckKind::Lint,
        CheckKind::Format,
        CheckKind::TypeCheck,
        CheckKind::Coverage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Build => "build",
            CheckKind::Tests => "tests",
            CheckKind::Lint => "lint",
            CheckKind::Format => "format",
            CheckKind::TypeCheck => "type_check",
            CheckKind::Coverage => "coverage",
        }
    }
}

/// How a check's output becomes a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputParser {
    /// Exit code 0 scores 1, anything else 0.
    ExitCode,
    /// Exit 0 *and* no output (gofmt -l lists unformatted files and still exits 0).
    EmptyOutput,
    /// Test-runner summary: the pass ratio, with the counts kept for growth.
    TestSummary,
    /// A coverage report's total percentage.
    CoveragePercent,
}

/// How an unavailable check's reason starts when the check does not apply at all.
pub const NOT_APPLICABLE: &str = "not applicable";

/// A check factory can run, or the reason it cannot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub kind: CheckKind,
    /// Shell command run from the project root; `None` when unavailable.
    pub command: Option<String>,
    pub parser: OutputParser,
    /// Why there is no command (tool missing, not applicable to the language, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The check applies and cannot run (tests that exist, their runner missing): a
    /// failed dimension, not one skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fails: bool,
}

impl Check {
    pub(super) fn run(kind: CheckKind, command: &str, parser: OutputParser) -> Self {
        Self {
            kind,
            command: Some(command.to_string()),
            parser,
            unavailable: None,
            fails: false,
        }
    }

    /// True when the check does not apply to this language (not merely a missing tool).
    pub fn not_applicable(&self) -> bool {
        self.unavailable
            .as_deref()
            .is_some_and(|r| r.starts_with(NOT_APPLICABLE))
    }

    pub(super) fn missing(kind: CheckKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            command: None,
            parser: OutputParser::ExitCode,
            unavailable: Some(reason.into()),
            fails: false,
        }
    }

    /// A check that applies and cannot run: it fails, naming `reason`.
    pub(super) fn unrunnable(kind: CheckKind, reason: impl Into<String>) -> Self {
        Self {
            fails: true,
            ..Self::missing(kind, reason)
        }
    }

    /// Runs `command` only when `tool` is on PATH.
    pub(super) fn with_tool(
        kind: CheckKind,
        tool: &str,
        command: &str,
        parser: OutputParser,
        install: &str,
    ) -> Self {
        if which(tool).is_some() {
            Self::run(kind, command, parser)
        } else {
            Self::missing(kind, format!("`{tool}` is not installed ({install})"))
        }
    }
}
