//! Checking a bare IR text file: parse it, run the same graph rules as for `.fwf`, and
//! point findings at the lines of the IR text.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, Finding, Places, SpanPlaces, to_diagnostic};
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
                    let f = Finding::new(Code::Syntax, e.span, e.message)
                        .label("here")
                        .help(
                            e.help
                                .unwrap_or_else(|| "see docs/ir.md for the IR text format".into()),
                        );
                    located(to_diagnostic(&f, &SpanPlaces(key)))
                })
                .collect();
        }
    };
    let places = IrPlaces { key, spans: &spans };
    let mut out: Vec<Located> = validate::validate(&ir, &validate::Context { roles })
        .iter()
        .map(|f| located(to_diagnostic(f, &places)))
        .collect();
    out.sort_by_key(|l| (l.diagnostic.span.start, l.diagnostic.code));
    out
}

/// Places in IR text: the lines of its nodes, edges and knobs. IR text gets no fixes
/// (they are written in `.fwf` syntax).
struct IrPlaces<'a> {
    key: &'a str,
    spans: &'a IrSpans,
}

impl Places<IrRef> for IrPlaces<'_> {
    fn file(&self, _: &IrRef) -> String {
        self.key.to_string()
    }

    fn span(&self, r: &IrRef) -> Option<std::ops::Range<usize>> {
        match r {
            IrRef::Workflow => self.spans.workflow.clone(),
            IrRef::Node(id) => self.spans.nodes.get(id).cloned(),
            IrRef::Edge(i) | IrRef::EdgeTarget(i) => self.spans.edges.get(*i).cloned().flatten(),
            IrRef::Knob(k) => self.spans.knobs.get(k).cloned(),
        }
    }

    fn fallback(&self) -> std::ops::Range<usize> {
        self.spans.workflow.clone().unwrap_or(0..0)
    }
}
