//! The words of the language, once. The parser's recovery, the formatter's and the
//! language server's notion of a keyword (completion, semantic tokens) and the editor
//! grammar test all read these lists, so a new keyword is added in one place (and the
//! VS Code grammar, which a test keeps in step).

/// What a top-level item starts with.
pub const FILE_KEYWORDS: &[&str] = &["workflow", "headless", "subgraph", "import"];

/// The kinds of node a declaration can make (`start` and `end` are implicit).
pub const NODE_KINDS: &[&str] = &[
    "agent", "fn", "gate", "fork", "join", "select", "study", "llm", "parallel",
];

/// What a declaration in a workflow or subgraph body starts with, besides a node kind.
pub const BODY_KEYWORDS: &[&str] = &["import", "input", "knob", "use", "flow"];

/// Keywords inside declarations and flows.
pub const INNER_KEYWORDS: &[&str] = &[
    "as",
    "in",
    "by",
    "user",
    "max",
    "expandable",
    "true",
    "false",
    "start",
    "end",
];

/// The outcome labels of a flow (`gate.proceed`); the IR's `Label` parses exactly these.
pub const LABELS: &[&str] = &["proceed", "reloop", "halt", "fail"];

/// Types of knobs and subgraph parameters.
pub const TYPE_NAMES: &[&str] = &["int", "float", "string", "bool", "node"];

/// Everything a body declaration can start with: node kinds and body keywords.
pub fn body_starts() -> impl Iterator<Item = &'static str> {
    NODE_KINDS.iter().chain(BODY_KEYWORDS).copied()
}

/// Whether `word` starts a body declaration.
pub fn is_body_start(word: &str) -> bool {
    body_starts().any(|k| k == word)
}

/// Whether `word` starts a top-level item.
pub fn is_file_keyword(word: &str) -> bool {
    FILE_KEYWORDS.contains(&word)
}

/// Every keyword (labels and type names excluded: they are keywords only in place).
pub fn keywords() -> impl Iterator<Item = &'static str> {
    FILE_KEYWORDS
        .iter()
        .chain(NODE_KINDS)
        .chain(BODY_KEYWORDS)
        .chain(INNER_KEYWORDS)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Label, NodeKind};

    #[test]
    fn the_labels_and_node_kinds_are_the_irs() {
        for l in LABELS {
            assert_eq!(Label::parse(l).map(|l| l.to_string()), Some(l.to_string()));
        }
        for k in NODE_KINDS {
            assert!(NodeKind::parse(k).is_some(), "{k}");
        }
    }
}
