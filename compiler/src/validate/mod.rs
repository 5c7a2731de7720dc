//! Graph rules, run on the IR. `.fwf` files and bare IR text are validated by exactly
//! this code; findings point at IR entities ([`IrRef`]) and the caller maps them to
//! source spans through its side table.

mod dataflow;
mod forks;
mod graph;
mod local;
mod templates;
mod whole;

use std::collections::BTreeSet;

use crate::diagnostic::Code;
use crate::ir::Ir;

pub use graph::Graph;
pub(crate) use local::count_problem;
pub use local::{knob_type_name, literal_fits};
pub use templates::{RUNTIME_VARS, template_vars};

/// A part of an IR a finding points at.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IrRef {
    Workflow,
    Node(String),
    /// Index into `Ir::edges`; in source, where the edge's source is written.
    Edge(usize),
    /// The same edge, located where its target is written (`b` in `a -> b`).
    EdgeTarget(usize),
    Knob(String),
}

/// A finding of the graph rules, addressed to IR entities until it is placed (the type
/// lives beside `Diagnostic`).
pub type Finding<At = IrRef> = crate::diagnostic::Finding<At>;

/// A node kind with its indefinite article, for messages: "an agent", "a fork".
pub fn a_kind(kind: crate::ir::NodeKind) -> String {
    let name = kind.to_string();
    // By sound: "an llm" (el-el-em), "an end".
    let article =
        if matches!(name.chars().next(), Some('a' | 'e' | 'i' | 'o' | 'u')) || name == "llm" {
            "an"
        } else {
            "a"
        };
    format!("{article} {name}")
}

/// What the validator needs to know beyond the IR itself.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Roles that have a prompt. `None` skips the role check.
    pub roles: Option<BTreeSet<String>>,
}

/// Runs every rule on `ir`: the rules about single nodes, edges and knobs, then the
/// graph rules.
pub fn validate(ir: &Ir, cx: &Context) -> Vec<Finding> {
    let mut out = local_rules(ir, cx);
    out.extend(graph_rules(&skeleton(ir)));
    out
}

/// The rules about one node, edge or knob at a time, and templates.
pub fn local_rules(ir: &Ir, cx: &Context) -> Vec<Finding> {
    local_rules_except(ir, cx, |_| false)
}

/// [`local_rules`], except the rules about the single nodes at the indices `apart`
/// selects: those nodes are held to [`node_rules`] on their own.
pub fn local_rules_except(ir: &Ir, cx: &Context, apart: impl Fn(usize) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    local::check(ir, cx, apart, &mut out);
    out
}

/// What the workflow-wide rules read of a node: small, so an edit to anything else in
/// a node leaves it equal and those rules do not run again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeFact {
    pub id: String,
    /// The role of an agent or agent gate.
    pub role: Option<String>,
    /// It is the keep gate of an experiment (`factory precheck … --exp`).
    pub prechecks: bool,
}

impl NodeFact {
    pub fn of(n: &crate::ir::Node) -> NodeFact {
        let agent = matches!(
            n.kind,
            crate::ir::NodeKind::Agent | crate::ir::NodeKind::Gate
        );
        NodeFact {
            id: n.id.clone(),
            role: n.attrs.role.clone().filter(|_| agent),
            prechecks: crate::ir::conventions::prechecks_experiment(n),
        }
    }
}

/// The rules about a workflow as a whole that read its nodes' attributes (a precheck
/// without the QA roles), on the facts of every node.
pub fn workflow_rules(nodes: &[NodeFact]) -> Vec<Finding> {
    let mut out = Vec::new();
    whole::precheck_qa(nodes, &mut out);
    out
}

/// The rules about node `n` alone, in a workflow with `knobs` that is `headless` or
/// not: its role (among `roles`, unless `None`), its gate's evaluator, its parallel
/// count, its template variables.
pub fn node_rules(
    n: &crate::ir::Node,
    knobs: &[crate::ir::Knob],
    headless: bool,
    roles: Option<&BTreeSet<String>>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    local::node(n, knobs, headless, roles, &mut out);
    out
}

/// The graph rules (reachability, forks and joins, dataflow, cycles), run on a
/// [`skeleton`].
pub fn graph_rules(skeleton: &Ir) -> Vec<Finding> {
    let mut out = Vec::new();
    let g = Graph::new(skeleton, &mut out);
    graph::check(skeleton, &g, &mut out);
    forks::check(skeleton, &g, &mut out);
    dataflow::check(skeleton, &g, &mut out);
    out
}

/// What the graph rules read of an IR: the workflow's name and inputs, node ids and
/// kinds, every edge, and what each node reads and writes. An edit that changes nothing of these (a
/// timeout, a task, a role, a doc) gives an equal skeleton, so the database does not run
/// the graph rules again.
pub fn skeleton(ir: &Ir) -> Ir {
    Ir {
        ir_version: ir.ir_version,
        workflow: crate::ir::WorkflowMeta {
            name: ir.workflow.name.clone(),
            inputs: ir.workflow.inputs.clone(),
            ..Default::default()
        },
        start: ir.start.clone(),
        knobs: Vec::new(),
        nodes: ir
            .nodes
            .iter()
            .map(|n| crate::ir::Node {
                id: n.id.clone(),
                kind: n.kind,
                parallel: n.parallel.clone(),
                attrs: crate::ir::Attrs {
                    reads: n.attrs.reads.clone(),
                    writes: n.attrs.writes.clone(),
                    ..Default::default()
                },
            })
            .collect(),
        edges: ir.edges.clone(),
    }
}

/// The forks of `ir` that no join closes (for a subgraph checked on its own, where the
/// other graph rules depend on how it is used).
pub fn unclosed_forks(ir: &Ir) -> Vec<Finding> {
    let mut out = Vec::new();
    let g = Graph::new(ir, &mut out);
    out.clear();
    forks::check(ir, &g, &mut out);
    out.retain(|f| f.code == Code::ForkWithoutJoin);
    out
}
