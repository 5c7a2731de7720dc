//! Small edits on an [`Ir`] shared by the operators: fresh ids, a node's edges, its
//! successor, and putting the graph back into canonical order.

use factory_compiler::ir::{Artifact, Edge, Ir, Label, Node, NodeKind};

/// An id not yet used in `ir`: `evo_<stem>_<n>` with the smallest free `n`, spelled
/// `<body>.evo_<stem>_<n>` inside the body of the `parallel` node `body`, as the
/// compiler names body nodes (the node's `in=` is what makes it a body node). The `evo_`
/// makes inserted nodes easy to spot in a diff against the seed.
pub fn fresh_id(ir: &Ir, stem: &str, body: Option<&str>) -> String {
    let prefix = body.map(|b| format!("{b}.")).unwrap_or_default();
    (1..)
        .map(|n| format!("{prefix}evo_{stem}_{n}"))
        .find(|id| ir.node(id).is_none())
        .unwrap_or_else(|| format!("{prefix}evo_{stem}"))
}

/// The `parallel` node whose body holds `id` (the innermost), if any.
pub fn body_of<'a>(ir: &'a Ir, id: &str) -> Option<&'a str> {
    ir.node(id)?.parallel.as_deref()
}

/// Edges leaving `id`.
pub fn out_edges<'a>(ir: &'a Ir, id: &'a str) -> impl Iterator<Item = &'a Edge> + 'a {
    ir.edges.iter().filter(move |e| e.from == id)
}

/// Edges arriving at `id`.
pub fn in_edges<'a>(ir: &'a Ir, id: &'a str) -> impl Iterator<Item = &'a Edge> + 'a {
    ir.edges.iter().filter(move |e| e.to == id)
}

/// Where `node` goes when it succeeds: a gate's `proceed` target (a plain edge from a
/// gate is `proceed`), any other node's one unlabeled edge. `None` when there is no
/// single such edge.
pub fn successor(ir: &Ir, node: &Node) -> Option<String> {
    let next: Vec<&Edge> = out_edges(ir, &node.id)
        .filter(|e| match e.label {
            None => true,
            Some(l) => node.kind == NodeKind::Gate && l == Label::Proceed,
        })
        .collect();
    match next.as_slice() {
        [one] => Some(one.to.clone()),
        _ => None,
    }
}

/// A plain edge `from -> to`.
pub fn plain(from: &str, to: &str) -> Edge {
    Edge {
        from: from.to_string(),
        to: to.to_string(),
        label: None,
        max: None,
        max_knob: None,
    }
}

/// A labelled edge `from -> to`.
pub fn labelled(from: &str, to: &str, label: Label) -> Edge {
    Edge {
        label: Some(label),
        ..plain(from, to)
    }
}

/// Canonical order, without self-loops made by reconnecting and without duplicate edges
/// (same ends and label; the first in canonical order stays).
pub fn finish(mut ir: Ir) -> Ir {
    ir.edges.retain(|e| e.from != e.to);
    ir.canonicalize();
    ir.edges
        .dedup_by(|b, a| a.from == b.from && a.to == b.to && a.label == b.label);
    ir
}

/// The paths of a set of artifacts.
pub fn paths(artifacts: &[Artifact]) -> Vec<&str> {
    artifacts.iter().map(|a| a.path.as_str()).collect()
}
