//! Error recovery for the parser: where to resume after a broken declaration, and how
//! to say in words what pest expected.

use super::outline::Level;
use super::parser::Rule;
use crate::lexical::{is_ident_char, is_ident_start};

use super::vocabulary;

/// Doc comments start an item too: recovery resumes at them.
pub(super) const DOCS: &[&str] = &["///", "//!"];

/// The name of the node a skipped declaration was declaring (`agent builder { role
/// builder }` → `builder`), when its header is readable.
pub(super) fn skipped_node_name(skipped: &str) -> Option<String> {
    let code = skipped
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with("//"))?;
    // Node names may be dotted (`agent experiment.builder`).
    let mut words = code.split(|c: char| !(is_ident_char(c) || c == '.'));
    let keyword = words.next()?;
    if keyword != "use" && !vocabulary::NODE_KINDS.contains(&keyword) {
        return None;
    }
    // `use sub(args) as alias` declares the alias.
    let name = if keyword == "use" {
        let mut rest = code.rsplit(|c: char| !is_ident_char(c));
        let alias = rest.find(|w| !w.is_empty())?;
        code.contains(" as ").then_some(alias)?
    } else {
        words.find(|w| !w.is_empty())?
    };
    let ident = name.starts_with(is_ident_start);
    ident.then(|| name.to_string())
}

pub(super) fn level_name(level: &Level) -> &'static str {
    match level {
        Level::Top => "a `workflow`, `subgraph` or `import`",
        Level::Body => {
            "a declaration (`agent`, `fn`, `gate`, `fork`, `join`, `knob`, `use`, `flow`, ...) or `}`"
        }
        Level::Flow => "a flow statement like `a -> b` or `}`",
    }
}

/// Turns a pest error into a message that says what was expected, in words.
pub(super) fn describe(err: &pest::error::Error<Rule>, context: &str) -> (String, String) {
    let expected = match &err.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut names: Vec<&str> = positives.iter().filter_map(|r| rule_name(*r)).collect();
            names.sort_unstable();
            names.dedup();
            names
        }
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    let wanted = if expected.is_empty() {
        context.to_string()
    } else {
        expected.join(", ")
    };
    let message = format!("syntax error: expected {wanted}");
    // Say what goes here, not what the enclosing block holds: inside `{ ... }` of a node
    // the block's item list would contradict the message.
    let help = format!(
        "write {wanted} here; the rest of this declaration was skipped (see docs/language.md)"
    );
    (message, help)
}

fn rule_name(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::ident | Rule::qual_ident => "a name",
        Rule::string => "a string in double quotes",
        Rule::number => "a number",
        Rule::boolean => "`true` or `false`",
        Rule::literal | Rule::arg_value | Rule::attr_value => "a value",
        Rule::import => "`import`",
        Rule::workflow_head => "`workflow`",
        Rule::subgraph_head => "`subgraph`",
        Rule::headless => "`headless`",
        Rule::param | Rule::arg => "a `name: value` argument",
        Rule::param_type | Rule::knob_type => "a type (int, float, string, bool, node)",
        Rule::bounds => "`in` bounds",
        Rule::range => "a range like `1..=5`",
        Rule::expandable => "`expandable`",
        Rule::attrs => "`{`",
        Rule::attr => "an attribute `key: value`",
        Rule::evaluator | Rule::by_agent | Rule::by_fn | Rule::by_user => {
            "a gate evaluator: `agent(role)`, `fn(\"command\")` or `user`"
        }
        Rule::flow_stmt | Rule::group | Rule::term => "a flow step",
        Rule::bound => "a bound `(max N)`",
        Rule::close => "`}`",
        Rule::node_decl => "a node declaration",
        Rule::docs | Rule::outer_doc | Rule::inner_doc => "a doc comment",
        _ => return None,
    })
}

/// Finds where parsing can resume after a broken item that started at `from`: after the
/// item's own closing brace, at the `}` closing the enclosing block, or at the next line
/// that starts with a keyword of this level.
pub(super) fn resync(text: &str, from: usize, level: &Level) -> usize {
    // Where a line may resume: a keyword of this level, or a doc comment (`//!` only at
    // the top).
    let keywords: Vec<&str> = match level {
        Level::Top => vocabulary::FILE_KEYWORDS
            .iter()
            .chain(DOCS)
            .copied()
            .collect(),
        Level::Body => vocabulary::body_starts().chain(["///"]).collect(),
        Level::Flow => Vec::new(),
    };
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = from;
    let mut first_line = true;
    while i < bytes.len() {
        if let Some(next) = past_string_or_comment(text, i) {
            i = next;
            continue;
        }
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'\n' => {
                let next = i + 1;
                let line = text[next..].trim_start();
                let starts_item = match level {
                    Level::Flow => depth == 0,
                    _ => starts_with_keyword(line, keywords.iter().copied()),
                };
                // A flow statement is one line; other items resume at a keyword line.
                if starts_item || (matches!(level, Level::Flow) && first_line && depth == 0) {
                    return next;
                }
                first_line = false;
            }
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// The position after the `}` that closes the block whose `{` is just before `from`
/// (strings and comments skipped), or the end of the text.
pub(super) fn skip_block(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 1usize;
    let mut i = from;
    while i < bytes.len() {
        if let Some(next) = past_string_or_comment(text, i) {
            i = next;
            continue;
        }
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// When a string or a `//` comment starts at `i`, the position just past it (past the
/// closing quote, or at the end of the comment's line), so brace counting skips both.
pub(super) fn past_string_or_comment(text: &str, i: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    match bytes[i] {
        b'"' => {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' && bytes[j] != b'\n' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(bytes.len()))
        }
        b'/' if bytes.get(i + 1) == Some(&b'/') => Some(line_end(text, i)),
        _ => None,
    }
}

pub(super) fn starts_with_keyword<'a>(
    line: &str,
    keywords: impl IntoIterator<Item = &'a str>,
) -> bool {
    keywords.into_iter().any(|k| {
        line.strip_prefix(k).is_some_and(|rest| {
            k.starts_with('/') || rest.starts_with(|c: char| c.is_whitespace() || c == '{')
        })
    })
}

pub(super) fn line_end(text: &str, from: usize) -> usize {
    text[from.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| from + i)
}

/// Skips whitespace and `//` comments, stopping at doc comments (`///`, `//!`).
pub(super) fn skip_trivia(text: &str, mut pos: usize) -> usize {
    loop {
        let rest = &text[pos..];
        let trimmed = rest.trim_start();
        pos += rest.len() - trimmed.len();
        if trimmed.starts_with("//") && !trimmed.starts_with("///") && !trimmed.starts_with("//!") {
            pos = line_end(text, pos);
        } else {
            return pos;
        }
    }
}
