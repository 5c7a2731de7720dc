//! Graph rules, run on the IR. `.fwf` files and bare IR text are validated by exactly
//! this code; findings point at IR entities ([`IrRef`]) and the caller maps them to
//! source spans through its side table.

mod dataflow;
mod forks;
mod graph;
mod local;
mod templates;

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

/// A finding before it is given a source position: `At` addresses what it is about
/// (an [`IrRef`] for graph rules, a syntax location for rules on the tree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<At = IrRef> {
    pub code: Code,
    pub message: String,
    pub at: At,
    /// Text under the primary span.
    pub label: String,
    pub labels: Vec<(At, String)>,
    pub help: String,
    /// For a finding about a node: the attribute it is about (`role`, `task`), so a
    /// source position can point at that attribute rather than the node's name.
    pub attr: Option<String>,
    /// What it is about, as data (see [`crate::diagnostic::Subject`]).
    pub subject: Option<crate::diagnostic::Subject>,
}

impl<At> Finding<At> {
    /// Re-addresses the finding (e.g. from IR entities to source locations).
    pub fn map<B>(self, mut f: impl FnMut(At) -> B) -> Finding<B> {
        Finding {
            code: self.code,
            message: self.message,
            at: f(self.at),
            label: self.label,
            labels: self.labels.into_iter().map(|(a, t)| (f(a), t)).collect(),
            help: self.help,
            attr: self.attr,
            subject: self.subject,
        }
    }

    pub fn new(code: Code, at: At, message: impl Into<String>) -> Finding<At> {
        Finding {
            code,
            message: message.into(),
            at,
            label: String::new(),
            labels: Vec::new(),
            help: String::new(),
            attr: None,
            subject: None,
        }
    }

    /// What the finding is about, for fixes and tools.
    pub fn about(mut self, subject: crate::diagnostic::Subject) -> Finding<At> {
        self.subject = Some(subject);
        self
    }

    pub fn attr(mut self, key: impl Into<String>) -> Finding<At> {
        self.attr = Some(key.into());
        self
    }

    pub fn label(mut self, text: impl Into<String>) -> Finding<At> {
        self.label = text.into();
        self
    }

    pub fn with(mut self, at: At, text: impl Into<String>) -> Finding<At> {
        self.labels.push((at, text.into()));
        self
    }

    pub fn help(mut self, text: impl Into<String>) -> Finding<At> {
        self.help = text.into();
        self
    }
}

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

/// Runs every graph rule on `ir`.
pub fn validate(ir: &Ir, cx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    local::check(ir, cx, &mut out);
    templates::check(ir, &mut out);
    let g = Graph::new(ir, &mut out);
    graph::check(ir, &g, &mut out);
    forks::check(ir, &g, &mut out);
    dataflow::check(ir, &g, &mut out);
    out
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
