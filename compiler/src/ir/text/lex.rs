//! Words and values of the IR text form, shared by the printer and the parser.
//!
//! A line is a sequence of whitespace-separated tokens. A token is a bare word, a JSON
//! string (a name that is not a bare word), or `key=value` where the value is JSON (or
//! a bare word for enum-like values). Whitespace inside JSON strings, arrays and objects
//! does not end a token, so any text fits on one line.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::ir::{Artifact, FloatText, Literal};

/// One token of a line, with its byte span in the whole source.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tok<'a> {
    pub text: &'a str,
    pub start: usize,
}

impl<'a> Tok<'a> {
    pub fn span(&self) -> Range<usize> {
        self.start..self.start + self.text.len()
    }

    /// Splits `key=value` at the first `=`; a token starting with `"` is never a pair.
    pub fn pair(&self) -> Option<(Tok<'a>, Tok<'a>)> {
        if self.text.starts_with('"') {
            return None;
        }
        let eq = self.text.find('=')?;
        let key = Tok {
            text: &self.text[..eq],
            start: self.start,
        };
        let value = Tok {
            text: &self.text[eq + 1..],
            start: self.start + eq + 1,
        };
        Some((key, value))
    }
}

/// Splits one line (starting at byte `offset` of the source) into tokens.
pub(super) fn tokens(line: &str, offset: usize) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut in_string = false;
    let mut escaped = false;
    let mut depth = 0usize;
    for (i, c) in line.char_indices() {
        if start.is_none() {
            if c.is_whitespace() {
                continue;
            }
            start = Some(i);
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    out.push(Tok {
                        text: &line[s..i],
                        start: offset + s,
                    });
                }
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Tok {
            text: &line[s..],
            start: offset + s,
        });
    }
    out
}

/// Whether a name can be written without quotes: it cannot be confused with a JSON
/// value, a `key=value` pair or the `->` of an edge.
pub(super) fn is_bare(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A name (node id, knob name, workflow name...) as written in the text form.
pub(super) fn name(s: &str) -> String {
    if is_bare(s) { s.to_string() } else { json(s) }
}

/// Compact JSON of a value made only of strings, integers, arrays and objects.
pub(super) fn json<T: Serialize + ?Sized>(value: &T) -> String {
    // Serializing strings, integers and derived structs to a String has no failure case
    // (no I/O, no non-string map keys, no floats).
    serde_json::to_string(value).expect("IR values serialize to JSON")
}

/// A literal: `true`, `false`, an integer, a JSON string, or a float as its exact text
/// (which always has a `.`, an exponent, `NaN` or `inf`, so it never reads as an integer).
pub(super) fn literal(lit: &Literal) -> String {
    match lit {
        Literal::Bool(b) => b.to_string(),
        Literal::Int(i) => i.to_string(),
        Literal::Str(s) => json(s),
        Literal::Float(f) => f.as_str().to_string(),
    }
}

pub(super) fn parse_literal(text: &str) -> Option<Literal> {
    if text.starts_with('"') {
        return serde_json::from_str::<String>(text).ok().map(Literal::Str);
    }
    match text {
        "true" => return Some(Literal::Bool(true)),
        "false" => return Some(Literal::Bool(false)),
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(Literal::Int(i));
    }
    // Only digits, signs, `.`, exponents and the words Rust prints for non-finite floats.
    let numeric = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    if numeric || matches!(text, "NaN" | "inf" | "-inf") {
        return text
            .parse::<f64>()
            .ok()
            .map(|v| Literal::Float(FloatText::from_f64(v)));
    }
    None
}

/// How an artifact is written: a bare path string when unnamed, else the full object.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub(super) enum ArtifactText {
    Path(String),
    Full(Artifact),
}

impl ArtifactText {
    pub fn from_artifact(a: &Artifact) -> ArtifactText {
        match &a.name {
            None => ArtifactText::Path(a.path.clone()),
            Some(_) => ArtifactText::Full(a.clone()),
        }
    }

    pub fn into_artifact(self) -> Artifact {
        match self {
            ArtifactText::Path(path) => Artifact { name: None, path },
            ArtifactText::Full(a) => a,
        }
    }
}

pub(super) fn artifacts(list: &[Artifact]) -> String {
    let texts: Vec<ArtifactText> = list.iter().map(ArtifactText::from_artifact).collect();
    json(&texts)
}
