//! The parser driver: walks blocks by hand and parses one declaration or flow statement
//! at a time with the pest grammar, so a syntax error is reported and the parser resumes
//! at the next declaration instead of giving up on the file.

use std::collections::HashMap;
use std::ops::Range;

use pest::Parser as _;
use pest::iterators::Pair;

use super::ast::*;
use super::convert::{
    bounds_of, docs_text, gate_by, head_parts, join_docs, literal, unquote, value,
};
use super::recover::{
    Level, describe, level_name, line_end, resync, skip_block, skip_trivia, skipped_node_name,
};
use crate::diagnostic::Code;
use crate::ir::{Label, Literal, NodeKind};

#[derive(pest_derive::Parser)]
#[grammar = "syntax/grammar.pest"]
pub(super) struct FwfParser;

/// Byte spans of the syntax addressed by [`Loc`]s.
pub type SourceMap = HashMap<Loc, Range<usize>>;

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
}

/// The result of parsing one file: never fails; errors sit beside the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub ast: Ast,
    pub map: SourceMap,
    pub errors: Vec<SyntaxError>,
    /// Byte ranges the parser skipped to recover from an error (the formatter leaves
    /// them as they are).
    pub skipped: Vec<Range<usize>>,
}

/// Parses a whole `.fwf` source text.
pub fn parse(text: &str) -> Parsed {
    let mut p = Driver {
        text,
        pos: 0,
        base: 0,
        out: Parsed {
            // About one span per 25 bytes of source: sizing the map up front saves
            // rehashing it (a tenth of the parse of a large file).
            map: SourceMap::with_capacity(text.len() / 24),
            ..Parsed::default()
        },
        declared: HashMap::new(),
        depth: 0,
    };
    p.file();
    p.out.ast.incomplete = p.out.errors.iter().any(|e| e.code == Code::Syntax);
    p.out
}

struct Driver<'t> {
    text: &'t str,
    pos: usize,
    /// Offset of the text the current pairs were parsed from.
    base: usize,
    out: Parsed,
    /// First declaration of each name, per namespace and scope.
    declared: HashMap<(&'static str, String, String), Range<usize>>,
    /// How many `parallel` blocks enclose the cursor.
    depth: usize,
}

/// Deeper nesting of `parallel` blocks is refused (no stack overflow from hostile input).
const MAX_NESTING: usize = 32;

impl<'t> Driver<'t> {
    fn file(&mut self) {
        if let Ok(mut pairs) = FwfParser::parse(Rule::file_docs, self.text)
            && let Some(pair) = pairs.next()
        {
            self.pos = pair.as_span().end();
            self.out.ast.doc = docs_text(pair.into_inner());
        }
        loop {
            self.skip_trivia();
            if self.pos >= self.text.len() {
                return;
            }
            let Some(pair) = self.item(Rule::top_item, Level::Top) else {
                continue;
            };
            match pair.as_rule() {
                Rule::import => self.import(pair),
                Rule::workflow_head | Rule::subgraph_head => self.decl(pair),
                Rule::close => self.error(
                    self.span(&pair),
                    "unexpected `}`".into(),
                    "remove it, or check the braces of the declaration above".into(),
                ),
                _ => {}
            }
        }
    }

    /// Parses one item with `rule` at the cursor. On failure, reports the error, skips to
    /// the next place a declaration of this level can start, and returns `None`.
    fn item(&mut self, rule: Rule, level: Level) -> Option<Pair<'t, Rule>> {
        let rest = &self.text[self.pos..];
        match FwfParser::parse(rule, rest) {
            Ok(mut pairs) => {
                let outer = pairs.next()?;
                let end = outer.as_span().end();
                // Pair spans are relative to `rest`; `base` rebases them.
                self.base = self.pos;
                self.pos += end;
                outer.into_inner().next()
            }
            Err(err) => {
                let at = match err.location {
                    pest::error::InputLocation::Pos(p) => p,
                    pest::error::InputLocation::Span((s, _)) => s,
                };
                let at = self.pos + at;
                let (message, help) = describe(&err, level_name(&level));
                let at = at.min(self.text.len());
                let next_char = self.text[at..].chars().next().map_or(0, char::len_utf8);
                let end = line_end(self.text, at).max(at + next_char);
                self.error(at..end, message, help);
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
        });
    }

    /// Marks a declared name, or reports it as a duplicate (and returns false) when the
    /// namespace `ns` of `scope` already has it.
    fn declare(&mut self, ns: &'static str, scope: &str, loc: Loc, pair: &Pair<'_, Rule>) -> bool {
        let name = pair.as_str().to_string();
        let span = self.span(pair);
        let key = (ns, scope.to_string(), name.clone());
        if let Some(first) = self.declared.get(&key) {
            let first = first.clone();
            self.out.errors.push(SyntaxError {
                code: Code::DuplicateName,
                span,
                message: format!("`{name}` is declared twice"),
                help: format!("rename one of the two declarations of `{name}`"),
                labels: vec![(first, "first declared here".into())],
            });
            return false;
        }
        self.declared.insert(key, span);
        self.mark(loc, pair);
        true
    }

    fn skip_trivia(&mut self) {
        self.pos = skip_trivia(self.text, self.pos);
    }

    fn span(&self, pair: &Pair<'_, Rule>) -> Range<usize> {
        let s = pair.as_span();
        self.base + s.start()..self.base + s.end()
    }

    fn mark(&mut self, loc: Loc, pair: &Pair<'_, Rule>) {
        let span = self.span(pair);
        self.out.map.insert(loc, span);
    }

    fn import(&mut self, pair: Pair<'t, Rule>) {
        let Some(target) = pair.into_inner().next() else {
            return;
        };
        let path = match target.as_rule() {
            Rule::string => unquote(target.as_str()),
            _ => target.as_str().to_string(),
        };
        let idx = self.out.ast.imports.len();
        self.mark(Loc::Import(idx), &target);
        self.out.ast.imports.push(Import { path });
    }

    fn decl(&mut self, head: Pair<'t, Rule>) {
        let is_workflow = head.as_rule() == Rule::workflow_head;
        let mut doc = String::new();
        let mut headless = false;
        let mut name = String::new();
        let mut params = Vec::new();
        let mut name_pair = None;
        let mut param_pairs = Vec::new();
        for p in head.into_inner() {
            match p.as_rule() {
                Rule::docs => doc = docs_text(p.into_inner()),
                Rule::headless => headless = true,
                Rule::ident => {
                    name = p.as_str().to_string();
                    name_pair = Some(p);
                }
                Rule::param => param_pairs.push(p),
                _ => {}
            }
        }
        let fresh = match &name_pair {
            Some(p) => self.declare("decl", "", Loc::Decl(name.clone()), p),
            None => false,
        };
        for p in param_pairs {
            let mut it = p.into_inner();
            let (Some(pname), Some(pty)) = (it.next(), it.next()) else {
                continue;
            };
            if !self.declare(
                "param",
                &name,
                Loc::Param(name.clone(), pname.as_str().into()),
                &pname,
            ) {
                continue;
            }
            let mut default = None;
            let mut bounds = None;
            for rest in it {
                match rest.as_rule() {
                    Rule::literal => default = Some(literal(rest)),
                    Rule::bounds => bounds = Some(bounds_of(rest)),
                    _ => {}
                }
            }
            params.push(Param {
                name: pname.as_str().into(),
                ty: ParamType::parse(pty.as_str()).unwrap_or(ParamType::String),
                default,
                bounds,
            });
        }
        let scope = name.clone();
        let (body, body_doc) = self.body(&scope);
        if !body_doc.is_empty() {
            doc = join_docs(&doc, &body_doc);
        }
        let kind = if is_workflow {
            DeclKind::Workflow { headless }
        } else {
            DeclKind::Subgraph
        };
        if kind != DeclKind::Subgraph && doc.is_empty() && self.out.ast.decls.is_empty() {
            doc = self.out.ast.doc.clone();
        }
        if !fresh {
            return;
        }
        self.out.ast.decls.push(Decl {
            kind,
            name,
            doc,
            params,
            body,
        });
    }

    /// Parses body items up to the closing `}`. Returns the body and any `//!` doc
    /// written inside it.
    fn body(&mut self, scope: &str) -> (Body, String) {
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
            if self.text[self.pos..].starts_with("//!") {
                if let Some(pair) = self.item(Rule::body_doc, Level::Body) {
                    doc = join_docs(&doc, &docs_text(std::iter::once(pair)));
                }
                continue;
            }
            let from = self.pos;
            let Some(pair) = self.item(Rule::body_item, Level::Body) else {
                if let Some(name) = skipped_node_name(&self.text[from..self.pos]) {
                    body.recovered.push(name);
                }
                continue;
            };
            match pair.as_rule() {
                Rule::close => return (body, doc),
                Rule::import => self.import(pair),
                Rule::input => self.input(scope, pair, &mut body),
                Rule::knob => self.knob(scope, pair, &mut body),
                Rule::use_decl => self.use_decl(scope, pair, &mut body),
                Rule::parallel_head => self.parallel(scope, pair, &mut body),
                Rule::flow_head => self.flow(scope, &mut body),
                Rule::node_decl => self.node(scope, pair, &mut body),
                _ => {}
            }
        }
    }

    fn input(&mut self, scope: &str, pair: Pair<'t, Rule>, body: &mut Body) {
        let mut it = pair.into_inner().filter(|p| p.as_rule() != Rule::docs);
        let (Some(name), Some(path)) = (it.next(), it.next()) else {
            return;
        };
        if !self.declare(
            "input",
            scope,
            Loc::Input(scope.into(), name.as_str().into()),
            &name,
        ) {
            return;
        }
        body.inputs.push(Input {
            name: name.as_str().into(),
            path: unquote(path.as_str()),
        });
    }

    fn knob(&mut self, scope: &str, pair: Pair<'t, Rule>, body: &mut Body) {
        let mut doc = String::new();
        let mut name = None;
        let mut ty = ParamType::String;
        let mut default = Literal::Bool(false);
        let mut bounds = None;
        let mut expandable = false;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::docs => doc = docs_text(p.into_inner()),
                Rule::ident => name = Some(p),
                Rule::knob_type => ty = ParamType::parse(p.as_str()).unwrap_or(ParamType::String),
                Rule::literal => default = literal(p),
                Rule::bounds => bounds = Some(bounds_of(p)),
                Rule::expandable => expandable = true,
                _ => {}
            }
        }
        let Some(name) = name else { return };
        if !self.declare(
            "knob",
            scope,
            Loc::Knob(scope.into(), name.as_str().into()),
            &name,
        ) {
            return;
        }
        body.knobs.push(KnobDecl {
            name: name.as_str().into(),
            doc,
            ty,
            default,
            bounds,
            expandable,
        });
    }

    fn args(&mut self, loc: impl Fn(String) -> Loc, pairs: Vec<Pair<'t, Rule>>) -> Vec<Arg> {
        let mut args = Vec::new();
        for p in pairs {
            let mut it = p.into_inner();
            let (Some(name), Some(value)) = (it.next(), it.next()) else {
                continue;
            };
            self.mark(loc(name.as_str().into()), &value);
            let Some(v) = value.into_inner().next() else {
                continue;
            };
            let value = match v.as_rule() {
                Rule::literal => ArgValue::Literal(literal(v)),
                _ => ArgValue::Name(v.as_str().into()),
            };
            args.push(Arg {
                name: name.as_str().into(),
                value,
            });
        }
        args
    }

    fn use_decl(&mut self, scope: &str, pair: Pair<'t, Rule>, body: &mut Body) {
        let (doc, idents, arg_pairs) = head_parts(pair);
        let (Some(sub), Some(alias)) = (idents.first(), idents.get(1)) else {
            return;
        };
        let alias_name = alias.as_str().to_string();
        if !self.declare(
            "node",
            scope,
            Loc::Use(scope.into(), alias_name.clone()),
            alias,
        ) {
            return;
        }
        self.mark(Loc::UseSubgraph(scope.into(), alias_name.clone()), sub);
        let subgraph = sub.as_str().to_string();
        let args = self.args(
            |a| Loc::UseArg(scope.into(), alias_name.clone(), a),
            arg_pairs,
        );
        body.uses.push(UseDecl {
            subgraph,
            alias: alias_name,
            doc,
            args,
        });
    }

    fn parallel(&mut self, scope: &str, pair: Pair<'t, Rule>, body: &mut Body) {
        let (doc, idents, arg_pairs) = head_parts(pair);
        let Some(name) = idents.first() else { return };
        let name_s = name.as_str().to_string();
        let fresh = self.declare(
            "node",
            scope,
            Loc::Parallel(scope.into(), name_s.clone()),
            name,
        );
        let isolation = idents.get(1).map(|p| p.as_str().to_string());
        let args = self.args(
            |a| Loc::ParallelArg(scope.into(), name_s.clone(), a),
            arg_pairs,
        );
        let inner_scope = format!("{scope}/{name_s}");
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
            name: name_s,
            doc,
            args,
            isolation,
            body: inner,
        });
    }

    fn flow(&mut self, scope: &str, body: &mut Body) {
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
            let Some(pair) = self.item(Rule::flow_item, Level::Flow) else {
                continue;
            };
            if pair.as_rule() == Rule::close {
                return;
            }
            let stmt = body.flow.len();
            let mut groups = Vec::new();
            for (g, group) in pair.into_inner().enumerate() {
                let mut terms = Vec::new();
                for (t, term) in group.into_inner().enumerate() {
                    terms.push(self.term(scope, (stmt, g, t), term));
                }
                groups.push(terms);
            }
            body.flow.push(FlowStmt { groups });
        }
    }

    fn term(&mut self, scope: &str, at: (usize, usize, usize), pair: Pair<'t, Rule>) -> Term {
        let (stmt, g, t) = at;
        let mut it = pair.into_inner();
        let mut name = String::new();
        let mut label = None;
        if let Some(q) = it.next() {
            self.mark(Loc::Term(scope.into(), stmt, g, t), &q);
            let full = q.as_str();
            match full.rsplit_once('.') {
                Some((head, last)) if Label::parse(last).is_some() => {
                    name = head.to_string();
                    label = Label::parse(last);
                }
                _ => name = full.to_string(),
            }
        }
        let bound = it.next().and_then(|b| {
            self.mark(Loc::Bound(scope.into(), stmt, g, t), &b);
            let v = b.into_inner().next()?;
            Some(match v.as_rule() {
                Rule::number => match v.as_str().parse::<u32>() {
                    Ok(n) => BoundRef::Count(n),
                    Err(_) => {
                        self.error(
                            self.span(&v),
                            format!("`{}` is not a valid reloop bound", v.as_str()),
                            "write a whole number of at least 1, e.g. `(max 3)`".into(),
                        );
                        BoundRef::Count(0)
                    }
                },
                _ => BoundRef::Name(v.as_str().into()),
            })
        });
        Term { name, label, bound }
    }

    fn node(&mut self, scope: &str, pair: Pair<'t, Rule>, body: &mut Body) {
        let mut doc = String::new();
        let mut decl = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::docs => doc = docs_text(p.into_inner()),
                _ => decl = Some(p),
            }
        }
        let Some(decl) = decl else { return };
        let kind = match decl.as_rule() {
            Rule::agent_decl => NodeKind::Agent,
            Rule::fn_decl => NodeKind::Fn,
            Rule::gate_decl => NodeKind::Gate,
            Rule::fork_decl => NodeKind::Fork,
            Rule::join_decl => NodeKind::Join,
            Rule::select_decl => NodeKind::Select,
            Rule::study_decl => NodeKind::Study,
            _ => NodeKind::Llm,
        };
        let mut node = NodeDecl {
            name: String::new(),
            kind,
            doc,
            gate_by: None,
            inline: None,
            strategy: None,
            attrs: Vec::new(),
        };
        let mut attr_pairs = Vec::new();
        for p in decl.into_inner() {
            match p.as_rule() {
                Rule::qual_ident if node.name.is_empty() => {
                    node.name = p.as_str().into();
                    if !self.declare(
                        "node",
                        scope,
                        Loc::Node(scope.into(), node.name.clone()),
                        &p,
                    ) {
                        return;
                    }
                }
                Rule::ident => node.strategy = Some(p.as_str().into()),
                Rule::string => node.inline = Some(unquote(p.as_str())),
                Rule::evaluator => node.gate_by = p.into_inner().next().map(gate_by),
                Rule::attrs => attr_pairs.extend(p.into_inner()),
                _ => {}
            }
        }
        for a in attr_pairs {
            let mut it = a.into_inner();
            let Some(key) = it.next() else { continue };
            let loc = Loc::Attr(scope.into(), node.name.clone(), key.as_str().into());
            if self.out.map.contains_key(&loc) {
                self.error(
                    self.span(&key),
                    format!("attribute `{}` is given twice", key.as_str()),
                    "give each attribute once; list several values with commas".into(),
                );
                continue;
            }
            self.mark(loc, &key);
            let values = it
                .filter_map(|v| v.into_inner().next())
                .map(value)
                .collect();
            node.attrs.push(Attr {
                key: key.as_str().into(),
                values,
            });
        }
        body.nodes.push(node);
    }
}
