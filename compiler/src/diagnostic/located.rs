//! A diagnostic together with the text it indexes, and where a node was written: what
//! every front end (CLI, language server, MCP) renders.

use std::sync::Arc;

use super::{Diagnostic, LineIndex};

/// A diagnostic with the text its spans index, ready to render.
#[derive(Debug, Clone)]
pub struct Located {
    pub diagnostic: Diagnostic,
    pub source: Arc<String>,
}

impl Located {
    /// The diagnostic as data, positions as 1-based line and column: what
    /// `factory check --format json` prints and the MCP server's `check_fwf` returns.
    pub fn to_json(&self) -> serde_json::Value {
        let d = &self.diagnostic;
        let index = LineIndex::new(&self.source);
        let (line, column) = index.line_col(d.span.start);
        let (end_line, end_column) = index.line_col(d.span.end);
        serde_json::json!({
            "code": d.code.as_str(),
            "severity": d.severity,
            "file": d.file,
            "line": line,
            "column": column,
            "end_line": end_line,
            "end_column": end_column,
            "message": d.message,
            "help": d.help,
            "subject": d.subject,
            "labels": d.labels.iter().map(|lab| {
                let (line, column) = index.line_col(lab.span.start);
                serde_json::json!({"line": line, "column": column, "message": lab.message})
            }).collect::<Vec<_>>(),
            "fix": d.fix.as_ref().map(|fix| fix_json(fix, &index)),
        })
    }
}

/// A fix's concrete edits: byte offsets (`start`, `end`) and the same places as 1-based
/// line and column, in the diagnostic's own file.
fn fix_json(fix: &super::FixEdits, index: &LineIndex<'_>) -> serde_json::Value {
    serde_json::json!({
        "title": fix.title,
        "edits": fix.edits.iter().map(|e| {
            let (line, column) = index.line_col(e.range.start);
            let (end_line, end_column) = index.line_col(e.range.end);
            serde_json::json!({
                "file": e.file,
                "start": e.range.start,
                "end": e.range.end,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "replacement": e.replacement,
            })
        }).collect::<Vec<_>>(),
        "creates": fix.creates,
    })
}

/// Where a node was written: file key, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceLocation {
    pub file: String,
    pub line: usize,
    pub column: usize,
}
