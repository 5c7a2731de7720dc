//! The strategist's plan of N hypotheses for parallel improve: `## Hypothesis N`
//! sections, each with its intended files and success measure.
//!
//! The parser is forgiving where a model writes loosely (text before the first section,
//! numbering gaps, a number used twice, `### Hypothesis 2: title`) and strict where a
//! mistake would waste a branch: no section, a section with nothing in it, or two
//! sections saying the same thing are errors or dropped by name, with their line.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::sys::pattern::re;
use regex::Regex;

/// `## Hypothesis 3`, `### Hypothesis 2: Cache the parse`, `## hypothesis #4 — title`.
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(#{2,3})\s*hypothesis\b\s*#?\s*(\d+)?\s*(?:[:.)\-–—]\s*)?(.*?)\s*#*\s*$")
});
/// Any Markdown heading, to find where a section ends.
static ANY_HEADING: LazyLock<Regex> = LazyLock::new(|| re(r"^(#{1,6})\s"));
/// A label opening the intended files: `Files:`, `**Intended files**:`, `### Files`.
static FILES_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:#{3,6}\s*|[-*]\s*)?\**\s*(?:intended\s+)?files?(?:\s+to\s+(?:change|touch))?\s*\**\s*:?\**\s*(.*)$",
    )
});
/// A label opening the success measure.
static SUCCESS_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:#{3,6}\s*|[-*]\s*)?\**\s*success(?:\s+(?:measure|criteria|criterion))?\s*\**\s*:?\**\s*(.*)$",
    )
});
/// A backticked token that looks like a path or glob.
static PATH_TOKEN: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\s]+)`"));

/// One hypothesis of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hypothesis {
    /// 1-based position in the plan (what branch `i` gets), whatever number was written.
    pub index: usize,
    /// The number written in the heading, if any.
    pub written_number: Option<u32>,
    /// 1-based line of the heading.
    pub line: usize,
    /// The heading's title, else the first line of the body.
    pub title: String,
    /// The section's text (without its heading).
    pub text: String,
    /// Paths and globs named under its files label.
    pub files: Vec<String>,
    /// What would show it worked.
    pub success: Option<String>,
}

/// A parsed plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub hypotheses: Vec<Hypothesis>,
    /// Sections dropped, each named with its line and why.
    pub dropped: Vec<String>,
}

/// Why a plan cannot be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum PlanError {
    #[error("{path}: no `## Hypothesis N` section; the plan holds no hypothesis to test")]
    #[diagnostic(
        code(factory::plan::empty),
        help(
            "the strategist writes one `## Hypothesis N` section per hypothesis, each with `Files:` and `Success:`"
        )
    )]
    Empty { path: PathBuf },

    #[error("{path}:{line}: `{heading}` has nothing under it")]
    #[diagnostic(
        code(factory::plan::empty_section),
        help(
            "write what to change, the intended files (`Files:`) and how success is measured (`Success:`)"
        )
    )]
    EmptySection {
        path: PathBuf,
        line: usize,
        heading: String,
    },

    #[error("cannot read the plan {path}: {source}")]
    #[diagnostic(code(factory::plan::io), help("check that the strategist wrote it"))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Reads and parses the plan at `path`.
pub fn read_plan(path: &Path) -> Result<Plan, PlanError> {
    let bytes = std::fs::read(path).map_err(|source| PlanError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_plan(path, &String::from_utf8_lossy(&bytes))
}

/// Parses a plan's text (`path` names it in errors).
pub fn parse_plan(path: &Path, text: &str) -> Result<Plan, PlanError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut sections: Vec<(usize, usize, Option<u32>, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = HEADING.captures(line) {
            sections.push((
                i,
                c[1].len(),
                c.get(2).and_then(|m| m.as_str().parse().ok()),
                c.get(3).map_or("", |m| m.as_str()).trim().to_string(),
            ));
        }
    }
    if sections.is_empty() {
        return Err(PlanError::Empty {
            path: path.to_path_buf(),
        });
    }
    let mut plan = Plan {
        hypotheses: Vec::new(),
        dropped: Vec::new(),
    };
    for (start, level, number, title) in sections {
        // The body runs to the next heading of this level or higher.
        let end = lines
            .iter()
            .enumerate()
            .skip(start + 1)
            .find(|(_, l)| ANY_HEADING.captures(l).is_some_and(|c| c[1].len() <= level))
            .map_or(lines.len(), |(i, _)| i);
        let body: Vec<&str> = lines[start + 1..end].to_vec();
        let text = body.join("\n").trim().to_string();
        if text.is_empty() {
            return Err(PlanError::EmptySection {
                path: path.to_path_buf(),
                line: start + 1,
                heading: lines[start].trim().to_string(),
            });
        }
        let key = normalise(&text);
        if let Some(same) = plan.hypotheses.iter().find(|h| normalise(&h.text) == key) {
            plan.dropped.push(format!(
                "{}:{}: `{}` repeats the hypothesis at line {}; dropped",
                path.display(),
                start + 1,
                lines[start].trim(),
                same.line
            ));
            continue;
        }
        let (files, success) = labelled(&body);
        let title = if title.is_empty() {
            text.lines().next().unwrap_or_default().trim().to_string()
        } else {
            title
        };
        plan.hypotheses.push(Hypothesis {
            index: plan.hypotheses.len() + 1,
            written_number: number,
            line: start + 1,
            title,
            text,
            files,
            success,
        });
    }
    Ok(plan)
}

/// Text compared for duplicates: case, punctuation and layout do not matter.
fn normalise(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect::<String>()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The files (backticked tokens on the files label's line and the list under it) and
/// the success measure (the rest of its label's line, or the lines under it).
fn labelled(body: &[&str]) -> (Vec<String>, Option<String>) {
    #[derive(PartialEq)]
    enum In {
        Nothing,
        Files,
        Success,
    }
    let mut files: Vec<String> = Vec::new();
    let mut success: Vec<String> = Vec::new();
    let mut at = In::Nothing;
    for line in body {
        let t = line.trim();
        if let Some(c) = FILES_LABEL.captures(t) {
            at = In::Files;
            files.extend(paths_in(&c[1]));
            continue;
        }
        if let Some(c) = SUCCESS_LABEL.captures(t) {
            at = In::Success;
            if !c[1].trim().is_empty() {
                success.push(c[1].trim().to_string());
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        let item = t.starts_with("- ") || t.starts_with("* ");
        match at {
            In::Files if item => files.extend(paths_in(t)),
            In::Success if item || success.is_empty() => {
                success.push(t.trim_start_matches(['-', '*', ' ']).to_string())
            }
            _ => at = In::Nothing,
        }
    }
    files.dedup();
    let success = (!success.is_empty()).then(|| success.join("; "));
    (files, success)
}

/// Backticked tokens, else comma-separated words that look like paths.
fn paths_in(text: &str) -> Vec<String> {
    let ticked: Vec<String> = PATH_TOKEN
        .captures_iter(text)
        .map(|c| c[1].to_string())
        .collect();
    if !ticked.is_empty() {
        return ticked;
    }
    text.trim_start_matches(['-', '*', ' '])
        .split([',', ' '])
        .map(str::trim)
        .filter(|w| w.contains('/') || w.contains('.') || w.contains('*'))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests;
