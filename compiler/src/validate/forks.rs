//! Fork/join matching: every branch of a fork (or the body of a `parallel`) must meet
//! again at one join (or `select`), and branches of one fork must not write the same
//! artifact.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use petgraph::graph::NodeIndex;

use super::graph::Graph;
use super::{Finding, IrRef};
use crate::diagnostic::{Code, Fix, Subject};
use crate::ir::conventions::artifact_key;
use crate::ir::{Ir, Label, NodeKind};

/// Deeper nesting than this is reported instead of recursed into (no stack overflow
/// from hostile IR).
const MAX_NESTING: usize = 256;

#[derive(Clone)]
enum Memo {
    InProgress,
    Done(Option<Region>),
}

/// What a fork covers: its join and every node on its branches (nested regions included).
#[derive(Clone)]
struct Region {
    join: NodeIndex,
    nodes: HashSet<NodeIndex>,
    /// Artifact paths written inside the region.
    writes: BTreeSet<String>,
}

struct Matcher<'a> {
    ir: &'a Ir,
    g: &'a Graph,
    memo: rustc_hash::FxHashMap<NodeIndex, Memo>,
    out: &'a mut Vec<Finding>,
}

fn is_fork(k: Option<NodeKind>) -> bool {
    matches!(k, Some(NodeKind::Fork | NodeKind::Parallel))
}

fn is_join(k: Option<NodeKind>) -> bool {
    matches!(k, Some(NodeKind::Join | NodeKind::Select))
}

pub(super) fn check(ir: &Ir, g: &Graph, out: &mut Vec<Finding>) {
    let mut m = Matcher {
        ir,
        g,
        memo: Default::default(),
        out,
    };
    let forks: Vec<NodeIndex> = g.g.node_indices().filter(|&n| is_fork(g.kind(n))).collect();
    for &f in &forks {
        m.region(f, 0);
    }
    // Which fork closes at each join, and which nodes feed it from inside the region.
    let mut closed_by: BTreeMap<NodeIndex, Vec<NodeIndex>> = BTreeMap::new();
    for &f in &forks {
        if let Some(Memo::Done(Some(r))) = m.memo.get(&f) {
            closed_by.entry(r.join).or_default().push(f);
        }
    }
    for j in g.g.node_indices().filter(|&n| is_join(g.kind(n))) {
        m.check_join(j, closed_by.get(&j).map(Vec::as_slice).unwrap_or(&[]));
    }
    m.check_bodies(&forks);
}

impl Matcher<'_> {
    fn node_ref(&self, n: NodeIndex) -> IrRef {
        IrRef::Node(self.g.id(n).to_string())
    }

    /// Each node's `in` names the `parallel` whose branches it is on: the innermost
    /// parallel node whose region holds it (FWF028). The executor runs exactly the nodes
    /// that name a parallel node as its branches, so a node on the branches that does
    /// not name it, or one that names it from elsewhere, would pass every other rule and
    /// run wrong. Parallel nodes whose region is unknown were reported already; nodes
    /// naming them are not judged again.
    fn check_bodies(&mut self, forks: &[NodeIndex]) {
        let g = self.g;
        let region = |f: NodeIndex| match self.memo.get(&f) {
            Some(Memo::Done(Some(r))) => Some(r),
            _ => None,
        };
        // Where each node is: the parallel whose region holds it and no nested
        // parallel's region does.
        let mut expected: rustc_hash::FxHashMap<NodeIndex, NodeIndex> = Default::default();
        let mut known: HashSet<NodeIndex> = HashSet::new();
        for &p in forks
            .iter()
            .filter(|&&f| g.kind(f) == Some(NodeKind::Parallel))
        {
            let Some(r) = region(p) else { continue };
            known.insert(p);
            let nested: HashSet<NodeIndex> = r
                .nodes
                .iter()
                .filter(|&&n| g.kind(n) == Some(NodeKind::Parallel))
                .filter_map(|&n| region(n))
                .flat_map(|inner| inner.nodes.iter().copied())
                .collect();
            for &n in r.nodes.iter().filter(|n| !nested.contains(n)) {
                expected.insert(n, p);
            }
        }
        let mut found = Vec::new();
        for (i, node) in self.ir.nodes.iter().enumerate() {
            let n = NodeIndex::new(i);
            let declared = node.parallel.as_deref();
            let on = expected.get(&n).map(|&p| g.id(p));
            let finding = match (declared, on) {
                (Some(d), _) if !matches!(self.ir.node(d), Some(p) if p.kind == NodeKind::Parallel) => {
                    Finding::new(
                        Code::ParallelBody,
                        self.node_ref(n),
                        format!("node `{}` says it is in the body of `{d}`, which is not a parallel node", node.id),
                    )
                    .label("in=")
                    .help(match on {
                        Some(p) => format!("it is on the branches of `{p}`: write `in={p}`"),
                        None => "remove its `in=`: it is on no parallel node's branches".to_string(),
                    })
                }
                (Some(d), _) if g.index.get(d).is_some_and(|p| !known.contains(p)) => continue,
                (d, p) if d == p => continue,
                (None, None) => continue,
                (None, Some(p)) => Finding::new(
                    Code::ParallelBody,
                    self.node_ref(n),
                    format!("node `{}` is on the branches of parallel `{p}` but not in its body", node.id),
                )
                .label("no `in=`")
                .help(format!("write `in={p}` on its node line, so each branch runs it")),
                (Some(d), None) => Finding::new(
                    Code::ParallelBody,
                    self.node_ref(n),
                    format!("node `{}` is in the body of parallel `{d}` but not on its branches", node.id),
                )
                .label(format!("in={d}"))
                .help(format!("remove its `in={d}`, or route the branches of `{d}` through it")),
                (Some(d), Some(p)) => Finding::new(
                    Code::ParallelBody,
                    self.node_ref(n),
                    format!("node `{}` is on the branches of parallel `{p}`, not of `{d}`", node.id),
                )
                .label(format!("in={d}"))
                .help(format!("write `in={p}`")),
            };
            found.push(finding.about(Subject::Node(node.id.clone())));
        }
        self.out.extend(found);
    }

    /// Matches fork `f` with its join, memoized; nested forks are matched first and
    /// skipped over as a whole.
    fn region(&mut self, f: NodeIndex, depth: usize) -> Option<Region> {
        match self.memo.get(&f) {
            Some(Memo::Done(r)) => return r.clone(),
            Some(Memo::InProgress) => return None, // a cycle; reported by the cycle rule
            None => {}
        }
        if depth > MAX_NESTING {
            self.out.push(
                Finding::new(
                    Code::ForkWithoutJoin,
                    self.node_ref(f),
                    "forks are nested too deeply to check",
                )
                .about(Subject::Node(self.g.id(f).to_string()))
                .help(format!(
                    "nest at most {MAX_NESTING} forks inside each other"
                )),
            );
            self.memo.insert(f, Memo::Done(None));
            return None;
        }
        self.memo.insert(f, Memo::InProgress);
        let region = self.walk(f, depth);
        self.memo.insert(f, Memo::Done(region.clone()));
        region
    }

    fn walk(&mut self, f: NodeIndex, depth: usize) -> Option<Region> {
        let g = self.g;
        let fork_id = g.id(f).to_string();
        let parallel = g.kind(f) == Some(NodeKind::Parallel);
        let mut nodes = HashSet::new();
        let mut writes = BTreeSet::new();
        // Per branch: the joins it reached and the writes on it.
        let mut branches: Vec<(usize, BTreeSet<NodeIndex>, BTreeSet<String>)> = Vec::new();
        let mut escaped = false;
        // Branches that run past the join: reported once the fork is known to have one
        // (when no branch reaches any join, the missing join is the one finding).
        let mut escapes: Vec<Finding> = Vec::new();
        // Reloop edges on the branches: checked once the region is known.
        let mut reloops: Vec<(usize, NodeIndex)> = Vec::new();
        // Per branch: every node it reached, for where the branches meet.
        let mut reached: Vec<HashSet<NodeIndex>> = Vec::new();
        for (head, head_edge) in g.out(f).collect::<Vec<_>>() {
            let mut joins = BTreeSet::new();
            let mut branch_writes = BTreeSet::new();
            let mut seen = HashSet::new();
            let mut stack = vec![(head, head_edge, f)];
            while let Some((n, via, from)) = stack.pop() {
                // `end` is judged per edge (halt/fail may go there), so it is never "seen".
                if g.kind(n) == Some(NodeKind::End) {
                    if !matches!(self.ir.edges[via].label, Some(Label::Halt | Label::Fail)) {
                        escaped = true;
                        escapes.push(self.escape(
                            f,
                            from,
                            via,
                            "reaches `end` without passing the",
                        ));
                    }
                    continue;
                }
                if !seen.insert(n) {
                    continue;
                }
                if n == f {
                    escaped = true;
                    escapes.push(self.escape(f, from, via, "loops back to its own"));
                    continue;
                }
                let kind = g.kind(n);
                if is_join(kind) {
                    joins.insert(n);
                    continue;
                }
                nodes.insert(n);
                if let Some(node) = self.ir.node(g.id(n)) {
                    branch_writes.extend(
                        node.attrs
                            .writes
                            .iter()
                            .map(|a| artifact_key(&a.path).into_owned()),
                    );
                }
                let next: Vec<(NodeIndex, usize)> = if is_fork(kind) {
                    match self.region(n, depth + 1) {
                        Some(inner) => {
                            nodes.extend(inner.nodes.iter().copied());
                            nodes.insert(inner.join);
                            branch_writes.extend(inner.writes.iter().cloned());
                            seen.insert(inner.join);
                            g.out(inner.join).collect()
                        }
                        None => Vec::new(),
                    }
                } else {
                    g.out(n).collect()
                };
                for (m, e) in next {
                    if self.ir.edges[e].label == Some(Label::Reloop) {
                        reloops.push((e, m));
                    } else {
                        stack.push((m, e, n));
                    }
                }
            }
            reached.push(seen);
            branches.push((head_edge, joins, branch_writes));
        }
        // The join most branches reach is the fork's join.
        let mut votes: BTreeMap<NodeIndex, usize> = BTreeMap::new();
        for (_, joins, _) in &branches {
            for j in joins {
                *votes.entry(*j).or_default() += 1;
            }
        }
        let Some((&join, _)) = votes
            .iter()
            .max_by_key(|(j, c)| (**c, std::cmp::Reverse(**j)))
        else {
            // Where the join belongs: before the first node every branch reaches (the
            // branches meet there without one), else on each branch's way to `end`.
            let via: Vec<usize> = match self.meeting_point(f, &reached) {
                Some(meet) => g
                    .incoming(meet)
                    .filter(|(from, e)| {
                        self.ir.edges[*e].label != Some(Label::Reloop)
                            && reached.iter().any(|r| r.contains(from))
                    })
                    .map(|(_, e)| e)
                    .collect(),
                None => escapes
                    .iter()
                    .filter_map(|e| match e.at {
                        IrRef::Edge(i) => Some(i),
                        _ => None,
                    })
                    .collect(),
            };
            // Once each, in the order met (two branches may run on along one edge).
            let mut once = HashSet::new();
            let via: Vec<usize> = via.into_iter().filter(|e| once.insert(*e)).collect();
            self.no_join_via(f, parallel, None, &via);
            return None;
        };
        self.out.extend(escapes);
        let join_kind = g.kind(join);
        if parallel != (join_kind == Some(NodeKind::Select)) {
            self.no_join(f, parallel, Some(join));
            return None;
        }
        for (edge, joins, _) in &branches {
            if joins.iter().any(|j| *j != join) || (joins.is_empty() && !escaped) {
                let other: Vec<&str> = joins
                    .iter()
                    .filter(|j| **j != join)
                    .map(|j| g.id(*j))
                    .collect();
                let what = if other.is_empty() {
                    "never reaches a join".to_string()
                } else {
                    format!("reaches `{}` instead", other.join("`, `"))
                };
                self.out.push(
                    Finding::new(
                        Code::BranchEscapes,
                        IrRef::Edge(*edge),
                        format!(
                            "a branch of fork `{fork_id}` {what}; its join is `{}`",
                            g.id(join)
                        ),
                    )
                    .about(Subject::Node(fork_id.to_string()))
                    .label("this branch")
                    .with(self.node_ref(f), "the fork")
                    .with(self.node_ref(join), "the fork's join")
                    .help(format!(
                        "route every branch of `{fork_id}` into `{}`",
                        g.id(join)
                    )),
                );
            }
        }
        for (e, target) in reloops {
            if !nodes.contains(&target) {
                let edge = &self.ir.edges[e];
                self.out.push(
                    Finding::new(
                        Code::BranchEscapes,
                        IrRef::Edge(e),
                        format!(
                            "`{}` reloops to `{}`, outside fork `{fork_id}`",
                            edge.from, edge.to
                        ),
                    )
                    .about(Subject::Node(fork_id.to_string()))
                    .label("leaves the fork")
                    .with(self.node_ref(f), "the fork")
                    .help(format!(
                        "reloop to a node on the same branch, or move the gate after `{}`",
                        g.id(join)
                    )),
                );
            }
        }
        // Two branches writing one artifact race each other (not so for `parallel`,
        // whose copies run in separate worktrees).
        if !parallel {
            self.write_conflicts(f, &branches);
        }
        for (_, _, w) in branches {
            writes.extend(w);
        }
        Some(Region {
            join,
            nodes,
            writes,
        })
    }

    fn write_conflicts(
        &mut self,
        f: NodeIndex,
        branches: &[(usize, BTreeSet<NodeIndex>, BTreeSet<String>)],
    ) {
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, (edge, _, writes)) in branches.iter().enumerate() {
            for w in writes {
                match first.get(w.as_str()) {
                    Some(&j) => {
                        let a = &self.ir.edges[branches[j].0].to;
                        let b = &self.ir.edges[*edge].to;
                        self.out.push(
                            Finding::new(
                                Code::ParallelWriteConflict,
                                self.writer(b, w).unwrap_or(IrRef::Edge(*edge)),
                                format!("branches `{a}` and `{b}` of fork `{}` both write `{w}`", self.g.id(f)),
                            )
                            .about(Subject::Artifact(w.clone()))
                            .label("second writer")
                            .with(self.writer(a, w).unwrap_or(IrRef::Edge(branches[j].0)), "first writer")
                            .help("give each branch its own output file and combine them after the join"),
                        );
                    }
                    None => {
                        first.insert(w, i);
                    }
                }
            }
        }
    }

    /// The node on the branch starting at `head` that writes `path` (the head itself
    /// when it is the writer, which is the common case).
    fn writer(&self, head: &str, path: &str) -> Option<IrRef> {
        let node = self.ir.node(head)?;
        node.attrs
            .writes
            .iter()
            .any(|a| artifact_key(&a.path) == path)
            .then(|| IrRef::Node(head.to_string()))
    }

    /// A branch of `f` leaving it; `what` ends with the word for the fork's closer or
    /// the fork itself, which differ for a `parallel` block (closed by a `select`).
    fn escape(&self, f: NodeIndex, from: NodeIndex, via: usize, what: &str) -> Finding {
        let (fork, join) = match self.g.kind(f) {
            Some(NodeKind::Parallel) => ("parallel block", "select"),
            _ => ("fork", "join"),
        };
        let tail = if what.ends_with("the") { join } else { fork };
        Finding::new(
            Code::BranchEscapes,
            IrRef::Edge(via),
            format!("a branch of {fork} `{}` {what} {tail}", self.g.id(f)),
        )
        .about(Subject::Node(self.g.id(f).to_string()))
        .label(format!("leaves the {fork} from `{}`", self.g.id(from)))
        .with(self.node_ref(f), format!("the {fork} it leaves"))
        .help(format!(
            "route the branch into the {fork}'s {join}; only `halt` or `fail` edges may go straight to `end`"
        ))
    }

    /// The node nearest fork `f` (breadth first from it) that every branch reaches, when
    /// there are two or more branches and it is not `end`.
    fn meeting_point(&self, f: NodeIndex, reached: &[HashSet<NodeIndex>]) -> Option<NodeIndex> {
        if reached.len() < 2 {
            return None;
        }
        let g = self.g;
        let mut queue: std::collections::VecDeque<NodeIndex> = g.out(f).map(|(n, _)| n).collect();
        let mut seen: HashSet<NodeIndex> = queue.iter().copied().collect();
        while let Some(n) = queue.pop_front() {
            if g.kind(n) != Some(NodeKind::End) && reached.iter().all(|r| r.contains(&n)) {
                return Some(n);
            }
            for (m, e) in g.out(n) {
                if self.ir.edges[e].label != Some(Label::Reloop) && m != f && seen.insert(m) {
                    queue.push_back(m);
                }
            }
        }
        None
    }

    fn no_join(&mut self, f: NodeIndex, parallel: bool, wrong: Option<NodeIndex>) {
        self.no_join_via(f, parallel, wrong, &[]);
    }

    /// Reports fork `f` as unclosed; `via` are edges on which its branches run past
    /// where the join should be (shown as secondary labels).
    fn no_join_via(
        &mut self,
        f: NodeIndex,
        parallel: bool,
        wrong: Option<NodeIndex>,
        via: &[usize],
    ) {
        let id = self.g.id(f).to_string();
        let mut finding = if parallel {
            Finding::new(
                Code::ParallelWithoutSelect,
                self.node_ref(f),
                format!("parallel block `{id}` is not followed by a `select`"),
            )
            .about(Subject::Parallel(id.to_string()))
            .label("no select after this")
            .help(format!(
                "add `select best by best_score` and the flow step `{id} -> best`"
            ))
        } else {
            Finding::new(
                Code::ForkWithoutJoin,
                self.node_ref(f),
                format!("fork `{id}` has no matching join"),
            )
            .about(Subject::Node(id.to_string()))
            .fix(Fix::AddJoin {
                fork: id.to_string(),
            })
            .label("branches start here")
            .help(format!(
                "declare a `join` and route every branch of `{id}` into it"
            ))
        };
        if let Some(j) = wrong {
            let closes = if parallel {
                "a join closes a fork, not a parallel block"
            } else {
                "a select closes a parallel block, not a fork"
            };
            finding = finding.with(self.node_ref(j), closes);
        }
        for &e in via.iter().take(4) {
            let edge = &self.ir.edges[e];
            finding = finding.with(
                IrRef::Edge(e),
                format!("`{}` goes on to `{}`", edge.from, edge.to),
            );
        }
        self.out.push(finding);
    }

    /// Every input of a join comes from inside the region of the one fork it closes.
    fn check_join(&mut self, j: NodeIndex, forks: &[NodeIndex]) {
        let g = self.g;
        let id = g.id(j).to_string();
        let Some((&fork, extra)) = forks.split_first() else {
            let select = g.kind(j) == Some(NodeKind::Select);
            let opener = if select { "parallel block" } else { "fork" };
            let mut f = Finding::new(Code::JoinMismatch, self.node_ref(j), format!("`{id}` closes no {opener}: its inputs do not come from the branches of one {opener}"))
                .about(Subject::Node(id.clone()))
                .label("unmatched")
                .help(format!("route the branches of one {opener} into `{id}`, or remove it"));
            for (_, e) in g.incoming(j).take(4) {
                f = f.with(IrRef::Edge(e), "an input");
            }
            self.out.push(f);
            return;
        };
        for &other in extra {
            self.out.push(
                Finding::new(
                    Code::JoinMismatch,
                    self.node_ref(j),
                    format!(
                        "`{id}` joins the branches of both `{}` and `{}`",
                        g.id(fork),
                        g.id(other)
                    ),
                )
                .about(Subject::Node(id.clone()))
                .label("joins two forks")
                .with(self.node_ref(other), "second fork")
                .help("give each fork its own join"),
            );
        }
        let Some(Memo::Done(Some(region))) = self.memo.get(&fork) else {
            return;
        };
        let outside: Vec<(NodeIndex, usize)> = g
            .incoming(j)
            .filter(|(p, _)| *p != fork && !region.nodes.contains(p))
            .collect();
        for (p, e) in outside {
            self.out.push(
                Finding::new(
                    Code::JoinMismatch,
                    IrRef::Edge(e),
                    format!(
                        "`{}` feeds join `{id}` but is not on a branch of fork `{}`",
                        g.id(p),
                        g.id(fork)
                    ),
                )
                .about(Subject::Node(id.clone()))
                .label("input from outside the fork")
                .with(self.node_ref(fork), "the fork this join closes")
                .help(format!(
                    "only branches of `{}` may flow into `{id}`",
                    g.id(fork)
                )),
            );
        }
    }
}
