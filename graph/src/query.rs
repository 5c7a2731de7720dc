//! Questions asked of a graph: what is in it, where a name is defined, what a node
//! touches, and how two nodes are connected.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;

use crate::build::Drift;
use crate::model::{CodeGraph, Kind, Node, Relation};

/// A definition found by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub file: String,
    pub line: u32,
}

fn hit(n: &Node) -> Hit {
    Hit {
        id: n.id.clone(),
        name: n.name.clone(),
        kind: n.kind,
        file: n.file.clone().unwrap_or_default(),
        line: n.line.unwrap_or(1),
    }
}

/// Definitions whose name is `name` (ignoring case); when there are none, those whose
/// name or id contains it. Ordered by file and line.
pub fn find(graph: &CodeGraph, name: &str) -> Vec<Hit> {
    let needle = name.to_lowercase();
    let defs = || graph.nodes.iter().filter(|n| n.kind.is_definition());
    let mut hits: Vec<Hit> = defs()
        .filter(|n| n.name.to_lowercase() == needle)
        .map(hit)
        .collect();
    if hits.is_empty() {
        hits = defs()
            .filter(|n| {
                n.name.to_lowercase().contains(&needle) || n.id.to_lowercase().contains(&needle)
            })
            .map(hit)
            .collect();
    }
    hits.sort_by(|a, b| (&a.file, a.line, &a.id).cmp(&(&b.file, b.line, &b.id)));
    hits
}

/// How a node named on the command line was found.
#[derive(Debug)]
pub enum Lookup<'g> {
    Found(&'g Node),
    /// Several definitions have that name; the caller should ask for an id.
    Ambiguous(Vec<Hit>),
    NotFound,
}

/// Finds a node by id, by file path, or by a name only one definition has.
pub fn lookup<'g>(graph: &'g CodeGraph, spec: &str) -> Lookup<'g> {
    if let Some(n) = graph.node(spec) {
        return Lookup::Found(n);
    }
    if let Some(n) = graph.node(&format!("external:{spec}")) {
        return Lookup::Found(n);
    }
    let named: Vec<&Node> = graph
        .nodes
        .iter()
        .filter(|n| n.kind.is_definition() && n.name == spec)
        .collect();
    match named.as_slice() {
        [] => Lookup::NotFound,
        [one] => Lookup::Found(one),
        many => Lookup::Ambiguous(many.iter().map(|n| hit(n)).collect()),
    }
}

/// A node next to the explained one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Neighbor {
    pub id: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub count: u32,
}

/// Everything one node relates to, by relation and direction.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub node: Node,
    /// Links from this node (contains, calls, imports, inherits, implements, tests).
    pub outgoing: BTreeMap<Relation, Vec<Neighbor>>,
    /// Links into it (contained in, called by, imported by, ...).
    pub incoming: BTreeMap<Relation, Vec<Neighbor>>,
}

pub fn explain(graph: &CodeGraph, node: &Node) -> Explanation {
    let mut outgoing: BTreeMap<Relation, Vec<Neighbor>> = BTreeMap::new();
    let mut incoming: BTreeMap<Relation, Vec<Neighbor>> = BTreeMap::new();
    let neighbor = |id: &str, count: u32| {
        let n = graph.node(id);
        Neighbor {
            id: id.to_owned(),
            kind: n.map_or(Kind::External, |n| n.kind),
            file: n.and_then(|n| n.file.clone()),
            line: n.and_then(|n| n.line),
            count,
        }
    };
    for l in &graph.links {
        if l.source == node.id {
            outgoing
                .entry(l.relation)
                .or_default()
                .push(neighbor(&l.target, l.count));
        }
        if l.target == node.id {
            incoming
                .entry(l.relation)
                .or_default()
                .push(neighbor(&l.source, l.count));
        }
    }
    let mut node = node.clone();
    node.refs.clear();
    Explanation {
        node,
        outgoing,
        incoming,
    }
}

/// Words for a relation seen from either end.
pub fn relation_phrase(rel: Relation, outgoing: bool) -> &'static str {
    match (rel, outgoing) {
        (Relation::Contains, true) => "contains",
        (Relation::Contains, false) => "contained in",
        (Relation::Imports, true) => "imports",
        (Relation::Imports, false) => "imported by",
        (Relation::Calls, true) => "calls",
        (Relation::Calls, false) => "called by",
        (Relation::Inherits, true) => "inherits from",
        (Relation::Inherits, false) => "inherited by",
        (Relation::Implements, true) => "implements",
        (Relation::Implements, false) => "implemented by",
        (Relation::Tests, true) => "tests",
        (Relation::Tests, false) => "tested by",
    }
}

/// One step of a path: `from` `relation` `to`, or the reverse when `forward` is false
/// (`to` `relation` `from`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub from: String,
    pub to: String,
    pub relation: Relation,
    pub forward: bool,
}

/// The shortest chain of links from `a` to `b` (breadth-first). Links are followed in
/// their direction; when no directed path exists, links are followed either way and
/// the second value is false.
pub fn shortest_path(graph: &CodeGraph, a: &str, b: &str) -> Option<(Vec<Step>, bool)> {
    if let Some(p) = bfs(graph, a, b, false) {
        return Some((p, true));
    }
    bfs(graph, a, b, true).map(|p| (p, false))
}

fn bfs(graph: &CodeGraph, a: &str, b: &str, undirected: bool) -> Option<Vec<Step>> {
    let mut adj: HashMap<&str, Vec<(&str, Relation, bool)>> = HashMap::new();
    for l in &graph.links {
        adj.entry(l.source.as_str())
            .or_default()
            .push((l.target.as_str(), l.relation, true));
        if undirected {
            adj.entry(l.target.as_str())
                .or_default()
                .push((l.source.as_str(), l.relation, false));
        }
    }
    let mut prev: HashMap<&str, (&str, Relation, bool)> = HashMap::new();
    let mut queue = VecDeque::from([a]);
    let mut seen = std::collections::HashSet::from([a]);
    while let Some(cur) = queue.pop_front() {
        if cur == b {
            let mut steps = Vec::new();
            let mut at = b;
            while at != a {
                let (p, rel, fwd) = prev.get(at)?;
                steps.push(Step {
                    from: (*p).to_owned(),
                    to: at.to_owned(),
                    relation: *rel,
                    forward: *fwd,
                });
                at = p;
            }
            steps.reverse();
            return Some(steps);
        }
        for &(next, rel, fwd) in adj.get(cur).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(next) {
                prev.insert(next, (cur, rel, fwd));
                queue.push_back(next);
            }
        }
    }
    None
}

/// Files and lines of one language.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LanguageCount {
    pub files: usize,
    pub lines: u64,
}

/// What the graph holds and whether it is current.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub built_at_commit: Option<String>,
    pub head: Option<String>,
    /// Built at another commit than HEAD, or files changed since.
    pub stale: bool,
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub languages: BTreeMap<String, LanguageCount>,
    pub kinds: BTreeMap<Kind, usize>,
    pub relations: BTreeMap<Relation, usize>,
    pub parse_errors: Vec<String>,
    pub non_utf8: Vec<String>,
    pub other_languages: BTreeMap<String, u32>,
}

pub fn status(graph: &CodeGraph, drift: Drift) -> Status {
    let mut languages: BTreeMap<String, LanguageCount> = BTreeMap::new();
    let mut kinds: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut relations: BTreeMap<Relation, usize> = BTreeMap::new();
    let mut parse_errors = Vec::new();
    let mut non_utf8 = Vec::new();
    for n in &graph.nodes {
        *kinds.entry(n.kind).or_insert(0) += 1;
        if n.kind == Kind::File {
            let lang = n.language.map_or("unknown", |l| l.as_str());
            let c = languages.entry(lang.to_owned()).or_default();
            c.files += 1;
            c.lines += u64::from(n.lines.unwrap_or(0));
            if n.parse_error {
                parse_errors.push(n.id.clone());
            }
            if n.non_utf8 {
                non_utf8.push(n.id.clone());
            }
        }
    }
    for l in &graph.links {
        *relations.entry(l.relation).or_insert(0) += 1;
    }
    let stale = graph.graph.built_at_commit != drift.head
        || !drift.changed.is_empty()
        || !drift.added.is_empty()
        || !drift.removed.is_empty();
    Status {
        built_at_commit: graph.graph.built_at_commit.clone(),
        head: drift.head,
        stale,
        changed: drift.changed,
        added: drift.added,
        removed: drift.removed,
        languages,
        kinds,
        relations,
        parse_errors,
        non_utf8,
        other_languages: graph.graph.other_languages.clone(),
    }
}
