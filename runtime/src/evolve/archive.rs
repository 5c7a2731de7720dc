//! The MAP-Elites archive: candidates binned by what their graph looks like — depth,
//! fork degree, agent count, gate count, and their knob values when they have knobs —
//! keeping the fittest of each bin. Diversity is kept by construction: a deep graph
//! never competes with a shallow one for the same place.

use std::collections::{BTreeMap, HashMap};

use factory_compiler::ir::{Evaluator, Ir, Label, Literal, NodeKind};
use serde::{Deserialize, Serialize};

/// Where a candidate falls in the grid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Descriptor {
    /// Longest path from start, reloop edges left out.
    pub depth: usize,
    /// The most branches any fork starts (0 without forks).
    pub fork_degree: usize,
    /// Agent nodes and agent-evaluated gates.
    pub agents: usize,
    pub gates: usize,
    /// The knob values, `name=value` joined (empty without knobs).
    pub knobs: String,
}

impl Descriptor {
    /// The grid cell's key.
    pub fn cell(&self) -> String {
        format!(
            "d{}-f{}-a{}-g{}{}",
            self.depth,
            self.fork_degree,
            self.agents,
            self.gates,
            if self.knobs.is_empty() {
                String::new()
            } else {
                format!("-{}", self.knobs)
            }
        )
    }
}

/// The descriptor of `ir`.
pub fn describe(ir: &Ir) -> Descriptor {
    let index: HashMap<&str, usize> = ir
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); ir.nodes.len()];
    for e in &ir.edges {
        if e.label == Some(Label::Reloop) {
            continue;
        }
        if let (Some(&a), Some(&b)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) {
            out[a].push(b);
        }
    }
    // Longest path in what is left (a DAG once reloops are gone; a stray cycle is cut
    // by the visited-on-stack check).
    fn longest(
        n: usize,
        out: &[Vec<usize>],
        memo: &mut [Option<usize>],
        stack: &mut [bool],
    ) -> usize {
        if let Some(d) = memo[n] {
            return d;
        }
        stack[n] = true;
        let mut best = 0;
        for &t in &out[n] {
            if !stack[t] {
                best = best.max(1 + longest(t, out, memo, stack));
            }
        }
        stack[n] = false;
        memo[n] = Some(best);
        best
    }
    let mut memo = vec![None; ir.nodes.len()];
    let mut stack = vec![false; ir.nodes.len()];
    let depth = index
        .get(ir.start.as_str())
        .map_or(0, |&s| longest(s, &out, &mut memo, &mut stack));
    let fork_degree = ir
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Fork)
        .map(|(i, _)| out[i].len())
        .max()
        .unwrap_or(0);
    let agents = ir
        .nodes
        .iter()
        .filter(|n| {
            n.kind == NodeKind::Agent
                || (n.kind == NodeKind::Gate
                    && matches!(n.attrs.evaluator, Some(Evaluator::Agent) | None))
        })
        .count();
    let gates = ir.nodes.iter().filter(|n| n.kind == NodeKind::Gate).count();
    let mut knobs: Vec<String> = ir
        .knobs
        .iter()
        .map(|k| {
            let v = match &k.default {
                Literal::Bool(b) => b.to_string(),
                Literal::Int(i) => i.to_string(),
                Literal::Str(s) => s.clone(),
                Literal::Float(f) => f.value().map_or("?".to_string(), |v| v.to_string()),
            };
            format!("{}={v}", k.name)
        })
        .collect();
    knobs.sort();
    Descriptor {
        depth,
        fork_degree,
        agents,
        gates,
        knobs: knobs.join(","),
    }
}

/// One elite: the best candidate found for its cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Elite {
    /// The candidate's canonical hash (its IR is kept under that name).
    pub hash: String,
    pub fitness: f64,
    pub descriptor: Descriptor,
    /// The generation that found it (0: the seed).
    pub generation: u32,
    /// The operator that made it, and the parent it was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// The grid: a cell key to its elite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Archive {
    pub cells: BTreeMap<String, Elite>,
}

impl Archive {
    /// Puts `elite` in its cell when the cell is empty or holds a less fit one
    /// (ties keep the incumbent, so insertion order cannot change the archive twice).
    /// True when it went in.
    pub fn insert(&mut self, elite: Elite) -> bool {
        let cell = elite.descriptor.cell();
        match self.cells.get(&cell) {
            Some(old) if old.fitness >= elite.fitness => false,
            _ => {
                self.cells.insert(cell, elite);
                true
            }
        }
    }

    /// The fittest elite (ties: the earliest generation, then the hash).
    pub fn best(&self) -> Option<&Elite> {
        self.cells.values().max_by(|a, b| {
            a.fitness
                .total_cmp(&b.fitness)
                .then(b.generation.cmp(&a.generation))
                .then(b.hash.cmp(&a.hash))
        })
    }

    /// The elites in a stable order (by cell).
    pub fn elites(&self) -> Vec<&Elite> {
        self.cells.values().collect()
    }
}
