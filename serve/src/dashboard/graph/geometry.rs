//! Where things go on the page: each box's width from its caption, and the x of every
//! vertex, pulled straight where it can be.

use super::layout::Layout;
use super::{BEND_W, BOX_H, GAP, H, MARGIN, MIN_BOX_W, NAME_CHAR, SMALL_CHAR};

/// What a node's box says: its scope (the id up to its last `.`, when the whole id
/// is too long for one line), its name, and its kind and role.
pub(super) struct Caption {
    pub(super) scope: Option<String>,
    pub(super) name: String,
    pub(super) sub: String,
}

/// Ids up to this many characters are one line.
pub(super) const ONE_LINE: usize = 20;

pub(super) fn caption(node: &factory_compiler::ir::Node) -> Caption {
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
pub(super) struct Geometry {
    pub(super) box_w: f64,
    /// The centre of every vertex (nodes, then bends).
    pub(super) at: Vec<(f64, f64)>,
    /// Per layer, the right end of its rightmost box or bend.
    pub(super) right: Vec<f64>,
    pub(super) width: f64,
    pub(super) height: f64,
}

pub(super) fn geometry(lay: &Layout, captions: &[Caption]) -> Geometry {
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
pub(super) fn place(lay: &Layout, slot: &dyn Fn(usize) -> f64) -> Vec<f64> {
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
