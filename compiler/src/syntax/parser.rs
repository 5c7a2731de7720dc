//! The parser driver: walks blocks by hand and places one item at a time (a
//! declaration, a flow statement, a closing brace) into the tree, so a syntax error is
//! reported and the parser resumes at the next item instead of giving up on the file.
//!
//! Items come as [`Piece`]s: parsed in place from the text, or taken from a chunk the
//! caller parsed earlier (the database parses each item of the [outline] on its own and
//! keeps the result across edits). A chunk is taken only when it starts where the
//! cursor is, at the level the driver is in, and parsed cleanly; so both ways give the
//! same tree, map and errors.
//!
//! [outline]: super::outline

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use pest::Parser as _;

use super::ast::*;
use super::convert::{docs_text, join_docs};
use super::outline::Level;
use super::pieces::{ArgPiece, NodeSpans, ParsedChunk, Piece, Rel, TermSpans, read_piece};
use super::recover::{
    describe, level_name, line_end, resync, skip_block, skip_trivia, skipped_node_name,
    unclosed_string,
};
use crate::diagnostic::Code;

#[derive(pest_derive::Parser)]
#[grammar = "syntax/grammar.pest"]
pub(super) struct FwfParser;

/// Byte spans of the syntax addressed by [`Loc`]s. Hashed with Fx: the map is filled
/// with one entry per name of the file, and SipHash was a tenth of the parse.
pub type SourceMap = rustc_hash::FxHashMap<Loc, Range<usize>>;

/// A finding of the parser: a syntax error, or a name declared twice in one scope
/// (found here because only the parser sees both places).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub code: Code,
    pub span: Range<usize>,
    pub message: String,
    pub help: String,
    /// Secondary places (the first declaration of a duplicate).
    pub labels: Vec<(Range<usize>, String)>,
    /// What a duplicate is (`None` for a syntax error).
    pub subject: Option<crate::diagnostic::Subject>,
}

/// The result of parsing one file: never fails; errors sit beside the tree.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Shared, so the database hands the tree on without copying it.
    pub ast: Arc<Ast>,
    spans: Spans,
    pub errors: Vec<SyntaxError>,
    /// Byte ranges the parser skipped to recover from an error (the formatter leaves
    /// them as they are).
    pub skipped: Vec<Range<usize>>,
}

impl Parsed {
    /// Where each piece of syntax is written.
    pub fn map(&self) -> &SourceMap {
        self.spans.full.get_or_init(|| {
            let mut map = self.spans.found.clone();
            for p in &self.spans.placed {
                p.add_to(&mut map);
            }
            map
        })
    }
}

/// The source map in the making. Nodes and flow statements, most of a large file, keep
/// the spans of the piece they came from (shared with the parse of their item) and are
/// added to the map only when a position is first asked for: checking a file without
/// findings never asks.
#[derive(Debug, Clone, Default)]
struct Spans {
    found: SourceMap,
    placed: Vec<Placed>,
    full: OnceLock<SourceMap>,
}

#[derive(Debug, Clone)]
enum Placed {
    Node {
        scope: Arc<str>,
        base: usize,
        node: Arc<NodeDecl>,
        spans: Arc<NodeSpans>,
    },
    Statement {
        scope: Arc<str>,
        /// Its index in the body's flow.
        index: usize,
        base: usize,
        spans: Arc<TermSpans>,
    },
}

impl Placed {
    fn add_to(&self, map: &mut SourceMap) {
        let at = |base: usize, r: &Rel| base + r.start..base + r.end;
        match self {
            Placed::Node {
                scope,
                base,
                node,
                spans,
            } => {
                if let Some(name_at) = &spans.name_at {
                    let loc = Loc::Node(scope.to_string(), node.name.clone());
                    map.insert(loc, at(*base, name_at));
                }
                for (attr, key_at) in node.attrs.iter().zip(&spans.keys) {
                    let loc = Loc::Attr(scope.to_string(), node.name.clone(), attr.key.clone());
                    map.insert(loc, at(*base, key_at));
                }
            }
            Placed::Statement {
                scope,
                index,
                base,
                spans,
            } => {
                for (g, group) in spans.iter().enumerate() {
                    for (t, (term_at, bound_at)) in group.iter().enumerate() {
                        if let Some(r) = term_at {
                            map.insert(Loc::Term(scope.to_string(), *index, g, t), at(*base, r));
                        }
                        if let Some(r) = bound_at {
                            map.insert(Loc::Bound(scope.to_string(), *index, g, t), at(*base, r));
                        }
                    }
                }
            }
        }
    }
}

/// Chunks of the text parsed beforehand, looked up by where they start.
pub trait Chunks {
    /// The chunk starting at `pos`, parsed as items of `level`, if there is one.
    fn at(&self, pos: usize, level: Level) -> Option<&ParsedChunk>;
}

struct NoChunks;

impl Chunks for NoChunks {
    fn at(&self, _: usize, _: Level) -> Option<&ParsedChunk> {
        None
    }
}

/// Parses a whole `.fwf` source text.
pub fn parse(text: &str) -> Parsed {
    parse_with(text, &NoChunks)
}

/// Parses a whole `.fwf` source text, taking items from `chunks` where they fit.
pub fn parse_with(text: &str, chunks: &dyn Chunks) -> Parsed {
    let mut p = Driver {
        text,
        pos: 0,
        ast: Ast::default(),
        out: Parsed::default(),
        declared: FxHashMap::default(),
        depth: 0,
        chunks,
        queue: VecDeque::new(),
    };
    p.file();
    p.ast.incomplete = p.out.errors.iter().any(|e| e.code == Code::Syntax);
    p.out.ast = Arc::new(p.ast);
    p.out
}

struct Driver<'t, 'c> {
    text: &'t str,
    pos: usize,
    ast: Ast,
    out: Parsed,
    /// First declaration of each name, per namespace and scope.
    declared: FxHashMap<(&'static str, String, String), Range<usize>>,
    /// How many `parallel` blocks enclose the cursor.
    depth: usize,
    chunks: &'c dyn Chunks,
    /// Pieces of the chunk being consumed: start, end, level, piece.
    queue: VecDeque<(usize, usize, Level, &'c Piece)>,
}

/// Deeper nesting of `parallel` blocks is refused (no stack overflow from hostile input).
const MAX_NESTING: usize = 32;

impl<'t, 'c> Driver<'t, 'c> {
    fn file(&mut self) {
        if let Ok(mut pairs) = FwfParser::parse(Rule::file_docs, self.text)
            && let Some(pair) = pairs.next()
        {
            self.pos = pair.as_span().end();
            self.ast.doc = docs_text(pair.into_inner());
        }
        loop {
            self.skip_trivia();
            if self.pos >= self.text.len() {
                return;
            }
            let Some((base, piece)) = self.next(Level::Top) else {
                continue;
            };
            match piece.into_owned() {
                Piece::Import { path, at } => self.import(base, path, at),
                Piece::DeclHead {
                    workflow,
                    headless,
                    doc,
                    name,
                    params,
                } => self.decl(base, workflow, headless, doc, name, params),
                Piece::Close { at } => self.error(
                    at.start + base..at.end + base,
                    "unexpected `}`".into(),
                    "remove it, or check the braces of the declaration above".into(),
                ),
                _ => {}
            }
        }
    }

    /// The next item of `level` at the cursor, and where it starts: from the chunk being
    /// consumed, from a chunk parsed beforehand, or parsed in place. On a syntax error,
    /// reports it, skips to the next place an item of this level can start, and
    /// returns `None`.
    fn next(&mut self, level: Level) -> Option<(usize, Cow<'c, Piece>)> {
        if self.queue.is_empty()
            && let Some(chunk) = self.chunks.at(self.pos, level)
            && chunk.usable
        {
            let at = self.pos;
            self.queue.extend(
                chunk
                    .pieces
                    .iter()
                    .map(|(s, e, p)| (at + s, at + e, level, p)),
            );
        }
        if let Some(&(start, end, lvl, piece)) = self.queue.front() {
            self.queue.pop_front();
            if start == self.pos && lvl == level {
                self.pos = end;
                return Some((start, Cow::Borrowed(piece)));
            }
            // The driver went elsewhere (a skipped block): parse in place from here.
            self.queue.clear();
        }
        let rest = &self.text[self.pos..];
        match read_piece(rest, level) {
            Ok((piece, len)) => {
                let base = self.pos;
                self.pos += len;
                Some((base, Cow::Owned(piece)))
            }
            Err(err) => {
                let at = match err.location {
                    pest::error::InputLocation::Pos(p) => p,
                    pest::error::InputLocation::Span((s, _)) => s,
                };
                let at = (self.pos + at).min(self.text.len());
                let next_char = self.text[at..].chars().next().map_or(0, char::len_utf8);
                let end = line_end(self.text, at).max(at + next_char);
                match unclosed_string(self.text, self.pos, end) {
                    Some(string) => self.error(
                        string,
                        "unclosed string: a string ends on its line".into(),
                        "close it with `\"` on this line (write a line break inside it as `\\n`)"
                            .into(),
                    ),
                    None => {
                        let (message, help) = describe(&err, level_name(&level));
                        self.error(at..end, message, help);
                    }
                }
                let next = resync(self.text, self.pos, &level);
                let from = self.pos;
                // Always make progress: a stray `}` at the top level resyncs to itself.
                self.pos = if next > self.pos {
                    next
                } else {
                    (line_end(self.text, self.pos) + 1).min(self.text.len())
                };
                self.out.skipped.push(from..self.pos);
                None
            }
        }
    }

    fn error(&mut self, span: Range<usize>, message: String, help: String) {
        self.out.errors.push(SyntaxError {
            code: Code::Syntax,
            span,
            message,
            help,
            labels: Vec::new(),
            subject: None,
        });
    }

    /// Marks a declared name, or reports it as a duplicate (and returns false) when the
    /// namespace `ns` of `scope` already has it.
    fn declare(
        &mut self,
        ns: &'static str,
        scope: &str,
        loc: Loc,
        name: &str,
        span: Range<usize>,
    ) -> bool {
        if !self.first_declaration(ns, scope, || declared_subject(&loc), name, span.clone()) {
            return false;
        }
        self.out.spans.found.insert(loc, span);
        true
    }

    /// Whether `name` is declared for the first time in namespace `ns` of `scope`;
    /// reports it as a duplicate (about `subject`) when not.
    fn first_declaration(
        &mut self,
        ns: &'static str,
        scope: &str,
        subject: impl FnOnce() -> Option<crate::diagnostic::Subject>,
        name: &str,
        span: Range<usize>,
    ) -> bool {
        let key = (ns, scope.to_string(), name.to_string());
        if let Some(first) = self.declared.get(&key) {
            let first = first.clone();
            self.out.errors.push(SyntaxError {
                code: Code::DuplicateName,
                span,
                message: format!("`{name}` is declared twice"),
                help: format!("rename one of the two declarations of `{name}`"),
                labels: vec![(first, "first declared here".into())],
                subject: subject(),
            });
            return false;
        }
        self.declared.insert(key, span);
        true
    }

    fn skip_trivia(&mut self) {
        self.pos = skip_trivia(self.text, self.pos);
    }

    fn mark(&mut self, loc: Loc, base: usize, at: &Rel) {
        self.out
            .spans
            .found
            .insert(loc, base + at.start..base + at.end);
    }

    fn import(&mut self, base: usize, path: String, at: Rel) {
        let idx = self.ast.imports.len();
        self.mark(Loc::Import(idx), base, &at);
        self.ast.imports.push(Import { path });
    }

    fn decl(
        &mut self,
        base: usize,
        workflow: bool,
        headless: bool,
        mut doc: String,
        name: Option<(String, Rel)>,
        params: Vec<(Param, Rel)>,
    ) {
        let name_s = name.as_ref().map(|(n, _)| n.clone()).unwrap_or_default();
        let fresh = match &name {
            Some((n, at)) => self.declare(
                "decl",
                "",
                Loc::Decl(n.clone()),
                n,
                base + at.start..base + at.end,
            ),
            None => false,
        };
        let mut kept = Vec::new();
        for (param, at) in params {
            let loc = Loc::Param(name_s.clone(), param.name.clone());
            let span = base + at.start..base + at.end;
            if self.declare("param", &name_s, loc, &param.name, span) {
                kept.push(param);
            }
        }
        let (body, body_doc) = self.body(&name_s);
        if !body_doc.is_empty() {
            doc = join_docs(&doc, &body_doc);
        }
        let kind = if workflow {
            DeclKind::Workflow { headless }
        } else {
            DeclKind::Subgraph
        };
        if kind != DeclKind::Subgraph && doc.is_empty() && self.ast.decls.is_empty() {
            doc = self.ast.doc.clone();
        }
        if !fresh {
            return;
        }
        self.ast.decls.push(Decl {
            kind,
            name: name_s,
            doc,
            params: kept,
            body,
        });
    }

    /// Places body items up to the closing `}`. Returns the body and any `//!` doc
    /// written inside it.
    fn body(&mut self, scope: &str) -> (Body, String) {
        let shared: Arc<str> = scope.into();
        let mut body = Body::default();
        let mut doc = String::new();
        loop {
            self.skip_trivia();
            if self.pos >= self.text.len() {
                let end = self.text.len();
                self.error(
                    end.saturating_sub(1)..end,
                    "unexpected end of file: a block is not closed".into(),
                    "add the missing `}`".into(),
                );
                return (body, doc);
            }
            let from = self.pos;
            let Some((base, piece)) = self.next(Level::Body) else {
                if let Some(name) = skipped_node_name(&self.text[from..self.pos]) {
                    body.recovered.push(name);
                }
                continue;
            };
            match piece.into_owned() {
                Piece::Close { .. } => return (body, doc),
                Piece::BodyDoc(text) => doc = join_docs(&doc, &text),
                Piece::Import { path, at } => self.import(base, path, at),
                Piece::Input { name, path } => self.input(scope, base, name, path, &mut body),
                Piece::Knob { knob, at } => self.knob(scope, base, knob, at, &mut body),
                Piece::Use {
                    subgraph,
                    alias,
                    doc,
                    args,
                } => self.use_decl(scope, base, subgraph, alias, doc, args, &mut body),
                Piece::ParallelHead {
                    name,
                    doc,
                    isolation,
                    args,
                } => self.parallel(scope, base, name, doc, isolation, args, &mut body),
                Piece::FlowHead => self.flow(&shared, &mut body),
                Piece::Node {
                    node,
                    spans,
                    errors,
                } => self.node(&shared, base, node, spans, errors, &mut body),
                Piece::DeclHead { .. } | Piece::Statement { .. } => {}
            }
        }
    }

    fn input(
        &mut self,
        scope: &str,
        base: usize,
        name: (String, Rel),
        path: String,
        body: &mut Body,
    ) {
        let (name, at) = name;
        if name.is_empty() {
            return;
        }
        let loc = Loc::Input(scope.into(), name.clone());
        if !self.declare("input", scope, loc, &name, base + at.start..base + at.end) {
            return;
        }
        body.inputs.push(Input { name, path });
    }

    fn knob(&mut self, scope: &str, base: usize, knob: KnobDecl, at: Rel, body: &mut Body) {
        if knob.name.is_empty() {
            return;
        }
        let loc = Loc::Knob(scope.into(), knob.name.clone());
        if !self.declare(
            "knob",
            scope,
            loc,
            &knob.name,
            base + at.start..base + at.end,
        ) {
            return;
        }
        body.knobs.push(knob);
    }

    fn args(
        &mut self,
        base: usize,
        loc: impl Fn(String) -> Loc,
        pieces: Vec<ArgPiece>,
    ) -> Vec<Arg> {
        let mut args = Vec::new();
        for a in pieces {
            self.mark(loc(a.name.clone()), base, &a.at);
            if let Some(value) = a.value {
                args.push(Arg {
                    name: a.name,
                    value,
                });
            }
        }
        args
    }

    #[allow(clippy::too_many_arguments)]
    fn use_decl(
        &mut self,
        scope: &str,
        base: usize,
        subgraph: (String, Rel),
        alias: (String, Rel),
        doc: String,
        args: Vec<ArgPiece>,
        body: &mut Body,
    ) {
        let (alias, alias_at) = alias;
        if alias.is_empty() {
            return;
        }
        let loc = Loc::Use(scope.into(), alias.clone());
        let span = base + alias_at.start..base + alias_at.end;
        if !self.declare("node", scope, loc, &alias, span) {
            return;
        }
        let (subgraph, sub_at) = subgraph;
        self.mark(Loc::UseSubgraph(scope.into(), alias.clone()), base, &sub_at);
        let args = self.args(base, |a| Loc::UseArg(scope.into(), alias.clone(), a), args);
        body.uses.push(UseDecl {
            subgraph,
            alias,
            doc,
            args,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn parallel(
        &mut self,
        scope: &str,
        base: usize,
        name: Option<(String, Rel)>,
        doc: String,
        isolation: Option<String>,
        args: Vec<ArgPiece>,
        body: &mut Body,
    ) {
        let Some((name, at)) = name else { return };
        let loc = Loc::Parallel(scope.into(), name.clone());
        let fresh = self.declare("node", scope, loc, &name, base + at.start..base + at.end);
        let args = self.args(
            base,
            |a| Loc::ParallelArg(scope.into(), name.clone(), a),
            args,
        );
        let inner_scope = format!("{scope}/{name}");
        if self.depth >= MAX_NESTING {
            let at = self.pos;
            self.error(
                at.saturating_sub(1)..at,
                format!("`parallel` blocks are nested more than {MAX_NESTING} deep"),
                "flatten the nesting; this block was skipped".into(),
            );
            self.pos = skip_block(self.text, self.pos);
            return;
        }
        self.depth += 1;
        let (inner, _) = self.body(&inner_scope);
        self.depth -= 1;
        if !fresh {
            return;
        }
        body.parallels.push(Parallel {
            name,
            doc,
            args,
            isolation,
            body: inner,
        });
    }

    fn flow(&mut self, scope: &Arc<str>, body: &mut Body) {
        loop {
            self.skip_trivia();
            if self.pos >= self.text.len() {
                let end = self.text.len();
                self.error(
                    end.saturating_sub(1)..end,
                    "unexpected end of file: `flow {` is not closed".into(),
                    "add the missing `}`".into(),
                );
                return;
            }
            let Some((base, piece)) = self.next(Level::Flow) else {
                continue;
            };
            let Piece::Statement {
                stmt,
                spans,
                errors,
            } = piece.into_owned()
            else {
                return;
            };
            self.rebased_errors(base, errors);
            self.out.spans.placed.push(Placed::Statement {
                scope: scope.clone(),
                index: body.flow.len(),
                base,
                spans,
            });
            body.flow.push(stmt);
        }
    }

    fn rebased_errors(&mut self, base: usize, errors: Vec<SyntaxError>) {
        for mut e in errors {
            e.span = base + e.span.start..base + e.span.end;
            self.out.errors.push(e);
        }
    }

    fn node(
        &mut self,
        scope: &Arc<str>,
        base: usize,
        node: Arc<NodeDecl>,
        spans: Arc<NodeSpans>,
        errors: Vec<SyntaxError>,
        body: &mut Body,
    ) {
        if let Some(at) = &spans.name_at {
            let subject = || Some(crate::diagnostic::Subject::Node(node.name.clone()));
            let span = base + at.start..base + at.end;
            if !self.first_declaration("node", scope, subject, &node.name, span) {
                return;
            }
        }
        self.rebased_errors(base, errors);
        self.out.spans.placed.push(Placed::Node {
            scope: scope.clone(),
            base,
            node: node.clone(),
            spans,
        });
        body.nodes.push(node);
    }
}

/// What a declaration at `loc` declares, as a finding's subject.
fn declared_subject(loc: &Loc) -> Option<crate::diagnostic::Subject> {
    use crate::diagnostic::Subject;
    Some(match loc {
        Loc::Decl(name) => Subject::Workflow(name.clone()),
        Loc::Param(decl, name) => Subject::Argument {
            of: decl.clone(),
            name: name.clone(),
        },
        Loc::Input(_, name) => Subject::Input(name.clone()),
        Loc::Knob(_, name) => Subject::Knob(name.clone()),
        Loc::Use(_, alias) => Subject::Instance(alias.clone()),
        Loc::Parallel(_, name) => Subject::Parallel(name.clone()),
        Loc::Node(_, name) => Subject::Node(name.clone()),
        _ => return None,
    })
}
