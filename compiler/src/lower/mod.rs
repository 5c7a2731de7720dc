//! Lowering: a `workflow` declaration and the subgraphs it uses become one flat [`Ir`].
//!
//! Subgraph instances are inlined with prefixed ids (`qa.gate`), parameters are
//! substituted, knob references are resolved to values (keeping the knob's name beside
//! the value so the outer loop can tune it), and every edge is made explicit. Findings
//! here are the rules that need the tree (names, imports, arguments, attributes); the
//! graph rules run afterwards on the IR in [`crate::validate`].
//!
//! Lowering is split so that an edit to one node's details lowers that node only:
//! [`lower_structure`] lowers a workflow from [`structure_input`] (its nodes reduced to
//! what the graph needs) and leaves each of its own nodes as a [`Slot`];
//! [`lower_node`] lowers one slot's node in full; [`assemble`] puts them together,
//! and [`findings`] gathers their findings with what only the whole can tell (the
//! knobs used nowhere).

mod attrs;
mod body;
mod instance;
mod node;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::diagnostic::{Code, Fix, Subject};
use crate::ir::{Artifact, IR_VERSION, Ir, Knob, Node, WorkflowMeta};
use crate::syntax::{Ast, Body, Decl, DeclKind, GateBy, Loc, NodeDecl, Parallel};
use crate::validate::{Finding, IrRef};

pub use attrs::ALLOWED_ATTRS;

/// A syntax location in a specific file; files are named by the loader's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileLoc {
    pub file: String,
    pub loc: Loc,
}

/// Where each part of a lowered IR came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origins {
    pub workflow: Option<FileLoc>,
    /// Hashed: one entry per node, filled on every lowering.
    pub nodes: rustc_hash::FxHashMap<String, FileLoc>,
    /// Indexed like `Ir::edges`.
    pub edges: Vec<Option<FileLoc>>,
    /// Where each edge's target is written, indexed like `Ir::edges`.
    pub edge_targets: Vec<Option<FileLoc>>,
    pub knobs: BTreeMap<String, FileLoc>,
}

impl Origins {
    pub fn locate(&self, r: &IrRef) -> Option<FileLoc> {
        match r {
            IrRef::Workflow => self.workflow.clone(),
            IrRef::Node(id) => self.nodes.get(id).cloned(),
            IrRef::Edge(i) => self.edges.get(*i).cloned().flatten(),
            IrRef::EdgeTarget(i) => self
                .edge_targets
                .get(*i)
                .cloned()
                .flatten()
                .or_else(|| self.locate(&IrRef::Edge(*i))),
            IrRef::Knob(k) => self.knobs.get(k).cloned(),
        }
    }
}

/// The subgraphs visible to a workflow: name → (file key, declaration).
pub type Subgraphs<'a> = BTreeMap<String, (String, &'a Decl)>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    pub ir: Ir,
    pub origins: Origins,
    pub findings: Vec<Finding<FileLoc>>,
    /// Subgraph names this workflow instantiated (for the unused-import warning).
    pub used_subgraphs: BTreeSet<String>,
}

/// A workflow lowered but for its own nodes' details: everything the graph rules read,
/// with the nodes of the workflow and of its parallel blocks left as [`Slot`]s for
/// [`lower_node`]. An edit to a node's task, role or timeout leaves it equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structure {
    /// Complete except the slots' nodes, which hold only their kind, reads, writes,
    /// outcomes and evaluator.
    pub ir: Ir,
    pub origins: Origins,
    /// The findings of the workflow outside its slots' nodes.
    pub findings: Vec<Finding<FileLoc>>,
    pub used_subgraphs: BTreeSet<String>,
    /// Knobs used outside the slots' nodes.
    pub used_knobs: BTreeSet<String>,
    /// The knobs declared, each with where.
    pub knobs: Vec<(String, FileLoc)>,
    pub slots: Vec<Slot>,
}

/// A node lowered on its own, by [`lower_node`]. (The scope is shared by the slots of
/// one body, so comparing slots mostly compares pointers.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Where its declaration is in the file's tree.
    pub path: NodePath,
    /// Its place in [`Structure::ir`]'s nodes.
    pub index: usize,
    pub scope: Arc<NodeScope>,
}

/// Where a node declaration is in a file's tree: the declaration's index, the parallel
/// blocks (by index) down to its body, and its index in that body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodePath {
    pub decl: usize,
    pub parallels: Vec<usize>,
    pub node: usize,
}

impl NodePath {
    pub fn find<'a>(&self, ast: &'a Ast) -> Option<&'a Arc<NodeDecl>> {
        let mut body = &ast.decls.get(self.decl)?.body;
        for &p in &self.parallels {
            body = &body.parallels.get(p)?.body;
        }
        body.nodes.get(self.node)
    }
}

/// What lowering one node needs of the body it is declared in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeScope {
    pub file: String,
    /// The scope its locations are under (`Loc::Node(key, name)`).
    pub key: String,
    /// Prepended to its name to make its id.
    pub prefix: String,
    /// The `parallel` node whose body it is in, if any.
    pub parallel: Option<String>,
    /// The workflow's knobs, for knob references.
    pub knobs: Vec<Knob>,
    /// The artifacts its `reads` may name.
    pub artifacts: Arc<BTreeMap<String, Artifact>>,
    pub headless: bool,
}

/// A node lowered on its own: the node, the findings of lowering it, the rules about
/// it alone, and the knobs it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePart {
    pub node: Node,
    pub findings: Vec<Finding<FileLoc>>,
    pub rules: Vec<Finding<FileLoc>>,
    pub used_knobs: Vec<String>,
}

/// The tree lowering's structure reads: the file as written, except that the nodes of
/// workflows (and of their parallel blocks) keep only what the graph needs — kind,
/// evaluator, `reads`, `writes` and `outcomes`. It is equal across edits to anything
/// else in a node, so [`lower_structure`] does not run again for them. Subgraphs are
/// kept whole: their nodes are lowered with each instance's arguments.
pub fn structure_input(ast: &Ast) -> Ast {
    fn strip(body: &Body) -> Body {
        Body {
            nodes: body
                .nodes
                .iter()
                .map(|n| n.view.get_or_init(|| Arc::new(graph_view(n))).clone())
                .collect(),
            parallels: body
                .parallels
                .iter()
                .map(|p| Parallel {
                    name: p.name.clone(),
                    doc: p.doc.clone(),
                    args: p.args.clone(),
                    isolation: p.isolation.clone(),
                    body: strip(&p.body),
                })
                .collect(),
            inputs: body.inputs.clone(),
            knobs: body.knobs.clone(),
            uses: body.uses.clone(),
            flow: body.flow.clone(),
            recovered: body.recovered.clone(),
        }
    }
    Ast {
        doc: String::new(),
        imports: ast.imports.clone(),
        decls: ast
            .decls
            .iter()
            .map(|d| match d.kind {
                DeclKind::Workflow { .. } => Decl {
                    kind: d.kind,
                    name: d.name.clone(),
                    doc: d.doc.clone(),
                    params: d.params.clone(),
                    body: strip(&d.body),
                },
                DeclKind::Subgraph => d.clone(),
            })
            .collect(),
        incomplete: ast.incomplete,
    }
}

/// What the graph needs of node `n`: its name, kind, evaluator, strategy, `reads`,
/// `writes` and `outcomes`. Kept with the node (`NodeDecl::view`), so an unchanged node
/// gives the same view, compared by pointer.
fn graph_view(n: &NodeDecl) -> NodeDecl {
    NodeDecl {
        gate_by: n.gate_by.as_ref().map(|g| match g {
            GateBy::Agent(_) => GateBy::Agent(String::new()),
            GateBy::Fn(_) => GateBy::Fn(String::new()),
            GateBy::User => GateBy::User,
        }),
        strategy: n.strategy.clone(),
        attrs: n
            .attrs
            .iter()
            .filter(|a| GRAPH_ATTRS.contains(&a.key.as_str()))
            .cloned()
            .collect(),
        ..NodeDecl::new(n.name.clone(), n.kind)
    }
}

/// The attributes of a node that the graph rules read.
const GRAPH_ATTRS: &[&str] = &["reads", "writes", "outcomes"];

/// Lowers workflow `decl`, the `index`th declaration of file `file`, but for its
/// slots' nodes.
pub fn lower_structure(
    file: &str,
    decl: &Decl,
    index: usize,
    subgraphs: &Subgraphs<'_>,
) -> Structure {
    let mut cx = body::Lowering::new(subgraphs);
    cx.lower_workflow(file, decl, index);
    let body::Lowering {
        nodes,
        mut edges,
        knobs,
        inputs,
        mut origins,
        findings,
        used_subgraphs,
        used_knobs,
        slots,
        headless,
        ..
    } = cx;
    let description = decl
        .doc
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .replace('\n', " ");
    let mut ir = Ir {
        ir_version: IR_VERSION,
        workflow: WorkflowMeta {
            name: decl.name.clone(),
            description,
            doc: decl.doc.clone(),
            headless,
            inputs,
        },
        start: crate::ir::START.to_string(),
        knobs,
        nodes,
        edges: Vec::new(),
    };
    // Sort edges with their origins so both stay indexed alike.
    crate::ir::sort_large(&mut edges, |a, b| a.0.cmp(&b.0));
    edges.dedup_by(|a, b| a.0 == b.0);
    ir.edges.reserve_exact(edges.len());
    origins.edges.reserve_exact(edges.len());
    origins.edge_targets.reserve_exact(edges.len());
    for (edge, from, to) in edges {
        ir.edges.push(edge);
        origins.edges.push(from);
        origins.edge_targets.push(to);
    }
    ir.canonicalize();
    let slots = slots
        .into_iter()
        .filter_map(|(id, slot)| {
            let index = ir.nodes.binary_search_by(|n| n.id.cmp(&id)).ok()?;
            Some(Slot { index, ..slot })
        })
        .collect();
    origins.workflow = Some(FileLoc {
        file: file.to_string(),
        loc: Loc::Decl(decl.name.clone()),
    });
    let knobs = decl
        .body
        .knobs
        .iter()
        .map(|k| {
            let at = FileLoc {
                file: file.to_string(),
                loc: Loc::Knob(decl.name.clone(), k.name.clone()),
            };
            (k.name.clone(), at)
        })
        .collect();
    Structure {
        ir,
        origins,
        findings,
        used_subgraphs,
        used_knobs,
        knobs,
        slots,
    }
}

/// Lowers node `decl` in `scope`: the node with every attribute, the findings of
/// lowering it, and the rules about it alone (`roles`: those with a prompt, `None` to
/// skip the role check).
pub fn lower_node(
    decl: &NodeDecl,
    scope: &NodeScope,
    roles: Option<&BTreeSet<String>>,
) -> NodePart {
    let subgraphs = Subgraphs::new();
    let mut cx = body::Lowering::new(&subgraphs);
    cx.knobs = scope.knobs.clone();
    let body_scope = body::Scope::for_node(scope);
    let node = cx.node(&body_scope, decl);
    let mut used_knobs: Vec<String> = cx.used_knobs.into_iter().collect();
    used_knobs.extend(body::knobs_in_templates(&node).map(str::to_string));
    let at = FileLoc {
        file: scope.file.clone(),
        loc: Loc::Node(scope.key.clone(), decl.name.clone()),
    };
    let rules = crate::validate::node_rules(&node, &scope.knobs, scope.headless, roles)
        .into_iter()
        .map(|f| place(f.map(|_| at.clone())))
        .collect();
    NodePart {
        node,
        findings: cx.findings,
        rules,
        used_knobs,
    }
}

/// Points a rule's finding that names an attribute at that attribute. (A node without
/// it — a role taken from the name, a gate's inline question — falls back to the node
/// when positions are looked up.)
pub fn place(mut f: Finding<FileLoc>) -> Finding<FileLoc> {
    match (&f.attr, &f.at.loc) {
        (Some(key), Loc::Node(scope, node)) => {
            f.at.loc = Loc::Attr(scope.clone(), node.clone(), key.clone());
        }
        // A parallel block's `count` is an argument, not an attribute.
        (Some(key), Loc::Parallel(scope, block)) => {
            f.at.loc = Loc::ParallelArg(scope.clone(), block.clone(), key.clone());
        }
        _ => {}
    }
    f
}

/// Every finding of lowering workflow `s` whose slots' nodes gave `parts`: the
/// structure's, each node's, and the knobs used nowhere.
pub fn findings(s: &Structure, parts: &[(usize, &NodePart)]) -> Vec<Finding<FileLoc>> {
    let mut out = s.findings.clone();
    for (_, part) in parts {
        out.extend(part.findings.iter().cloned());
    }
    out.extend(unused_knobs(s, parts.iter().map(|(_, p)| *p)));
    out
}

/// The knobs of workflow `s` used nowhere: not in its structure, not in its slots'
/// nodes (`parts`).
fn unused_knobs<'p>(
    s: &Structure,
    parts: impl IntoIterator<Item = &'p NodePart>,
) -> Vec<Finding<FileLoc>> {
    let mut used: BTreeSet<&str> = s.used_knobs.iter().map(String::as_str).collect();
    for part in parts {
        used.extend(part.used_knobs.iter().map(String::as_str));
    }
    s.knobs
        .iter()
        .filter(|(name, _)| !used.contains(name.as_str()))
        .map(|(name, at)| {
            Finding::new(
                Code::UnusedKnob,
                at.clone(),
                format!("knob `{name}` is never used"),
            )
            .about(Subject::Knob(name.clone()))
            .fix(Fix::RemoveLine {
                keyword: "knob".into(),
            })
            .label("unused")
            .help(format!(
                "use it (`(max {name})`, an argument, `{{{{knobs.{name}}}}}`) or delete it"
            ))
        })
        .collect()
}

/// The whole workflow: structure `s` with its slots' nodes (`parts`, each with its
/// place in the nodes) put in place.
pub fn assemble(s: &Structure, parts: &[(usize, &NodePart)]) -> Lowered {
    let mut full: Vec<Option<&Node>> = vec![None; s.ir.nodes.len()];
    for (index, part) in parts {
        if let Some(slot) = full.get_mut(*index) {
            *slot = Some(&part.node);
        }
    }
    // The slots' nodes are taken whole from their parts, the others from the structure.
    let nodes =
        s.ir.nodes
            .iter()
            .zip(full)
            .map(|(n, part)| part.unwrap_or(n).clone())
            .collect();
    let ir = Ir {
        ir_version: s.ir.ir_version,
        workflow: s.ir.workflow.clone(),
        start: s.ir.start.clone(),
        knobs: s.ir.knobs.clone(),
        nodes,
        edges: s.ir.edges.clone(),
    };
    Lowered {
        ir,
        origins: s.origins.clone(),
        findings: findings(s, parts),
        used_subgraphs: s.used_subgraphs.clone(),
    }
}

/// Lowers subgraph `decl` on its own to report the findings in its body, and holds its
/// graph to the one rule that does not depend on how it is used: a fork inside it is
/// closed inside it. (Otherwise the fork would be reported only in the workflows that
/// use the subgraph, never in the subgraph's own file.)
pub fn check_subgraph(file: &str, decl: &Decl, subgraphs: &Subgraphs<'_>) -> Vec<Finding<FileLoc>> {
    let mut cx = body::Lowering::new(subgraphs);
    let ends = cx.check_subgraph(file, decl);
    let mut findings = std::mem::take(&mut cx.findings);
    if findings
        .iter()
        .any(|f| f.code.severity() == crate::diagnostic::Severity::Error)
    {
        return findings;
    }
    let ir = standalone(decl, cx.nodes, cx.edges.into_iter().map(|e| e.0), ends);
    for f in crate::validate::unclosed_forks(&ir) {
        let f = f.map(|r| cx.origins.locate(&r));
        if let Some(f) = f.transpose().filter(|f| f.at.file == file) {
            findings.push(f);
        }
    }
    findings
}

/// A subgraph's body as a graph of its own: `start` before its entries, `end` after its
/// exits, and each node parameter a stand-in node that leads to `end`.
fn standalone(
    decl: &Decl,
    mut nodes: Vec<crate::ir::Node>,
    edges: impl Iterator<Item = crate::ir::Edge>,
    ends: body::Endpoints,
) -> Ir {
    use crate::ir::{Attrs, END, Edge, Node, NodeKind, START};
    let edge = |from: &str, to: &str, label| Edge {
        from: from.to_string(),
        to: to.to_string(),
        label,
        max: None,
        max_knob: None,
    };
    let mut edges: Vec<Edge> = edges.collect();
    for (id, kind) in [(START, NodeKind::Start), (END, NodeKind::End)] {
        nodes.push(Node {
            id: id.to_string(),
            kind,
            parallel: None,
            attrs: Attrs::default(),
        });
    }
    for p in decl
        .params
        .iter()
        .filter(|p| p.ty == crate::syntax::ParamType::Node)
    {
        nodes.push(Node {
            id: p.name.clone(),
            kind: NodeKind::Agent,
            parallel: None,
            attrs: Attrs::default(),
        });
        edges.push(edge(&p.name, END, None));
    }
    edges.extend(ends.entries.iter().map(|to| edge(START, to, None)));
    edges.extend(
        ends.exits
            .iter()
            .map(|(from, label)| edge(from, END, *label)),
    );
    let mut ir = Ir {
        ir_version: IR_VERSION,
        workflow: WorkflowMeta {
            name: decl.name.clone(),
            description: String::new(),
            doc: String::new(),
            headless: false,
            inputs: Vec::new(),
        },
        start: START.to_string(),
        knobs: Vec::new(),
        nodes,
        edges,
    };
    ir.canonicalize();
    ir.nodes.dedup_by(|a, b| a.id == b.id);
    ir.edges.dedup();
    ir
}
