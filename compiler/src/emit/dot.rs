//! Graphviz dot: gates as diamonds, forks and joins as black bars, start and end as
//! circles, parallel as a 3-d box, select as a hexagon, async nodes dashed, reloop
//! edges dashed with their bound, failure edges red.

use std::fmt::Write as _;

use super::{detail, edge_label, nodes_and_missing, sorted_edges};
use crate::ir::{Ir, Label, Node, NodeKind};

pub fn to_dot(ir: &Ir) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&ir.workflow.name));
    let _ = writeln!(
        out,
        "  label={}; labelloc=t; rankdir=TB;",
        quote(&ir.workflow.name)
    );
    out.push_str("  node [fontname=\"Helvetica\", fontsize=11];\n");
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=9];\n");
    let (nodes, missing) = nodes_and_missing(ir);
    for node in nodes {
        node_line(&mut out, node);
    }
    for id in missing {
        let _ = writeln!(
            out,
            "  {} [label={}, shape=box, style=dotted, color=red, fontcolor=red];",
            quote(id),
            quote(&format!("{id}\n(no node line)"))
        );
    }
    for edge in sorted_edges(ir) {
        let mut attrs: Vec<String> = Vec::new();
        if let Some(label) = edge_label(edge) {
            attrs.push(format!("label={}", quote(&label)));
        }
        match edge.label {
            // Back edges: dashed, and kept out of the ranking so the main flow stays
            // top to bottom.
            Some(Label::Reloop) => attrs.push("style=dashed, constraint=false".to_string()),
            Some(Label::Fail) => attrs.push("color=red, fontcolor=red".to_string()),
            Some(Label::Halt) => attrs.push("color=gray40, fontcolor=gray40".to_string()),
            _ => {}
        }
        let _ = write!(out, "  {} -> {}", quote(&edge.from), quote(&edge.to));
        if !attrs.is_empty() {
            let _ = write!(out, " [{}]", attrs.join(", "));
        }
        out.push_str(";\n");
    }
    out.push_str("}\n");
    out
}

fn node_line(out: &mut String, node: &Node) {
    let mut attrs: Vec<String> = Vec::new();
    let mut styles: Vec<&str> = Vec::new();
    let label = match detail(node) {
        Some(d) => format!("{}\n{d}", node.id),
        None => node.id.clone(),
    };
    match node.kind {
        NodeKind::Fork | NodeKind::Join => {
            // A bar carries no text; the id sits beside it.
            attrs.push("label=\"\"".to_string());
            attrs.push(format!("xlabel={}", quote(&node.id)));
            attrs.push(
                "shape=box, fillcolor=black, height=0.08, width=1.5, fixedsize=true".to_string(),
            );
            styles.push("filled");
        }
        kind => {
            attrs.push(format!("label={}", quote(&label)));
            let shape = match kind {
                NodeKind::Start => "circle",
                NodeKind::End => "doublecircle",
                NodeKind::Gate => "diamond",
                NodeKind::Parallel => "box3d",
                NodeKind::Select => "hexagon",
                NodeKind::Study => "cylinder",
                NodeKind::Llm => "ellipse",
                _ => "box",
            };
            attrs.push(format!("shape={shape}"));
            if kind == NodeKind::Agent {
                styles.push("rounded");
            }
        }
    }
    if node.attrs.is_async {
        styles.push("dashed");
    }
    if !styles.is_empty() {
        attrs.push(format!("style=\"{}\"", styles.join(",")));
    }
    if let Some(doc) = &node.attrs.doc {
        attrs.push(format!("tooltip={}", quote(doc)));
    }
    let _ = writeln!(out, "  {} [{}];", quote(&node.id), attrs.join(", "));
}

/// A dot double-quoted string. Backslashes are doubled so user text never forms a dot
/// escape (`\l`, `\N`); newlines become dot's `\n` line break.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
