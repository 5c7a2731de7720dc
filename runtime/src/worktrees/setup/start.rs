//! A command that could not start is not a score. Exit 127 (a program not installed),
//! `No module named …` (a Python module missing), `Cannot find module …` (a node package
//! missing) and a build that fails at the base say the checkout's environment cannot run
//! the project — comparing two such sides compares the environment, not the change.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::sys::pattern::re;
use crate::sys::process::Output;

static PY_MISSING: LazyLock<Regex> =
    LazyLock::new(|| re(r"No module named '?([A-Za-z_][A-Za-z0-9_.]*)'?"));
static NODE_MISSING: LazyLock<Regex> =
    LazyLock::new(|| re(r"Cannot find (?:module|package) '([^']+)'"));
static NOT_FOUND: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(command not found|: not found|no such file or directory)"));

/// What was missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartKind {
    /// A program the command runs is not installed (exit 127, `npx --no-install`).
    CommandNotFound,
    /// Python could not import this module (dotted name).
    PythonModule(String),
    /// node could not resolve this specifier (a package name or a path).
    NodeModule(String),
    /// The build check failed (a cause only at the base: at the head it is the change's).
    BuildFailed,
}

/// Why a command could not start, with the line of its output that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartCause {
    pub kind: StartKind,
    /// The output line naming it (or the first useful lines, for a failed build).
    pub line: String,
}

/// One eval check that could not start in a checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartFailure {
    /// The check's name (`tests`, `build`, `lint`, …).
    pub check: String,
    pub command: String,
    pub cause: StartCause,
}

impl StartCause {
    /// A failed build, described by the first useful lines of its output.
    pub fn build_failed(out: &Output) -> Self {
        Self {
            kind: StartKind::BuildFailed,
            line: format!("{}: {}", out.exit_text(), super::useful_lines(out, 3)),
        }
    }

    /// Whether what is missing belongs to the project itself, judged against the base's
    /// checkout at `base_code`: a Python module whose file or package is in it, a
    /// relative or absolute file node could not find. At the head (when the base started)
    /// that is the change's doing — a module it deleted or broke — and is scored, not
    /// an environment that cannot run the project.
    pub fn is_project_module(&self, base_code: &Path) -> bool {
        match &self.kind {
            StartKind::PythonModule(name) => {
                let rel = name.replace('.', "/");
                ["", "src/"].iter().any(|prefix| {
                    let at = base_code.join(format!("{prefix}{rel}"));
                    at.is_dir() || at.with_extension("py").is_file()
                })
            }
            StartKind::NodeModule(spec) => spec.starts_with('.') || spec.starts_with('/'),
            StartKind::CommandNotFound | StartKind::BuildFailed => false,
        }
    }

    /// What happened, as the end of a sentence about the command
    /// ("the tests check `…` could not start: …").
    pub fn describe(&self) -> String {
        match &self.kind {
            StartKind::CommandNotFound => format!(
                "could not start: a program it runs is not installed in the checkout's environment ({})",
                self.line
            ),
            StartKind::PythonModule(m) => format!(
                "could not start: Python cannot import `{m}` ({}); install it in the side's own environment through `## Setup`",
                self.line
            ),
            StartKind::NodeModule(m) => format!(
                "could not start: node cannot find `{m}` ({}); install the dependencies in the checkout through `## Setup` (`npm ci`)",
                self.line
            ),
            StartKind::BuildFailed => format!(
                "fails at the base commit, so nothing built on it can be measured ({})",
                self.line
            ),
        }
    }
}

/// Why `out` (a command that exited non-zero) could not start, if it could not: exit
/// 127 or `npx` finding no executable (a program missing), `No module named …`,
/// `Cannot find module …` / `Cannot find package …`. `None` for a command that ran and
/// failed, timed out or succeeded.
pub fn cannot_start(out: &Output) -> Option<StartCause> {
    if out.success() || out.timed_out {
        return None;
    }
    let text = format!("{}\n{}", out.stderr, out.stdout);
    let line_of = |at: usize| {
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        text[start..end].trim().to_string()
    };
    if out.code == Some(127) || text.contains("could not determine executable to run") {
        let line = NOT_FOUND
            .find(&text)
            .map(|m| line_of(m.start()))
            .or_else(|| {
                text.find("could not determine executable to run")
                    .map(&line_of)
            })
            .unwrap_or_else(|| out.exit_text());
        return Some(StartCause {
            kind: StartKind::CommandNotFound,
            line,
        });
    }
    if let Some(c) = PY_MISSING.captures(&text) {
        let at = c.get(0).map_or(0, |m| m.start());
        return Some(StartCause {
            kind: StartKind::PythonModule(c[1].trim_end_matches('.').to_string()),
            line: line_of(at),
        });
    }
    if let Some(c) = NODE_MISSING.captures(&text) {
        let at = c.get(0).map_or(0, |m| m.start());
        return Some(StartCause {
            kind: StartKind::NodeModule(c[1].to_string()),
            line: line_of(at),
        });
    }
    None
}
