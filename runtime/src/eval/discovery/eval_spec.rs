//! Classifying factory.md `eval_spec` bullets (spec §8.6): a bullet that names a runnable
//! command is "executable" and becomes a project eval dimension (exit code 0 passes); any
//! other bullet is "judgmental" and stays advisory text for the Strategist and QA agents.

use std::sync::LazyLock;

use crate::sys::pattern::re;
use regex::Regex;
use serde::Serialize;

/// First words that make a backticked span a command rather than an identifier.
const COMMANDS: &[&str] = &[
    "cargo",
    "rustc",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "bun",
    "deno",
    "node",
    "python",
    "python3",
    "pytest",
    "ruff",
    "mypy",
    "pyright",
    "tox",
    "nox",
    "uv",
    "go",
    "gofmt",
    "make",
    "just",
    "bash",
    "sh",
    "test",
    "grep",
    "diff",
    "jq",
    "shellcheck",
    "eslint",
    "tsc",
    "prettier",
    "hyperfine",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum SpecClass {
    /// Can be measured by running `command`.
    Executable { command: String },
    /// Needs judgement (an LLM or a person).
    Judgmental,
}

static BACKTICKS: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`]+)`"));
static PREFIXED: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^\s*(?:run|command|check)\s*:\s*(.+?)\s*$"));

fn is_command(span: &str) -> bool {
    let first = span.split_whitespace().next().unwrap_or("");
    first.starts_with("./") || COMMANDS.contains(&first)
}

/// Labels one bullet.
pub fn classify_eval_spec_item(text: &str) -> SpecClass {
    if let Some(cap) = PREFIXED.captures(text) {
        let command = cap[1].trim_matches('`').trim().to_string();
        if !command.is_empty() {
            return SpecClass::Executable { command };
        }
    }
    BACKTICKS
        .captures_iter(text)
        .map(|c| c[1].trim().to_string())
        .find(|span| is_command(span))
        .map(|command| SpecClass::Executable { command })
        .unwrap_or(SpecClass::Judgmental)
}

/// A dimension name for a promoted command: `spec_` plus its words, snake-cased.
pub fn dimension_name(command: &str) -> String {
    let words: Vec<String> = command
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(4)
        .map(str::to_lowercase)
        .collect();
    format!("spec_{}", words.join("_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe(cmd: &str) -> SpecClass {
        SpecClass::Executable {
            command: cmd.into(),
        }
    }

    #[test]
    fn commands_are_executable_prose_is_judgmental() {
        assert_eq!(
            classify_eval_spec_item("`cargo test --doc` passes"),
            exe("cargo test --doc")
        );
        assert_eq!(
            classify_eval_spec_item("The `parse` function handles `./scripts/check.sh`"),
            exe("./scripts/check.sh")
        );
        assert_eq!(
            classify_eval_spec_item("run: make bench-check"),
            exe("make bench-check")
        );
        assert_eq!(
            classify_eval_spec_item("Error messages are clear and actionable"),
            SpecClass::Judgmental
        );
        assert_eq!(
            classify_eval_spec_item("The `parse` function is documented"),
            SpecClass::Judgmental
        );
    }

    #[test]
    fn names_are_stable_snake_case() {
        assert_eq!(dimension_name("cargo test --doc"), "spec_cargo_test_doc");
    }
}
