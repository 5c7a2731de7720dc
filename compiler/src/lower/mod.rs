//! Lowering: a `workflow` declaration and the subgraphs it uses become one flat [`Ir`].
//!
//! Subgraph instances are inlined with prefixed ids (`qa.gate`), parameters are
//! substituted, knob references are resolved to values (keeping the knob's name beside
//! the value so the outer loop can tune it), and every edge is made explicit. Findings
//! here are the rules that need the tree (names, imports, arguments, attributes); the
//! graph rules run afterwards on the IR in [`crate::validate`].

mod attrs;
mod body;
mod instance;
mod node;

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{IR_VERSION, Ir, WorkflowMeta};
use crate::syntax::{Decl, DeclKind, Loc};
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

/// Lowers workflow `decl` of file `file`.
pub fn lower(file: &str, decl: &Decl, subgraphs: &Subgraphs<'_>) -> Lowered {
    let headless = matches!(decl.kind, DeclKind::Workflow { headless: true });
    let mut cx = body::Lowering::new(subgraphs);
    cx.lower_workflow(file, decl);
    let body::Lowering {
        nodes,
        mut edges,
        knobs,
        inputs,
        mut origins,
        findings,
        used_subgraphs,
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
    origins.workflow = Some(FileLoc {
        file: file.to_string(),
        loc: Loc::Decl(decl.name.clone()),
    });
    Lowered {
        ir,
        origins,
        findings,
        used_subgraphs,
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
