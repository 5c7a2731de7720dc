//! Which attributes each node kind accepts, and how attribute values become IR values.

use crate::ir::{Check, Label, Literal, NodeKind};
use crate::syntax::Value;

/// Attribute keys accepted per node kind (`doc` comes from `///` comments).
pub const ALLOWED_ATTRS: &[(NodeKind, &[&str])] = &[
    (
        NodeKind::Agent,
        &[
            "role",
            "prompt",
            "task",
            "reads",
            "writes",
            "check",
            "timeout",
            "model",
            "runner",
            "placement",
            "async",
        ],
    ),
    (
        NodeKind::Fn,
        &[
            "run",
            "reads",
            "writes",
            "check",
            "timeout",
            "placement",
            "async",
        ],
    ),
    (
        NodeKind::Gate,
        &[
            "question",
            "prompt",
            "task",
            "reads",
            "writes",
            "check",
            "outcomes",
            "timeout",
            "model",
            "runner",
            "placement",
        ],
    ),
    (NodeKind::Fork, &[]),
    (NodeKind::Join, &[]),
    (NodeKind::Select, &["reads", "writes"]),
    (
        NodeKind::Study,
        &[
            "run",
            "reads",
            "writes",
            "check",
            "timeout",
            "placement",
            "async",
        ],
    ),
    (
        NodeKind::Llm,
        &[
            "prompt", "task", "model", "reads", "writes", "check", "timeout", "async",
        ],
    ),
];

pub fn allowed(kind: NodeKind) -> &'static [&'static str] {
    ALLOWED_ATTRS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[], |(_, keys)| keys)
}

/// Parses one `check:` value; `Err` says what is accepted.
pub fn check(value: &Value) -> Result<Check, String> {
    const ACCEPTED: &str = "`exists`, `min_size(BYTES)` or `contains(\"TEXT\")`";
    match value {
        Value::Name(n) if n == "exists" => Ok(Check::Exists),
        Value::Call { name, args } => match (name.as_str(), args.as_slice()) {
            ("min_size", [Literal::Int(n)]) if *n >= 0 => Ok(Check::MinSize(*n as u64)),
            ("contains", [Literal::Str(s)]) => Ok(Check::Contains(s.clone())),
            ("min_size", _) => {
                Err("`min_size` takes one whole number of bytes, e.g. `min_size(200)`".into())
            }
            ("contains", _) => {
                Err("`contains` takes one string, e.g. `contains(\"## Plan\")`".into())
            }
            _ => Err(format!("unknown check `{name}`: use {ACCEPTED}")),
        },
        _ => Err(format!("a check is {ACCEPTED}")),
    }
}

pub fn outcome(value: &Value) -> Result<Label, String> {
    match value {
        Value::Name(n) => Label::parse(n)
            .filter(|l| l.is_verdict())
            .ok_or_else(|| format!("`{n}` is not an outcome: use proceed, reloop or halt")),
        _ => Err("outcomes are names: proceed, reloop, halt".into()),
    }
}

/// A short description of a value for messages.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Literal(l) => l.to_string(),
        Value::Name(n) => format!("`{n}`"),
        Value::Named { name, path } => format!("`{name} = {path:?}`"),
        Value::Call { name, .. } => format!("`{name}(...)`"),
    }
}
