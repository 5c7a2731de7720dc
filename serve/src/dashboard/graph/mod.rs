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

mod edges;
mod geometry;
mod layout;

use std::fmt::Write;

use factory_compiler::ir::{Ir, NodeKind};
use factory_runtime::exec::progress::RunProgress;

use super::layout::esc;
use edges::{Drawn, DrawnEdge, LABEL_CHAR, Piece, Side, path_data, ports};
use geometry::{Caption, caption, geometry};
use layout::node_index;
pub use layout::{in_layout_order, layout};

/// Vertical distance between layers.
pub(super) const H: f64 = 96.0;
pub(super) const BOX_H: f64 = 52.0;
/// The narrowest box, and the gap between neighbours.
pub(super) const MIN_BOX_W: f64 = 144.0;
pub(super) const GAP: f64 = 28.0;
/// The slot a bend point takes in its layer.
pub(super) const BEND_W: f64 = 24.0;
pub(super) const MARGIN: f64 = 24.0;
/// Space between the lanes of back edges.
pub(super) const LANE: f64 = 16.0;
/// Rough advance of a character of the 12px name and the 10px lines (system-ui).
pub(super) const NAME_CHAR: f64 = 7.0;
pub(super) const SMALL_CHAR: f64 = 6.0;

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
            parallel: None,
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
