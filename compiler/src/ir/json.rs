//! The JSON form of an IR: the serde encoding of [`Ir`], for tools that would rather not
//! parse the text form.

use crate::ir::text::TextError;
use crate::ir::{IR_VERSION, Ir};

/// Pretty-printed JSON of `ir`, in canonical order.
pub fn to_json(ir: &Ir) -> String {
    let mut ir = ir.clone();
    ir.canonicalize();
    // The IR holds strings, integers, enums and derived structs: serializing it to a
    // String cannot fail (non-finite floats become `null`, which is not an error).
    serde_json::to_string_pretty(&ir).expect("the IR serializes to JSON")
}

/// Reads an IR from JSON and canonicalizes it. Errors point at the offending byte.
pub fn from_json(src: &str) -> Result<Ir, TextError> {
    let mut ir: Ir = serde_json::from_str(src).map_err(|e| TextError {
        span: position(src, e.line(), e.column()),
        message: format!("invalid IR JSON: {e}"),
        help: Some(
            "an IR JSON is what `to_json` prints: an object with ir_version, \
                    workflow, start, knobs, nodes and edges"
                .to_string(),
        ),
    })?;
    if ir.ir_version != IR_VERSION {
        let at = src.find("\"ir_version\"").unwrap_or(0);
        return Err(TextError {
            span: at..at + "\"ir_version\"".len().min(src.len() - at),
            message: format!("unsupported IR version {}", ir.ir_version),
            help: Some(format!(
                "this factory reads IR version {IR_VERSION}; upgrade factory to read it"
            )),
        });
    }
    ir.canonicalize();
    Ok(ir)
}

/// Byte span of one character at serde_json's 1-based line and column (0 for "at end").
fn position(src: &str, line: usize, column: usize) -> std::ops::Range<usize> {
    let line_start: usize = src
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (line_start + column.saturating_sub(1)).min(src.len());
    while !src.is_char_boundary(at) {
        at -= 1;
    }
    let end = src[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    at..end
}
