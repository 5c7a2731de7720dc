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
