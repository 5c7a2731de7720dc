//! A mode's graph laid out in layers (Sugiyama style, in pure Rust) and drawn as SVG.
//!
//! Back edges (reloops) are found by a depth-first walk from `start` and drawn as
//! dashed arcs on the side; every other edge points down. A node's layer is the
//! longest path to it from a source; nodes within a layer are ordered by the mean
//! position of their neighbours, sweeping down and up a few times to uncross edges.
//! Each node is a `<g data-node=ID data-state=…>` the page's script recolours.

use std::collections::BTreeMap;
use std::fmt::Write;

use factory_compiler::ir::{Ir, NodeKind};
use factory_runtime::exec::progress::RunProgress;

use super::layout::esc;

const W: f64 = 168.0;
const H: f64 = 92.0;
const BOX_W: f64 = 144.0;
const BOX_H: f64 = 48.0;
const MARGIN: f64 = 24.0;

/// Where each node goes: `(layer, order within layer)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub pos: Vec<(usize, usize)>,
    /// Edges (by index into `ir.edges`) that close a cycle.
    pub back: Vec<bool>,
    pub layers: usize,
    pub width: usize,
}

/// Lays out `ir`'s nodes.
pub fn layout(ir: &Ir) -> Layout {
    let n = ir.nodes.len();
    let index: BTreeMap<&str, usize> = ir
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| (node.id.as_str(), i))
        .collect();
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
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for v in 0..n {
        rows[layer[v]].push(v);
    }
    order_rows(&mut rows, &dag, n);
    let mut pos = vec![(0, 0); n];
    for (l, row) in rows.iter().enumerate() {
        for (i, v) in row.iter().enumerate() {
            pos[*v] = (l, i);
        }
    }
    Layout {
        pos,
        back,
        layers,
        width: rows.iter().map(Vec::len).max().unwrap_or(0),
    }
}

/// Edges to a node still on the depth-first stack (iterative, so deep graphs are fine).
fn back_edges(
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

fn longest_path_layers(n: usize, dag: &[(usize, usize)]) -> Vec<usize> {
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
fn order_rows(rows: &mut [Vec<usize>], dag: &[(usize, usize)], n: usize) {
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

/// The SVG of `ir`, nodes coloured by `progress`.
pub fn svg(ir: &Ir, progress: &RunProgress) -> String {
    let lay = layout(ir);
    let row_len = {
        let mut counts = vec![0usize; lay.layers.max(1)];
        for (l, _) in &lay.pos {
            counts[*l] += 1;
        }
        counts
    };
    let total_w = lay.width.max(1) as f64 * W + 2.0 * MARGIN + 80.0;
    let total_h = lay.layers.max(1) as f64 * H + 2.0 * MARGIN;
    let centre = |v: usize| {
        let (l, i) = lay.pos[v];
        let offset = (lay.width as f64 - row_len[l] as f64) * W / 2.0;
        (
            MARGIN + offset + i as f64 * W + W / 2.0,
            MARGIN + l as f64 * H + BOX_H / 2.0,
        )
    };
    let index: BTreeMap<&str, usize> = ir
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {total_w:.0} {total_h:.0}\" \
         width=\"{total_w:.0}\" height=\"{total_h:.0}\" role=\"img\" aria-label=\"the mode's graph\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" class=\"arrowhead\"/></marker></defs>"
    );
    // Edges between the same two nodes (`proceed` and `halt` to `end`) are drawn once,
    // with their labels joined.
    let mut drawn: Vec<((usize, usize), bool, Vec<String>)> = Vec::new();
    for (ei, e) in ir.edges.iter().enumerate() {
        let (Some(&a), Some(&b)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) else {
            continue;
        };
        let label = e
            .label
            .map(|l| match e.max {
                Some(m) => format!("{} ≤{m}", l.as_str()),
                None => l.as_str().to_string(),
            })
            .unwrap_or_default();
        let back = lay.back[ei] || a == b;
        match drawn
            .iter_mut()
            .find(|(k, bk, _)| *k == (a, b) && *bk == back)
        {
            Some((_, _, labels)) => labels.push(label),
            None => drawn.push(((a, b), back, vec![label])),
        }
    }
    for ((a, b), back, labels) in drawn {
        let (x1, y1) = centre(a);
        let (x2, y2) = centre(b);
        let labels: Vec<String> = labels.into_iter().filter(|l| !l.is_empty()).collect();
        let first = labels
            .first()
            .map(|l| l.split(' ').next().unwrap_or(""))
            .unwrap_or("");
        let (path, lx, ly) = if back {
            // Out of the right side of `a`, around, into the right side of `b`.
            let bend = x1.max(x2) + BOX_W / 2.0 + 36.0;
            (
                format!(
                    "M{:.0},{:.0} C{bend:.0},{:.0} {bend:.0},{:.0} {:.0},{:.0}",
                    x1 + BOX_W / 2.0,
                    y1,
                    y1,
                    y2,
                    x2 + BOX_W / 2.0,
                    y2
                ),
                bend - 8.0,
                (y1 + y2) / 2.0,
            )
        } else {
            let (sy, ty) = (y1 + BOX_H / 2.0, y2 - BOX_H / 2.0);
            let mid = (sy + ty) / 2.0;
            (
                format!("M{x1:.0},{sy:.0} C{x1:.0},{mid:.0} {x2:.0},{mid:.0} {x2:.0},{ty:.0}"),
                (x1 + x2) / 2.0 + 4.0,
                mid - 2.0,
            )
        };
        let class = if back { "edge back" } else { "edge" };
        let _ = write!(
            s,
            "<path class=\"{class} l-{first}\" d=\"{path}\" marker-end=\"url(#arrow)\"/>"
        );
        if !labels.is_empty() {
            let _ = write!(
                s,
                "<text class=\"elabel\" x=\"{lx:.0}\" y=\"{ly:.0}\">{}</text>",
                esc(&labels.join(" / "))
            );
        }
    }
    for (v, node) in ir.nodes.iter().enumerate() {
        let (cx, cy) = centre(v);
        let p = progress.node(&node.id);
        let kind = node.kind.as_str();
        let sub = match (&node.attrs.role, node.kind) {
            (Some(role), _) => format!("{kind} · {role}"),
            _ => kind.to_string(),
        };
        let (x, y) = (cx - BOX_W / 2.0, cy - BOX_H / 2.0);
        let rx = if matches!(node.kind, NodeKind::Start | NodeKind::End) {
            24
        } else if node.kind == NodeKind::Gate {
            16
        } else {
            6
        };
        let tip = node
            .attrs
            .question
            .as_deref()
            .or(node.attrs.task.as_deref())
            .or(node.attrs.run.as_deref())
            .or(node.attrs.doc.as_deref())
            .unwrap_or("");
        let reloops = if p.reloops > 0 {
            format!("↻{}", p.reloops)
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "<g class=\"node\" data-node=\"{id}\" data-kind=\"{kind}\" data-state=\"{state}\">\
             <title>{id}: {tip}</title>\
             <rect x=\"{x:.0}\" y=\"{y:.0}\" width=\"{BOX_W:.0}\" height=\"{BOX_H:.0}\" rx=\"{rx}\"/>\
             <text class=\"name\" x=\"{cx:.0}\" y=\"{ny:.0}\">{short}</text>\
             <text class=\"sub\" x=\"{cx:.0}\" y=\"{sy:.0}\">{sub}</text>\
             <text class=\"badge\" x=\"{bx:.0}\" y=\"{by:.0}\">{reloops}</text></g>",
            id = esc(&node.id),
            state = p.state.as_str(),
            tip = esc(tip),
            ny = cy - 3.0,
            sy = cy + 13.0,
            short = esc(&shorten(&node.id, 20)),
            sub = esc(&shorten(&sub, 24)),
            bx = x + BOX_W - 6.0,
            by = y + 13.0,
        );
    }
    s.push_str("</svg>");
    s
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let tail: String = s
        .chars()
        .rev()
        .take(max - 1)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_follow_the_flow_and_reloops_are_back_edges() {
        let ir = sample();
        let lay = layout(&ir);
        let layer = |id: &str| lay.pos[ir.nodes.iter().position(|n| n.id == id).unwrap()].0;
        assert!(layer("start") < layer("build"));
        assert!(layer("build") < layer("review"));
        assert!(layer("review") < layer("end"));
        let back: Vec<_> = ir
            .edges
            .iter()
            .zip(&lay.back)
            .filter(|(_, b)| **b)
            .map(|(e, _)| (e.from.as_str(), e.to.as_str()))
            .collect();
        assert_eq!(back, vec![("review", "build")]);
        assert_eq!(in_layout_order(&ir), ["start", "build", "review", "end"]);
        let svg = svg(&ir, &RunProgress::new("r"));
        assert!(svg.contains("data-node=\"review\""), "{svg}");
        assert!(svg.contains("class=\"edge back"), "{svg}");
    }

    fn sample() -> Ir {
        use factory_compiler::ir::*;
        let node = |id: &str, kind| Node {
            id: id.into(),
            kind,
            attrs: Attrs::default(),
        };
        let edge = |from: &str, to: &str, label| Edge {
            from: from.into(),
            to: to.into(),
            label,
            max: None,
            max_knob: None,
        };
        let mut gate = node("review", NodeKind::Gate);
        gate.attrs.question = Some("Good?".into());
        gate.attrs.outcomes = vec![Label::Proceed, Label::Reloop];
        Ir {
            ir_version: 1,
            workflow: WorkflowMeta {
                name: "w".into(),
                ..Default::default()
            },
            start: "start".into(),
            knobs: vec![],
            nodes: vec![
                node("start", NodeKind::Start),
                node("build", NodeKind::Fn),
                gate,
                node("end", NodeKind::End),
            ],
            edges: vec![
                edge("start", "build", None),
                edge("build", "review", None),
                edge("review", "end", Some(Label::Proceed)),
                Edge {
                    max: Some(2),
                    ..edge("review", "build", Some(Label::Reloop))
                },
            ],
        }
    }
}
