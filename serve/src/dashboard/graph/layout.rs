//! The graph's topology for drawing: layers by longest path, back edges found by a
//! depth-first walk, a bend vertex per layer a long edge crosses, and each layer's
//! order by barycentre sweeps.

use std::collections::BTreeMap;

use factory_compiler::ir::Ir;

/// Where each node goes: `(layer, order within layer)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub pos: Vec<(usize, usize)>,
    /// Edges (by index into `ir.edges`) that close a cycle.
    pub back: Vec<bool>,
    /// For each edge, its bends (vertices), one in each layer it crosses.
    pub bends: Vec<Vec<usize>>,
    /// Each layer's vertices, left to right: nodes are `0..nodes`, bends after them.
    pub rows: Vec<Vec<usize>>,
    /// The downward stretches between vertices (each long edge as its chain).
    pub segments: Vec<(usize, usize)>,
    pub nodes: usize,
    pub layers: usize,
}

/// Lays out `ir`'s nodes.
pub fn layout(ir: &Ir) -> Layout {
    let n = ir.nodes.len();
    let index = node_index(ir);
    let ends: Vec<Option<(usize, usize)>> = ir
        .edges
        .iter()
        .map(|e| Some((*index.get(e.from.as_str())?, *index.get(e.to.as_str())?)))
        .collect();
    let mut out_edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (ei, e) in ends.iter().enumerate() {
        if let Some((a, b)) = e {
            out_edges[*a].push((ei, *b));
        }
    }
    let back = back_edges(ir, &index, &out_edges, &ends);
    let dag: Vec<(usize, usize)> = ends
        .iter()
        .zip(&back)
        .filter_map(|(e, b)| e.filter(|(a, c)| !*b && a != c))
        .collect();
    let layer = longest_path_layers(n, &dag);
    let layers = layer.iter().copied().max().map_or(0, |m| m + 1);
    // Vertices: the nodes, then one bend per layer a long edge crosses (one chain per
    // pair of nodes: parallel edges are drawn as one).
    let mut vlayer = layer.clone();
    let mut segments: Vec<(usize, usize)> = Vec::new();
    let mut chains: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for &(a, b) in &dag {
        if chains.contains_key(&(a, b)) {
            continue;
        }
        let mut chain = Vec::new();
        let mut prev = a;
        for l in layer[a] + 1..layer[b] {
            let d = vlayer.len();
            vlayer.push(l);
            segments.push((prev, d));
            chain.push(d);
            prev = d;
        }
        segments.push((prev, b));
        chains.insert((a, b), chain);
    }
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (v, l) in vlayer.iter().enumerate() {
        rows[*l].push(v);
    }
    order_rows(&mut rows, &segments, vlayer.len());
    let mut pos = vec![(0, 0); n];
    for (l, row) in rows.iter().enumerate() {
        for (i, v) in row.iter().enumerate() {
            if *v < n {
                pos[*v] = (l, i);
            }
        }
    }
    let bends = ends
        .iter()
        .zip(&back)
        .map(|(e, b)| match e {
            Some(pair) if !*b => chains.get(pair).cloned().unwrap_or_default(),
            _ => Vec::new(),
        })
        .collect();
    Layout {
        pos,
        back,
        bends,
        rows,
        segments,
        nodes: n,
        layers,
    }
}

pub(super) fn node_index(ir: &Ir) -> BTreeMap<&str, usize> {
    ir.nodes
        .iter()
        .enumerate()
        .map(|(i, node)| (node.id.as_str(), i))
        .collect()
}

/// Edges to a node still on the depth-first stack (iterative, so deep graphs are fine).
pub(super) fn back_edges(
    ir: &Ir,
    index: &BTreeMap<&str, usize>,
    out_edges: &[Vec<(usize, usize)>],
    ends: &[Option<(usize, usize)>],
) -> Vec<bool> {
    let n = ir.nodes.len();
    let mut back = vec![false; ends.len()];
    // 0 unvisited, 1 on stack, 2 done
    let mut mark = vec![0u8; n];
    let roots = index
        .get(ir.start.as_str())
        .copied()
        .into_iter()
        .chain(0..n);
    for root in roots {
        if mark[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        mark[root] = 1;
        while let Some((v, next)) = stack.pop() {
            if let Some(&(ei, w)) = out_edges[v].get(next) {
                stack.push((v, next + 1));
                match mark[w] {
                    1 => back[ei] = true,
                    0 => {
                        mark[w] = 1;
                        stack.push((w, 0));
                    }
                    _ => {}
                }
            } else {
                mark[v] = 2;
            }
        }
    }
    back
}

pub(super) fn longest_path_layers(n: usize, dag: &[(usize, usize)]) -> Vec<usize> {
    let mut indeg = vec![0usize; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (a, b) in dag {
        indeg[*b] += 1;
        succ[*a].push(*b);
    }
    let mut layer = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|v| indeg[*v] == 0).collect();
    while let Some(v) = ready.pop() {
        for &w in &succ[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indeg[w] -= 1;
            if indeg[w] == 0 {
                ready.push(w);
            }
        }
    }
    layer
}

/// Barycentre ordering: a few sweeps down (by predecessors) and up (by successors).
pub(super) fn order_rows(rows: &mut [Vec<usize>], dag: &[(usize, usize)], n: usize) {
    let mut at = vec![0.0f64; n];
    let place = |rows: &[Vec<usize>], at: &mut Vec<f64>| {
        for row in rows {
            for (i, v) in row.iter().enumerate() {
                at[*v] = i as f64;
            }
        }
    };
    place(rows, &mut at);
    for sweep in 0..4 {
        let down = sweep % 2 == 0;
        let order: Vec<usize> = if down {
            (1..rows.len()).collect()
        } else {
            (0..rows.len().saturating_sub(1)).rev().collect()
        };
        for l in order {
            let key = |v: usize| {
                let near: Vec<f64> = dag
                    .iter()
                    .filter_map(|(a, b)| match down {
                        true if *b == v => Some(at[*a]),
                        false if *a == v => Some(at[*b]),
                        _ => None,
                    })
                    .collect();
                if near.is_empty() {
                    at[v]
                } else {
                    near.iter().sum::<f64>() / near.len() as f64
                }
            };
            let mut keyed: Vec<(f64, usize)> = rows[l].iter().map(|v| (key(*v), *v)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            rows[l] = keyed.into_iter().map(|(_, v)| v).collect();
            place(rows, &mut at);
        }
    }
}

/// The node ids top to bottom, left to right, as [`svg`] draws them.
pub fn in_layout_order(ir: &Ir) -> Vec<String> {
    let lay = layout(ir);
    let mut ids: Vec<(usize, usize, &str)> = ir
        .nodes
        .iter()
        .zip(&lay.pos)
        .map(|(n, (l, i))| (*l, *i, n.id.as_str()))
        .collect();
    ids.sort();
    ids.into_iter().map(|(_, _, id)| id.to_string()).collect()
}
