//! The IR as a petgraph graph, and the rules about its shape: reachability, cycles,
//! reloops and fan-out.

use std::collections::{HashMap, VecDeque};

use rustc_hash::FxHashMap;

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::{Finding, IrRef};
use crate::diagnostic::{Code, Subject};
use crate::ir::{END, Ir, Label, NodeKind};

/// The IR's nodes and edges in a petgraph graph. Node weights are node ids, edge weights
/// are indices into `Ir::edges`. Edges to ids without a node line get a placeholder
/// node (reported once as unknown), so the other rules still see the graph's shape.
pub struct Graph {
    pub g: DiGraph<String, usize>,
    /// Hashed with Fx: built for every check, one entry per node.
    pub index: FxHashMap<String, NodeIndex>,
    pub kinds: Vec<Option<NodeKind>>,
    /// Topological position of every node in the graph without reloop edges (`None`
    /// inside a cycle).
    pub topo: Vec<Option<usize>>,
}

impl Graph {
    pub fn new(ir: &Ir, out: &mut Vec<Finding>) -> Graph {
        let mut g = DiGraph::with_capacity(ir.nodes.len(), ir.edges.len());
        let mut index = FxHashMap::with_capacity_and_hasher(ir.nodes.len(), Default::default());
        let mut kinds = Vec::with_capacity(ir.nodes.len());
        for n in &ir.nodes {
            let ix = g.add_node(n.id.clone());
            index.insert(n.id.clone(), ix);
            kinds.push(Some(n.kind));
        }
        for (i, e) in ir.edges.iter().enumerate() {
            let mut endpoint = |id: &str, out: &mut Vec<Finding>| {
                if let Some(ix) = index.get(id) {
                    return *ix;
                }
                out.push(
                    Finding::new(
                        Code::UnknownNode,
                        IrRef::Edge(i),
                        format!("edge names `{id}`, which is not a node of this workflow"),
                    )
                    .about(Subject::Node(id.to_string()))
                    .label("unknown node")
                    .help(format!(
                        "declare a node `{id}`, or fix the name in this edge"
                    )),
                );
                let ix = g.add_node(id.to_string());
                index.insert(id.to_string(), ix);
                kinds.push(None);
                ix
            };
            let a = endpoint(&e.from, out);
            let b = endpoint(&e.to, out);
            g.add_edge(a, b, i);
        }
        let topo = topo_order(&g, ir);
        Graph {
            g,
            index,
            kinds,
            topo,
        }
    }

    pub fn kind(&self, ix: NodeIndex) -> Option<NodeKind> {
        self.kinds.get(ix.index()).copied().flatten()
    }

    pub fn id(&self, ix: NodeIndex) -> &str {
        &self.g[ix]
    }

    /// Outgoing (target, edge index) pairs.
    pub fn out(&self, ix: NodeIndex) -> impl Iterator<Item = (NodeIndex, usize)> + '_ {
        self.g
            .edges_directed(ix, Direction::Outgoing)
            .map(|e| (e.target(), *e.weight()))
    }

    pub fn incoming(&self, ix: NodeIndex) -> impl Iterator<Item = (NodeIndex, usize)> + '_ {
        self.g
            .edges_directed(ix, Direction::Incoming)
            .map(|e| (e.source(), *e.weight()))
    }
}

fn is_reloop(ir: &Ir, edge: usize) -> bool {
    ir.edges[edge].label == Some(Label::Reloop)
}

/// Kahn's algorithm over non-reloop edges.
fn topo_order(g: &DiGraph<String, usize>, ir: &Ir) -> Vec<Option<usize>> {
    let mut indeg = vec![0usize; g.node_count()];
    for e in g.edge_references() {
        if !is_reloop(ir, *e.weight()) {
            indeg[e.target().index()] += 1;
        }
    }
    let mut queue: VecDeque<NodeIndex> =
        g.node_indices().filter(|n| indeg[n.index()] == 0).collect();
    let mut order = vec![None; g.node_count()];
    let mut next = 0;
    while let Some(n) = queue.pop_front() {
        order[n.index()] = Some(next);
        next += 1;
        for e in g.edges_directed(n, Direction::Outgoing) {
            if is_reloop(ir, *e.weight()) {
                continue;
            }
            let t = e.target().index();
            indeg[t] -= 1;
            if indeg[t] == 0 {
                queue.push_back(e.target());
            }
        }
    }
    order
}

pub(super) fn check(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    let Some(&start) = g.index.get(&ir.start) else {
        out.push(
            Finding::new(
                Code::MissingStart,
                IrRef::Workflow,
                format!("workflow `{}` has no start", ir.workflow.name),
            )
            .about(Subject::Workflow(ir.workflow.name.clone()))
            .label("no `start ->` edge")
            .help("begin the flow with `start -> <first node>`"),
        );
        return;
    };
    if g.out(start).next().is_none() {
        out.push(
            Finding::new(
                Code::MissingStart,
                IrRef::Workflow,
                format!("workflow `{}` has no `start ->` edge", ir.workflow.name),
            )
            .about(Subject::Workflow(ir.workflow.name.clone()))
            .label("nothing follows `start`")
            .help("begin the flow with `start -> <first node>`"),
        );
        return;
    }
    let reached = reach(g, [start], Direction::Outgoing);
    let ends: Vec<NodeIndex> =
        g.g.node_indices()
            .filter(|&n| g.kind(n) == Some(NodeKind::End) || g.id(n) == END)
            .collect();
    let reaches_end = reach(g, ends, Direction::Incoming);
    for n in g.g.node_indices() {
        if g.kind(n).is_none() {
            continue; // unknown ids are reported where they are named
        }
        let at = IrRef::Node(g.id(n).to_string());
        if !reached[n.index()] {
            out.push(
                Finding::new(
                    Code::Unreachable,
                    at,
                    format!("node `{}` cannot be reached from `start`", g.id(n)),
                )
                .about(Subject::Node(g.id(n).to_string()))
                .label("unreachable")
                .help(format!(
                    "add an edge into `{}` from a reachable node, or delete it",
                    g.id(n)
                )),
            );
        } else if !reaches_end[n.index()] {
            out.push(
                Finding::new(
                    Code::NoPathToEnd,
                    at,
                    format!("no path leads from `{}` to `end`", g.id(n)),
                )
                .about(Subject::Node(g.id(n).to_string()))
                .label("dead end")
                .help(format!(
                    "add an edge from `{}` towards `end` (e.g. `{} -> end`)",
                    g.id(n),
                    g.id(n)
                )),
            );
        }
    }
    fan_out(ir, g, out);
    cycles(ir, g, out);
    reloop_targets(ir, g, out);
}

/// Breadth-first reachability from `roots` along `dir`.
pub fn reach(g: &Graph, roots: impl IntoIterator<Item = NodeIndex>, dir: Direction) -> Vec<bool> {
    let mut seen = vec![false; g.g.node_count()];
    let mut queue: VecDeque<NodeIndex> = VecDeque::new();
    for r in roots {
        if !seen[r.index()] {
            seen[r.index()] = true;
            queue.push_back(r);
        }
    }
    while let Some(n) = queue.pop_front() {
        for m in g.g.neighbors_directed(n, dir) {
            if !seen[m.index()] {
                seen[m.index()] = true;
                queue.push_back(m);
            }
        }
    }
    seen
}

/// Only forks (and parallel blocks) fan out; any other node has at most one edge per
/// label.
fn fan_out(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    for n in g.g.node_indices() {
        let kind = g.kind(n);
        if matches!(kind, Some(NodeKind::Fork | NodeKind::Parallel) | None) {
            continue;
        }
        let mut by_label: HashMap<Option<Label>, Vec<usize>> = HashMap::new();
        for (_, e) in g.out(n) {
            let label = match (kind, ir.edges[e].label) {
                (Some(NodeKind::Gate), None) => Some(Label::Proceed),
                (_, l) => l,
            };
            by_label.entry(label).or_default().push(e);
        }
        let mut groups: Vec<_> = by_label.into_iter().filter(|(_, v)| v.len() > 1).collect();
        groups.sort();
        for (label, edges) in groups {
            let what = label.map_or("plain".to_string(), |l| format!("`{l}`"));
            let targets: Vec<&str> = edges.iter().map(|&e| ir.edges[e].to.as_str()).collect();
            let mut f = Finding::new(
                Code::FanOutWithoutFork,
                IrRef::Node(g.id(n).to_string()),
                format!(
                    "`{}` has {} {what} successors ({}), but only a fork runs branches",
                    g.id(n),
                    edges.len(),
                    targets.join(", ")
                ),
            )
            .about(Subject::Node(g.id(n).to_string()))
            .label("fans out here")
            .help(format!(
                "insert a fork after `{0}` (`fork split`, then `{0} -> split -> {1}`) and a `join` where the branches meet, or keep one successor",
                g.id(n),
                targets.join(", ")
            ));
            for &e in &edges {
                f = f.with(IrRef::EdgeTarget(e), "a branch");
            }
            out.push(f);
        }
    }
}

/// Every cycle must pass through a bounded reloop edge: without reloop edges the graph
/// is acyclic.
fn cycles(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    if g.topo.iter().all(Option::is_some) {
        return;
    }
    let filtered = g.g.filter_map(
        |_, w| Some(w.clone()),
        |_, &e| (!is_reloop(ir, e)).then_some(e),
    );
    for scc in petgraph::algo::tarjan_scc(&filtered) {
        let self_loop = scc.len() == 1 && filtered.contains_edge(scc[0], scc[0]);
        if scc.len() < 2 && !self_loop {
            continue;
        }
        let mut ids: Vec<&str> = scc.iter().map(|&n| g.id(n)).collect();
        ids.sort_unstable();
        let first = ids[0].to_string();
        let mut f = Finding::new(
            Code::UnboundedCycle,
            IrRef::Node(first.clone()),
            format!("these nodes form a cycle with no bounded reloop: {}", ids.join(" → ")),
        )
        .about(Subject::Node(first.clone()))
        .label("cycle starts here")
        .help("close the loop with a gate's bounded reloop edge, e.g. `check.reloop(max 3) -> <node>`");
        for e in filtered.edge_references() {
            if scc.contains(&e.source()) && scc.contains(&e.target()) {
                f = f.with(IrRef::Edge(*e.weight()), "part of the cycle");
                if f.labels.len() >= 4 {
                    break;
                }
            }
        }
        out.push(f);
    }
}

/// A reloop goes back: its target must reach the gate without taking a reloop edge.
fn reloop_targets(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    for (i, e) in ir.edges.iter().enumerate() {
        if e.label != Some(Label::Reloop) {
            continue;
        }
        let (Some(&gate), Some(&target)) = (g.index.get(&e.from), g.index.get(&e.to)) else {
            continue;
        };
        if !upstream(ir, g, target, gate) {
            out.push(
                Finding::new(
                    Code::ReloopNotUpstream,
                    IrRef::EdgeTarget(i),
                    format!("reloop from `{}` goes to `{}`, which does not lead back to `{}`", e.from, e.to, e.from),
                )
                .about(Subject::Edge {
                    from: e.from.clone(),
                    to: e.to.clone(),
                })
                .label("not upstream of the gate")
                .with(IrRef::Edge(i), "the reloop")
                .with(IrRef::Node(e.from.clone()), "the gate")
                .help(format!(
                    "point the reloop at a node before `{}` (one it can be reached from), or use `proceed`/`halt` for a forward edge",
                    e.from
                )),
            );
        }
    }
}

/// Whether `to` is reachable from `from` without reloop edges. Only nodes earlier than
/// `to` in topological order can lie on such a path, which keeps the search local.
fn upstream(ir: &Ir, g: &Graph, from: NodeIndex, to: NodeIndex) -> bool {
    let limit = g.topo[to.index()];
    let mut seen = HashMap::new();
    let mut stack = vec![from];
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n, ()).is_some() {
            continue;
        }
        if let (Some(limit), Some(pos)) = (limit, g.topo[n.index()])
            && pos > limit
        {
            continue;
        }
        for (m, e) in g.out(n) {
            if !is_reloop(ir, e) {
                stack.push(m);
            }
        }
    }
    false
}
