//! Diagnostics as data: every finding of the compiler is one [`Diagnostic`] with a stable
//! code, a primary span, secondary labels and a help line. The CLI renders them with
//! miette; the language server converts them to LSP diagnostics.

use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

mod finding;
pub mod fix;
mod located;

pub use finding::{Finding, Places, SpanPlaces, to_diagnostic};
pub use fix::{FileCreate, Fix, FixEdits, TextEdit};
pub use located::{Located, SourceLocation};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $sev:ident, $title:literal;)*) => {
        /// Stable diagnostic codes. Never renumber: users grep for them and
        /// `docs/diagnostics.md` documents each.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev,)* }
            }

            /// One line saying what the rule is about.
            pub fn title(self) -> &'static str {
                match self { $(Code::$variant => $title,)* }
            }
        }
    };
}

codes! {
    Syntax = "FWF001", Error, "syntax error";
    DuplicateName = "FWF002", Error, "a name is declared twice";
    UnknownNode = "FWF003", Error, "a flow names a node that does not exist";
    UnknownImport = "FWF004", Error, "an import names a file that does not exist";
    ImportCycle = "FWF005", Error, "imports form a cycle";
    UnknownSubgraph = "FWF006", Error, "`use` names a subgraph that does not exist";
    BadArgument = "FWF007", Error, "a subgraph or parallel argument is missing, unknown or of the wrong type";
    BadAttribute = "FWF008", Error, "an attribute is unknown for its node kind or has a bad value";
    OutOfBounds = "FWF009", Error, "a knob or parameter value is outside its bounds";
    UnknownRole = "FWF010", Error, "an agent role has no prompt";
    UnknownTemplateVar = "FWF011", Error, "a template names an unknown variable";
    Unreachable = "FWF012", Error, "a node cannot be reached from `start`";
    NoPathToEnd = "FWF013", Error, "`end` cannot be reached from a node";
    ForkWithoutJoin = "FWF014", Error, "a fork has no matching join";
    JoinMismatch = "FWF015", Error, "a join's inputs do not all come from one fork";
    BranchEscapes = "FWF016", Error, "a branch leaves its fork without passing the join";
    FanOutWithoutFork = "FWF017", Error, "a node that is not a fork has several plain successors";
    UnboundedReloop = "FWF018", Error, "a reloop has no bound";
    ReloopNotUpstream = "FWF019", Error, "a reloop targets a node that is not upstream of its gate";
    UnboundedCycle = "FWF020", Error, "a cycle has no bounded reloop on it";
    LabelOnNonGate = "FWF021", Error, "a verdict label is on an edge whose source is not a gate";
    MissingOutcome = "FWF022", Error, "a gate has no edge for an outcome it can emit";
    ParallelWriteConflict = "FWF023", Error, "two parallel branches write the same artifact";
    ParallelWithoutSelect = "FWF024", Error, "a `parallel` block is not followed by a `select`";
    MissingStart = "FWF025", Error, "a workflow has no `start ->` edge";
    UnknownArtifact = "FWF026", Error, "`reads` names an artifact that is not declared";
    ParallelCount = "FWF027", Error, "a `parallel` block's count is outside 1..=8";
    ParallelBody = "FWF028", Error, "a node's `in=` does not match the parallel branches it is on";
    UnreadArtifact = "FWF101", Warning, "an artifact is read but no upstream node writes it";
    UnusedImport = "FWF102", Warning, "an import is not used";
    UnusedKnob = "FWF103", Warning, "a knob is not used";
    UnusedNode = "FWF104", Warning, "a node is declared but not in any flow";
    UserGateInHeadless = "FWF105", Warning, "a `user` gate is in a headless mode";
    PrecheckWithoutQa = "FWF106", Warning, "a precheck runs without all three QA roles";
}

/// A secondary place that matters to a finding (the fork a branch escapes from, the
/// first declaration of a duplicate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Range<usize>,
    pub message: String,
}

/// What a finding is about, as data: quick fixes, `--format json` and other tools read
/// this, never the message text. Names are as written in the file (a node inside an
/// instance by its dotted id).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Subject {
    /// A node, by its id in the workflow (`fork` for a fork without a join).
    Node(String),
    /// A role, by name (an unknown role).
    Role(String),
    /// An artifact, by its path.
    Artifact(String),
    /// A knob, by name.
    Knob(String),
    /// A workflow input, by name.
    Input(String),
    /// An import, by the path as written.
    Import(String),
    /// A subgraph, by name.
    Subgraph(String),
    /// A `use` of a subgraph, by its alias.
    Instance(String),
    /// A `parallel` block, by name.
    Parallel(String),
    /// A workflow or subgraph declaration, by name.
    Workflow(String),
    /// A template variable, by name.
    Variable(String),
    /// An attribute of a node.
    Attribute { node: String, attr: String },
    /// An argument, by the subgraph or parallel block it is passed to and its name.
    Argument { of: String, name: String },
    /// An edge, by the nodes it joins (`start`/`end` included).
    Edge { from: String, to: String },
}

/// A finding, located in one source text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// File the spans refer to, as the loader named it.
    pub file: String,
    pub span: Range<usize>,
    /// What to write at the primary span.
    pub label: String,
    pub labels: Vec<Label>,
    pub help: String,
    /// What it is about, when that is one thing a fix can act on.
    pub subject: Option<Subject>,
    /// The machine-applicable fix, as concrete edits.
    pub fix: Option<FixEdits>,
}

impl Diagnostic {
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// A miette report of this diagnostic over `source` (the text the spans index).
    pub fn to_report(&self, source: Arc<String>) -> miette::Report {
        miette::Report::new(Rendered {
            diag: self.clone(),
            source: miette::NamedSource::new(self.file.clone(), source),
        })
    }
}

/// Line and column (both 1-based, column in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Line starts of a text, so many offsets convert to line and column without
/// rescanning the text each time (a 100,000-node IR file has 100,000 node locations).
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self { text, starts }
    }

    /// The same as [`line_col`], in logarithmic time.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }
}

#[cfg(test)]
mod line_index_tests {
    use super::*;

    #[test]
    fn the_index_agrees_with_line_col_everywhere() {
        let text = "ab\ncé\n\nlast";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(
                index.line_col(offset),
                line_col(text, offset),
                "offset {offset}"
            );
        }
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Debug)]
struct Rendered {
    diag: Diagnostic,
    source: miette::NamedSource<Arc<String>>,
}

impl std::fmt::Display for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl std::error::Error for Rendered {}

impl miette::Diagnostic for Rendered {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.diag.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        (!self.diag.help.is_empty())
            .then(|| Box::new(&self.diag.help) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let len = self.source.inner().len();
        let clamp = move |r: &Range<usize>| {
            let start = r.start.min(len);
            (start, r.end.min(len).saturating_sub(start))
        };
        let primary = miette::LabeledSpan::new_primary_with_span(
            (!self.diag.label.is_empty()).then(|| self.diag.label.clone()),
            clamp(&self.diag.span),
        );
        let rest = self.diag.labels.iter().map(move |l| {
            miette::LabeledSpan::new_with_span(Some(l.message.clone()), clamp(&l.span))
        });
        Some(Box::new(std::iter::once(primary).chain(rest)))
    }
}
