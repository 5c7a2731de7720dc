//! Writing a body's flow: its edges as statements, chained where the edges allow it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::layout::{Bound, Stmt};
use crate::ir::{END, Label, START};

/// A term of a flow statement: `name`, `name.label`, `name.reloop(max N)`.
fn term(from: &str, label: Option<Label>, bound: &Option<Bound>) -> String {
    let mut t = from.to_string();
    if let Some(l) = label {
        let _ = write!(t, ".{l}");
    }
    match bound {
        Some(Bound::Count(n)) => {
            let _ = write!(t, "(max {n})");
        }
        Some(Bound::Knob(k)) => {
            let _ = write!(t, "(max {k})");
        }
        None => {}
    }
    t
}

/// The statements of a body's flow, as chains where the edges allow it
/// (`start -> a -> b -> c`, `split -> x, y -> merged -> next`): every edge exactly once.
pub(super) fn flow(stmts: &BTreeSet<Stmt>, order: &[&str]) -> Vec<String> {
    type Key = (String, Option<Label>, Option<Bound>);
    let rank = |name: &str| {
        if name == START {
            0
        } else {
            order
                .iter()
                .position(|n| *n == name)
                .map_or(usize::MAX, |i| i + 1)
        }
    };
    let mut groups: BTreeMap<Key, Vec<String>> = BTreeMap::new();
    for s in stmts {
        groups
            .entry((s.from.clone(), s.label, s.bound.clone()))
            .or_default()
            .push(s.to.clone());
    }
    for targets in groups.values_mut() {
        targets.sort_by_key(|t| (t == END, rank(t), t.clone()));
    }
    let mut keys: Vec<Key> = groups.keys().cloned().collect();
    keys.sort_by_key(|k| (rank(&k.0), k.1, k.2.clone(), k.0.clone()));
    let plain = |name: &str| (name.to_string(), None, None);
    let mut done: BTreeSet<Key> = BTreeSet::new();
    let mut lines = Vec::new();
    for key in keys {
        if done.contains(&key) {
            continue;
        }
        done.insert(key.clone());
        let mut line = term(&key.0, key.1, &key.2);
        let mut targets = groups[&key].clone();
        loop {
            let _ = write!(line, " -> {}", targets.join(", "));
            let next: Option<Vec<String>> = match targets.as_slice() {
                [one] => groups
                    .get(&plain(one))
                    .filter(|_| !done.contains(&plain(one)))
                    .map(|t| {
                        done.insert(plain(one));
                        t.clone()
                    }),
                many => {
                    // Fan-in: every branch goes on, plainly, to the one same node.
                    let ways: Vec<Option<&Vec<String>>> = many
                        .iter()
                        .map(|t| {
                            let only_way = groups.keys().filter(|k| k.0 == *t).count() == 1;
                            groups
                                .get(&plain(t))
                                .filter(|v| only_way && v.len() == 1 && !done.contains(&plain(t)))
                        })
                        .collect();
                    let first = ways.first().copied().flatten();
                    if first.is_some() && ways.iter().all(|w| *w == first) {
                        for t in many {
                            done.insert(plain(t));
                        }
                        first.cloned()
                    } else {
                        None
                    }
                }
            };
            match next {
                Some(t) => targets = t,
                None => break,
            }
        }
        lines.push(line);
    }
    lines
}
