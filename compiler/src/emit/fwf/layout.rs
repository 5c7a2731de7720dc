//! Where each part of a flat IR goes in a `.fwf` file: the body (the workflow, or a
//! `parallel` block) each node is declared in, and the flow statements of each body.
//!
//! A `parallel` node's body is every node whose id starts with its id and a dot (as the
//! runtime's `Graph::in_body` decides it). In `.fwf` a body is entered only through its
//! `start ->` edges and left only through `-> end`, and the block's one way on
//! (`par -> next`) links every exit of its body to `next`. An IR that does not have
//! that shape cannot be written as a file, and [`layout`] says why.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{END, Edge, Ir, Label, Node, NodeKind, START};

/// A reloop bound as written after a term: `(max 3)` or `(max knob)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Bound {
    Count(u32),
    Knob(String),
}

/// One edge of a body's flow, in the body's local names (`start`/`end` included).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Stmt {
    pub from: String,
    pub label: Option<Label>,
    pub bound: Option<Bound>,
    pub to: String,
}

/// The workflow's body or the body of one `parallel` node.
#[derive(Debug, Default)]
pub(super) struct Body<'a> {
    /// `""` for the workflow, `"<parallel id>."` for a parallel block.
    pub prefix: String,
    /// The parallel node this is the body of.
    pub parallel: Option<&'a Node>,
    /// The body that declares the parallel node.
    pub parent: usize,
    /// Nodes declared directly in this body (nested parallel nodes included).
    pub nodes: Vec<&'a Node>,
    pub stmts: BTreeSet<Stmt>,
}

impl Body<'_> {
    /// The name `id` is declared or referred to by in this body.
    pub fn local<'i>(&self, id: &'i str) -> &'i str {
        id.strip_prefix(self.prefix.as_str()).unwrap_or(id)
    }
}

/// A parallel body's exits: each (source, label) with the places it leads to, in the
/// names of the body that declares the parallel node.
type Ways = BTreeMap<(String, Option<Label>), BTreeSet<String>>;

/// Every body of `ir`; index 0 is the workflow's.
pub(super) fn layout(ir: &Ir) -> Result<Vec<Body<'_>>, String> {
    let mut bodies = vec![Body::default()];
    let mut of_parallel: BTreeMap<&str, usize> = BTreeMap::new();
    // Shorter ids first, so an enclosing parallel has its body before a nested one.
    let mut parallels: Vec<&Node> = ir
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Parallel)
        .collect();
    parallels.sort_by_key(|n| (n.id.len(), n.id.as_str()));
    for p in &parallels {
        let parent = enclosing(&of_parallel, p)?;
        of_parallel.insert(&p.id, bodies.len());
        bodies.push(Body {
            prefix: format!("{}.", p.id),
            parallel: Some(p),
            parent,
            ..Body::default()
        });
    }
    for n in &ir.nodes {
        if n.id == START || n.id == END {
            continue;
        }
        let b = enclosing(&of_parallel, n)?;
        bodies[b].nodes.push(n);
    }
    let body_of = |id: &str| match ir.node(id) {
        Some(n) if id != END && id != START => enclosing(&of_parallel, n).unwrap_or(0),
        _ => 0,
    };
    // For each parallel body: its exits (source, label) and where each leads.
    let mut exits: BTreeMap<usize, Ways> = BTreeMap::new();
    for e in &ir.edges {
        for id in [&e.from, &e.to] {
            if ir.node(id).is_none() {
                return Err(format!(
                    "the edge `{} -> {}` names `{id}`, which is not a node",
                    e.from, e.to
                ));
            }
        }
        if e.from == END {
            return Err(format!("`{END}` has an edge to `{}`", e.to));
        }
        if e.to == START {
            return Err(format!("`{}` has an edge into `{START}`", e.from));
        }
        if let Some(&inner) = of_parallel.get(e.from.as_str()) {
            entry(&mut bodies, inner, e, body_of(&e.to))?;
            continue;
        }
        let target = body_of(&e.to);
        // The bodies the edge leaves, innermost first, up to the one holding its target.
        let mut path = vec![body_of(&e.from)];
        while *path.last().unwrap_or(&0) != target {
            let here = *path.last().unwrap_or(&0);
            if here == 0 {
                let into = bodies[target].parallel.map_or("", |p| p.id.as_str());
                return Err(format!(
                    "the edge `{} -> {}` enters the body of parallel `{into}` from outside; \
                     in .fwf only the parallel node leads into its body",
                    e.from, e.to
                ));
            }
            path.push(bodies[here].parent);
        }
        let bound = bound(ir, e)?;
        let first = path[0];
        let leaves = path.len() > 1;
        if leaves && bound.is_some() {
            return Err(format!(
                "the bounded reloop `{} -> {}` leaves the body of parallel `{}`; a bound \
                 cannot be written on an edge out of a parallel block",
                e.from,
                e.to,
                bodies[first].parallel.map_or("", |p| p.id.as_str())
            ));
        }
        let from = bodies[first].local(&e.from).to_string();
        let to = if leaves {
            END.to_string()
        } else {
            bodies[first].local(&e.to).to_string()
        };
        bodies[first].stmts.insert(Stmt {
            from,
            label: e.label,
            bound,
            to,
        });
        for pair in path.windows(2) {
            let (inner, outer) = (pair[0], pair[1]);
            let to = if outer == target {
                bodies[outer].local(&e.to).to_string()
            } else {
                END.to_string()
            };
            exits
                .entry(inner)
                .or_default()
                .entry((e.from.clone(), e.label))
                .or_default()
                .insert(to.clone());
            let p = bodies[inner].parallel.map_or("", |p| p.id.as_str());
            let from = bodies[outer].local(p).to_string();
            bodies[outer].stmts.insert(Stmt {
                from,
                label: None,
                bound: None,
                to,
            });
        }
    }
    for (b, ways) in &exits {
        let mut distinct = ways.values().collect::<BTreeSet<_>>().into_iter();
        if let (Some(one), Some(other)) = (distinct.next(), distinct.next()) {
            let p = bodies[*b].parallel.map_or("", |p| p.id.as_str());
            let show = |targets: &BTreeSet<String>| {
                let (from, _) = ways
                    .iter()
                    .find(|(_, t)| *t == targets)
                    .map(|(k, _)| k.clone())
                    .unwrap_or_default();
                let to: Vec<&str> = targets.iter().map(String::as_str).collect();
                format!("`{from}` goes on to `{}`", to.join("`, `"))
            };
            return Err(format!(
                "the body of parallel `{p}` leaves it for different places ({} but {}); \
                 a parallel block has one way on, shared by every exit of its body",
                show(one),
                show(other)
            ));
        }
    }
    for body in &bodies {
        for n in &body.nodes {
            let name = body.local(&n.id);
            let used = body.stmts.iter().any(|s| s.from == name || s.to == name);
            if !used && n.kind != NodeKind::Parallel {
                return Err(format!(
                    "node `{}` has no edges; a .fwf file cannot declare a node outside every flow",
                    n.id
                ));
            }
        }
    }
    Ok(bodies)
}

/// The body `id` is declared in: that of the longest parallel id it extends.
/// The body `n` is declared in: its parallel node's (the IR's `in=`), whose id must
/// prefix `n`'s, since a `.fwf` body names its nodes under its block's name.
fn enclosing(of_parallel: &BTreeMap<&str, usize>, n: &Node) -> Result<usize, String> {
    let Some(p) = n.parallel.as_deref() else {
        return Ok(0);
    };
    let Some(&b) = of_parallel.get(p) else {
        return Err(format!(
            "node `{}` is in the body of `{p}`, which is not a parallel node (or is nested \
             in a body declared after it)",
            n.id
        ));
    };
    if !n
        .id
        .strip_prefix(p)
        .is_some_and(|rest| rest.starts_with('.'))
    {
        return Err(format!(
            "node `{}` is in the body of parallel `{p}` but its id does not start with \
             `{p}.`; a .fwf parallel block names its nodes under the block's name",
            n.id
        ));
    }
    Ok(b)
}

/// An edge out of a parallel node: it must lead, unlabelled, into the node's own body.
fn entry(bodies: &mut [Body<'_>], inner: usize, e: &Edge, target: usize) -> Result<(), String> {
    if target != inner || e.label.is_some() || e.max.is_some() || e.max_knob.is_some() {
        return Err(format!(
            "parallel node `{}` has its own edge to `{}`; in .fwf a parallel node leads only \
             into its body (plain `start ->` edges), and on through the exits of its body",
            e.from, e.to
        ));
    }
    let to = bodies[inner].local(&e.to).to_string();
    bodies[inner].stmts.insert(Stmt {
        from: START.to_string(),
        label: None,
        bound: None,
        to,
    });
    Ok(())
}

/// The bound written on the source of edge `e`, checked to give back the same
/// `max`/`max_knob`: a knob bound stands for the knob's default.
fn bound(ir: &Ir, e: &Edge) -> Result<Option<Bound>, String> {
    let reloop = e.label == Some(Label::Reloop);
    match (&e.max_knob, e.max) {
        (None, None) => Ok(None),
        (None, Some(n)) if reloop => Ok(Some(Bound::Count(n))),
        (Some(k), Some(n)) if reloop => {
            let default = ir.knob(k).map(|k| &k.default);
            if default == Some(&crate::ir::Literal::Int(i64::from(n))) {
                Ok(Some(Bound::Knob(k.clone())))
            } else {
                Err(format!(
                    "the reloop `{} -> {}` is bounded by knob `{k}` at {n}, but the knob's \
                     value is not {n}; `(max {k})` would mean the knob's value",
                    e.from, e.to
                ))
            }
        }
        _ => Err(format!(
            "the edge `{} -> {}` has a bound (max/max_knob) that .fwf writes only on a \
             reloop with its number, as `(max N)` or `(max knob)`",
            e.from, e.to
        )),
    }
}
