//! The order a reader follows a workflow's steps in (an exported skill's steps, a dry
//! run's plan): a topological order of the graph without its
//! reloop edges (which only ever go back upstream), starting at `start`.
//!
//! It is the reverse postorder of a depth-first walk that visits a node's successors in
//! reverse preference (proceed before halt before fail, then by id), so the main path
//! comes first, each branch stays together, and a fork's branches appear in id order.

use std::collections::{BTreeMap, BTreeSet};

use super::{END, Ir, Label, Node};

/// How much a reader wants to see the target of an edge early: the normal path first.
fn preference(label: Option<Label>) -> u8 {
    match label {
        None | Some(Label::Proceed) => 0,
        Some(Label::Reloop) => 1,
        Some(Label::Halt) => 2,
        Some(Label::Fail) => 3,
    }
}

/// Every node except `start` and `end`, in execution order. Nodes `start` does not
/// reach (only in an unchecked graph) follow in id order, so none is ever left out.
pub fn execution_order(ir: &Ir) -> Vec<&Node> {
    let mut succ: BTreeMap<&str, Vec<(u8, &str)>> = BTreeMap::new();
    for e in &ir.edges {
        if e.label == Some(Label::Reloop) {
            continue;
        }
        succ.entry(e.from.as_str())
            .or_default()
            .push((preference(e.label), e.to.as_str()));
    }
    for list in succ.values_mut() {
        list.sort();
        list.dedup_by(|a, b| a.1 == b.1);
        // Visited last, finished last, so listed first after reversing.
        list.reverse();
    }

    let mut visited: BTreeSet<&str> = BTreeSet::new();
    let mut postorder: Vec<&str> = Vec::new();
    let mut stack: Vec<(&str, usize)> = vec![(ir.start.as_str(), 0)];
    visited.insert(ir.start.as_str());
    while let Some((id, next)) = stack.pop() {
        let children = succ.get(id).map(Vec::as_slice).unwrap_or(&[]);
        match children.get(next) {
            Some(&(_, child)) => {
                stack.push((id, next + 1));
                if visited.insert(child) {
                    stack.push((child, 0));
                }
            }
            None => postorder.push(id),
        }
    }
    postorder.reverse();

    let mut out: Vec<&Node> = postorder.iter().filter_map(|id| ir.node(id)).collect();
    out.extend(ir.nodes.iter().filter(|n| !visited.contains(n.id.as_str())));
    out.retain(|n| n.id != ir.start && n.id != END);
    out
}
