//! Error recovery for the parser: where to resume after a broken declaration, and how
//! to say in words what pest expected.

use std::ops::Range;

use super::lex::{Lexer, Token, TokenKind, line_starts_with};
use super::outline::Level;
use super::parser::Rule;

use super::vocabulary;

/// The name of the node a skipped declaration was declaring (`agent builder { role
/// builder }` → `builder`), when its header is readable: its first line of code.
pub(super) fn skipped_node_name(skipped: &str) -> Option<String> {
    let code: Vec<Token> = Lexer::at(skipped, 0)
        .filter(|t| !t.kind.is_comment())
        .skip_while(|t| t.kind.is_space())
        .take_while(|t| t.kind != TokenKind::Newline)
        .filter(|t| t.kind != TokenKind::Whitespace)
        .collect();
    let word = |t: &Token| (t.kind == TokenKind::Ident).then(|| &skipped[t.span.clone()]);
    let keyword = word(code.first()?)?;
    if keyword == "use" {
        // `use sub(args) as alias` declares the alias.
        let at = code.iter().position(|t| word(t) == Some("as"))?;
        return code.get(at + 1).and_then(word).map(str::to_string);
    }
    if !vocabulary::NODE_KINDS.contains(&keyword) {
        return None;
    }
    // Node names may be dotted (`agent experiment.builder`).
    let first = code.get(1).filter(|t| t.kind == TokenKind::Ident)?;
    let mut end = first.span.end;
    for t in &code[2..] {
        if !(t.kind.is_word_part() && t.span.start == end) {
            break;
        }
        end = t.span.end;
    }
    Some(skipped[first.span.start..end].to_string())
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
    let starts_item = |line: Lexer<'_>| match level {
        Level::Top => line_starts_with(line, vocabulary::is_file_keyword, |_| true),
        Level::Body => line_starts_with(line, vocabulary::is_body_start, |k| {
            k == TokenKind::OuterDoc
        }),
        Level::Flow => false,
    };
    let mut depth = 0usize;
    let mut lexer = Lexer::at(text, from);
    while let Some(t) = lexer.next() {
        match t.kind {
            TokenKind::LBrace => depth += 1,
            TokenKind::RBrace => {
                if depth == 0 {
                    return t.span.start;
                }
                depth -= 1;
                if depth == 0 {
                    return t.span.end;
                }
            }
            TokenKind::Newline => {
                // A flow statement is one line; other items resume at a keyword line.
                let flow = matches!(level, Level::Flow) && depth == 0;
                if starts_item(lexer) || flow {
                    return t.span.end;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The position after the `}` that closes the block whose `{` is just before `from`, or
/// the end of the text.
pub(super) fn skip_block(text: &str, from: usize) -> usize {
    let mut depth = 1usize;
    for t in Lexer::at(text, from) {
        match t.kind {
            TokenKind::LBrace => depth += 1,
            TokenKind::RBrace => {
                depth -= 1;
                if depth == 0 {
                    return t.span.end;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The first string left open between `from` (where a broken item starts) and `to` (the
/// end of the line where pest gave up): the likely cause of the error.
pub(super) fn unclosed_string(text: &str, from: usize, to: usize) -> Option<Range<usize>> {
    Lexer::at(text, from)
        .take_while(|t| t.span.start < to)
        .find(|t| t.kind == TokenKind::UnclosedStr)
        .map(|t| t.span)
}

pub(super) fn line_end(text: &str, from: usize) -> usize {
    text[from.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| from + i)
}

/// Skips whitespace and `//` comments, stopping at doc comments (`///`, `//!`).
pub(super) fn skip_trivia(text: &str, pos: usize) -> usize {
    Lexer::at(text, pos).skip_trivia()
}
