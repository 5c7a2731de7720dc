//! The syntax tree of a `.fwf` file, free of source positions.
//!
//! Positions live apart in [`SourceMap`](super::SourceMap), keyed by [`Loc`], so an edit
//! that only moves text yields an equal `Ast` and salsa re-runs nothing downstream.

use std::sync::Arc;

use crate::ir::{Label, Literal, NodeKind};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ast {
    /// `//!` lines at the top of the file.
    pub doc: String,
    pub imports: Vec<Import>,
    pub decls: Vec<Decl>,
    /// Some text was skipped by a syntax error, so the tree is incomplete and graph
    /// rules on it would only report the gaps.
    pub incomplete: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// As written: `std/study`, `./lib/common`, `../x.fwf`.
    pub path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclKind {
    Workflow { headless: bool },
    Subgraph,
}

/// A `workflow` or `subgraph` declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decl {
    pub kind: DeclKind,
    pub name: String,
    pub doc: String,
    pub params: Vec<Param>,
    pub body: Body,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Node,
    Int,
    Float,
    String,
    Bool,
}

impl ParamType {
    pub fn parse(s: &str) -> Option<ParamType> {
        Some(match s {
            "node" => ParamType::Node,
            "int" => ParamType::Int,
            "float" => ParamType::Float,
            "string" => ParamType::String,
            "bool" => ParamType::Bool,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::Node => "node",
            ParamType::Int => "int",
            ParamType::Float => "float",
            ParamType::String => "string",
            ParamType::Bool => "bool",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
    pub default: Option<Literal>,
    pub bounds: Option<Bounds>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bounds {
    Range(Literal, Literal),
    Choices(Vec<Literal>),
}

/// The inside of a workflow, subgraph or parallel block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Body {
    pub inputs: Vec<Input>,
    pub knobs: Vec<KnobDecl>,
    pub uses: Vec<UseDecl>,
    /// Shared with the parse of the item each came from.
    pub nodes: Vec<Arc<NodeDecl>>,
    pub parallels: Vec<Parallel>,
    /// Statements of every `flow { }` block of this body, in order.
    pub flow: Vec<Arc<FlowStmt>>,
    /// Names of node declarations a syntax error made the parser skip: flows may
    /// still name them without a second, misleading "unknown node" error.
    pub recovered: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobDecl {
    pub name: String,
    pub doc: String,
    pub ty: ParamType,
    pub default: Literal,
    pub bounds: Option<Bounds>,
    pub expandable: bool,
}

/// `use study(arg: value) as prefix`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseDecl {
    pub subgraph: String,
    pub alias: String,
    pub doc: String,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub name: String,
    pub value: ArgValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgValue {
    Literal(Literal),
    /// A node, knob or parameter name.
    Name(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parallel {
    pub name: String,
    pub doc: String,
    pub args: Vec<Arg>,
    /// `in worktrees`
    pub isolation: Option<String>,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateBy {
    Agent(String),
    Fn(String),
    User,
}

#[derive(Clone)]
pub struct NodeDecl {
    pub name: String,
    pub kind: NodeKind,
    pub doc: String,
    /// Gates: who decides.
    pub gate_by: Option<GateBy>,
    /// The string after the header: a gate's question, a fn's or study's command.
    pub inline: Option<String>,
    /// A select's strategy (`select best by best_score`).
    pub strategy: Option<String>,
    pub attrs: Vec<Attr>,
    /// A view of this node made from it on first use and kept with it, so a node
    /// whose parse is kept across an edit keeps the same view (`lower::structure_input`
    /// keeps what the graph needs here). Not part of the node's value: ignored by
    /// `==` and `Debug`.
    pub view: std::sync::OnceLock<Arc<NodeDecl>>,
}

impl NodeDecl {
    pub fn new(name: String, kind: NodeKind) -> NodeDecl {
        NodeDecl {
            name,
            kind,
            doc: String::new(),
            gate_by: None,
            inline: None,
            strategy: None,
            attrs: Vec::new(),
            view: std::sync::OnceLock::new(),
        }
    }
}

impl PartialEq for NodeDecl {
    fn eq(&self, other: &NodeDecl) -> bool {
        let NodeDecl {
            name,
            kind,
            doc,
            gate_by,
            inline,
            strategy,
            attrs,
            view: _,
        } = self;
        (name, kind, doc, gate_by, inline, strategy, attrs)
            == (
                &other.name,
                &other.kind,
                &other.doc,
                &other.gate_by,
                &other.inline,
                &other.strategy,
                &other.attrs,
            )
    }
}

impl Eq for NodeDecl {}

impl std::fmt::Debug for NodeDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeDecl")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("doc", &self.doc)
            .field("gate_by", &self.gate_by)
            .field("inline", &self.inline)
            .field("strategy", &self.strategy)
            .field("attrs", &self.attrs)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    pub key: String,
    pub values: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Literal(Literal),
    /// A bare or dotted name: a role, an artifact name, a knob, `exists`.
    Name(String),
    /// `plan = "path"`
    Named {
        name: String,
        path: String,
    },
    /// `min_size(200)`, `contains("## Plan")`
    Call {
        name: String,
        args: Vec<Literal>,
    },
}

/// `a -> b, c -> d`: groups joined by arrows; every term of one group links to every
/// term of the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowStmt {
    pub groups: Vec<Vec<Term>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub name: String,
    /// The verdict or `fail` written after the node (`plan.reloop`).
    pub label: Option<Label>,
    pub bound: Option<BoundRef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundRef {
    Count(u32),
    /// A knob or parameter name.
    Name(String),
}

/// A position-free address of a piece of syntax, resolved to a span by the source map.
///
/// `scope` is the declaration name, extended with `/name` for a parallel block's body.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Loc {
    FileStart,
    Import(usize),
    Decl(String),
    Param(String, String),
    Knob(String, String),
    Input(String, String),
    Use(String, String),
    UseSubgraph(String, String),
    UseArg(String, String, String),
    Parallel(String, String),
    ParallelArg(String, String, String),
    Node(String, String),
    Attr(String, String, String),
    /// `scope`, statement index, group index, term index.
    Term(String, usize, usize, usize),
    Bound(String, usize, usize, usize),
}
