//! Operators that change the graph's shape around one node or edge: `NODE_INSERT`,
//! `NODE_REMOVE`, `EDGE_REDIRECT`.

use factory_compiler::ir::{Artifact, Attrs, Check, Edge, Evaluator, Ir, Label, Node, NodeKind};

use super::edit::{self, finish, labelled, plain};
use super::source::Source;

/// Kinds a mutation may remove or review: work nodes. Start, end and the fork/join and
/// parallel/select pairs carry the graph's structure and are never removed.
fn is_work(kind: NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Agent | NodeKind::Fn | NodeKind::Gate | NodeKind::Llm | NodeKind::Study
    )
}

/// What `NODE_INSERT` can splice into an edge.
#[derive(Clone, Copy)]
enum Insert {
    /// A review gate after the edge's source: proceed onward, reloop to the source,
    /// halt to the end.
    Review,
    /// A QA agent that checks the project's health before the edge's target.
    Qa,
    /// A `fn` node that re-scores the project.
    Eval,
}

/// `NODE_INSERT`: splices a new node into a random edge `a -> b`, so `a -> new -> b`
/// (the edge's label and bound stay on `a -> new`).
pub fn node_insert(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let edges: Vec<&Edge> = ir.edges.iter().filter(|e| e.to != ir.start).collect();
    let edge = (*src.pick(&edges)?).clone();
    let from_kind = ir.node(&edge.from)?.kind;
    let mut kinds = vec![Insert::Qa, Insert::Eval];
    // Spliced into a parallel body (the edge's target is in it, or its source is and
    // the edge leaves it), the new node belongs to that body.
    let body = edit::body_of(ir, &edge.to).or_else(|| edit::body_of(ir, &edge.from));
    // A review reloops to the edge's source, which must be work that can be redone; its
    // halt goes to the workflow's end, which a branch of a parallel body must not do.
    if is_work(from_kind) && from_kind != NodeKind::Gate && body.is_none() {
        kinds.push(Insert::Review);
    }
    let end = ir
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::End)?
        .id
        .clone();
    let mut out = ir.clone();
    out.edges.retain(|e| *e != edge);
    let (id, node, tail) = match *src.pick(&kinds)? {
        Insert::Review => {
            let id = edit::fresh_id(ir, "review", body);
            let attrs = Attrs {
                evaluator: Some(Evaluator::Agent),
                role: Some("ceo".into()),
                question: Some(format!("Is the work of `{}` ready to go on?", edge.from)),
                writes: vec![artifact(&id)],
                checks: vec![Check::Exists, Check::Contains("## Verdict".into())],
                ..Attrs::default()
            };
            let reloop = Edge {
                max: Some(2),
                ..labelled(&id, &edge.from, Label::Reloop)
            };
            let tail = vec![
                labelled(&id, &edge.to, Label::Proceed),
                reloop,
                labelled(&id, &end, Label::Halt),
            ];
            (id, (NodeKind::Gate, attrs), tail)
        }
        Insert::Qa => {
            let id = edit::fresh_id(ir, "qa", body);
            let attrs = Attrs {
                role: Some("health_checker".into()),
                task: Some(
                    "Check the health of the project after the latest change: build, tests, lint, types."
                        .into(),
                ),
                writes: vec![artifact(&id)],
                checks: vec![Check::Exists],
                ..Attrs::default()
            };
            let tail = vec![plain(&id, &edge.to)];
            (id, (NodeKind::Agent, attrs), tail)
        }
        Insert::Eval => {
            let id = edit::fresh_id(ir, "eval", body);
            let attrs = Attrs {
                run: Some("factory eval {{project_path}}".into()),
                ..Attrs::default()
            };
            let tail = vec![plain(&id, &edge.to)];
            (id, (NodeKind::Fn, attrs), tail)
        }
    };
    out.nodes.push(Node {
        id: id.clone(),
        kind: node.0,
        parallel: body.map(str::to_string),
        attrs: node.1,
    });
    out.edges.push(Edge { to: id, ..edge });
    out.edges.extend(tail);
    Some(finish(out))
}

/// The report an inserted node writes, named after it.
fn artifact(id: &str) -> Artifact {
    Artifact {
        name: None,
        path: format!(".factory/reviews/{id}.md"),
    }
}

/// `NODE_REMOVE`: removes a work node (never start, end or a fork/join/parallel/select)
/// and sends every edge that arrived at it to its successor.
pub fn node_remove(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let removable: Vec<(&Node, String)> = ir
        .nodes
        .iter()
        .filter(|n| is_work(n.kind))
        .filter_map(|n| Some((n, edit::successor(ir, n)?)))
        .collect();
    let (node, next) = src.pick(&removable)?;
    let mut out = ir.clone();
    out.nodes.retain(|n| n.id != node.id);
    out.edges.retain(|e| e.from != node.id);
    for e in &mut out.edges {
        if e.to == node.id {
            e.to = next.clone();
        }
    }
    Some(finish(out))
}

/// `EDGE_REDIRECT`: points one edge at another node (not the start, not its own source,
/// not where it already goes), keeping its label and bound.
pub fn edge_redirect(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let index = src.below(ir.edges.len().max(1));
    let edge = ir.edges.get(index)?;
    let targets: Vec<&str> = ir
        .nodes
        .iter()
        .map(|n| n.id.as_str())
        .filter(|id| *id != ir.start && *id != edge.from && *id != edge.to)
        .collect();
    let target = (*src.pick(&targets)?).to_string();
    let mut out = ir.clone();
    out.edges[index].to = target;
    Some(finish(out))
}
