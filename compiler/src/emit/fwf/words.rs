//! The words of a `.fwf` file: string literals, names, doc comments and literals, each
//! checked to read back as the same value.

pub(crate) use crate::lexical::is_ident;

use std::fmt::Write as _;

use crate::ir::{Label, Literal};

/// A `.fwf` string literal: the escapes the parser decodes (`\"`, `\\`, `\n`, `\t`).
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A name as the grammar's `qual_ident` reads it: identifiers joined by dots.
pub(super) fn is_dotted(s: &str) -> bool {
    s.split('.').all(is_ident)
}

/// A declared name: dotted, and not ending in a label (`x.proceed` is the label of `x`).
pub(super) fn check_name(what: &str, name: &str) -> Result<(), String> {
    if !is_dotted(name) {
        return Err(format!(
            "{what} `{name}` is not a .fwf name (letters, digits and `_`, not starting with \
             a digit, joined by dots)"
        ));
    }
    if let Some((_, last)) = name.rsplit_once('.')
        && Label::parse(last).is_some()
    {
        return Err(format!(
            "{what} `{name}` ends in a label, which a flow would read as a verdict"
        ));
    }
    Ok(())
}

/// A doc comment: `prefix` (`///` or `//!`) before each line. `docs_text` strips one
/// space after the marker and trailing whitespace, so a doc with other whitespace at
/// its ends cannot come back the same.
pub(super) fn doc(
    out: &mut String,
    indent: &str,
    prefix: &str,
    what: &str,
    text: &str,
) -> Result<(), String> {
    let normal = text.trim() == text && text.lines().all(|l| l.trim_end() == l);
    if !normal || text.contains('\r') {
        return Err(format!(
            "the doc comment of {what} has whitespace at the start or end of a line that a \
             doc comment cannot keep"
        ));
    }
    for line in text.split('\n') {
        if line.is_empty() {
            let _ = writeln!(out, "{indent}{prefix}");
        } else {
            let _ = writeln!(out, "{indent}{prefix} {line}");
        }
    }
    Ok(())
}

/// A literal as the grammar reads it back to the same value.
pub(super) fn literal(what: &str, lit: &Literal) -> Result<String, String> {
    match lit {
        Literal::Bool(b) => Ok(b.to_string()),
        Literal::Int(i) => Ok(i.to_string()),
        Literal::Str(s) => Ok(quote(s)),
        Literal::Float(f) => {
            let s = f.as_str();
            let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
            let body = s.strip_prefix('-').unwrap_or(s);
            match body.split_once('.') {
                Some((a, b)) if digits(a) && digits(b) => Ok(s.to_string()),
                _ => Err(format!(
                    "{what} is the float {s}, which .fwf cannot write (only digits with a \
                     decimal point)"
                )),
            }
        }
    }
}
