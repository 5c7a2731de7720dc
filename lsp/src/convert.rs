//! Compiler diagnostics → LSP diagnostics, at the edge: byte spans become UTF-16
//! positions, labels become related information in the same file.

use factory_compiler::diagnostic::{Diagnostic, Severity};
use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri};

use crate::position::LineIndex;

/// One diagnostic; `index` is the file's (built once per file, not per diagnostic).
pub fn diagnostic(d: &Diagnostic, index: &LineIndex, uri: &Uri) -> lsp_types::Diagnostic {
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .map(|l| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), index.range(&l.span)),
            message: l.message.clone(),
        })
        .collect();
    let mut message = d.message.clone();
    if !d.help.is_empty() {
        message.push_str("\nhelp: ");
        message.push_str(&d.help);
    }
    lsp_types::Diagnostic {
        range: index.range(&d.span),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.as_str().to_string())),
        source: Some("factory".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}
