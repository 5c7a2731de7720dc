//! The IR indexed for walking: node and edge lookups by position, built once per run.

use std::collections::HashMap;

use factory_compiler::ir::{END, Edge, Ir, Label, Node, NodeKind, START};

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

    /// Whether node `n` belongs to the body of `parallel` node `p` (the IR says so on
    /// each node, checked by the compiler's FWF028).
    pub fn in_body(&self, p: usize, n: usize) -> bool {
        self.ir.in_body(&self.node(p).id, &self.node(n).id)
    }

    /// Where the walk goes once `node` is done: its unconditional targets, or, for a
    /// `parallel` node (whose branches ran its body), the nodes its body leads to.
    pub fn continuations(&self, node: usize) -> Vec<usize> {
        if self.node(node).kind != NodeKind::Parallel {
            return self.targets(node, None).map(|(_, t)| t).collect();
        }
        let mut out: Vec<usize> = Vec::new();
        for (from, edges) in self.out.iter().enumerate() {
            if !self.in_body(node, from) {
                continue;
            }
            for &e in edges {
                if let Some(t) = self.id(&self.ir.edges[e].to)
                    && !self.in_body(node, t)
                    && !out.contains(&t)
                {
                    out.push(t);
                }
            }
        }
        out
    }

    /// The body of `parallel` node `p` as a workflow of its own, which each branch
    /// runs: its nodes, a `start` leading where the parallel node leads, and an `end`
    /// standing for every edge that leaves the body (with its label kept).
    pub fn branch_ir(&self, p: usize) -> Ir {
        let pid = self.node(p).id.clone();
        let body: Vec<usize> = (0..self.len()).filter(|&n| self.in_body(p, n)).collect();
        let is_body = |id: &str| self.id(id).is_some_and(|n| self.in_body(p, n));
        // In the branch's own workflow the body is the top level; bodies nested in it
        // stay bodies.
        let mut nodes: Vec<Node> = body
            .iter()
            .map(|&n| {
                let mut node = self.node(n).clone();
                if node.parallel.as_deref() == Some(pid.as_str()) {
                    node.parallel = None;
                }
                node
            })
            .collect();
        for (id, kind) in [(START, NodeKind::Start), (END, NodeKind::End)] {
            nodes.push(Node {
                id: id.to_string(),
                kind,
                parallel: None,
                attrs: Default::default(),
            });
        }
        let mut edges: Vec<Edge> = self
            .targets(p, None)
            .map(|(_, t)| Edge {
                from: START.to_string(),
                to: self.node(t).id.clone(),
                label: None,
                max: None,
                max_knob: None,
            })
            .collect();
        for edge in &self.ir.edges {
            if !is_body(&edge.from) {
                continue;
            }
            let mut edge = edge.clone();
            if !is_body(&edge.to) {
                edge.to = END.to_string();
            }
            if !edges.contains(&edge) {
                edges.push(edge);
            }
        }
        let mut ir = Ir {
            ir_version: self.ir.ir_version,
            workflow: factory_compiler::ir::WorkflowMeta {
                name: format!("{}.{pid}", self.ir.workflow.name),
                headless: self.ir.workflow.headless,
                ..Default::default()
            },
            start: START.to_string(),
            knobs: self.ir.knobs.clone(),
            nodes,
            edges,
        };
        ir.canonicalize();
        ir
    }

    /// Nodes the executor completes itself, without running anything.
    pub fn is_structural(&self, node: usize) -> bool {
        matches!(
            self.node(node).kind,
            NodeKind::Start | NodeKind::End | NodeKind::Fork | NodeKind::Join
        )
    }
}
