//! The `score_direction` check: whether the head improved on the base beyond the noise,
//! regressed, or is neutral with evidence the eval cannot score (docs/gate.md, "Neutral
//! keeps").

use serde::Serialize;

use super::{CheckOutcome, Comparison, ExperimentSides, SCORE_EPSILON};
use crate::guards::tests_kept::Evidence;

/// Why a passing experiment may be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictClass {
    /// The measured score rose beyond the noise.
    Improved,
    /// Unmeasurable by this eval: nothing regressed, and the tests or the kind of change
    /// show what it does.
    Neutral,
}

/// The `score_direction` check, and the class a pass gives: improved when the margin
/// exceeds the noise; regressed when it falls below minus the noise; otherwise neutral
/// when no dimension regressed and there is evidence the eval cannot score (a
/// fail-to-pass test, every base test passing on the head, a change to docs or
/// configuration only), else "no measurable improvement".
pub(super) fn score_direction(
    cmp: &Comparison,
    summary: &str,
    regressed: &[String],
    evidence: Option<&Evidence>,
    changed: &[String],
) -> (CheckOutcome, Option<VerdictClass>) {
    const NAME: &str = "score_direction";
    if cmp.improved {
        return (
            CheckOutcome::pass(NAME, format!("improved: {summary}")),
            Some(VerdictClass::Improved),
        );
    }
    if cmp.margin < -cmp.noise - SCORE_EPSILON {
        return (
            CheckOutcome::fail(
                NAME,
                vec![format!("regressed below the base commit: {summary}")],
            ),
            None,
        );
    }
    if !regressed.is_empty() {
        return (
            CheckOutcome::fail(
                NAME,
                vec![format!(
                    "no measurable improvement, and dimensions regressed beyond their noise ({}); {summary}",
                    regressed.join(", ")
                )],
            ),
            None,
        );
    }
    let docs_only = !changed.is_empty() && changed.iter().all(|p| is_docs_or_config(p));
    let why = match evidence {
        Some(e) if !e.fail_to_pass.is_empty() => Some(format!(
            "a fix shown by {} fail-to-pass test(s) ({})",
            e.fail_to_pass.len(),
            e.fail_to_pass
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ if docs_only => Some(format!(
            "a change to documentation or configuration only ({})",
            changed.join(", ")
        )),
        Some(e) if e.base_passed > 0 => Some(format!(
            "every one of the {} test(s) passing at the base passes on the head (a refactor or a change the tests hold)",
            e.base_passed
        )),
        _ => None,
    };
    match why {
        Some(why) => (
            CheckOutcome::pass(
                NAME,
                format!(
                    "neutral with evidence (unmeasurable by this eval): no dimension regressed beyond its noise, and {why}; {summary}"
                ),
            ),
            Some(VerdictClass::Neutral),
        ),
        None => (
            CheckOutcome::fail(
                NAME,
                vec![format!(
                    "no measurable improvement, and no evidence the eval cannot score (no fail-to-pass test, no test run that holds the change, not docs or configuration only): the margin does not exceed the noise; {summary}"
                )],
            ),
            None,
        ),
    }
}

/// Documentation and configuration files: a change to these alone is judged by QA and
/// the guards, not by a score.
fn is_docs_or_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    path.starts_with("docs/")
        || path.starts_with("doc/")
        // Not `.txt`: plain text is as often data a program reads as prose.
        || matches!(ext, "md" | "rst" | "adoc")
        || matches!(
            name.as_str(),
            "license" | "licence" | "authors" | "contributors" | "changelog" | "notice"
        )
        || name.starts_with(".editorconfig")
        || name == ".gitignore"
        || name == ".gitattributes"
        || path.starts_with(".github/")
}

/// Every path the experiment changed between its base and head commits, within its
/// project directory.
pub(super) fn changed_paths(sides: &ExperimentSides<'_>) -> Vec<String> {
    let tree = |id: git2::Oid| sides.repo.find_commit(id).and_then(|c| c.tree()).ok();
    let (Some(b), Some(h)) = (tree(sides.base), tree(sides.head)) else {
        return Vec::new();
    };
    let Ok(diff) = sides.repo.diff_tree_to_tree(Some(&b), Some(&h), None) else {
        return Vec::new();
    };
    diff.deltas()
        .flat_map(|d| [d.old_file().path(), d.new_file().path()])
        .flatten()
        .filter_map(|p| p.strip_prefix(sides.subdir).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .fold(Vec::new(), |mut out, p| {
            if !out.contains(&p) {
                out.push(p);
            }
            out
        })
}
