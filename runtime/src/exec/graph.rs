//! The IR indexed for walking: node and edge lookups by position, built once per run.

use std::collections::HashMap;

use factory_compiler::ir::{Ir, Label, Node, NodeKind};

/// Default bound of a `reloop` edge that declares none (spec §7.3).
pub const DEFAULT_RELOOP_MAX: u32 = 3;

/// An IR with its adjacency precomputed. Node indices follow the IR's canonical order,
/// so the same IR always gives the same indices (checkpoints rely on it).
#[derive(Debug)]
pub struct Graph {
    pub ir: Ir,
    index: HashMap<String, usize>,
    /// Outgoing edges of each node, as indices into `ir.edges`.
    out: Vec<Vec<usize>>,
    /// Distinct predecessors of each node (what a join waits for).
    preds: Vec<Vec<usize>>,
}

impl Graph {
    pub fn new(ir: Ir) -> Graph {
        let index: HashMap<String, usize> = ir
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
        let mut out = vec![Vec::new(); ir.nodes.len()];
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); ir.nodes.len()];
        for (e, edge) in ir.edges.iter().enumerate() {
            let (Some(&from), Some(&to)) = (index.get(&edge.from), index.get(&edge.to)) else {
                continue;
            };
            out[from].push(e);
            if !preds[to].contains(&from) {
                preds[to].push(from);
            }
        }
        Graph {
            ir,
            index,
            out,
            preds,
        }
    }

    pub fn id(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.ir.nodes[i]
    }

    pub fn len(&self) -> usize {
        self.ir.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ir.nodes.is_empty()
    }

    pub fn start(&self) -> Option<usize> {
        self.id(&self.ir.start)
    }

    /// Targets of the edges leaving `node` with `label` (`None`: unconditional), with
    /// the edge index.
    pub fn targets(
        &self,
        node: usize,
        label: Option<Label>,
    ) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.out[node].iter().filter_map(move |&e| {
            let edge = &self.ir.edges[e];
            (edge.label == label).then(|| self.id(&edge.to).map(|t| (e, t)))?
        })
    }

    pub fn preds(&self, node: usize) -> &[usize] {
        &self.preds[node]
    }

    /// The bound of reloop edge `e`.
    pub fn reloop_max(&self, e: usize) -> u32 {
        self.ir.edges[e].max.unwrap_or(DEFAULT_RELOOP_MAX)
    }

    /// Nodes the executor completes itself, without running anything.
    pub fn is_structural(&self, node: usize) -> bool {
        matches!(
            self.node(node).kind,
            NodeKind::Start | NodeKind::End | NodeKind::Fork | NodeKind::Join
        )
    }
}
