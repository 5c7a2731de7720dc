//! Checking a bare IR text file: parse it, run the same graph rules as for `.fwf`, and
//! point findings at the lines of the IR text.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, Label};
use crate::driver::Located;
use crate::ir::IrSpans;
use crate::ir::text::parse_text;
use crate::validate::{self, IrRef};

pub fn check_ir_text(key: &str, text: &str, roles: Option<BTreeSet<String>>) -> Vec<Located> {
    let source = Arc::new(text.to_string());
    let located = |d: Diagnostic| Located {
        diagnostic: d,
        source: source.clone(),
    };
    let (ir, spans) = match parse_text(text) {
        Ok(parsed) => parsed,
        Err(errors) => {
            return errors
                .into_iter()
                .map(|e| {
                    located(Diagnostic {
                        code: Code::Syntax,
                        severity: Code::Syntax.severity(),
                        message: e.message,
                        file: key.to_string(),
                        span: e.span,
                        label: "here".into(),
                        labels: Vec::new(),
                        help: e
                            .help
                            .unwrap_or_else(|| "see docs/ir.md for the IR text format".into()),
                        subject: None,
                    })
                })
                .collect();
        }
    };
    let span = |r: &IrRef, spans: &IrSpans| match r {
        IrRef::Workflow => spans.workflow.clone(),
        IrRef::Node(id) => spans.nodes.get(id).cloned(),
        IrRef::Edge(i) | IrRef::EdgeTarget(i) => spans.edges.get(*i).cloned().flatten(),
        IrRef::Knob(k) => spans.knobs.get(k).cloned(),
    };
    let mut out: Vec<Located> = validate::validate(&ir, &validate::Context { roles })
        .into_iter()
        .map(|f| {
            let primary = span(&f.at, &spans)
                .or_else(|| spans.workflow.clone())
                .unwrap_or(0..0);
            located(Diagnostic {
                code: f.code,
                severity: f.code.severity(),
                message: f.message,
                file: key.to_string(),
                span: primary,
                label: f.label,
                labels: f
                    .labels
                    .iter()
                    .filter_map(|(r, t)| {
                        Some(Label {
                            span: span(r, &spans)?,
                            message: t.clone(),
                        })
                    })
                    .collect(),
                help: f.help,
                subject: f.subject,
            })
        })
        .collect();
    out.sort_by_key(|l| (l.diagnostic.span.start, l.diagnostic.code));
    out
}
