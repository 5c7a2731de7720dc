//! The canonical formatter for `.fwf` files, shared by `factory fmt` and the language
//! server.
//!
//! It works on the lexer's tokens, not on the syntax tree: the tree drops comments, and a file with a
//! syntax error must still format without losing text. Line breaks are the author's; the
//! formatter only re-indents each line by bracket depth (4 spaces), normalises the spaces
//! between tokens, trims trailing whitespace, keeps at most one blank line and ends the
//! file with one newline. Strings and comments are copied byte for byte.

use crate::syntax::lex::{Lexer, TokenKind};

/// Indentation per bracket level.
const INDENT: &str = "    ";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `{`, `(`, `[`
    Open,
    /// `}`, `)`, `]`
    Close,
    Arrow,
    Comma,
    Colon,
    Equals,
    /// `..=` in a range.
    Range,
    Str,
    Comment,
    Word,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind,
    text: &'a str,
    /// Where it starts in the text.
    start: usize,
    /// Whitespace characters before the token on its line (kept before trailing comments).
    gap: usize,
}

/// Formats a whole source text. Never fails: text the formatter does not understand is
/// kept as it is. Lines the parser had to skip to recover from a syntax error are copied
/// unchanged, and their brackets do not count, so one broken declaration does not
/// re-indent the rest of the file (editors format on save, errors and all).
pub fn format(text: &str) -> String {
    format_reporting(text).0
}

/// [`format`], and the number of syntax errors in `text` (the parts that do not parse
/// are left as they are).
pub fn format_reporting(text: &str) -> (String, usize) {
    let parsed = crate::syntax::parse(text);
    (format_keeping(text, &parsed.skipped), parsed.errors.len())
}

/// [`format`], with the lines touching `skipped` byte ranges copied unchanged.
fn format_keeping(text: &str, skipped: &[std::ops::Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut depth: usize = 0;
    // The last non-blank line written, and whether blank lines were seen after it.
    let mut last_opened = true;
    let mut pending_blank = false;
    let mut wrote_any = false;
    let mut lexer = Lexer::at(text, 0);
    let mut start = 0;
    let mut more = true;
    while more {
        let (tokens, end, newline) = line_tokens(text, &mut lexer);
        more = newline;
        let raw = &text[start..end];
        let line = start..end;
        start = end + 1;
        // Blank lines are collapsed everywhere, so formatting stays idempotent.
        if !raw.trim().is_empty()
            && skipped
                .iter()
                .any(|s| s.start < line.end && line.start < s.end)
        {
            if pending_blank {
                out.push('\n');
            }
            pending_blank = false;
            out.push_str(raw);
            out.push('\n');
            wrote_any = true;
            last_opened = false;
            continue;
        }
        let tokens = &tokens;
        if tokens.is_empty() {
            pending_blank = wrote_any;
            continue;
        }
        let starts_closed = tokens[0].kind == Kind::Close;
        if pending_blank && !last_opened && !starts_closed {
            out.push('\n');
        }
        pending_blank = false;
        let closers = tokens.iter().take_while(|t| t.kind == Kind::Close).count();
        let indent = depth.saturating_sub(closers.min(1));
        for _ in 0..indent {
            out.push_str(INDENT);
        }
        write_line(&mut out, tokens);
        out.push('\n');
        wrote_any = true;
        for t in tokens {
            match t.kind {
                Kind::Open => depth += 1,
                Kind::Close => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        last_opened = tokens
            .iter()
            .rev()
            .find(|t| t.kind != Kind::Comment)
            .is_some_and(|t| t.kind == Kind::Open);
    }
    out
}

fn write_line(out: &mut String, tokens: &[Token<'_>]) {
    let mut prev: Option<Token<'_>> = None;
    for &t in tokens {
        if let Some(p) = prev {
            let space = if t.kind == Kind::Comment {
                " ".repeat(t.gap.max(1))
            } else if needs_space(p, t) {
                " ".to_string()
            } else {
                String::new()
            };
            out.push_str(&space);
        }
        out.push_str(t.text);
        prev = Some(t);
    }
}

/// Whether one space separates `a` from the token `b` that follows it on a line.
fn needs_space(a: Token<'_>, b: Token<'_>) -> bool {
    use Kind::*;
    match (a.kind, b.kind) {
        (_, Comma | Colon) => false,
        (Range, _) | (_, Range) => false,
        (Open, Close) => false,
        (Open, _) => a.text == "{",
        (_, Close) => b.text == "}",
        // `min_size(200)`, `agent(ceo)`, `qa(fix: x)`, `reloop(max 2)`: no space before a
        // call's parenthesis; `in [..]`, `-> (..` keep theirs.
        (Word | Close, Open) => b.text != "(",
        _ => true,
    }
}

/// The tokens of the line at `lexer`, up to its newline (consumed), and where the line
/// ends; `false` when the text ended instead. Names, numbers, dots and other
/// characters written together make one word (`std/study`, `g.reloop`, `-3`).
fn line_tokens<'a>(text: &'a str, lexer: &mut Lexer<'a>) -> (Vec<Token<'a>>, usize, bool) {
    let mut tokens: Vec<Token<'a>> = Vec::new();
    let mut gap = 0;
    for t in lexer.by_ref() {
        let raw = &text[t.span.clone()];
        let kind = match t.kind {
            TokenKind::Newline => return (tokens, t.span.start, true),
            TokenKind::Whitespace => {
                gap += raw.len();
                continue;
            }
            TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => Kind::Open,
            TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => Kind::Close,
            TokenKind::Arrow => Kind::Arrow,
            TokenKind::Comma => Kind::Comma,
            TokenKind::Colon => Kind::Colon,
            TokenKind::Equals => Kind::Equals,
            TokenKind::DotDotEq => Kind::Range,
            TokenKind::Str | TokenKind::UnclosedStr => Kind::Str,
            TokenKind::Comment | TokenKind::OuterDoc | TokenKind::InnerDoc => Kind::Comment,
            TokenKind::Ident | TokenKind::Number | TokenKind::Dot | TokenKind::Unknown => {
                Kind::Word
            }
        };
        // Trailing whitespace of a comment or of a string left open is not kept.
        let raw = match t.kind {
            TokenKind::UnclosedStr => raw.trim_end(),
            k if k.is_comment() => raw.trim_end(),
            _ => raw,
        };
        match tokens.last_mut() {
            Some(last) if kind == Kind::Word && last.kind == Kind::Word && gap == 0 => {
                last.text = &text[last.start..t.span.end];
            }
            _ => tokens.push(Token {
                kind,
                text: raw,
                start: t.span.start,
                gap,
            }),
        }
        gap = 0;
    }
    (tokens, text.len(), false)
}

#[cfg(test)]
mod tests {
    use super::{format, format_keeping};

    #[test]
    fn reindents_and_spaces_tokens() {
        let src = "workflow w{\n  agent a{role:builder}\nflow{\nstart->a ->end\n}\n}";
        assert_eq!(
            format(src),
            "workflow w {\n    agent a { role: builder }\n    flow {\n        start -> a -> end\n    }\n}\n"
        );
    }

    #[test]
    fn keeps_strings_and_comments_verbatim() {
        // A body item on its own: formatted as tokens, whatever the parser thinks.
        let src = "fn  t   \"a  ->  b,c\"  // x   ->y  \n";
        assert_eq!(
            format_keeping(src, &[]),
            "fn t \"a  ->  b,c\"  // x   ->y\n"
        );
    }

    #[test]
    fn collapses_blank_lines() {
        let src = "\n\nworkflow w {\n\n\n    agent a\n\n\n\n    agent b\n\n}\n\n\n";
        assert_eq!(format(src), "workflow w {\n    agent a\n\n    agent b\n}\n");
    }

    #[test]
    fn calls_ranges_and_choices() {
        let src = "knob k : int=3 in 1 ..= 5\nknob s: string = \"a\" in [ \"a\" , \"b\" ]\ngate g by agent (ceo)\nagent a { check: exists , min_size ( 200 ) }\n";
        assert_eq!(
            format_keeping(src, &[]),
            "knob k: int = 3 in 1..=5\nknob s: string = \"a\" in [\"a\", \"b\"]\ngate g by agent(ceo)\nagent a { check: exists, min_size(200) }\n"
        );
    }

    #[test]
    fn a_broken_declaration_is_kept_and_the_rest_indented_as_if_it_were_not_there() {
        // `agent b` lacks its `}`: the parser skips it up to `agent c`. Its `{` must not
        // push everything after it one level deeper (editors format on save).
        let src = "workflow w {\n  agent a { role: builder }\n  agent b { role: builder\n      reads:  x\n  agent c { role: builder }\nflow {\nstart -> a -> c -> end\n}\n}\n";
        assert_eq!(
            format(src),
            "workflow w {\n    agent a { role: builder }\n  agent b { role: builder\n      reads:  x\n    agent c { role: builder }\n    flow {\n        start -> a -> c -> end\n    }\n}\n"
        );
    }

    #[test]
    fn empty_text_stays_empty() {
        assert_eq!(format(""), "");
        assert_eq!(format("\n\n"), "");
    }
}
