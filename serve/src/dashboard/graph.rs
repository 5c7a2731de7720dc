//! A mode's graph laid out in layers (Sugiyama style, in pure Rust) and drawn as SVG.
//!
//! Back edges (reloops) are found by a depth-first walk from `start` and drawn as
//! brackets in lanes to the right of everything they span; every other edge points
//! down. A node's layer is the longest path to it from a source; an edge that crosses
//! layers gets a bend point in each, placed like a thin node, so it runs between the
//! boxes instead of through them. Within a layer, nodes and bends are ordered by the
//! mean position of their neighbours, sweeping down and up a few times to uncross
//! edges. Every label sits on its own edge, next to the node it leaves. A node shows
//! its whole id (its scope on a line above its name when long); the boxes are as wide
//! as the longest needs. Each node is a `<g data-node=ID data-state=…>` the page's
//! script recolours.

use std::collections::BTreeMap;
use std::fmt::Write;

use factory_compiler::ir::{Ir, NodeKind};
use factory_runtime::exec::progress::RunProgress;

use super::layout::esc;

/// Vertical distance between layers.
const H: f64 = 96.0;
const BOX_H: f64 = 52.0;
/// The narrowest box, and the gap between neighbours.
const MIN_BOX_W: f64 = 144.0;
const GAP: f64 = 28.0;
/// The slot a bend point takes in its layer.
const BEND_W: f64 = 24.0;
const MARGIN: f64 = 24.0;
/// Space between the lanes of back edges.
const LANE: f64 = 16.0;
/// Rough advance of a character of the 12px name and the 10px lines (system-ui).
const NAME_CHAR: f64 = 7.0;
const SMALL_CHAR: f64 = 6.0;

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

fn node_index(ir: &Ir) -> BTreeMap<&str, usize> {
    ir.nodes
        .iter()
        .enumerate()
        .map(|(i, node)| (node.id.as_str(), i))
        .collect()
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

/// What a node's box says: its scope (the id up to its last `.`, when the whole id
/// is too long for one line), its name, and its kind and role.
struct Caption {
    scope: Option<String>,
    name: String,
    sub: String,
}

/// Ids up to this many characters are one line.
const ONE_LINE: usize = 20;

fn caption(node: &factory_compiler::ir::Node) -> Caption {
    let kind = node.kind.as_str();
    let sub = match &node.attrs.role {
        Some(role) => format!("{kind} · {role}"),
        None => kind.to_string(),
    };
    let id = &node.id;
    match id.rsplit_once('.') {
        Some((scope, name)) if id.chars().count() > ONE_LINE => Caption {
            scope: Some(format!("{scope}.")),
            name: name.to_string(),
            sub,
        },
        _ => Caption {
            scope: None,
            name: id.clone(),
            sub,
        },
    }
}

/// Where everything is drawn: box centres, the box width, and each bend's point.
struct Geometry {
    box_w: f64,
    /// The centre of every vertex (nodes, then bends).
    at: Vec<(f64, f64)>,
    /// Per layer, the right end of its rightmost box or bend.
    right: Vec<f64>,
    width: f64,
    height: f64,
}

fn geometry(lay: &Layout, captions: &[Caption]) -> Geometry {
    let chars = |s: &str| s.chars().count() as f64;
    let box_w = captions
        .iter()
        .map(|c| {
            let scope = c.scope.as_deref().map_or(0.0, |s| chars(s) * SMALL_CHAR);
            (chars(&c.name) * NAME_CHAR)
                .max(scope)
                .max(chars(&c.sub) * SMALL_CHAR)
        })
        .fold(MIN_BOX_W - 16.0, f64::max)
        + 16.0;
    let slot = |v: usize| if v < lay.nodes { box_w + GAP } else { BEND_W };
    let x = place(lay, &slot);
    let mut at = vec![(0.0, 0.0); x.len()];
    let mut right = Vec::with_capacity(lay.rows.len());
    let mut width: f64 = 0.0;
    for (l, row) in lay.rows.iter().enumerate() {
        let y = MARGIN + l as f64 * H + BOX_H / 2.0;
        let mut r: f64 = 0.0;
        for &v in row {
            at[v] = (x[v], y);
            let half = if v < lay.nodes {
                box_w / 2.0
            } else {
                BEND_W / 2.0
            };
            r = r.max(x[v] + half);
        }
        right.push(r);
        width = width.max(r + MARGIN);
    }
    Geometry {
        box_w,
        at,
        right,
        width,
        height: lay.layers.max(1) as f64 * H + 2.0 * MARGIN,
    }
}

/// The x of every vertex: each pulled towards the mean of its neighbours in the
/// layer above (sweeping down) or below (sweeping up), then pushed apart to keep its
/// row's order and spacing, so chains and long edges run straight where they can.
fn place(lay: &Layout, slot: &dyn Fn(usize) -> f64) -> Vec<f64> {
    let count = lay.rows.iter().map(Vec::len).sum::<usize>().max(lay.nodes);
    let mut x = vec![0.0f64; count];
    for row in &lay.rows {
        let mut at = 0.0;
        for &v in row {
            x[v] = at + slot(v) / 2.0;
            at += slot(v);
        }
    }
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); count];
    for &(a, b) in &lay.segments {
        down[a].push(b);
        up[b].push(a);
    }
    for sweep in 0..8 {
        let downward = sweep % 2 == 0;
        let order: Vec<usize> = if downward {
            (0..lay.rows.len()).collect()
        } else {
            (0..lay.rows.len()).rev().collect()
        };
        for l in order {
            let row = &lay.rows[l];
            let near = |v: usize| if downward { &up[v] } else { &down[v] };
            let want: Vec<f64> = row
                .iter()
                .map(|&v| {
                    // A node follows the nodes next to it, not the lanes of long
                    // edges passing by, so the main line of a mode stays straight.
                    let all = near(v);
                    let nodes: Vec<usize> =
                        all.iter().copied().filter(|u| *u < lay.nodes).collect();
                    let n = if v < lay.nodes && !nodes.is_empty() {
                        &nodes
                    } else {
                        all
                    };
                    if n.is_empty() {
                        x[v]
                    } else {
                        n.iter().map(|u| x[*u]).sum::<f64>() / n.len() as f64
                    }
                })
                .collect();
            // Left to right keeps the spacing; right to left then pulls back towards
            // what each wanted, never closer than the spacing.
            let mut placed = want.clone();
            for i in 1..row.len() {
                let gap = (slot(row[i - 1]) + slot(row[i])) / 2.0;
                placed[i] = placed[i].max(placed[i - 1] + gap);
            }
            for i in (0..row.len().saturating_sub(1)).rev() {
                let gap = (slot(row[i]) + slot(row[i + 1])) / 2.0;
                placed[i] = placed[i].min(placed[i + 1] - gap).max(if i == 0 {
                    f64::MIN
                } else {
                    placed[i - 1] + (slot(row[i - 1]) + slot(row[i])) / 2.0
                });
            }
            for (i, &v) in row.iter().enumerate() {
                x[v] = placed[i];
            }
        }
    }
    // Shift everything so the leftmost box starts at the margin.
    let left = lay
        .rows
        .iter()
        .flatten()
        .map(|&v| x[v] - slot(v) / 2.0)
        .fold(f64::INFINITY, f64::min);
    let shift = if left.is_finite() {
        MARGIN + GAP / 2.0 - left
    } else {
        0.0
    };
    x.iter_mut().for_each(|v| *v += shift);
    x
}

/// The SVG of `ir`, nodes coloured by `progress`.
pub fn svg(ir: &Ir, progress: &RunProgress) -> String {
    let lay = layout(ir);
    let captions: Vec<Caption> = ir.nodes.iter().map(caption).collect();
    let geo = geometry(&lay, &captions);
    let index = node_index(ir);
    let mut s = String::new();
    // Edges between the same two nodes (`proceed` and `halt` to `end`) are drawn once,
    // with their labels joined.
    let mut drawn: Vec<Drawn> = Vec::new();
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
            .find(|(k, bk, _, _)| *k == (a, b) && *bk == back)
        {
            Some((_, _, labels, _)) => labels.push(label),
            None => drawn.push(((a, b), back, vec![label], ei)),
        }
    }
    // Back edges take lanes right of what they span; overlapping spans, separate lanes.
    let mut lanes: Vec<(usize, usize, usize)> = Vec::new();
    let mut width = geo.width;
    let half = geo.box_w / 2.0;
    let ports = ports(&drawn, &lay, &geo);
    let mut edges: Vec<DrawnEdge> = Vec::new();
    for (d, ((a, b), back, labels, ei)) in drawn.into_iter().enumerate() {
        let (x1, y1) = geo.at[a];
        let (x2, y2) = geo.at[b];
        let (out_dx, in_dx, side) = ports.get(&d).copied().unwrap_or((0.0, 0.0, Side::Bend));
        let labels: Vec<String> = labels.into_iter().filter(|l| !l.is_empty()).collect();
        let (pieces, spots) = if back {
            let (la, lb) = (lay.pos[a].0, lay.pos[b].0);
            let (top, bottom) = (la.min(lb), la.max(lb));
            let lane = (0..)
                .find(|k| {
                    !lanes
                        .iter()
                        .any(|(t, bt, kk)| kk == k && *t <= bottom && top <= *bt)
                })
                .unwrap_or(0);
            lanes.push((top, bottom, lane));
            let extent = geo.right[top..=bottom].iter().copied().fold(0.0, f64::max);
            let bend = extent + 14.0 + lane as f64 * LANE;
            width = width.max(bend + 24.0);
            let (sx, tx) = (x1 + half, x2 + half);
            let pieces = if (y1 - y2).abs() < 1.0 {
                vec![Piece::Cubic(
                    (sx, y1 - 8.0),
                    (bend, y1 - 16.0),
                    (bend, y1 + 16.0),
                    (tx, y2 + 8.0),
                )]
            } else {
                let r = 8.0f64.min((y1 - y2).abs() / 2.0);
                let dir = if y2 < y1 { -1.0 } else { 1.0 };
                vec![
                    Piece::Line((sx, y1), (bend - r, y1)),
                    Piece::Quad((bend - r, y1), (bend, y1), (bend, y1 + dir * r)),
                    Piece::Line((bend, y1 + dir * r), (bend, y2 - dir * r)),
                    Piece::Quad((bend, y2 - dir * r), (bend, y2), (bend - r, y2)),
                    Piece::Line((bend - r, y2), (tx, y2)),
                ]
            };
            // Above or below the stretch leaving the gate, else beside the lane.
            let spots = vec![
                (sx + 6.0, y1 - 5.0, "start"),
                (sx + 6.0, y1 + 13.0, "start"),
                (bend + 4.0, (y1 + y2) / 2.0, "start"),
            ];
            (pieces, spots)
        } else {
            // A bend runs straight down through its layer's band of boxes; the curves
            // are in the gaps between layers, where no box is.
            let mut points = vec![(x1 + out_dx, y1 + BOX_H / 2.0)];
            for v in &lay.bends[ei] {
                let (bx, by) = geo.at[*v];
                points.push((bx, by - BOX_H / 2.0));
                points.push((bx, by + BOX_H / 2.0));
            }
            points.push((x2 + in_dx, y2 - BOX_H / 2.0));
            let pieces: Vec<Piece> = points
                .windows(2)
                .enumerate()
                .map(|(i, pair)| {
                    let ((px, py), (qx, qy)) = (pair[0], pair[1]);
                    if i % 2 == 1 {
                        Piece::Line((px, py), (qx, qy))
                    } else {
                        let mid = (py + qy) / 2.0;
                        Piece::Cubic((px, py), (px, mid), (qx, mid), (qx, qy))
                    }
                })
                .collect();
            // On the first stretch, below the node it leaves: on the outer side of the
            // node's edges (or the side it bends to), then the other side, then lower.
            let first = pieces[0];
            let (px, _) = points[0];
            let (qx, _) = points[1];
            let outer_left = match side {
                Side::Left => true,
                Side::Right => false,
                Side::Bend => qx < px - 1.0,
            };
            let mut spots = Vec::new();
            for t in [0.3, 0.6] {
                let (bx, by) = first.at(t);
                for left in [outer_left, !outer_left] {
                    spots.push(if left {
                        (bx - 5.0, by + 4.0, "end")
                    } else {
                        (bx + 5.0, by + 4.0, "start")
                    });
                }
            }
            (pieces, spots)
        };
        edges.push(DrawnEdge {
            id: format!("{}->{}", ir.nodes[a].id, ir.nodes[b].id),
            back,
            samples: pieces.iter().flat_map(|p| p.samples()).collect(),
            pieces,
            labels,
            spots,
        });
    }
    for (i, e) in edges.iter().enumerate() {
        let first = e
            .labels
            .first()
            .map(|l| l.split(' ').next().unwrap_or(""))
            .unwrap_or("");
        let class = if e.back { "edge back" } else { "edge" };
        let _ = write!(
            s,
            "<path class=\"{class} l-{first}\" data-edge=\"{id}\" d=\"{d}\" marker-end=\"url(#arrow)\"/>",
            id = esc(&e.id),
            d = path_data(&e.pieces),
        );
        if e.labels.is_empty() {
            continue;
        }
        let text = e.labels.join(" / ");
        // The first spot no other edge crosses (the first one when every spot is).
        let label_w = text.chars().count() as f64 * LABEL_CHAR;
        let clear = |(x, y, anchor): (f64, f64, &str)| {
            let left = if anchor == "end" { x - label_w } else { x };
            !edges.iter().enumerate().any(|(j, other)| {
                j != i
                    && other.samples.iter().any(|(px, py)| {
                        *px > left - 1.0
                            && *px < left + label_w + 1.0
                            && *py > y - 10.0
                            && *py < y + 2.0
                    })
            })
        };
        let (lx, ly, anchor) = e
            .spots
            .iter()
            .copied()
            .find(|spot| clear(*spot))
            .unwrap_or(e.spots[0]);
        let _ = write!(
            s,
            "<text class=\"elabel\" data-edge=\"{id}\" x=\"{lx:.0}\" y=\"{ly:.0}\" text-anchor=\"{anchor}\">{}</text>",
            esc(&text),
            id = esc(&e.id),
        );
    }
    for (v, node) in ir.nodes.iter().enumerate() {
        let (cx, cy) = geo.at[v];
        let p = progress.node(&node.id);
        let c = &captions[v];
        let (x, y) = (cx - half, cy - BOX_H / 2.0);
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
        let scope = match &c.scope {
            Some(scope) => format!(
                "<text class=\"scope\" x=\"{cx:.0}\" y=\"{:.0}\">{}</text>",
                cy - 10.0,
                esc(scope)
            ),
            None => String::new(),
        };
        let _ = write!(
            s,
            "<g class=\"node\" data-node=\"{id}\" data-kind=\"{kind}\" data-state=\"{state}\">\
             <title>{id}: {tip}</title>\
             <rect x=\"{x:.0}\" y=\"{y:.0}\" width=\"{bw:.0}\" height=\"{BOX_H:.0}\" rx=\"{rx}\"/>\
             {scope}<text class=\"name\" x=\"{cx:.0}\" y=\"{ny:.0}\">{name}</text>\
             <text class=\"sub\" x=\"{cx:.0}\" y=\"{sy:.0}\">{sub}</text>\
             <text class=\"badge\" x=\"{bx:.0}\" y=\"{by:.0}\">{reloops}</text></g>",
            id = esc(&node.id),
            kind = node.kind.as_str(),
            state = p.state.as_str(),
            tip = esc(tip),
            bw = geo.box_w,
            ny = if c.scope.is_some() {
                cy + 4.0
            } else {
                cy - 1.0
            },
            sy = if c.scope.is_some() {
                cy + 18.0
            } else {
                cy + 14.0
            },
            name = esc(&c.name),
            sub = esc(&c.sub),
            bx = x + geo.box_w - 6.0,
            by = y + 13.0,
        );
    }
    s.push_str("</svg>");
    let height = geo.height;
    format!(
        "<svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width:.0} {height:.0}\" \
         width=\"{width:.0}\" height=\"{height:.0}\" role=\"img\" aria-label=\"the mode's graph\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" class=\"arrowhead\"/></marker></defs>{s}"
    )
}

/// Which side of its edge a label goes on.
#[derive(Debug, Clone, Copy)]
enum Side {
    Left,
    Right,
    /// The side the edge bends to.
    Bend,
}

type Drawn = ((usize, usize), bool, Vec<String>, usize);

/// Where each downward edge (by its index in `drawn`) leaves its source and enters its
/// target, as offsets from the box's centre, and which side its label takes: a node's
/// edges leave its bottom apart, ordered by where they head, and arrive at its top
/// apart, ordered by where they come from, so no two share a stretch and each label
/// sits outside the fan of its node's edges.
fn ports(drawn: &[Drawn], lay: &Layout, geo: &Geometry) -> BTreeMap<usize, (f64, f64, Side)> {
    let mut outs: BTreeMap<usize, Vec<(f64, usize)>> = BTreeMap::new();
    let mut ins: BTreeMap<usize, Vec<(f64, usize)>> = BTreeMap::new();
    for (d, ((a, b), back, _, ei)) in drawn.iter().enumerate() {
        if *back {
            continue;
        }
        let bends = &lay.bends[*ei];
        let next = bends.first().map_or(geo.at[*b].0, |v| geo.at[*v].0);
        let prev = bends.last().map_or(geo.at[*a].0, |v| geo.at[*v].0);
        outs.entry(*a).or_default().push((next, d));
        ins.entry(*b).or_default().push((prev, d));
    }
    let spread = |k: usize, i: usize| {
        if k < 2 {
            return 0.0;
        }
        let width = (geo.box_w * 0.6).min((k - 1) as f64 * 28.0);
        -width / 2.0 + i as f64 * width / (k - 1) as f64
    };
    let mut out: BTreeMap<usize, (f64, f64, Side)> = BTreeMap::new();
    for fan in outs.values_mut() {
        fan.sort_by(|x, y| x.0.total_cmp(&y.0));
        let k = fan.len();
        for (i, (_, d)) in fan.iter().enumerate() {
            let side = match (k, i) {
                (1, _) => Side::Bend,
                (_, 0) => Side::Left,
                _ => Side::Right,
            };
            out.insert(*d, (spread(k, i), 0.0, side));
        }
    }
    for fan in ins.values_mut() {
        fan.sort_by(|x, y| x.0.total_cmp(&y.0));
        let k = fan.len();
        for (i, (_, d)) in fan.iter().enumerate() {
            if let Some(entry) = out.get_mut(d) {
                entry.1 = spread(k, i);
            }
        }
    }
    out
}

/// Rough advance of a character of an edge's 10px label.
const LABEL_CHAR: f64 = 5.8;

/// One edge as drawn: its pieces, points along them, its labels and where they may go.
struct DrawnEdge {
    id: String,
    back: bool,
    pieces: Vec<Piece>,
    samples: Vec<(f64, f64)>,
    labels: Vec<String>,
    /// Where its label may go, best first: `(x, baseline y, text-anchor)`.
    spots: Vec<(f64, f64, &'static str)>,
}

type Point = (f64, f64);

/// A stretch of an edge.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Line(Point, Point),
    Quad(Point, Point, Point),
    Cubic(Point, Point, Point, Point),
}

impl Piece {
    fn at(&self, t: f64) -> Point {
        let u = 1.0 - t;
        let mix = |ws: &[f64], ps: &[Point]| {
            ws.iter()
                .zip(ps)
                .fold((0.0, 0.0), |(x, y), (w, p)| (x + w * p.0, y + w * p.1))
        };
        match *self {
            Piece::Line(p, q) => mix(&[u, t], &[p, q]),
            Piece::Quad(p, c, q) => mix(&[u * u, 2.0 * u * t, t * t], &[p, c, q]),
            Piece::Cubic(p, c1, c2, q) => mix(
                &[u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t],
                &[p, c1, c2, q],
            ),
        }
    }

    /// Points every few pixels along it, for telling what it crosses.
    fn samples(&self) -> Vec<Point> {
        (0..=24).map(|i| self.at(i as f64 / 24.0)).collect()
    }
}

/// The SVG path data of `pieces`, drawn one after another.
fn path_data(pieces: &[Piece]) -> String {
    let mut d = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        let start = match piece {
            Piece::Line(p, _) | Piece::Quad(p, _, _) | Piece::Cubic(p, _, _, _) => *p,
        };
        if i == 0 {
            let _ = write!(d, "M{:.0},{:.0}", start.0, start.1);
        }
        let _ = match piece {
            Piece::Line(_, q) => write!(d, " L{:.0},{:.0}", q.0, q.1),
            Piece::Quad(_, c, q) => write!(d, " Q{:.0},{:.0} {:.0},{:.0}", c.0, c.1, q.0, q.1),
            Piece::Cubic(_, c1, c2, q) => write!(
                d,
                " C{:.0},{:.0} {:.0},{:.0} {:.0},{:.0}",
                c1.0, c1.1, c2.0, c2.1, q.0, q.1
            ),
        };
    }
    d
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
