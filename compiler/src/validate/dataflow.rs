//! Dataflow: every artifact a node reads should be written by a node upstream of it (or
//! be a declared workflow input). Identity is the artifact's path, so a read by name and
//! a read by path of the same file are the same artifact.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::Graph;
use super::{Finding, IrRef};
use crate::diagnostic::Code;
use crate::ir::{Ir, Label};

pub(super) fn check(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    let inputs: BTreeSet<&str> = ir.workflow.inputs.iter().map(|a| a.path.as_str()).collect();
    // Only artifacts someone reads need tracking: give each a bit.
    let mut bit: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &ir.nodes {
        for r in &n.attrs.reads {
            if !inputs.contains(r.path.as_str()) {
                let next = bit.len();
                bit.entry(r.path.as_str()).or_insert(next);
            }
        }
    }
    if bit.is_empty() {
        return;
    }
    let words = bit.len().div_ceil(64);
    let count = g.g.node_count();
    // Nodes in topological order (nodes on unbounded cycles are left out; the cycle
    // rule reports them).
    let mut order: Vec<(usize, petgraph::graph::NodeIndex)> =
        g.g.node_indices()
            .filter_map(|n| g.topo[n.index()].map(|p| (p, n)))
            .collect();
    order.sort_unstable();
    // avail[n]: artifacts written by some ancestor of n.
    let mut avail = vec![0u64; count * words];
    let mut writes = vec![0u64; count * words];
    for n in &ir.nodes {
        let Some(&ix) = g.index.get(&n.id) else {
            continue;
        };
        for w in &n.attrs.writes {
            if let Some(&b) = bit.get(w.path.as_str()) {
                writes[ix.index() * words + b / 64] |= 1 << (b % 64);
            }
        }
    }
    let propagate = |avail: &mut Vec<u64>| {
        for &(_, n) in &order {
            for (m, e) in g.out(n) {
                if ir.edges[e].label == Some(Label::Reloop) {
                    continue;
                }
                let (src, dst) = (n.index() * words, m.index() * words);
                for w in 0..words {
                    let v = avail[src + w] | writes[src + w];
                    avail[dst + w] |= v;
                }
            }
        }
    };
    propagate(&mut avail);
    // A node entered only through reloops (a fixer that runs when QA sends work back)
    // runs after its gate: what reached the gate has reached it. One more pass carries
    // that downstream.
    let mut changed = false;
    for n in g.g.node_indices() {
        let mut forward = false;
        let mut back = Vec::new();
        for (p, e) in g.incoming(n) {
            if ir.edges[e].label == Some(Label::Reloop) {
                back.push(p);
            } else {
                forward = true;
            }
        }
        if forward || back.is_empty() {
            continue;
        }
        for p in back {
            let (src, dst) = (p.index() * words, n.index() * words);
            for w in 0..words {
                let v = avail[src + w] | writes[src + w];
                changed |= avail[dst + w] | v != avail[dst + w];
                avail[dst + w] |= v;
            }
        }
    }
    if changed {
        propagate(&mut avail);
    }
    for node in &ir.nodes {
        let Some(&ix) = g.index.get(&node.id) else {
            continue;
        };
        if g.topo[ix.index()].is_none() {
            continue;
        }
        for r in &node.attrs.reads {
            let Some(&b) = bit.get(r.path.as_str()) else {
                continue;
            };
            if avail[ix.index() * words + b / 64] & (1 << (b % 64)) == 0 {
                let what = match &r.name {
                    Some(name) => format!("`{name}` ({})", r.path),
                    None => format!("`{}`", r.path),
                };
                out.push(
                    Finding::new(
                        Code::UnreadArtifact,
                        IrRef::Node(node.id.clone()),
                        format!("`{}` reads {what}, but no node before it writes it", node.id),
                    )
                    .label("read here")
                    .help(format!(
                        "have an upstream node declare `writes: \"{}\"`, or declare it as a workflow input: `input name = \"{}\"`",
                        r.path, r.path
                    )),
                );
            }
        }
    }
}
