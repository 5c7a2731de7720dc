//! A hash of a workflow graph that does not depend on its node ids or on the order of
//! its nodes and edges, so graph-isomorphic candidates share it: the key of the outer
//! loop's fitness cache.
//!
//! Weisfeiler–Lehman colour refinement. A node starts with the colour of its label —
//! its kind and every attribute (everything but its id). Each round, a node's new
//! colour is the hash of its colour and the sorted multisets of (edge label, colour)
//! over its outgoing and its incoming edges, where an edge's label is its verdict, its
//! bound and the knob the bound came from. Rounds stop when the number of distinct
//! colours stops growing (at most one round per node). The digest covers the workflow's
//! metadata and knobs, the sorted multiset of final node colours, and the sorted
//! multiset of (source colour, edge label, target colour) — so two graphs that differ
//! in a single edge's label, target or bound get different hashes.
//!
//! WL refinement can give the same colours to some non-isomorphic graphs (classically
//! regular graphs whose nodes all look alike). Workflow graphs are far from that: a
//! single start and end, and nodes whose labels (role, task, writes) are nearly all
//! distinct, so refinement separates them after a round or two. And the cost of a
//! collision in a fitness cache is small: one candidate is not evaluated and inherits
//! the fitness of a graph that looks the same under every local view.

use std::collections::{BTreeMap, BTreeSet};

use factory_compiler::ir::{Edge, Ir};
use sha2::{Digest, Sha256};

type Colour = [u8; 32];

/// A node's neighbourhood in one round: (edge label, colour) of its outgoing edges and
/// of its incoming ones.
#[derive(Default)]
struct Around {
    out: Vec<Vec<u8>>,
    inc: Vec<Vec<u8>>,
}

fn digest(parts: &[&[u8]]) -> Colour {
    let mut h = Sha256::new();
    for p in parts {
        // Length-prefixed so that ("ab", "c") and ("a", "bc") differ.
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

fn edge_label(e: &Edge) -> String {
    format!(
        "{}|{}|{}",
        e.label.map(|l| l.as_str()).unwrap_or("-"),
        e.max.map(|m| m.to_string()).unwrap_or_default(),
        e.max_knob.as_deref().unwrap_or("")
    )
}

/// Lowercase hex SHA-256 of `ir` up to renaming of node ids and reordering of nodes and
/// edges (see the module doc for the method and its limits).
pub fn canonical_hash(ir: &Ir) -> String {
    let mut colour: BTreeMap<&str, Colour> = ir
        .nodes
        .iter()
        .map(|n| {
            let label = serde_json::to_string(&(n.kind, &n.attrs)).unwrap_or_default();
            (n.id.as_str(), digest(&[b"node", label.as_bytes()]))
        })
        .collect();
    let unknown = digest(&[b"unknown node"]);
    let labels: Vec<String> = ir.edges.iter().map(edge_label).collect();
    let distinct = |c: &BTreeMap<&str, Colour>| c.values().collect::<BTreeSet<_>>().len();
    let mut classes = distinct(&colour);
    for _ in 0..ir.nodes.len() {
        let mut around: BTreeMap<&str, Around> = BTreeMap::new();
        for (e, label) in ir.edges.iter().zip(&labels) {
            let of = |id: &str| colour.get(id).copied().unwrap_or(unknown);
            let mut out = label.as_bytes().to_vec();
            out.extend_from_slice(&of(&e.to));
            around.entry(&e.from).or_default().out.push(out);
            let mut inc = label.as_bytes().to_vec();
            inc.extend_from_slice(&of(&e.from));
            around.entry(&e.to).or_default().inc.push(inc);
        }
        let next: BTreeMap<&str, Colour> = colour
            .iter()
            .map(|(id, c)| {
                let Around {
                    out: mut outs,
                    inc: mut ins,
                } = around.remove(id).unwrap_or_default();
                outs.sort();
                ins.sort();
                let mut parts: Vec<&[u8]> = vec![c, b"out"];
                parts.extend(outs.iter().map(Vec::as_slice));
                parts.push(b"in");
                parts.extend(ins.iter().map(Vec::as_slice));
                (*id, digest(&parts))
            })
            .collect();
        let now = distinct(&next);
        colour = next;
        if now <= classes {
            break;
        }
        classes = now;
    }
    let of = |id: &str| colour.get(id).copied().unwrap_or(unknown);
    let mut nodes: Vec<Colour> = colour.values().copied().collect();
    nodes.sort();
    let mut edges: Vec<Vec<u8>> = ir
        .edges
        .iter()
        .zip(&labels)
        .map(|(e, label)| [&of(&e.from)[..], label.as_bytes(), &of(&e.to)[..]].concat())
        .collect();
    edges.sort();
    let meta = serde_json::to_string(&(&ir.workflow, &ir.knobs)).unwrap_or_default();
    let mut parts: Vec<&[u8]> = vec![b"fwir-wl-1", meta.as_bytes(), b"nodes"];
    parts.extend(nodes.iter().map(|c| &c[..]));
    parts.push(b"edges");
    parts.extend(edges.iter().map(Vec::as_slice));
    digest(&parts).iter().map(|b| format!("{b:02x}")).collect()
}
