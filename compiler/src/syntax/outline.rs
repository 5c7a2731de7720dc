//! The outline of a file: where each item (an import, a declaration's header, a node,
//! a knob, a flow statement, a closing brace, ...) starts and ends, found by a quick
//! scan of the text without parsing it.
//!
//! The outline only proposes where items are. Each chunk is parsed on its own by the
//! grammar ([`super::parse_chunk`]), and the parser takes a chunk's result only when
//! the chunk starts exactly where the parser is, at the level it is in, and parsed
//! cleanly to its end; anything else is parsed in place from the whole text. So a wrong
//! guess here costs speed, never a different tree.
//!
//! A chunk ends at the next line that starts an item of its level, outside braces and
//! parentheses, after a token that can end an item (not after `by`, `as`, `->`, `,`,
//! ...). A chunk ending early would fail to parse, and the grammar has no optional
//! tail that starts with a keyword, so a chunk never cuts an item in two silently.

use super::lex::{Lexer, TokenKind, line_starts_with};
use super::recover::skip_trivia;
use super::vocabulary;

/// Where an item sits: at the top of the file, in a declaration's body or in a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Top,
    Body,
    Flow,
}

/// What kind of item a chunk holds, as far as the scan can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Import,
    /// A `workflow` or `subgraph` header, up to its `{`.
    Decl,
    /// A `parallel` header, up to its `{`.
    Parallel,
    /// `flow {`
    Flow,
    Statement,
    /// A node, knob, input or `use` declaration, by its keyword.
    Declaration,
    BodyDoc,
    Close,
    /// Text the scan cannot classify (the parser reports what is wrong with it).
    Other,
}

/// The stable name of an item: its scope, kind and name, never its position, so an
/// item keeps its id when text is inserted above it. A flow statement is named by its
/// own text (trimmed); two equal items in one scope are told apart by their order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemId {
    /// The declaration's name, extended with `/name` for a `parallel` block's body.
    pub scope: String,
    pub kind: ItemKind,
    /// The declared name (for a declaration: its keyword and name, `agent plan`).
    pub name: String,
}

/// One chunk of the text: `start..end` covers the item and the trivia after it, so the
/// next chunk starts where the parser's cursor will be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
    pub level: Level,
    pub id: ItemId,
}

struct Frame {
    level: Level,
    scope: String,
}

/// Splits `text` into chunks, in order. Text before the first item (the file's `//!`
/// docs) and text the scan gives up on are left out: the parser reads those in place.
pub fn outline(text: &str) -> Vec<Chunk> {
    let mut out = Vec::with_capacity(text.len() / 48);
    let mut stack = vec![Frame {
        level: Level::Top,
        scope: String::new(),
    }];
    let mut pos = skip_trivia(text, 0);
    while pos < text.len() {
        let Some(frame) = stack.last() else { break };
        let level = frame.level;
        let scope = frame.scope.clone();
        let Some(first) = Lexer::at(text, pos).next() else {
            break;
        };
        if level == Level::Top && first.kind == TokenKind::InnerDoc {
            // The file's docs: read in place.
            pos = skip_trivia(text, first.span.end);
            continue;
        }
        let (kind, name, end, push) = if first.kind == TokenKind::InnerDoc {
            (ItemKind::BodyDoc, String::new(), first.span.end, None)
        } else if first.kind == TokenKind::RBrace {
            stack.pop();
            (ItemKind::Close, String::new(), pos + 1, None)
        } else {
            let head = skip_docs(text, pos);
            let (word, after) = word_at(text, head);
            match (level, word) {
                (Level::Top, "workflow" | "subgraph" | "headless") => {
                    let (name, _) = if word == "headless" {
                        let (_, w) = word_at(text, skip_ws(text, after));
                        word_at(text, skip_ws(text, w))
                    } else {
                        word_at(text, skip_ws(text, after))
                    };
                    let Some(end) = past_open_brace(text, after) else {
                        break;
                    };
                    let name = name.to_string();
                    let frame = Frame {
                        level: Level::Body,
                        scope: name.clone(),
                    };
                    (ItemKind::Decl, name, end, Some(frame))
                }
                (Level::Body, "parallel") => {
                    let (name, _) = word_at(text, skip_ws(text, after));
                    let Some(end) = past_open_brace(text, after) else {
                        break;
                    };
                    let frame = Frame {
                        level: Level::Body,
                        scope: format!("{scope}/{name}"),
                    };
                    (ItemKind::Parallel, name.to_string(), end, Some(frame))
                }
                (Level::Body, "flow") if next_is_brace(text, after) => {
                    let Some(end) = past_open_brace(text, after) else {
                        break;
                    };
                    let frame = Frame {
                        level: Level::Flow,
                        scope: scope.clone(),
                    };
                    (ItemKind::Flow, String::new(), end, Some(frame))
                }
                (Level::Flow, _) => {
                    let end = item_end(text, pos, level);
                    let name = text[pos..end].trim().to_string();
                    (ItemKind::Statement, name, end, None)
                }
                (_, "import") => {
                    let end = item_end(text, pos, level);
                    let name = text[after..end].trim().to_string();
                    (ItemKind::Import, name, end, None)
                }
                (Level::Body, w) if vocabulary::is_body_start(w) => {
                    let (name, _) = word_at(text, skip_ws(text, after));
                    let end = item_end(text, pos, level);
                    let mut id = String::with_capacity(w.len() + 1 + name.len());
                    id.push_str(w);
                    id.push(' ');
                    id.push_str(name);
                    (ItemKind::Declaration, id, end, None)
                }
                _ => {
                    let end = item_end(text, pos, level);
                    let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
                    let name = text[pos..line_end.min(end)].trim().to_string();
                    (ItemKind::Other, name, end, None)
                }
            }
        };
        // Always make progress, whatever the text.
        let end = end.max(pos + 1).min(text.len());
        let next = skip_trivia(text, end);
        out.push(Chunk {
            start: pos,
            end: next,
            level,
            id: ItemId { scope, kind, name },
        });
        if let Some(frame) = push {
            stack.push(frame);
        }
        pos = next;
        if stack.is_empty() {
            // A `}` closed more than was open: the rest is read in place.
            break;
        }
    }
    out
}

/// Skips `///` lines (and the whitespace around them) from `pos`.
fn skip_docs(text: &str, mut pos: usize) -> usize {
    while let Some(t) = Lexer::at(text, pos).next()
        && t.kind == TokenKind::OuterDoc
    {
        pos = skip_ws(text, t.span.end);
    }
    pos
}

/// The position of the next token from `pos` that is not whitespace or a newline.
fn skip_ws(text: &str, pos: usize) -> usize {
    let mut lexer = Lexer::at(text, pos);
    lexer.next_non_space().map_or(text.len(), |t| t.span.start)
}

/// The word (names, numbers and `.`, written together) at `pos`, and the position
/// after it.
fn word_at(text: &str, pos: usize) -> (&str, usize) {
    let mut lexer = Lexer::at(text, pos);
    let mut end = lexer.pos();
    while let Some(t) = lexer.next()
        && t.kind.is_word_part()
    {
        end = t.span.end;
    }
    (&text[pos.min(end)..end], end)
}

fn next_is_brace(text: &str, pos: usize) -> bool {
    let mut lexer = Lexer::at(text, pos);
    lexer
        .next_non_space()
        .is_some_and(|t| t.kind == TokenKind::LBrace)
}

/// The position after the first `{` outside parentheses.
fn past_open_brace(text: &str, from: usize) -> Option<usize> {
    let mut parens = 0usize;
    for t in Lexer::at(text, from) {
        match t.kind {
            TokenKind::LParen => parens += 1,
            TokenKind::RParen => parens = parens.saturating_sub(1),
            TokenKind::LBrace if parens == 0 => return Some(t.span.end),
            TokenKind::RBrace => return None,
            _ => {}
        }
    }
    None
}

/// Where the item starting at `from` ends: before the next line that starts an item of
/// `level` at depth 0 after a token that can end an item, or before a `}` that closes
/// the enclosing block.
fn item_end(text: &str, from: usize, level: Level) -> usize {
    let mut braces = 0usize;
    let mut parens = 0usize;
    // The last significant token ended an item (a name, a literal, `)`, `}`, `]`).
    let mut can_end = false;
    let mut words = 0usize;
    let mut lexer = Lexer::at(text, from);
    while let Some(t) = lexer.next() {
        match t.kind {
            TokenKind::Str | TokenKind::UnclosedStr => can_end = true,
            TokenKind::Comment | TokenKind::OuterDoc | TokenKind::InnerDoc => {}
            TokenKind::Whitespace => {}
            TokenKind::LBrace => {
                braces += 1;
                can_end = false;
            }
            TokenKind::RBrace => {
                if braces == 0 {
                    return t.span.start;
                }
                braces -= 1;
                can_end = true;
            }
            TokenKind::LParen => {
                parens += 1;
                can_end = false;
            }
            TokenKind::RParen => {
                parens = parens.saturating_sub(1);
                can_end = true;
            }
            TokenKind::Newline => {
                let next = t.span.end;
                if braces == 0 && parens == 0 && can_end && starts_item(text, next, level) {
                    return next;
                }
            }
            TokenKind::Ident | TokenKind::Number => {
                let (word, after) = word_at(text, t.span.start);
                words += 1;
                // The first word is the item's keyword: a name must follow.
                can_end = words > 1 && !matches!(word, "by" | "as" | "in");
                lexer = Lexer::at(text, after);
            }
            TokenKind::RBracket => can_end = true,
            _ => can_end = false,
        }
    }
    text.len()
}

/// Whether the line at `pos` starts an item of `level` (blank lines before it skipped).
fn starts_item(text: &str, pos: usize, level: Level) -> bool {
    let line = Lexer::at(text, pos);
    let first = { line }.next_non_space().map(|t| t.kind);
    match level {
        Level::Flow => matches!(first, Some(TokenKind::Ident | TokenKind::RBrace)),
        Level::Body => {
            first == Some(TokenKind::RBrace)
                || line_starts_with(line, vocabulary::is_body_start, |_| true)
        }
        Level::Top => line_starts_with(line, vocabulary::is_file_keyword, |_| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> Vec<(Level, ItemKind, String, String)> {
        outline(text)
            .into_iter()
            .map(|c| {
                (
                    c.level,
                    c.id.kind,
                    c.id.name,
                    text[c.start..c.end].trim_end().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn items_of_a_workflow() {
        let text = "//! doc\nimport std/study\n\n/// The mode.\nworkflow w {\n  knob n: int = 3 in 1..=5\n  /// Plans.\n  agent plan { role: planner }\n  gate g by agent(critic)\n  parallel p(count: 2) {\n    agent b\n  }\n  flow {\n    start -> plan -> g\n    g.proceed -> end\n    g.reloop (max 3) -> plan\n  }\n}\n";
        let got = shape(text);
        let kinds: Vec<_> = got.iter().map(|g| (g.0, g.1, g.2.as_str())).collect();
        assert_eq!(
            kinds,
            vec![
                (Level::Top, ItemKind::Import, "std/study"),
                (Level::Top, ItemKind::Decl, "w"),
                (Level::Body, ItemKind::Declaration, "knob n"),
                (Level::Body, ItemKind::Declaration, "agent plan"),
                (Level::Body, ItemKind::Declaration, "gate g"),
                (Level::Body, ItemKind::Parallel, "p"),
                (Level::Body, ItemKind::Declaration, "agent b"),
                (Level::Body, ItemKind::Close, ""),
                (Level::Body, ItemKind::Flow, ""),
                (Level::Flow, ItemKind::Statement, "start -> plan -> g"),
                (Level::Flow, ItemKind::Statement, "g.proceed -> end"),
                (Level::Flow, ItemKind::Statement, "g.reloop (max 3) -> plan"),
                (Level::Flow, ItemKind::Close, ""),
                (Level::Body, ItemKind::Close, ""),
            ]
        );
        assert_eq!(got[3].3, "/// Plans.\n  agent plan { role: planner }");
        let scopes: Vec<_> = outline(text).into_iter().map(|c| c.id.scope).collect();
        assert_eq!(scopes[6], "w/p");
    }

    #[test]
    fn an_item_goes_on_after_a_word_that_needs_more() {
        // `by` at the end of a line: the gate's evaluator is on the next line.
        let text = "workflow w {\n  gate g by\n  agent(critic)\n  agent a\n}\n";
        let got = shape(text);
        assert_eq!(got[1].3, "gate g by\n  agent(critic)");
        assert_eq!(got[2].2, "agent a");
    }

    #[test]
    fn chunks_tile_the_text_after_the_file_docs() {
        let text =
            "//! top\n\nworkflow w {\n  agent a // note\n\n  flow { start -> a -> end }\n}\n";
        let chunks = outline(text);
        for pair in chunks.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
        assert_eq!(chunks.last().map(|c| c.end), Some(text.len()));
    }

    #[test]
    fn any_text_is_scanned_without_panicking() {
        for text in [
            "}",
            "{{{",
            "workflow",
            "workflow w {",
            "\"",
            "///",
            "flow {",
            "a\u{e9}b {",
        ] {
            let _ = outline(text);
        }
    }
}
