//! The lowering walk over workflow, subgraph and parallel bodies.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{FileLoc, NodePath, NodeScope, Origins, Slot, Subgraphs};
use crate::diagnostic::{Code, Fix, Subject};
use crate::ir::{
    Artifact, Attrs, END, Edge, FloatText, Knob, KnobType, Label, Literal, Node, NodeKind, START,
};
use crate::syntax::{Body, BoundRef, Bounds, Decl, KnobDecl, Loc, ParamType, Term, Value};
use crate::validate::Finding;

/// How a flow refers to a name: the ids edges go into, and the (id, label) pairs edges
/// leave from. A plain node is its own entry and exit; an instance or parallel block
/// has the entries and exits of its body.
#[derive(Debug, Clone)]
pub(super) struct Endpoints {
    /// Shared: every term of a flow that names it takes a copy.
    pub(super) entries: Arc<[String]>,
    pub(super) exits: Arc<[(String, Option<Label>)]>,
    /// Set for single nodes, which may carry verdict labels.
    pub(super) single: bool,
}

impl Endpoints {
    /// A name that exists but leads nowhere: a declaration skipped by a syntax error, or
    /// an instance that failed (already reported). Edges through it are dropped
    /// instead of reported again as unknown names.
    pub(super) fn placeholder() -> Endpoints {
        Endpoints {
            entries: Arc::new([]),
            exits: Arc::new([]),
            single: true,
        }
    }

    pub(super) fn node(id: &str) -> Endpoints {
        Endpoints {
            entries: Arc::new([id.to_string()]),
            exits: Arc::new([(id.to_string(), None)]),
            single: true,
        }
    }
}

/// A subgraph parameter's value.
#[derive(Debug, Clone)]
pub(super) enum Binding {
    Node(Endpoints),
    Value { lit: Literal, knob: Option<String> },
}

pub(super) struct Scope {
    pub(super) file: String,
    pub(super) key: String,
    pub(super) prefix: String,
    /// The `parallel` node whose body this is (the innermost), if any.
    pub(super) parallel: Option<String>,
    pub(super) top: bool,
    /// Whether the workflow's knobs can be named here: in the workflow and its parallel
    /// blocks, not in subgraphs (they receive values through parameters).
    pub(super) knobs: bool,
    pub(super) params: BTreeMap<String, Binding>,
    /// Hashed: a large body looks a name up for every term of its flow.
    pub(super) names: FxHashMap<String, Endpoints>,
    /// Shared with the scope of each node lowered on its own (see [`NodeScope`]).
    pub(super) artifacts: Arc<BTreeMap<String, Artifact>>,
    /// Where this body's nodes are in the file's tree (the `node` index is each node's
    /// own), when they are lowered on their own ([`super::lower_node`]): in a workflow
    /// and its parallel blocks, not in an instance (its nodes take the instance's
    /// arguments).
    pub(super) slot: Option<NodePath>,
    /// Inside an instance, every origin is the `use` in the outermost file.
    pub(super) origin: Option<FileLoc>,
    /// Entries and exits of a non-top body, from `start ->` and `-> end`.
    pub(super) entries: Vec<String>,
    pub(super) exits: Vec<(String, Option<Label>)>,
}

impl Scope {
    pub(super) fn at(&self, loc: Loc) -> FileLoc {
        self.origin.clone().unwrap_or(FileLoc {
            file: self.file.clone(),
            loc,
        })
    }

    /// The IR id of `name` declared in this scope (`format!` is a tenth of lowering a
    /// node).
    pub(super) fn id(&self, name: &str) -> String {
        let mut id = String::with_capacity(self.prefix.len() + name.len());
        id.push_str(&self.prefix);
        id.push_str(name);
        id
    }

    /// The scope a node of `cx` is lowered in on its own.
    pub(super) fn for_node(cx: &NodeScope) -> Scope {
        Scope {
            file: cx.file.clone(),
            key: cx.key.clone(),
            prefix: cx.prefix.clone(),
            parallel: cx.parallel.clone(),
            // Only flows tell `end` apart inside and outside a subgraph; a node does not.
            top: true,
            knobs: true,
            params: BTreeMap::new(),
            names: FxHashMap::default(),
            artifacts: cx.artifacts.clone(),
            slot: None,
            origin: None,
            entries: Vec::new(),
            exits: Vec::new(),
        }
    }

    pub(super) fn here(&self, loc: Loc) -> FileLoc {
        FileLoc {
            file: self.file.clone(),
            loc,
        }
    }
}

pub(super) struct Lowering<'a> {
    pub(super) subgraphs: &'a Subgraphs<'a>,
    pub nodes: Vec<Node>,
    /// Each edge with where its source and its target are written.
    pub edges: Vec<(Edge, Option<FileLoc>, Option<FileLoc>)>,
    pub knobs: Vec<Knob>,
    pub inputs: Vec<Artifact>,
    pub origins: Origins,
    pub findings: Vec<Finding<FileLoc>>,
    pub used_subgraphs: BTreeSet<String>,
    /// The nodes left to [`super::lower_node`], each with its id.
    pub slots: Vec<(String, Slot)>,
    /// Whether the workflow is headless (for the rules the slots' nodes are held to).
    pub(super) headless: bool,
    /// Subgraphs being instantiated (to refuse recursion).
    pub(super) stack: Vec<String>,
    /// Findings inside an instantiated subgraph belong to the subgraph's own file and
    /// are reported when that file is checked.
    pub(super) quiet: usize,
    pub(super) used_knobs: BTreeSet<String>,
}

impl<'a> Lowering<'a> {
    pub fn new(subgraphs: &'a Subgraphs<'a>) -> Lowering<'a> {
        Lowering {
            subgraphs,
            nodes: Vec::new(),
            edges: Vec::new(),
            knobs: Vec::new(),
            inputs: Vec::new(),
            origins: Origins::default(),
            findings: Vec::new(),
            used_subgraphs: BTreeSet::new(),
            slots: Vec::new(),
            headless: false,
            stack: Vec::new(),
            quiet: 0,
            used_knobs: BTreeSet::new(),
        }
    }

    pub(super) fn report(&mut self, f: Finding<FileLoc>) {
        if self.quiet == 0 {
            self.findings.push(f);
        }
    }

    /// Lowers workflow `decl`, the `index`th declaration of its file. Its nodes, and
    /// those of its parallel blocks, are left as slots: only what the graph needs of
    /// them is lowered here (see [`super::structure_input`]).
    pub fn lower_workflow(&mut self, file: &str, decl: &Decl, index: usize) {
        self.headless = matches!(
            decl.kind,
            crate::syntax::DeclKind::Workflow { headless: true }
        );
        let mut scope = Scope {
            file: file.to_string(),
            key: decl.name.clone(),
            prefix: String::new(),
            parallel: None,
            top: true,
            knobs: true,
            params: BTreeMap::new(),
            names: FxHashMap::default(),
            artifacts: Arc::default(),
            slot: Some(NodePath {
                decl: index,
                parallels: Vec::new(),
                node: 0,
            }),
            origin: None,
            entries: Vec::new(),
            exits: Vec::new(),
        };
        for k in &decl.body.knobs {
            self.knob(&scope, k);
        }
        for input in &decl.body.inputs {
            let art = Artifact {
                name: Some(input.name.clone()),
                path: input.path.clone(),
            };
            Arc::make_mut(&mut scope.artifacts).insert(input.name.clone(), art.clone());
            self.inputs.push(art);
        }
        for (id, kind) in [(START, NodeKind::Start), (END, NodeKind::End)] {
            self.nodes.push(Node {
                id: id.to_string(),
                kind,
                parallel: None,
                attrs: Attrs::default(),
            });
            self.origins
                .nodes
                .insert(id.to_string(), scope.here(Loc::Decl(decl.name.clone())));
        }
        self.body(&mut scope, &decl.body);
        // Which knobs are unused is known only with the slots' nodes lowered: it is
        // reported where the parts are put together ([`super::findings`]).
        self.scan_knob_templates();
    }

    /// Lowers a subgraph on its own, with placeholder arguments, to report the findings
    /// in its body. The graph it produces is not validated: its shape depends on how it
    /// is used.
    pub fn check_subgraph(&mut self, file: &str, decl: &Decl) -> Endpoints {
        let mut params = BTreeMap::new();
        for p in &decl.params {
            let binding = match p.ty {
                ParamType::Node => Binding::Node(Endpoints::node(&p.name)),
                _ => Binding::Value {
                    lit: p.default.clone().unwrap_or_else(|| placeholder(p.ty)),
                    knob: None,
                },
            };
            // A parameter declared twice was reported and dropped by the parser.
            params.insert(p.name.clone(), binding);
        }
        let mut scope = Scope {
            file: file.to_string(),
            key: decl.name.clone(),
            prefix: format!("{}.", decl.name),
            parallel: None,
            top: false,
            knobs: false,
            params,
            names: FxHashMap::default(),
            artifacts: Arc::default(),
            slot: None,
            origin: None,
            entries: Vec::new(),
            exits: Vec::new(),
        };
        self.stack.push(decl.name.clone());
        self.body(&mut scope, &decl.body);
        self.stack.pop();
        if scope.entries.is_empty() {
            self.report(
                Finding::new(
                    Code::MissingStart,
                    scope.here(Loc::Decl(decl.name.clone())),
                    format!("subgraph `{}` has no `start ->` edge", decl.name),
                )
                .about(Subject::Subgraph(decl.name.clone()))
                .label("no entry")
                .help("begin its flow with `start -> <first node>`"),
            );
        }
        Endpoints {
            entries: scope.entries.into(),
            exits: scope.exits.into(),
            single: false,
        }
    }

    fn knob(&mut self, scope: &Scope, k: &KnobDecl) {
        let loc = Loc::Knob(scope.key.clone(), k.name.clone());
        if self.knobs.iter().any(|x| x.name == k.name) {
            return; // reported by the parser
        }
        let ty = match k.ty {
            ParamType::Int => KnobType::Int,
            ParamType::Float => KnobType::Float,
            ParamType::String => KnobType::String,
            ParamType::Bool => KnobType::Bool,
            ParamType::Node => KnobType::String,
        };
        let (mut min, mut max, mut choices) = (None, None, Vec::new());
        match &k.bounds {
            Some(Bounds::Range(lo, hi)) if matches!(ty, KnobType::Int | KnobType::Float) => {
                min = Some(lo.clone());
                max = Some(hi.clone());
            }
            Some(Bounds::Choices(list)) => {
                for c in list {
                    match c {
                        Literal::Str(s) => choices.push(s.clone()),
                        other => self.report(
                            Finding::new(Code::BadAttribute, scope.here(loc.clone()), format!("choice {other} of knob `{}` is not a string", k.name))
                                .about(Subject::Knob(k.name.clone()))
                                .help("choices are strings: `in [\"a\", \"b\"]`; numbers take a range `in 1..=5`"),
                        ),
                    }
                }
            }
            Some(Bounds::Range(..)) => self.report(
                Finding::new(Code::BadAttribute, scope.here(loc.clone()), format!("a range bound needs a number knob, but `{}` is {}", k.name, k.ty.as_str()))
                    .about(Subject::Knob(k.name.clone()))
                    .help("give int and float knobs a range (`in 1..=5`), string knobs a list (`in [\"a\", \"b\"]`)"),
            ),
            None => {}
        }
        let default = match (ty, &k.default) {
            (KnobType::Float, Literal::Int(i)) => Literal::Float(FloatText::from_f64(*i as f64)),
            (_, d) => d.clone(),
        };
        if k.ty == ParamType::Node {
            self.report(
                Finding::new(
                    Code::BadAttribute,
                    scope.here(loc.clone()),
                    format!("knob `{}` cannot have type node", k.name),
                )
                .about(Subject::Knob(k.name.clone()))
                .help("knobs are int, float, string or bool; node parameters belong to subgraphs"),
            );
        }
        self.origins.knobs.insert(k.name.clone(), scope.here(loc));
        self.knobs.push(Knob {
            name: k.name.clone(),
            ty,
            default,
            min,
            max,
            choices,
            expandable: k.expandable,
        });
    }

    pub(super) fn body(&mut self, scope: &mut Scope, body: &Body) {
        if !scope.top {
            for k in &body.knobs {
                self.report(
                    Finding::new(
                        Code::BadArgument,
                        scope.here(Loc::Knob(scope.key.clone(), k.name.clone())),
                        format!(
                            "knob `{}` is declared inside a subgraph or parallel block",
                            k.name
                        ),
                    )
                    .about(Subject::Knob(k.name.clone()))
                    .help(
                        "declare knobs in the workflow, and pass them to subgraphs as parameters",
                    ),
                );
            }
        }
        // Names first, so flows, arguments and reads can refer to anything in the body.
        let in_flow: FxHashSet<&str> = body
            .flow
            .iter()
            .flat_map(|s| s.groups.iter().flatten())
            .map(|t| t.name.as_str())
            .collect();
        // Names declared twice were reported (and dropped) by the parser; the reserved
        // names, and dotted names that would clash with an id or a flow term, are left.
        let prefixes = Prefixes::of(body);
        let fresh = |name: &str, loc: Loc, me: &mut Self, scope: &Scope| -> bool {
            let clash = if name == START || name == END {
                Some((
                    format!("`{name}` is reserved for the flow's entry and exit"),
                    "reserved name",
                    "pick another name".to_string(),
                ))
            } else {
                prefixes.clash(name)
            };
            if let Some((message, label, help)) = clash {
                me.report(
                    Finding::new(Code::DuplicateName, scope.here(loc), message)
                        .about(Subject::Node(name.to_string()))
                        .label(label)
                        .help(help),
                );
                return false;
            }
            true
        };
        let mut nodes = Vec::with_capacity(body.nodes.len());
        self.nodes.reserve(body.nodes.len());
        for (i, n) in body.nodes.iter().enumerate() {
            if fresh(
                &n.name,
                Loc::Node(scope.key.clone(), n.name.clone()),
                self,
                scope,
            ) {
                scope
                    .names
                    .insert(n.name.clone(), Endpoints::node(&scope.id(&n.name)));
                nodes.push((i, n));
            }
        }
        for u in &body.uses {
            if !fresh(
                &u.alias,
                Loc::Use(scope.key.clone(), u.alias.clone()),
                self,
                scope,
            ) {
                continue;
            }
            let ends = self
                .instantiate(scope, u)
                .unwrap_or_else(Endpoints::placeholder);
            scope.names.insert(u.alias.clone(), ends);
        }
        for name in &body.recovered {
            scope
                .names
                .entry(name.clone())
                .or_insert_with(Endpoints::placeholder);
        }
        for (i, p) in body.parallels.iter().enumerate() {
            if !fresh(
                &p.name,
                Loc::Parallel(scope.key.clone(), p.name.clone()),
                self,
                scope,
            ) {
                continue;
            }
            let ends = self.parallel(scope, p, i);
            scope.names.insert(p.name.clone(), ends);
        }
        for (_, n) in &nodes {
            for a in n.attrs.iter().filter(|a| a.key == "writes") {
                for v in &a.values {
                    if let Value::Named { name, path } = v {
                        if let Some(alias) = prefixes.instance_of(name) {
                            self.report(
                                Finding::new(
                                    Code::DuplicateName,
                                    scope.here(Loc::Attr(scope.key.clone(), n.name.clone(), a.key.clone())),
                                    format!("artifact `{name}` takes a name from the artifacts of instance `{alias}`"),
                                )
                                .about(Subject::Artifact(name.clone()))
                                .label("clashing artifact name")
                                .help(format!("rename it, e.g. `{}`", name.replace('.', "_"))),
                            );
                            continue;
                        }
                        let art = Artifact {
                            name: Some(scope.id(name)),
                            path: path.clone(),
                        };
                        Arc::make_mut(&mut scope.artifacts).insert(name.clone(), art);
                    }
                }
            }
        }
        // The scope every slot of this body is lowered in, made with the first slot.
        let mut node_scope: Option<Arc<NodeScope>> = None;
        for (i, n) in nodes {
            if !in_flow.contains(n.name.as_str()) {
                self.report(
                    Finding::new(
                        Code::UnusedNode,
                        scope.here(Loc::Node(scope.key.clone(), n.name.clone())),
                        format!("node `{}` is declared but not used in any flow", n.name),
                    )
                    .about(Subject::Node(n.name.clone()))
                    .label("not in any flow")
                    .help(format!(
                        "add `{}` to a `flow {{ ... }}` statement, or delete it",
                        n.name
                    )),
                );
                continue;
            }
            let node = match &scope.slot {
                Some(path) => {
                    // Only the graph's part of a slot's node is lowered here (its
                    // findings come from `lower_node`).
                    self.quiet += 1;
                    let node = self.node(scope, n);
                    self.quiet -= 1;
                    let cx = node_scope
                        .get_or_insert_with(|| Arc::new(self.node_scope(scope)))
                        .clone();
                    let path = NodePath {
                        node: i,
                        ..path.clone()
                    };
                    let slot = Slot {
                        path,
                        index: 0, // set once the nodes are in their final order
                        scope: cx,
                    };
                    self.slots.push((node.id.clone(), slot));
                    node
                }
                None => self.node(scope, n),
            };
            self.origins.nodes.insert(
                node.id.clone(),
                scope.at(Loc::Node(scope.key.clone(), n.name.clone())),
            );
            self.nodes.push(node);
        }
        let links: usize = body
            .flow
            .iter()
            .flat_map(|s| s.groups.windows(2))
            .map(|w| w[0].len().saturating_mul(w[1].len()))
            .fold(0usize, usize::saturating_add);
        // Capped: a hostile flow's product of group sizes must not reserve terabytes.
        self.edges.reserve(links.min(1 << 20));
        for (s, stmt) in body.flow.iter().enumerate() {
            for g in 1..stmt.groups.len() {
                for (ti, src) in stmt.groups[g - 1].iter().enumerate() {
                    for (tj, dst) in stmt.groups[g].iter().enumerate() {
                        self.edge(scope, (s, g - 1, ti, src), (s, g, tj, dst));
                    }
                }
            }
            if let Some(last) = stmt.groups.last() {
                for (t, term) in last.iter().enumerate() {
                    if let Some(label) = term.label {
                        let at =
                            scope.at(Loc::Term(scope.key.clone(), s, stmt.groups.len() - 1, t));
                        self.report(
                            Finding::new(
                                Code::LabelOnNonGate,
                                at,
                                format!(
                                    "`{}.{label}` ends the statement, so the label leads nowhere",
                                    term.name
                                ),
                            )
                            .about(Subject::Node(term.name.clone()))
                            .label("label on a target")
                            .help(format!(
                                "a label goes on the source of an edge: `{}.{label} -> <node>`",
                                term.name
                            )),
                        );
                    }
                }
            }
        }
    }

    /// What a node of `scope` needs to be lowered on its own.
    fn node_scope(&self, scope: &Scope) -> NodeScope {
        NodeScope {
            file: scope.file.clone(),
            key: scope.key.clone(),
            prefix: scope.prefix.clone(),
            parallel: scope.parallel.clone(),
            knobs: self.knobs.clone(),
            artifacts: scope.artifacts.clone(),
            headless: self.headless,
        }
    }

    pub(super) fn resolve_name(
        &mut self,
        scope: &Scope,
        name: &str,
        loc: Loc,
    ) -> Option<Endpoints> {
        if let Some(e) = scope.names.get(name) {
            return Some(e.clone());
        }
        // A workflow may hand its `end` to a subgraph (`on_halt: end`): the instance
        // can then stop the run. Inside a subgraph `end` means "leave the subgraph".
        if name == END && scope.top {
            return Some(Endpoints::node(END));
        }
        if let Some(Binding::Node(e)) = scope.params.get(name) {
            return Some(e.clone());
        }
        let mut known: Vec<&str> = scope.names.keys().map(String::as_str).collect();
        known.extend(
            scope
                .params
                .iter()
                .filter(|(_, b)| matches!(b, Binding::Node(_)))
                .map(|(k, _)| k.as_str()),
        );
        let hint = closest(name, &known).map_or(String::new(), |c| format!("did you mean `{c}`? "));
        self.report(
            Finding::new(Code::UnknownNode, scope.at(loc), format!("no node, instance or parallel block is named `{name}`"))
                .about(Subject::Node(name.to_string()))
                .label("unknown name")
                .help(format!("{hint}declare it in this block (e.g. `agent {name} {{ role: ... }}`), or fix the name")),
        );
        None
    }

    fn edge(
        &mut self,
        scope: &mut Scope,
        from: (usize, usize, usize, &Term),
        to: (usize, usize, usize, &Term),
    ) {
        let (fs, fg, ft, src) = from;
        let (ts, tg, tt, dst) = to;
        let src_loc = Loc::Term(scope.key.clone(), fs, fg, ft);
        let dst_loc = Loc::Term(scope.key.clone(), ts, tg, tt);
        // Sources.
        // Holds the source's endpoints while `sources` borrows their ids.
        let resolved;
        let sources: Vec<(&str, Option<Label>)> = if src.name == START {
            if scope.top {
                vec![(START, None)]
            } else {
                Vec::new() // the body's entries are the targets, recorded below
            }
        } else if src.name == END {
            self.report(
                Finding::new(
                    Code::UnknownNode,
                    scope.at(src_loc),
                    "`end` cannot have successors",
                )
                .about(Subject::Node(END.to_string()))
                .help("`end` finishes the flow; put it last in a statement"),
            );
            return;
        } else {
            let Some(ends) = self.resolve_name(scope, &src.name, src_loc.clone()) else {
                return;
            };
            if src.label.is_some() && !ends.single {
                self.report(
                    Finding::new(Code::LabelOnNonGate, scope.at(src_loc), format!("`{}` is a subgraph instance or parallel block, which has no verdicts of its own", src.name))
                        .about(Subject::Instance(src.name.clone()))
                        .label("label on an instance")
                        .help("route the instance's outcomes inside the subgraph (pass the target as a node parameter)"),
                );
                return;
            }
            resolved = ends;
            resolved
                .exits
                .iter()
                .map(|(id, l)| (id.as_str(), src.label.or(*l)))
                .collect()
        };
        let (max, max_knob) = self.bound(scope, src, (fs, fg, ft));
        // Targets.
        let targets: Arc<[String]> = if dst.name == END {
            if scope.top {
                Arc::new([END.to_string()])
            } else {
                let exits = sources.iter().map(|(id, l)| (id.to_string(), *l));
                scope.exits.extend(exits);
                return;
            }
        } else if dst.name == START {
            self.report(
                Finding::new(
                    Code::UnknownNode,
                    scope.at(dst_loc),
                    "`start` cannot be the target of an edge",
                )
                .about(Subject::Node(START.to_string()))
                .help("`start` begins the flow; use a reloop to go back to an earlier node"),
            );
            return;
        } else {
            match self.resolve_name(scope, &dst.name, dst_loc.clone()) {
                Some(e) => e.entries,
                None => return,
            }
        };
        if src.name == START && !scope.top {
            scope.entries.extend(targets.iter().cloned());
            return;
        }
        for (from, label) in &sources {
            for to in targets.iter() {
                let edge = Edge {
                    from: from.to_string(),
                    to: to.clone(),
                    label: *label,
                    max: if *label == Some(Label::Reloop) {
                        max
                    } else {
                        None
                    },
                    max_knob: if *label == Some(Label::Reloop) {
                        max_knob.clone()
                    } else {
                        None
                    },
                };
                self.edges.push((
                    edge,
                    Some(scope.at(src_loc.clone())),
                    Some(scope.at(dst_loc.clone())),
                ));
            }
        }
    }

    fn bound(
        &mut self,
        scope: &Scope,
        term: &Term,
        at: (usize, usize, usize),
    ) -> (Option<u32>, Option<String>) {
        let Some(bound) = &term.bound else {
            return (None, None);
        };
        let loc = Loc::Bound(scope.key.clone(), at.0, at.1, at.2);
        if term.label != Some(Label::Reloop) {
            self.report(
                Finding::new(
                    Code::BadAttribute,
                    scope.at(loc),
                    "`(max N)` bounds only reloop edges",
                )
                .about(Subject::Node(term.name.clone()))
                .fix(Fix::DropBound)
                .help(format!(
                    "write `{}.reloop(max N) -> ...`, or drop the bound",
                    term.name
                )),
            );
            return (None, None);
        }
        match bound {
            BoundRef::Count(n) => (Some(*n), None),
            BoundRef::Name(name) => match self.value_of(scope, name) {
                Some((Literal::Int(n), knob)) if n >= 0 => {
                    (Some(n.min(u32::MAX as i64) as u32), knob)
                }
                _ => {
                    self.report(
                        Finding::new(
                            Code::BadArgument,
                            scope.at(loc),
                            format!("`{name}` is not an int knob or parameter"),
                        )
                        .about(Subject::Knob(name.clone()))
                        .help("a bound is a whole number or the name of an int knob or parameter"),
                    );
                    (None, None)
                }
            },
        }
    }

    /// The value of a knob or value parameter, with the knob it comes from.
    pub(super) fn value_of(
        &mut self,
        scope: &Scope,
        name: &str,
    ) -> Option<(Literal, Option<String>)> {
        if let Some(b) = scope.params.get(name) {
            return match b {
                Binding::Value { lit, knob } => {
                    if let Some(k) = knob {
                        self.used_knobs.insert(k.clone());
                    }
                    Some((lit.clone(), knob.clone()))
                }
                Binding::Node(_) => None,
            };
        }
        if scope.knobs
            && let Some(k) = self.knobs.iter().find(|k| k.name == name)
        {
            let lit = k.default.clone();
            self.used_knobs.insert(name.to_string());
            return Some((lit, Some(name.to_string())));
        }
        None
    }
}

impl Lowering<'_> {
    /// Marks knobs used through `{{knobs.x}}` in any template.
    fn scan_knob_templates(&mut self) {
        for n in &self.nodes {
            self.used_knobs
                .extend(knobs_in_templates(n).map(str::to_string));
        }
    }
}

/// The knobs node `n`'s templates name (`{{knobs.x}}`).
pub(super) fn knobs_in_templates(n: &Node) -> impl Iterator<Item = &str> {
    let a = &n.attrs;
    [&a.task, &a.run, &a.question, &a.prompt, &a.model]
        .into_iter()
        .flatten()
        .flat_map(|text| crate::validate::template_vars(text))
        .filter_map(|v| v.strip_prefix("knobs."))
}

/// The instance aliases and parallel block names of one body: the prefixes of the ids
/// inlined under them, which a dotted name declared beside them must not start with.
struct Prefixes<'b> {
    instances: BTreeSet<&'b str>,
    parallels: BTreeSet<&'b str>,
}

impl<'b> Prefixes<'b> {
    fn of(body: &'b Body) -> Prefixes<'b> {
        Prefixes {
            instances: body.uses.iter().map(|u| u.alias.as_str()).collect(),
            parallels: body.parallels.iter().map(|p| p.name.as_str()).collect(),
        }
    }

    /// The proper prefixes of a dotted name: `a`, `a.b` for `a.b.c`.
    fn heads(name: &str) -> impl Iterator<Item = &str> {
        name.match_indices('.').map(move |(i, _)| &name[..i])
    }

    /// The instance alias a dotted name starts with.
    fn instance_of<'n>(&self, name: &'n str) -> Option<&'n str> {
        Self::heads(name).find(|h| self.instances.contains(h))
    }

    /// Why a declared node or parallel name cannot be used: it ends in a verdict label
    /// (a flow would read `x.proceed` as the verdict of `x`), or it starts with the
    /// prefix of an instance's or parallel block's inlined ids.
    fn clash(&self, name: &str) -> Option<(String, &'static str, String)> {
        if let Some((head, last)) = name.rsplit_once('.')
            && let Some(label) = Label::parse(last)
        {
            return Some((
                format!(
                    "`{name}` ends in the label `{label}`: a flow would read it as the `{label}` edge of `{head}`"
                ),
                "ambiguous name",
                format!("rename it, e.g. `{head}_{label}`"),
            ));
        }
        let head =
            Self::heads(name).find(|h| self.instances.contains(h) || self.parallels.contains(h))?;
        let what = if self.instances.contains(head) {
            "instance"
        } else {
            "parallel block"
        };
        Some((
            format!("`{name}` collides with the ids of {what} `{head}`, which are `{head}.<name>`"),
            "clashing name",
            format!("rename it so it does not start with `{head}.`"),
        ))
    }
}

fn placeholder(ty: ParamType) -> Literal {
    match ty {
        ParamType::Int => Literal::Int(1),
        ParamType::Float => Literal::Float(FloatText::from_f64(1.0)),
        ParamType::Bool => Literal::Bool(false),
        ParamType::String | ParamType::Node => Literal::Str(String::new()),
    }
}

/// The known name closest to `name` by edit distance, if any is close.
pub(super) fn closest<'n>(name: &str, known: &[&'n str]) -> Option<&'n str> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d <= (k.len().max(name.len()) / 3).max(1))
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
