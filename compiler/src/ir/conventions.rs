//! What the compiler, the SKILL.md emitter and the executor agree on beyond the graph
//! itself: the variables a run fills into templates, and where a gate's verdict goes.
//! One definition here, so the three cannot drift.

use super::{Evaluator, Node};

/// Variables the runtime fills in when it runs a node.
pub const RUNTIME_VARS: &[&str] = &[
    "project_path",
    "exp_id",
    "goal",
    "run_id",
    "iteration",
    "hypothesis",
    "branch",
    "worktree",
    "node",
    "verdict",
    "score_before",
    "score_after",
];

/// The variable expressions used in `text`, in order, trimmed (`{{ x }}` is `x`).
pub fn template_vars(text: &str) -> Vec<&str> {
    let mut vars = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        vars.push(after[..close].trim());
        rest = &after[close + 2..];
    }
    vars
}

/// Where an agent gate that declares no `writes` has its verdict written.
pub fn default_verdict_path(role: &str, node: &str) -> String {
    format!(".factory/reviews/{role}-verdict-{node}.md")
}

/// The role that evaluates an agent gate (`ceo` when none is named).
pub fn gate_role(node: &Node) -> &str {
    node.attrs.role.as_deref().unwrap_or("ceo")
}

/// Where the verdict of an agent gate is written: its first declared write, else
/// [`default_verdict_path`]. `None` for nodes that are not agent gates.
pub fn verdict_file(node: &Node) -> Option<String> {
    if node.kind != super::NodeKind::Gate
        || !matches!(node.attrs.evaluator, Some(Evaluator::Agent) | None)
    {
        return None;
    }
    Some(
        node.attrs
            .writes
            .first()
            .map(|w| w.path.clone())
            .unwrap_or_else(|| default_verdict_path(gate_role(node), &node.id)),
    )
}

/// The heading under which a verdict file states PROCEED, RELOOP or HALT.
pub const VERDICT_HEADING: &str = "## Verdict";
