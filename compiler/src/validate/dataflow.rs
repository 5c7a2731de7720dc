//! Dataflow: every artifact a node reads should be written by a node upstream of it (or
//! be a declared workflow input). Identity is the artifact's path, so a read by name and
//! a read by path of the same file are the same artifact, and so are two spellings of
//! one path (`./a.md`, `a.md`: [`artifact_key`]).

use std::borrow::Cow;
use std::collections::BTreeSet;

use petgraph::graph::NodeIndex;

use super::graph::Graph;
use super::{Finding, IrRef};
use crate::diagnostic::{Code, Subject};
use crate::ir::conventions::artifact_key;
use crate::ir::{Ir, Label};

pub(super) fn check(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    let inputs: BTreeSet<Cow<str>> = ir
        .workflow
        .inputs
        .iter()
        .map(|a| artifact_key(&a.path))
        .collect();
    // Only artifacts someone reads need tracking: give each a bit.
    let mut bit: rustc_hash::FxHashMap<Cow<str>, usize> = Default::default();
    for n in &ir.nodes {
        for r in &n.attrs.reads {
            let key = artifact_key(&r.path);
            if !inputs.contains(&key) {
                let next = bit.len();
                bit.entry(key).or_insert(next);
            }
        }
    }
    if bit.is_empty() {
        return;
    }
    let words = bit.len().div_ceil(64);
    let count = g.g.node_count();
    // Nodes in topological order (nodes on unbounded cycles are left out; the cycle
    // rule reports them), and the edges that carry artifacts, by source in that order:
    // walking them in turn sees every node's ancestors before the node.
    let mut order: Vec<(usize, NodeIndex)> =
        g.g.node_indices()
            .filter_map(|n| g.topo[n.index()].map(|p| (p, n)))
            .collect();
    order.sort_unstable();
    let mut flow: Vec<(usize, usize)> = Vec::new();
    for &(_, n) in &order {
        for (m, e) in g.out(n) {
            if ir.edges[e].label != Some(Label::Reloop) {
                flow.push((n.index(), m.index()));
            }
        }
    }
    // A node entered only through reloops (a fixer that runs when QA sends work back)
    // runs after its gate: what reached the gate has reached it.
    let mut forward_in = vec![false; count];
    for &(_, to) in &flow {
        forward_in[to] = true;
    }
    let reentry: Vec<(usize, usize)> = ir
        .edges
        .iter()
        .filter(|e| e.label == Some(Label::Reloop))
        .filter_map(|e| Some((g.index.get(&e.from)?.index(), g.index.get(&e.to)?.index())))
        .filter(|&(_, to)| !forward_in[to])
        .collect();
    // Bits written, per 64-bit word: (node, mask).
    let mut writes: Vec<Vec<(usize, u64)>> = vec![Vec::new(); words];
    // Reads to check, in node order: (node, bit).
    let mut reads: Vec<(usize, usize)> = Vec::new();
    for n in &ir.nodes {
        let Some(&ix) = g.index.get(&n.id) else {
            continue;
        };
        for w in &n.attrs.writes {
            if let Some(&b) = bit.get(artifact_key(&w.path).as_ref()) {
                writes[b / 64].push((ix.index(), 1 << (b % 64)));
            }
        }
        if g.topo[ix.index()].is_some() {
            for r in &n.attrs.reads {
                if let Some(&b) = bit.get(artifact_key(&r.path).as_ref()) {
                    reads.push((ix.index(), b));
                }
            }
        }
    }
    // One pass per word of 64 artifacts keeps memory linear in the nodes (a bit
    // matrix of nodes × artifacts grows quadratically with the workflow).
    let mut seen = vec![false; reads.len()];
    // avail[n]: artifacts of this word written by an ancestor of n; wrote[n]: by n.
    let mut avail = vec![0u64; count];
    let mut wrote = vec![0u64; count];
    for (word, written) in writes.iter().enumerate() {
        avail.fill(0);
        wrote.fill(0);
        for &(n, mask) in written {
            wrote[n] |= mask;
        }
        let propagate = |avail: &mut Vec<u64>| {
            for &(from, to) in &flow {
                let v = avail[from] | wrote[from];
                avail[to] |= v;
            }
        };
        propagate(&mut avail);
        let mut changed = false;
        for &(gate, node) in &reentry {
            let v = avail[node] | avail[gate] | wrote[gate];
            changed |= v != avail[node];
            avail[node] = v;
        }
        if changed {
            propagate(&mut avail);
        }
        for (i, &(n, b)) in reads.iter().enumerate() {
            if b / 64 == word {
                seen[i] = avail[n] & (1 << (b % 64)) != 0;
            }
        }
    }
    let mut next = 0;
    for node in &ir.nodes {
        let Some(&ix) = g.index.get(&node.id) else {
            continue;
        };
        if g.topo[ix.index()].is_none() {
            continue;
        }
        for r in &node.attrs.reads {
            if !bit.contains_key(artifact_key(&r.path).as_ref()) {
                continue;
            }
            let ok = seen[next];
            next += 1;
            if !ok {
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
                    .about(Subject::Artifact(r.path.clone()))
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
