//! The tokens of a text for the resolver: identifiers, strings and comments with their
//! byte spans. The parser's source map holds the spans of declarations, flow terms and
//! arguments; names inside attribute values (roles, knobs, artifacts) and templates have
//! no entry there, so the resolver finds them among these tokens. The language server's
//! semantic tokens, folding and completion read the same tokens.

use std::ops::Range;

use crate::lexical::{is_ident_char, is_ident_start};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    Str,
    Comment,
    Other,
}

#[derive(Debug, Clone)]
pub struct Tok {
    pub kind: TokKind,
    pub span: Range<usize>,
}

/// Identifiers, strings and comments of a text (everything else is one `Other` per char).
pub fn tokens(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let kind = if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            TokKind::Comment
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            TokKind::Str
        } else if is_ident_start(b[i] as char) {
            while i < b.len() && is_ident_char(b[i] as char) {
                i += 1;
            }
            TokKind::Ident
        } else {
            i += 1;
            while i < b.len() && !text.is_char_boundary(i) {
                i += 1;
            }
            if b[start].is_ascii_whitespace() {
                continue;
            }
            TokKind::Other
        };
        while i < b.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        out.push(Tok {
            kind,
            span: start..i.min(b.len()),
        });
    }
    out
}

/// The byte offset of the start of the line holding `offset`.
pub fn line_start(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1)
}
