//! `PARALLELIZE` and `SERIALIZE`: a chain of independent work nodes becomes a fork/join,
//! and a fork/join whose branches are plain chains becomes one chain.

use std::collections::BTreeSet;

use factory_compiler::ir::{Ir, Node, NodeKind};

use super::edit::{self, finish, plain};
use super::source::Source;

/// A node that can stand in a chain: work that is not a decision (a gate branches), not
/// async, with exactly one way on — one plain edge out and nothing else.
fn chainable<'a>(ir: &'a Ir, node: &'a Node) -> Option<&'a str> {
    if !matches!(
        node.kind,
        NodeKind::Agent | NodeKind::Fn | NodeKind::Llm | NodeKind::Study
    ) || node.attrs.is_async
    {
        return None;
    }
    let mut out = edit::out_edges(ir, &node.id);
    match (out.next(), out.next()) {
        (Some(e), None) if e.label.is_none() => Some(e.to.as_str()),
        _ => None,
    }
}

/// Whether two nodes can run side by side: neither reads what the other writes, and
/// they write different files.
fn independent(a: &Node, b: &Node) -> bool {
    let (ar, aw) = (edit::paths(&a.attrs.reads), edit::paths(&a.attrs.writes));
    let (br, bw) = (edit::paths(&b.attrs.reads), edit::paths(&b.attrs.writes));
    let disjoint = |x: &[&str], y: &[&str]| x.iter().all(|p| !y.contains(p));
    disjoint(&aw, &br) && disjoint(&bw, &ar) && disjoint(&aw, &bw)
}

/// The longest chain of pairwise independent nodes starting at `first`, with the node
/// after it.
fn chain_from<'a>(ir: &'a Ir, first: &'a Node) -> (Vec<&'a Node>, &'a str) {
    let mut chain = vec![first];
    let mut next = match chainable(ir, first) {
        Some(n) => n,
        None => return (Vec::new(), ""),
    };
    while let Some(node) = ir.node(next) {
        let Some(after) = chainable(ir, node) else {
            break;
        };
        let only_entry = edit::in_edges(ir, &node.id).count() == 1;
        if !only_entry || !chain.iter().all(|c| independent(c, node)) {
            break;
        }
        chain.push(node);
        next = after;
    }
    (chain, next)
}

/// `PARALLELIZE`: a chain `p -> a -> b [-> c ...] -> s` of independent nodes becomes
/// `p -> fork -> {a, b, ...} -> join -> s`. Edges that arrived at `a` arrive at the fork.
pub fn parallelize(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let chains: Vec<(Vec<&Node>, &str)> = ir
        .nodes
        .iter()
        .map(|n| chain_from(ir, n))
        .filter(|(c, _)| c.len() >= 2)
        .collect();
    let (chain, _) = src.pick(&chains)?;
    let len = 2 + src.below(chain.len() - 1);
    let chain = &chain[..len];
    let members: BTreeSet<&str> = chain.iter().map(|n| n.id.as_str()).collect();
    let last = chain[len - 1];
    let after = chainable(ir, last)?.to_string();
    let first = chain[0].id.clone();
    let body = edit::body_of(ir, &first);
    let fork = edit::fresh_id(ir, "split", body);
    let join = edit::fresh_id(ir, "merged", body);
    let mut out = ir.clone();
    out.edges.retain(|e| !members.contains(e.from.as_str()));
    for e in &mut out.edges {
        if e.to == first {
            e.to = fork.clone();
        }
    }
    for node in chain {
        out.edges.push(plain(&fork, &node.id));
        out.edges.push(plain(&node.id, &join));
    }
    out.edges.push(plain(&join, &after));
    for (id, kind) in [(fork, NodeKind::Fork), (join, NodeKind::Join)] {
        out.nodes.push(Node {
            id,
            kind,
            parallel: body.map(str::to_string),
            attrs: Default::default(),
        });
    }
    Some(finish(out))
}

/// A fork whose every branch is a plain chain ending at one join: the branches (each
/// in order), the join, and the node after the join.
struct Diamond<'a> {
    fork: &'a str,
    branches: Vec<Vec<&'a str>>,
    join: &'a str,
    after: &'a str,
}

fn diamond<'a>(ir: &'a Ir, fork: &'a Node) -> Option<Diamond<'a>> {
    let mut branches = Vec::new();
    let mut join: Option<&str> = None;
    for e in edit::out_edges(ir, &fork.id) {
        let mut branch = Vec::new();
        let mut at = e.to.as_str();
        loop {
            let node = ir.node(at)?;
            if node.kind == NodeKind::Join {
                break;
            }
            if edit::in_edges(ir, at).count() != 1 {
                return None;
            }
            branch.push(at);
            at = chainable(ir, node)?;
        }
        if branch.is_empty() || join.is_some_and(|j| j != at) {
            return None;
        }
        join = Some(at);
        branches.push(branch);
    }
    let join = join?;
    // The join must gather exactly these branches.
    if edit::in_edges(ir, join).count() != branches.len() {
        return None;
    }
    let mut out = edit::out_edges(ir, join);
    let after = match (out.next(), out.next()) {
        (Some(e), None) if e.label.is_none() => e.to.as_str(),
        _ => return None,
    };
    Some(Diamond {
        fork: &fork.id,
        branches,
        join,
        after,
    })
}

/// `SERIALIZE`: `p -> fork -> {a, b} -> join -> s` becomes `p -> a -> b -> s` (branches
/// in a random order, each branch's own order kept). Edges that arrived at the fork
/// arrive at the first node.
pub fn serialize(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let diamonds: Vec<Diamond> = ir
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Fork)
        .filter_map(|n| diamond(ir, n))
        .collect();
    let d = src.pick(&diamonds)?;
    let mut branches = d.branches.clone();
    let mut order: Vec<&str> = Vec::new();
    while !branches.is_empty() {
        let i = src.below(branches.len());
        order.extend(branches.remove(i));
    }
    let (fork, join) = (d.fork.to_string(), d.join.to_string());
    let first = order.first()?.to_string();
    let mut out = ir.clone();
    out.nodes.retain(|n| n.id != fork && n.id != join);
    out.edges
        .retain(|e| e.from != fork && e.from != join && e.to != join);
    for e in &mut out.edges {
        if e.to == fork {
            e.to = first.clone();
        }
    }
    for pair in order.windows(2) {
        out.edges.push(plain(pair[0], pair[1]));
    }
    out.edges.push(plain(order[order.len() - 1], d.after));
    Some(finish(out))
}
