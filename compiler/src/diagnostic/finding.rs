//! A finding before it has positions, and the one conversion that gives it positions:
//! [`to_diagnostic`]. The `.fwf` path (`check::place`), the IR-text path (`check::ir_text`)
//! and the parser's duplicate names all go through it.

use std::ops::Range;

use super::fix::{self, Fix, FixEdits};
use super::{Code, Diagnostic, Label, Subject};

/// A finding before it is given a source position: `At` addresses what it is about
/// (an IR entity for graph rules, a syntax location for rules on the tree, a byte range
/// for the parser).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<At> {
    pub code: Code,
    pub message: String,
    pub at: At,
    /// Text under the primary span.
    pub label: String,
    pub labels: Vec<(At, String)>,
    pub help: String,
    /// For a finding about a node: the attribute it is about (`role`, `task`), so a
    /// source position can point at that attribute rather than the node's name.
    pub attr: Option<String>,
    /// What it is about, as data (see [`Subject`]).
    pub subject: Option<Subject>,
    /// A machine-applicable repair, still without positions (see [`Fix`]).
    pub fix: Option<Fix>,
}

impl<At> Finding<At> {
    /// Re-addresses the finding (e.g. from IR entities to source locations).
    pub fn map<B>(self, mut f: impl FnMut(At) -> B) -> Finding<B> {
        Finding {
            code: self.code,
            message: self.message,
            at: f(self.at),
            label: self.label,
            labels: self.labels.into_iter().map(|(a, t)| (f(a), t)).collect(),
            help: self.help,
            attr: self.attr,
            subject: self.subject,
            fix: self.fix,
        }
    }

    pub fn new(code: Code, at: At, message: impl Into<String>) -> Finding<At> {
        Finding {
            code,
            message: message.into(),
            at,
            label: String::new(),
            labels: Vec::new(),
            help: String::new(),
            attr: None,
            subject: None,
            fix: None,
        }
    }

    /// What the finding is about, for fixes and tools.
    pub fn about(mut self, subject: Subject) -> Finding<At> {
        self.subject = Some(subject);
        self
    }

    /// The mechanical repair of the finding.
    pub fn fix(mut self, fix: Fix) -> Finding<At> {
        self.fix = Some(fix);
        self
    }

    pub fn attr(mut self, key: impl Into<String>) -> Finding<At> {
        self.attr = Some(key.into());
        self
    }

    pub fn label(mut self, text: impl Into<String>) -> Finding<At> {
        self.label = text.into();
        self
    }

    pub fn with(mut self, at: At, text: impl Into<String>) -> Finding<At> {
        self.labels.push((at, text.into()));
        self
    }

    pub fn help(mut self, text: impl Into<String>) -> Finding<At> {
        self.help = text.into();
        self
    }
}

impl<At> Finding<Option<At>> {
    /// The finding if its place is known, with the labels whose place is known.
    pub fn transpose(self) -> Option<Finding<At>> {
        let at = self.at?;
        Some(Finding {
            code: self.code,
            message: self.message,
            at,
            label: self.label,
            labels: self
                .labels
                .into_iter()
                .filter_map(|(a, t)| Some((a?, t)))
                .collect(),
            help: self.help,
            attr: self.attr,
            subject: self.subject,
            fix: self.fix,
        })
    }
}

/// What turning a finding into a diagnostic needs to know about the text it points
/// into. One implementation per kind of source (`.fwf` through the database, IR text,
/// the parser's own spans).
pub trait Places<At> {
    /// The file (its key) a place is in.
    fn file(&self, at: &At) -> String;
    /// The byte span of a place; `None` when it has none (a label without one is
    /// dropped).
    fn span(&self, at: &At) -> Option<Range<usize>>;
    /// Where a finding whose own place has no span points instead.
    fn fallback(&self) -> Range<usize> {
        0..0
    }
    /// The text of a file, for fixes that look at the lines they edit. `None` turns
    /// fixes off (IR text has no fixes: its syntax is not `.fwf`'s).
    fn text(&self, _file: &str) -> Option<&str> {
        None
    }
    /// Whether `text` (a file as a fix would leave it) still parses: a deletion that
    /// breaks it is not offered. Places that know no parser offer none.
    fn parses(&self, _text: &str) -> bool {
        false
    }
    /// Whether a node called `name` is declared in the scope of the place `at`.
    fn declares_node(&self, _at: &At, _name: &str) -> bool {
        false
    }
    /// Where the prompt of a new role goes, for a workflow in `file`.
    fn prompt_path(&self, _file: &str, _role: &str) -> Option<String> {
        None
    }
}

/// The one `Finding → Diagnostic` conversion: positions for the place and the labels
/// (labels in other files are dropped: a diagnostic indexes one text), and the fix
/// turned into concrete edits.
pub fn to_diagnostic<At>(f: &Finding<At>, places: &impl Places<At>) -> Diagnostic {
    let file = places.file(&f.at);
    let span = places.span(&f.at).unwrap_or_else(|| places.fallback());
    let labels: Vec<Label> = f
        .labels
        .iter()
        .filter(|(at, _)| places.file(at) == file)
        .filter_map(|(at, text)| {
            Some(Label {
                span: places.span(at)?,
                message: text.clone(),
            })
        })
        .collect();
    let fix: Option<FixEdits> = f.fix.as_ref().and_then(|fx| {
        fix::edits(
            fx,
            &fix::Site {
                file: &file,
                text: places.text(&file)?,
                span: span.clone(),
                labels: &labels,
                declares: &|name| places.declares_node(&f.at, name),
                parses: &|text| places.parses(text),
                prompt_path: &|role| places.prompt_path(&file, role),
            },
        )
    });
    Diagnostic {
        code: f.code,
        severity: f.code.severity(),
        message: f.message.clone(),
        file,
        span,
        label: f.label.clone(),
        labels,
        help: f.help.clone(),
        subject: f.subject.clone(),
        fix,
    }
}

/// Places that are byte spans of one file already (what parsers report).
pub struct SpanPlaces<'a>(pub &'a str);

impl Places<Range<usize>> for SpanPlaces<'_> {
    fn file(&self, _: &Range<usize>) -> String {
        self.0.to_string()
    }

    fn span(&self, at: &Range<usize>) -> Option<Range<usize>> {
        Some(at.clone())
    }
}
