//! Small text helpers for Markdown and shell: inline code that survives backticks, a
//! double-quoted shell argument, and the meaning of template variables.

use crate::ir::Ir;

/// `text` as Markdown inline code, whatever backticks it holds.
pub(super) fn code(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if longest == 0 {
        format!("`{text}`")
    } else {
        format!("{fence} {text} {fence}")
    }
}

/// `text` as one double-quoted shell word: `"`, `\`, `$` and backtick are escaped, so
/// the shell passes it through unchanged (template variables `{{x}}` included).
pub(super) fn shell_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Collapses runs of whitespace (line breaks included) to single spaces.
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a template variable stands for, for the legend at the end of the skill.
pub(super) fn meaning(ir: &Ir, var: &str) -> String {
    if let Some(name) = var.strip_prefix("knobs.") {
        return match ir.knob(name) {
            Some(k) => format!("the value of the knob `{name}` (default {})", k.default),
            None => format!("the value of the knob `{name}`"),
        };
    }
    match var {
        "project_path" => "the project's root directory",
        "exp_id" => "the id of the current experiment (printed by `factory begin`)",
        "goal" => "the goal of this run, in the user's words",
        "run_id" => "the id of this run",
        "iteration" => "the number of the current iteration (1 for the first)",
        "hypothesis" => "the hypothesis being tried: the first paragraph under `## Hypothesis` in `.factory/strategy/current.md`, on one line (in a parallel branch, that branch's own hypothesis)",
        "branch" => "the git branch of the current experiment or worktree",
        "worktree" => "the path of the current git worktree",
        "node" => "the id of the current step's node",
        "verdict" => "the verdict of the most recent review checkpoint",
        "score_before" => "the composite score before the change (`factory eval`)",
        "score_after" => "the composite score after the change (`factory eval`)",
        "reason" => "why you are here: the review that said halt, the loop limit reached, or the step that failed, in a few words",
        _ => "a value supplied when the step runs",
    }
    .to_string()
}
