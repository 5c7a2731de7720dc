//! Edges as drawn: where they leave and enter their boxes, the pieces their paths are
//! made of, and points along them for telling what a label would collide with.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::geometry::Geometry;
use super::layout::Layout;

/// Which side of its edge a label goes on.
#[derive(Debug, Clone, Copy)]
pub(super) enum Side {
    Left,
    Right,
    /// The side the edge bends to.
    Bend,
}

pub(super) type Drawn = ((usize, usize), bool, Vec<String>, usize);

/// Where each downward edge (by its index in `drawn`) leaves its source and enters its
/// target, as offsets from the box's centre, and which side its label takes: a node's
/// edges leave its bottom apart, ordered by where they head, and arrive at its top
/// apart, ordered by where they come from, so no two share a stretch and each label
/// sits outside the fan of its node's edges.
pub(super) fn ports(
    drawn: &[Drawn],
    lay: &Layout,
    geo: &Geometry,
) -> BTreeMap<usize, (f64, f64, Side)> {
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
pub(super) const LABEL_CHAR: f64 = 5.8;

/// One edge as drawn: its pieces, points along them, its labels and where they may go.
pub(super) struct DrawnEdge {
    pub(super) id: String,
    pub(super) back: bool,
    pub(super) pieces: Vec<Piece>,
    pub(super) samples: Vec<(f64, f64)>,
    pub(super) labels: Vec<String>,
    /// Where its label may go, best first: `(x, baseline y, text-anchor)`.
    pub(super) spots: Vec<(f64, f64, &'static str)>,
}

pub(super) type Point = (f64, f64);

/// A stretch of an edge.
#[derive(Debug, Clone, Copy)]
pub(super) enum Piece {
    Line(Point, Point),
    Quad(Point, Point, Point),
    Cubic(Point, Point, Point, Point),
}

impl Piece {
    pub(super) fn at(&self, t: f64) -> Point {
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
    pub(super) fn samples(&self) -> Vec<Point> {
        (0..=24).map(|i| self.at(i as f64 / 24.0)).collect()
    }
}

/// The SVG path data of `pieces`, drawn one after another.
pub(super) fn path_data(pieces: &[Piece]) -> String {
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
