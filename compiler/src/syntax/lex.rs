//! The one tokenizer of `.fwf` text: lossless (every byte is in exactly one token,
//! whitespace and comments included) and context-free, so lexing may start at any
//! token boundary and yields the same tokens as lexing the whole text. The pest grammar
//! parses; everything else that reads text by tokens reads these: the outline, error
//! recovery, the formatter, the resolver and the language server's semantic tokens.
//!
//! Its rules are the grammar's: a string is `"` … `"` on one line, where a backslash
//! escapes the character after it (not a newline) and a newline ends it unclosed; `///` and `//!`
//! are doc comments, any other `//` a comment, each to the end of its line; whitespace is
//! space, tab and carriage return, and a newline is a token of its own (the outline and
//! the formatter work by lines).

use std::ops::Range;

use crate::lexical::{is_ident_char, is_ident_start};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// Spaces, tabs and carriage returns.
    Whitespace,
    Newline,
    /// `// …` to the end of the line (the newline not included).
    Comment,
    /// `/// …`: documents the item after it.
    OuterDoc,
    /// `//! …`: documents the file or the enclosing block.
    InnerDoc,
    Ident,
    /// `-`? digits, optionally `.` digits.
    Number,
    /// A string with its closing quote.
    Str,
    /// A string the end of its line or of the text cut short.
    UnclosedStr,
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Colon,
    Dot,
    Equals,
    /// `->`
    Arrow,
    /// `..=` in a range.
    DotDotEq,
    /// Any other character, one per token.
    Unknown,
}

impl TokenKind {
    /// Whitespace or a newline: what separates tokens and means nothing else.
    pub fn is_space(self) -> bool {
        matches!(self, TokenKind::Whitespace | TokenKind::Newline)
    }

    /// Whitespace, newlines and plain comments: what the parser skips between items
    /// (doc comments belong to an item).
    pub fn is_trivia(self) -> bool {
        self.is_space() || self == TokenKind::Comment
    }

    /// A comment of any kind, doc comments included.
    pub fn is_comment(self) -> bool {
        matches!(
            self,
            TokenKind::Comment | TokenKind::OuterDoc | TokenKind::InnerDoc
        )
    }

    pub fn is_doc(self) -> bool {
        matches!(self, TokenKind::OuterDoc | TokenKind::InnerDoc)
    }

    /// A string, closed or not.
    pub fn is_str(self) -> bool {
        matches!(self, TokenKind::Str | TokenKind::UnclosedStr)
    }

    /// Part of a word as the outline reads one (`experiment.trial.builder`, `1`).
    pub fn is_word_part(self) -> bool {
        matches!(self, TokenKind::Ident | TokenKind::Number | TokenKind::Dot)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Range<usize>,
}

/// All tokens of `text`, in order; their spans tile it.
pub fn lex(text: &str) -> Vec<Token> {
    let mut out = Vec::with_capacity(text.len() / 3);
    out.extend(Lexer::at(text, 0));
    out
}

/// The tokens of `text` without whitespace and newlines (comments kept): what the
/// resolver and the language server walk.
pub fn significant(text: &str) -> Vec<Token> {
    Lexer::at(text, 0).filter(|t| !t.kind.is_space()).collect()
}

/// The tokens of a text from a position on. Cheap to copy, so a scan can look ahead
/// with a copy and go on from where it was.
#[derive(Debug, Clone, Copy)]
pub struct Lexer<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> Lexer<'t> {
    /// Lexes `text` from byte `pos`, which should be a token boundary (another position
    /// is moved forward to a character boundary and lexed from there).
    pub fn at(text: &'t str, pos: usize) -> Self {
        let mut pos = pos.min(text.len());
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
        Lexer { text, pos }
    }

    /// Where the next token starts.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The text of `token`.
    pub fn text_of(&self, token: &Token) -> &'t str {
        &self.text[token.span.clone()]
    }

    /// The next token that is not whitespace or a newline.
    pub fn next_non_space(&mut self) -> Option<Token> {
        self.find(|t| !t.kind.is_space())
    }

    /// The position of the next token that is not trivia (the end of the text if none).
    pub fn skip_trivia(mut self) -> usize {
        loop {
            let at = self.pos;
            match self.next() {
                Some(t) if t.kind.is_trivia() => {}
                _ => return at,
            }
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let start = self.pos;
        let rest = self.text.get(start..).filter(|r| !r.is_empty())?;
        let (kind, len) = token_at(rest);
        self.pos = start + len;
        Some(Token {
            kind,
            span: start..self.pos,
        })
    }
}

/// The kind and byte length of the token at the start of `rest` (not empty).
fn token_at(rest: &str) -> (TokenKind, usize) {
    use TokenKind::*;
    let b = rest.as_bytes();
    let run = |pred: fn(u8) -> bool| b.iter().position(|&c| !pred(c)).unwrap_or(b.len());
    match b[0] {
        b' ' | b'\t' | b'\r' => (Whitespace, run(|c| matches!(c, b' ' | b'\t' | b'\r'))),
        b'\n' => (Newline, 1),
        b'/' if b.get(1) == Some(&b'/') => {
            let kind = if rest.starts_with("///") {
                OuterDoc
            } else if rest.starts_with("//!") {
                InnerDoc
            } else {
                Comment
            };
            (kind, rest.find('\n').unwrap_or(rest.len()))
        }
        b'"' => string(rest),
        b'-' if b.get(1) == Some(&b'>') => (Arrow, 2),
        b'-' if b.get(1).is_some_and(u8::is_ascii_digit) => (Number, 1 + number(&b[1..])),
        c if c.is_ascii_digit() => (Number, number(b)),
        c if is_ident_start(c as char) => (Ident, run(|c| is_ident_char(c as char))),
        b'.' if rest.starts_with("..=") => (DotDotEq, 3),
        b'{' => (LBrace, 1),
        b'}' => (RBrace, 1),
        b'(' => (LParen, 1),
        b')' => (RParen, 1),
        b'[' => (LBracket, 1),
        b']' => (RBracket, 1),
        b',' => (Comma, 1),
        b':' => (Colon, 1),
        b'.' => (Dot, 1),
        b'=' => (Equals, 1),
        _ => (Unknown, rest.chars().next().map_or(1, char::len_utf8)),
    }
}

/// The length of the digits (and `.` digits) at the start of `b`.
fn number(b: &[u8]) -> usize {
    let digits = |from: usize| {
        b[from..]
            .iter()
            .position(|c| !c.is_ascii_digit())
            .map_or(b.len(), |n| from + n)
    };
    let int = digits(0);
    if b.get(int) == Some(&b'.') && b.get(int + 1).is_some_and(u8::is_ascii_digit) {
        digits(int + 1)
    } else {
        int
    }
}

/// A string at the start of `rest` (which starts with `"`).
fn string(rest: &str) -> (TokenKind, usize) {
    let mut chars = rest.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (TokenKind::Str, i + 1),
            '\n' => return (TokenKind::UnclosedStr, i),
            // The escaped character belongs to the string; a newline is never escaped.
            '\\' => match chars.clone().next() {
                Some((_, '\n')) => return (TokenKind::UnclosedStr, i + 1),
                Some(_) => {
                    chars.next();
                }
                None => break,
            },
            _ => {}
        }
    }
    (TokenKind::UnclosedStr, rest.len())
}

/// Whether the line whose first token is `line` starts with a word `keyword` accepts,
/// written whole (followed by whitespace, a newline or `{`), or with a doc comment of a
/// kind `docs` accepts. Blank lines before it are skipped.
pub fn line_starts_with(
    line: Lexer<'_>,
    keyword: impl Fn(&str) -> bool,
    docs: impl Fn(TokenKind) -> bool,
) -> bool {
    let mut lexer = line;
    let Some(first) = lexer.next_non_space() else {
        return false;
    };
    if first.kind.is_doc() {
        return docs(first.kind);
    }
    first.kind == TokenKind::Ident
        && keyword(lexer.text_of(&first))
        && lexer.next().is_some_and(|t| {
            matches!(
                t.kind,
                TokenKind::Whitespace | TokenKind::Newline | TokenKind::LBrace
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokenKind, &str)> {
        lex(text)
            .into_iter()
            .map(|t| (t.kind, &text[t.span]))
            .collect()
    }

    #[test]
    fn a_string_ends_at_its_quote_an_unescaped_newline_or_the_text() {
        use TokenKind::*;
        assert_eq!(kinds(r#""a\"b""#), vec![(Str, r#""a\"b""#)]);
        assert_eq!(
            kinds("\"a\nb"),
            vec![(UnclosedStr, "\"a"), (Newline, "\n"), (Ident, "b")]
        );
        assert_eq!(
            kinds("\"a\\\nb"),
            vec![(UnclosedStr, "\"a\\"), (Newline, "\n"), (Ident, "b")]
        );
        assert_eq!(kinds("\"a\\"), vec![(UnclosedStr, "\"a\\")]);
        assert_eq!(kinds("\"\\é\""), vec![(Str, "\"\\é\"")]);
    }

    #[test]
    fn numbers_ranges_and_arrows() {
        use TokenKind::*;
        assert_eq!(
            kinds("1..=5 -2.5 a->b 3.x"),
            vec![
                (Number, "1"),
                (DotDotEq, "..="),
                (Number, "5"),
                (Whitespace, " "),
                (Number, "-2.5"),
                (Whitespace, " "),
                (Ident, "a"),
                (Arrow, "->"),
                (Ident, "b"),
                (Whitespace, " "),
                (Number, "3"),
                (Dot, "."),
                (Ident, "x"),
            ]
        );
    }

    #[test]
    fn keywords_start_a_line_only_as_whole_words() {
        let starts = |text: &str| line_starts_with(Lexer::at(text, 0), |w| w == "agent", |_| true);
        assert!(starts("\n  agent a"));
        assert!(starts("agent{"));
        assert!(!starts("agents"));
        assert!(!starts("agent.x"));
        assert!(!starts("agent"));
        assert!(starts("/// doc"));
        assert!(!starts("// note\nagent a"));
    }
}
