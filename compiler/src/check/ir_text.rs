//! Checking a bare IR text file: parse it, run the same graph rules as for `.fwf`, and
//! point findings at the lines of the IR text.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::graph_findings;
use crate::db::{Database, Db, Loader, SourceFile};
use crate::diagnostic::Located;
use crate::diagnostic::{Code, Diagnostic, Finding, Places, SpanPlaces, to_diagnostic};
use crate::ir::text::{TextError, parse_text};
use crate::ir::{Ir, IrSpans};
use crate::validate::{self, IrRef};

/// Whether a database key names IR text rather than `.fwf`.
pub fn is_ir_text(key: &str) -> bool {
    key.ends_with(".fwir")
}

/// A `.fwir` file read into IR, with where each part is written, or the text's errors.
/// Positions change with most edits, so the result is never compared; the graph rules
/// read its [skeleton](crate::check::skeletons), as for `.fwf`.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse_ir_file(db: &dyn Db, file: SourceFile) -> Result<(Ir, IrSpans), Vec<TextError>> {
    parse_text(file.text(db))
}

/// Every diagnostic of a `.fwir` file: its syntax errors, or the rules about single
/// nodes, edges and knobs and then the graph rules — the same rules, on the same
/// skeleton, as a `.fwf` workflow gets.
#[salsa::tracked(returns(ref))]
pub fn ir_file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let key = file.key(db);
    let (ir, spans) = match parse_ir_file(db, file) {
        Ok(parsed) => parsed,
        Err(errors) => {
            return errors
                .iter()
                .map(|e| {
                    let f = Finding::new(Code::Syntax, e.span.clone(), e.message.clone())
                        .label("here")
                        .help(
                            e.help
                                .clone()
                                .unwrap_or_else(|| "see docs/ir.md for the IR text format".into()),
                        );
                    to_diagnostic(&f, &SpanPlaces(key))
                })
                .collect();
        }
    };
    let cx = validate::Context {
        roles: db.roles().names(db).clone(),
    };
    let places = IrPlaces { key, spans };
    let graph = graph_findings(db, file)
        .first()
        .cloned()
        .unwrap_or_default();
    let nodes: Vec<validate::NodeFact> = ir.nodes.iter().map(validate::NodeFact::of).collect();
    let mut out: Vec<Diagnostic> = validate::local_rules(ir, &cx)
        .iter()
        .chain(&validate::workflow_rules(&nodes))
        .chain(&graph)
        .map(|f| to_diagnostic(f, &places))
        .collect();
    out.sort_by_key(|d| (d.span.start, d.code));
    out
}

/// The diagnostics of a `.fwir` file of `db`, each with its source text.
pub fn located_ir(db: &dyn Db, file: SourceFile) -> Vec<Located> {
    let source = Arc::new(file.text(db).clone());
    ir_file_diagnostics(db, file)
        .iter()
        .map(|d| Located {
            diagnostic: d.clone(),
            source: source.clone(),
        })
        .collect()
}

/// Checks IR text on its own (no files around it), with the roles that have a prompt.
pub fn check_ir_text(key: &str, text: &str, roles: Option<BTreeSet<String>>) -> Vec<Located> {
    struct Nothing;
    impl Loader for Nothing {
        fn load(&self, _: &str) -> Option<String> {
            None
        }
    }
    let mut db = Database::new(Arc::new(Nothing), roles);
    let file = db.set_text(key, text.to_string());
    located_ir(&db, file)
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
