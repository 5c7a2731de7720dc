//! What the IR turns into besides itself: Graphviz dot and Mermaid pictures of the graph,
//! the SKILL.md an interactive agent follows, and a `.fwf` file that compiles back to it. All read the IR alone and are
//! deterministic (canonical order), so they can be committed and diffed.

mod dot;
mod fwf;
mod mermaid;
mod skill;

pub use dot::to_dot;
pub use fwf::{FwfError, to_fwf};
pub use mermaid::to_mermaid;
pub use skill::{
    MAX_DESCRIPTION, MAX_NAME, Skill, is_valid_skill_name, skill_description, skill_name, to_skill,
};

use std::collections::BTreeSet;

use crate::ir::{Edge, Ir, Label, Node, NodeKind};

/// Nodes in canonical order, plus ids that edges name but no node declares (so a
/// half-edited graph still draws, with the missing nodes marked).
fn nodes_and_missing(ir: &Ir) -> (Vec<&Node>, Vec<&str>) {
    let mut nodes: Vec<&Node> = ir.nodes.iter().collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let declared: BTreeSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let missing: BTreeSet<&str> = ir
        .edges
        .iter()
        .flat_map(|e| [e.from.as_str(), e.to.as_str()])
        .filter(|id| !declared.contains(id))
        .collect();
    (nodes, missing.into_iter().collect())
}

fn sorted_edges(ir: &Ir) -> Vec<&Edge> {
    let mut edges: Vec<&Edge> = ir.edges.iter().collect();
    edges.sort();
    edges
}

/// The second line of a node's label: what it does, in a few words.
fn detail(node: &Node) -> Option<String> {
    let a = &node.attrs;
    let mut parts: Vec<String> = Vec::new();
    match node.kind {
        NodeKind::Start | NodeKind::End => {}
        NodeKind::Gate => {
            let who = match (a.evaluator, &a.role) {
                (Some(e), Some(role)) => format!("{}: {role}", crate::ir::text::evaluator_name(e)),
                (Some(e), None) => crate::ir::text::evaluator_name(e).to_string(),
                (None, Some(role)) => role.clone(),
                (None, None) => String::new(),
            };
            parts.push(if who.is_empty() {
                "gate".to_string()
            } else {
                format!("gate ({who})")
            });
        }
        NodeKind::Agent => parts.push(match &a.role {
            Some(role) => format!("agent: {role}"),
            None => "agent".to_string(),
        }),
        NodeKind::Parallel => parts.push(match (&a.count, &a.count_knob) {
            (Some(n), Some(k)) => format!("parallel ×{n} ({k})"),
            (Some(n), None) => format!("parallel ×{n}"),
            (None, Some(k)) => format!("parallel ×{k}"),
            (None, None) => "parallel".to_string(),
        }),
        NodeKind::Select => parts.push(match &a.strategy {
            Some(s) => format!("select: {s}"),
            None => "select".to_string(),
        }),
        kind => parts.push(kind.as_str().to_string()),
    }
    if a.is_async {
        parts.push("async".to_string());
    }
    let text = parts.join(", ");
    // A node named after its kind (`study`) needs no second line.
    (!text.is_empty() && text != node.id).then_some(text)
}

/// The label of an edge: its verdict, and for a bounded reloop the bound.
fn edge_label(edge: &Edge) -> Option<String> {
    let label = edge.label?;
    let mut text = label.as_str().to_string();
    if label == Label::Reloop {
        match (edge.max, &edge.max_knob) {
            (Some(n), Some(k)) => text.push_str(&format!(" ≤{n} ({k})")),
            (Some(n), None) => text.push_str(&format!(" ≤{n}")),
            (None, Some(k)) => text.push_str(&format!(" ≤{k}")),
            (None, None) => {}
        }
    }
    Some(text)
}
