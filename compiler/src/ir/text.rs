//! The canonical, line-oriented text form of an [`Ir`]: one item per line, in canonical
//! order, so two equal graphs print the same bytes and a diff shows one line per change.
//!
//! ```text
//! fwir 1
//! workflow improve headless
//! description "Improve: take the top hypothesis..."
//! input config ".factory/config.json"
//! knob qa_loops int default=3 min=1 max=5 expandable
//! node plan gate evaluator=agent role="ceo" question="Is the plan sound?"
//! node strategist agent role="strategist" writes=[{"name":"plan","path":"plan.md"}] checks=["exists"]
//! edge plan -> strategist reloop max=2 max_knob=qa_loops
//! edge start -> plan
//! ```
//!
//! The lines, in the order they are printed (`[..]` is optional, `*` repeats):
//!
//! ```text
//! fwir <version>                                   first line, always
//! workflow <name> [headless] [start=<id>]          start= only when not `start`
//! description <string>                             when not empty
//! doc <string>                                     when not empty
//! input [<name>] <string>                          one per input, in declared order
//! knob <name> int|float|string|bool default=<lit> [min=<lit>] [max=<lit>]
//!      [choices=<string array>] [expandable]       sorted by name
//! node <id> <kind> [async] [in=<id>] <key>=<value>*
//!                                                  sorted by id; keys in NODE_KEYS order
//! edge <id> -> <id> [proceed|reloop|halt|fail] [max=<n>] [max_knob=<name>]
//!                                                  sorted by (from, to, label, ...)
//! ```
//!
//! Names (ids, knob names) are bare words when they are made of ASCII letters, digits,
//! `_`, `.` and `-`, and JSON strings otherwise; every other string is a JSON string, so
//! newlines, quotes and any unicode fit on one line. A `<lit>` is `true`, `false`, an
//! integer, a JSON string or a float written exactly as [`FloatText`] holds it (so `NaN`
//! and `inf` survive). Node values: strings are JSON strings, `evaluator` is a bare
//! `agent|fn|user`, `timeout`/`count` are integers, `count_knob` is a name, `outcomes` a
//! JSON array of labels, `reads`/`writes` JSON arrays whose items are a path string or
//! `{"name":..,"path":..}`, `checks` a JSON array of `"exists"`, `{"min_size":n}`,
//! `{"contains":".."}`. `in=` names the `parallel` node whose body holds the node. A node line lists only the attributes that differ from the
//! default. Blank lines and lines starting with `#` are ignored on input and never
//! printed; lines may come in any order on input (inputs keep their relative order).
//!
//! [`FloatText`]: crate::ir::FloatText

mod lex;
mod parse;

use std::fmt::Write as _;

use crate::ir::{Edge, Ir, Knob, KnobType, Node, START};

pub use parse::parse_text;

/// A problem in an IR text (or IR JSON), with the byte span of the offending text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TextError {
    pub span: std::ops::Range<usize>,
    pub message: String,
    pub help: Option<String>,
}

/// Attribute keys of a node line, in the order they are printed. `async` is a flag
/// printed right after the kind.
pub const NODE_KEYS: &[&str] = &[
    "evaluator",
    "role",
    "question",
    "task",
    "prompt",
    "run",
    "model",
    "runner",
    "placement",
    "timeout",
    "count",
    "count_knob",
    "isolation",
    "strategy",
    "outcomes",
    "reads",
    "writes",
    "checks",
    "doc",
];

/// Prints `ir` in canonical text form. The output is canonical even if `ir` is not
/// sorted (knobs, nodes and edges are printed in canonical order).
pub fn to_text(ir: &Ir) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fwir {}", ir.ir_version);

    let meta = &ir.workflow;
    out.push_str("workflow ");
    out.push_str(&lex::name(&meta.name));
    if meta.headless {
        out.push_str(" headless");
    }
    if ir.start != START {
        let _ = write!(out, " start={}", lex::name(&ir.start));
    }
    out.push('\n');
    if !meta.description.is_empty() {
        let _ = writeln!(out, "description {}", lex::json(&meta.description));
    }
    if !meta.doc.is_empty() {
        let _ = writeln!(out, "doc {}", lex::json(&meta.doc));
    }
    for input in &meta.inputs {
        out.push_str("input ");
        if let Some(name) = &input.name {
            out.push_str(&lex::name(name));
            out.push(' ');
        }
        out.push_str(&lex::json(&input.path));
        out.push('\n');
    }

    let mut knobs: Vec<&Knob> = ir.knobs.iter().collect();
    knobs.sort_by(|a, b| a.name.cmp(&b.name));
    for knob in knobs {
        knob_line(&mut out, knob);
    }
    let mut nodes: Vec<&Node> = ir.nodes.iter().collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    for node in nodes {
        node_line(&mut out, node);
    }
    let mut edges: Vec<&Edge> = ir.edges.iter().collect();
    edges.sort();
    for edge in edges {
        edge_line(&mut out, edge);
    }
    out
}

pub(crate) fn knob_type_str(ty: KnobType) -> &'static str {
    match ty {
        KnobType::Int => "int",
        KnobType::Float => "float",
        KnobType::String => "string",
        KnobType::Bool => "bool",
    }
}

fn knob_line(out: &mut String, knob: &Knob) {
    let _ = write!(
        out,
        "knob {} {} default={}",
        lex::name(&knob.name),
        knob_type_str(knob.ty),
        lex::literal(&knob.default)
    );
    if let Some(min) = &knob.min {
        let _ = write!(out, " min={}", lex::literal(min));
    }
    if let Some(max) = &knob.max {
        let _ = write!(out, " max={}", lex::literal(max));
    }
    if !knob.choices.is_empty() {
        let _ = write!(out, " choices={}", lex::json(&knob.choices));
    }
    if knob.expandable {
        out.push_str(" expandable");
    }
    out.push('\n');
}

fn node_line(out: &mut String, node: &Node) {
    let a = &node.attrs;
    let _ = write!(out, "node {} {}", lex::name(&node.id), node.kind.as_str());
    if a.is_async {
        out.push_str(" async");
    }
    if let Some(p) = &node.parallel {
        let _ = write!(out, " in={}", lex::name(p));
    }
    // Keep in the order of NODE_KEYS.
    let mut kv = |key: &str, value: String| {
        let _ = write!(out, " {key}={value}");
    };
    let s = |v: &Option<String>| v.as_deref().map(lex::json);
    if let Some(e) = a.evaluator {
        kv("evaluator", evaluator_name(e).to_string());
    }
    if let Some(v) = s(&a.role) {
        kv("role", v);
    }
    if let Some(v) = s(&a.question) {
        kv("question", v);
    }
    if let Some(v) = s(&a.task) {
        kv("task", v);
    }
    if let Some(v) = s(&a.prompt) {
        kv("prompt", v);
    }
    if let Some(v) = s(&a.run) {
        kv("run", v);
    }
    if let Some(v) = s(&a.model) {
        kv("model", v);
    }
    if let Some(v) = s(&a.runner) {
        kv("runner", v);
    }
    if let Some(p) = a.placement {
        kv("placement", p.as_str().to_string());
    }
    if let Some(t) = a.timeout {
        kv("timeout", t.to_string());
    }
    if let Some(c) = a.count {
        kv("count", c.to_string());
    }
    if let Some(k) = &a.count_knob {
        kv("count_knob", lex::name(k));
    }
    if let Some(v) = s(&a.isolation) {
        kv("isolation", v);
    }
    if let Some(v) = s(&a.strategy) {
        kv("strategy", v);
    }
    if !a.outcomes.is_empty() {
        kv("outcomes", lex::json(&a.outcomes));
    }
    if !a.reads.is_empty() {
        kv("reads", lex::artifacts(&a.reads));
    }
    if !a.writes.is_empty() {
        kv("writes", lex::artifacts(&a.writes));
    }
    if !a.checks.is_empty() {
        kv("checks", lex::json(&a.checks));
    }
    if let Some(v) = s(&a.doc) {
        kv("doc", v);
    }
    out.push('\n');
}

pub(crate) fn evaluator_name(e: crate::ir::Evaluator) -> &'static str {
    match e {
        crate::ir::Evaluator::Agent => "agent",
        crate::ir::Evaluator::Fn => "fn",
        crate::ir::Evaluator::User => "user",
    }
}

fn edge_line(out: &mut String, edge: &Edge) {
    let _ = write!(
        out,
        "edge {} -> {}",
        lex::name(&edge.from),
        lex::name(&edge.to)
    );
    if let Some(label) = edge.label {
        let _ = write!(out, " {label}");
    }
    if let Some(max) = edge.max {
        let _ = write!(out, " max={max}");
    }
    if let Some(knob) = &edge.max_knob {
        let _ = write!(out, " max_knob={}", lex::name(knob));
    }
    out.push('\n');
}
