//! The flat, versioned intermediate representation of a workflow.
//!
//! The IR is the contract between the compiler and everything downstream: the executor,
//! the SKILL.md emitter, the outer loop and the graph validator read only this. It holds
//! no source positions; where a node or edge came from lives in a side table
//! ([`IrSpans`]), so IR produced by mutation (with no `.fwf` behind it) is the same kind
//! of value as IR lowered from source.
//!
//! Canonical order: knobs by name, nodes by id, edges by (from, to, label). Every
//! constructor of an [`Ir`] calls [`Ir::canonicalize`], so two equal graphs are equal
//! values and print to the same text.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

/// Version of the IR format. Bump when a field changes meaning or is removed.
pub const IR_VERSION: u32 = 1;

/// The id of the entry node every workflow has.
pub const START: &str = "start";
/// The id of the terminal node every workflow has.
pub const END: &str = "end";

/// A whole workflow, flattened: subgraphs inlined with prefixed ids, knobs resolved,
/// every edge explicit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ir {
    pub ir_version: u32,
    pub workflow: WorkflowMeta,
    /// Id of the entry node (always [`START`] for lowered workflows).
    pub start: String,
    pub knobs: Vec<Knob>,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowMeta {
    pub name: String,
    /// First paragraph of the workflow's `//!` doc comment.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The whole `//!` doc comment.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
    /// A headless mode never waits for a person (a `user` gate in it is a warning).
    #[serde(default, skip_serializing_if = "is_false")]
    pub headless: bool,
    /// Artifacts the workflow expects to exist before it starts (`input name = "path"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<Artifact>,
}

/// A tunable value. Knobs are what the outer loop mutates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: KnobType,
    pub default: Literal,
    /// Inclusive numeric bounds, for `int` and `float` knobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Literal>,
    /// Allowed values, for `string` knobs declared `in ["a", "b"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The outer loop may invent values beyond `choices`/bounds.
    #[serde(default, skip_serializing_if = "is_false")]
    pub expandable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KnobType {
    Int,
    Float,
    String,
    Bool,
}

/// A literal value. Floats keep their source text so the IR round-trips byte for byte
/// and stays `Eq`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Literal {
    Bool(bool),
    Int(i64),
    Str(String),
    Float(FloatText),
}

/// A float kept as its shortest round-trip decimal text (e.g. `"0.25"`, `"1.0"`), so
/// it is `Eq` and prints the same every time. Serialized as a JSON number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FloatText(String);

impl FloatText {
    pub fn from_f64(value: f64) -> FloatText {
        FloatText(format!("{value:?}"))
    }

    pub fn value(&self) -> Option<f64> {
        self.0.parse().ok()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for FloatText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.value().unwrap_or(f64::NAN))
    }
}

impl<'de> Deserialize<'de> for FloatText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(FloatText::from_f64)
    }
}

impl Literal {
    /// The numeric value of an int or float literal.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Literal::Int(i) => Some(*i as f64),
            Literal::Float(f) => f.value(),
            _ => None,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Str(s) => write!(f, "{s:?}"),
            Literal::Float(x) => f.write_str(&x.0),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Start,
    End,
    /// A role run through a runner (an agent CLI).
    Agent,
    /// A shell command.
    Fn,
    /// A decision point: evaluated by an agent, a command or the user.
    Gate,
    Fork,
    Join,
    /// Runs its body once per hypothesis, each in its own git worktree.
    Parallel,
    /// Picks the winner among the branches of a `parallel`.
    Select,
    /// Builds the study of the project (code graph, observations).
    Study,
    /// A direct model call.
    Llm,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Start => "start",
            NodeKind::End => "end",
            NodeKind::Agent => "agent",
            NodeKind::Fn => "fn",
            NodeKind::Gate => "gate",
            NodeKind::Fork => "fork",
            NodeKind::Join => "join",
            NodeKind::Parallel => "parallel",
            NodeKind::Select => "select",
            NodeKind::Study => "study",
            NodeKind::Llm => "llm",
        }
    }

    pub fn parse(s: &str) -> Option<NodeKind> {
        Some(match s {
            "start" => NodeKind::Start,
            "end" => NodeKind::End,
            "agent" => NodeKind::Agent,
            "fn" => NodeKind::Fn,
            "gate" => NodeKind::Gate,
            "fork" => NodeKind::Fork,
            "join" => NodeKind::Join,
            "parallel" => NodeKind::Parallel,
            "select" => NodeKind::Select,
            "study" => NodeKind::Study,
            "llm" => NodeKind::Llm,
            _ => return None,
        })
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub id: String,
    pub kind: NodeKind,
    /// The `parallel` node whose body holds this node (the innermost one, when bodies
    /// nest): each branch runs the nodes that name it. Set by lowering, checked by the
    /// validator against the graph (FWF028), so the executor, the emitters and the
    /// outer loop read membership here and never from the id's spelling.
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    pub parallel: Option<String>,
    #[serde(default, skip_serializing_if = "Attrs::is_empty")]
    pub attrs: Attrs,
}

/// Who evaluates a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Evaluator {
    /// An agent in a role (the role is in `Attrs::role`) writes a verdict file.
    Agent,
    /// A command (in `Attrs::run`): a JSON verdict on stdout, else exit 0 is proceed
    /// and 1 halt; any other exit fails the gate.
    Fn,
    /// A person answers.
    User,
}

/// Where a node's processes run: on the host with the user's rights, or in a sandbox
/// made from the node's reads and writes (the runtime's `placement` room).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    Host,
    Sandbox,
}

impl Placement {
    pub const ALL: [Placement; 2] = [Placement::Host, Placement::Sandbox];

    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Host => "host",
            Placement::Sandbox => "sandbox",
        }
    }

    pub fn parse(s: &str) -> Option<Placement> {
        Placement::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Node attributes. Which keys a kind accepts is decided by the compiler's attribute
/// table; the IR stores whatever a node has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Attrs {
    /// The node's `///` doc comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Path of a prompt file that replaces the role's default prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Task text given to the agent (a template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Shell command of a `fn` node or `fn` gate (a template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluator: Option<Evaluator>,
    /// The question a gate answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Outcomes a gate can emit, when narrower than its evaluator's default set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<Label>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<Artifact>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<Artifact>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// Seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    /// Where the node's processes run, when the node says (else the run's placement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Non-blocking: the run does not wait for it.
    #[serde(default, rename = "async", skip_serializing_if = "is_false")]
    pub is_async: bool,
    /// Number of branches of a `parallel` node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Knob that `count` came from, so the outer loop can tune it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_knob: Option<String>,
    /// Isolation of a `parallel` node's branches (`worktrees`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// Selection strategy of a `select` node (`best_score`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
}

impl Attrs {
    pub fn is_empty(&self) -> bool {
        *self == Attrs::default()
    }
}

/// A file a node reads or writes, optionally named so other nodes (and subgraph
/// instances) can refer to it by name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub path: String,
}

/// A check on an artifact a node writes, run after the node finishes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    Exists,
    MinSize(u64),
    Contains(String),
}

/// The label of an edge: a gate's verdict, or `fail` (any node's failure path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    Proceed,
    Reloop,
    Halt,
    Fail,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Proceed => "proceed",
            Label::Reloop => "reloop",
            Label::Halt => "halt",
            Label::Fail => "fail",
        }
    }

    pub fn parse(s: &str) -> Option<Label> {
        Some(match s {
            "proceed" => Label::Proceed,
            "reloop" => Label::Reloop,
            "halt" => Label::Halt,
            "fail" => Label::Fail,
            _ => return None,
        })
    }

    /// Verdicts are labels only a gate can emit; `fail` belongs to every node.
    pub fn is_verdict(self) -> bool {
        !matches!(self, Label::Fail)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<Label>,
    /// How many times a `reloop` edge may be taken per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// Knob the bound came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_knob: Option<String>,
}

impl Ir {
    /// Sorts knobs, nodes and edges into canonical order.
    pub fn canonicalize(&mut self) {
        self.knobs.sort_by(|a, b| a.name.cmp(&b.name));
        sort_large(&mut self.nodes, |a, b| a.id.cmp(&b.id));
        sort_large(&mut self.edges, Edge::cmp);
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes
            .binary_search_by(|n| n.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.nodes[i])
    }

    pub fn knob(&self, name: &str) -> Option<&Knob> {
        self.knobs.iter().find(|k| k.name == name)
    }

    /// Whether node `id` is in the body of `parallel` node `p`, directly or inside a
    /// body nested in it. (The walk up the `in` chain stops after as many steps as there
    /// are nodes, so a cyclic chain in hostile IR ends; FWF028 reports it.)
    pub fn in_body(&self, p: &str, id: &str) -> bool {
        let mut at = self.node(id).and_then(|n| n.parallel.as_deref());
        for _ in 0..self.nodes.len() {
            match at {
                None => return false,
                Some(q) if q == p => return true,
                Some(q) => at = self.node(q).and_then(|n| n.parallel.as_deref()),
            }
        }
        false
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Byte range in a source text.
pub type Span = Range<usize>;

/// Where the parts of an IR came from, in one source text: a `.fwf` file or an IR text
/// file. Kept apart from [`Ir`] so that moving text never changes the IR.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IrSpans {
    pub workflow: Option<Span>,
    pub nodes: BTreeMap<String, Span>,
    /// Indexed like `Ir::edges`.
    pub edges: Vec<Option<Span>>,
    pub knobs: BTreeMap<String, Span>,
}

pub mod conventions;
mod hash;
mod json;
mod order;
pub mod text;

pub use hash::content_hash;
pub use json::{from_json, to_json};
pub use order::execution_order;
pub use text::{TextError, parse_text, to_text};

/// A stable sort for vectors of large elements: indices are sorted and each element
/// is moved once, where sorting the elements themselves moves each of them about
/// log n times (a fifth of lowering a large workflow). Sorted input is only compared.
pub(crate) fn sort_large<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
    if v.windows(2).all(|w| cmp(&w[0], &w[1]).is_le()) {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| cmp(&v[a], &v[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Equal keys keep their order, as with `sort_by`.
        #[test]
        fn sort_large_is_a_stable_sort(v in proptest::collection::vec((0u8..8, any::<u16>()), 0..200)) {
            let mut expected = v.clone();
            expected.sort_by_key(|a| a.0);
            let mut got = v;
            super::sort_large(&mut got, |a, b| a.0.cmp(&b.0));
            prop_assert_eq!(got, expected);
        }
    }
}
