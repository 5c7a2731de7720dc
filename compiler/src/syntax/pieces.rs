//! One item of the grammar at a time: pest parses it, and it becomes a [`Piece`] whose
//! spans are relative to the item's own start, with no scope and no file around it. The
//! parser places pieces into the tree ([`super::parser`]); pieces of an unchanged item
//! are reused across edits ([`parse_chunk`] is what the database memoizes per item).

use std::ops::Range;
use std::sync::Arc;

use pest::Parser as _;
use pest::iterators::Pair;

use super::ast::*;
use super::convert::{bounds_of, docs_text, gate_by, head_parts, literal, unquote, value};
use super::outline::Level;
use super::parser::{FwfParser, Rule, SyntaxError};
use super::recover::skip_trivia;
use crate::diagnostic::Code;
use crate::ir::{Label, Literal, NodeKind};

/// A span relative to the start of the piece it belongs to.
pub type Rel = Range<usize>;

/// A name and where it is written.
pub type Named = (String, Rel);

/// One parsed item, before it is placed in a scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Import {
        path: String,
        at: Rel,
    },
    DeclHead {
        workflow: bool,
        headless: bool,
        doc: String,
        name: Option<Named>,
        params: Vec<(Param, Rel)>,
    },
    BodyDoc(String),
    Input {
        name: Named,
        path: String,
    },
    Knob {
        knob: KnobDecl,
        at: Rel,
    },
    Use {
        subgraph: Named,
        alias: Named,
        doc: String,
        args: Vec<ArgPiece>,
    },
    ParallelHead {
        name: Option<Named>,
        doc: String,
        isolation: Option<String>,
        args: Vec<ArgPiece>,
    },
    FlowHead,
    /// A flow statement. The statement and its spans are shared with the tree and the
    /// source map, so placing an unchanged statement copies nothing.
    Statement {
        stmt: Arc<FlowStmt>,
        spans: Arc<TermSpans>,
        errors: Vec<SyntaxError>,
    },
    /// A node declaration, shared like a statement.
    Node {
        node: Arc<NodeDecl>,
        spans: Arc<NodeSpans>,
        errors: Vec<SyntaxError>,
    },
    Close {
        at: Rel,
    },
}

impl Piece {
    /// Pieces after which the parser changes level (opens or closes a block).
    pub fn opens_or_closes(&self) -> bool {
        matches!(
            self,
            Piece::DeclHead { .. }
                | Piece::ParallelHead { .. }
                | Piece::FlowHead
                | Piece::Close { .. }
        )
    }
}

impl Piece {
    /// The `///` docs read before the item.
    fn set_doc(&mut self, text: String) {
        match self {
            Piece::DeclHead { doc, .. }
            | Piece::Use { doc, .. }
            | Piece::ParallelHead { doc, .. } => *doc = text,
            Piece::Knob { knob, .. } => knob.doc = text,
            Piece::Node { node, .. } => Arc::make_mut(node).doc = text,
            _ => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgPiece {
    pub name: String,
    /// `None` when the value did not parse into a name or literal.
    pub value: Option<ArgValue>,
    /// Where the value is written.
    pub at: Rel,
}

/// Where a node's name and each of its attributes' keys are written, relative to the
/// node's piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpans {
    pub name_at: Option<Rel>,
    /// Indexed like `NodeDecl::attrs`.
    pub keys: Vec<Rel>,
}

/// Where each term of a flow statement and its bound are written, indexed like
/// `FlowStmt::groups`.
pub type TermSpans = Vec<Vec<(Option<Rel>, Option<Rel>)>>;

/// A chunk of text parsed as items of one level, all relative to the chunk's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedChunk {
    /// Each piece with its start and end in the chunk.
    pub pieces: Vec<(usize, usize, Piece)>,
    /// Every byte parsed into pieces, no syntax error, and a block opened or closed only
    /// by the last piece: the parser may take the pieces as they are.
    pub usable: bool,
}

/// Parses `text` as items of `level`, stopping at the first that does not parse.
pub fn parse_chunk(text: &str, level: Level) -> ParsedChunk {
    let mut pieces: Vec<(usize, usize, Piece)> = Vec::new();
    let mut pos = 0;
    let mut usable = true;
    loop {
        pos = skip_trivia(text, pos);
        if pos >= text.len() {
            break;
        }
        if pieces.last().is_some_and(|(_, _, p)| p.opens_or_closes()) {
            usable = false;
            break;
        }
        match read_piece(&text[pos..], level) {
            Ok((piece, len)) => {
                pieces.push((pos, pos + len, piece));
                pos += len.max(1);
            }
            Err(_) => {
                usable = false;
                break;
            }
        }
    }
    ParsedChunk { pieces, usable }
}

/// Parses the item of `level` at the start of `rest`: the piece and its length.
pub(super) fn read_piece(
    rest: &str,
    level: Level,
) -> Result<(Piece, usize), Box<pest::error::Error<Rule>>> {
    let rule = match level {
        Level::Top => Rule::top_item,
        Level::Body if rest.starts_with("//!") => Rule::body_doc,
        Level::Body => Rule::body_item,
        Level::Flow => Rule::flow_item,
    };
    let nothing = || {
        Box::new(pest::error::Error::new_from_pos(
            pest::error::ErrorVariant::CustomError {
                message: "nothing to parse".into(),
            },
            pest::Position::from_start(rest),
        ))
    };
    let mut pairs = FwfParser::parse(rule, rest).map_err(Box::new)?;
    let Some(outer) = pairs.next() else {
        return Err(nothing());
    };
    let len = outer.as_span().end();
    let mut inner = outer.into_inner();
    let mut doc = None;
    let mut first = inner.next();
    if let Some(p) = first.take_if(|p| p.as_rule() == Rule::docs) {
        doc = Some(docs_text(p.into_inner()));
        first = inner.next();
    }
    let Some(pair) = first else {
        return Err(nothing());
    };
    let mut piece = piece(pair);
    if let Some(doc) = doc {
        piece.set_doc(doc);
    }
    Ok((piece, len))
}

fn piece(pair: Pair<'_, Rule>) -> Piece {
    match pair.as_rule() {
        Rule::import => import(pair),
        Rule::workflow_head | Rule::subgraph_head => decl_head(pair),
        Rule::inner_doc => Piece::BodyDoc(docs_text(std::iter::once(pair))),
        Rule::input => input(pair),
        Rule::knob => knob(pair),
        Rule::use_decl => use_decl(pair),
        Rule::parallel_head => parallel_head(pair),
        Rule::flow_head => Piece::FlowHead,
        Rule::flow_stmt => statement(pair),
        Rule::node_decl => node(pair),
        _ => Piece::Close { at: rel(&pair) },
    }
}

fn rel(pair: &Pair<'_, Rule>) -> Rel {
    let s = pair.as_span();
    s.start()..s.end()
}

fn named(pair: &Pair<'_, Rule>) -> Named {
    (pair.as_str().to_string(), rel(pair))
}

fn import(pair: Pair<'_, Rule>) -> Piece {
    let Some(target) = pair.into_inner().next() else {
        return Piece::Import {
            path: String::new(),
            at: 0..0,
        };
    };
    let path = match target.as_rule() {
        Rule::string => unquote(target.as_str()),
        _ => target.as_str().to_string(),
    };
    Piece::Import {
        path,
        at: rel(&target),
    }
}

fn decl_head(head: Pair<'_, Rule>) -> Piece {
    let workflow = head.as_rule() == Rule::workflow_head;
    let mut doc = String::new();
    let mut headless = false;
    let mut name = None;
    let mut params = Vec::new();
    for p in head.into_inner() {
        match p.as_rule() {
            Rule::docs => doc = docs_text(p.into_inner()),
            Rule::headless => headless = true,
            Rule::ident => name = Some(named(&p)),
            Rule::param => {
                let mut it = p.into_inner();
                let (Some(pname), Some(pty)) = (it.next(), it.next()) else {
                    continue;
                };
                let mut default = None;
                let mut bounds = None;
                for rest in it {
                    match rest.as_rule() {
                        Rule::literal => default = Some(literal(rest)),
                        Rule::bounds => bounds = Some(bounds_of(rest)),
                        _ => {}
                    }
                }
                let param = Param {
                    name: pname.as_str().into(),
                    ty: ParamType::parse(pty.as_str()).unwrap_or(ParamType::String),
                    default,
                    bounds,
                };
                params.push((param, rel(&pname)));
            }
            _ => {}
        }
    }
    Piece::DeclHead {
        workflow,
        headless,
        doc,
        name,
        params,
    }
}

fn input(pair: Pair<'_, Rule>) -> Piece {
    let mut it = pair.into_inner().filter(|p| p.as_rule() != Rule::docs);
    match (it.next(), it.next()) {
        (Some(name), Some(path)) => Piece::Input {
            name: named(&name),
            path: unquote(path.as_str()),
        },
        // The grammar requires both; an empty name is never declared.
        _ => Piece::Input {
            name: (String::new(), 0..0),
            path: String::new(),
        },
    }
}

fn knob(pair: Pair<'_, Rule>) -> Piece {
    let mut knob = KnobDecl {
        name: String::new(),
        doc: String::new(),
        ty: ParamType::String,
        default: Literal::Bool(false),
        bounds: None,
        expandable: false,
    };
    let mut at = 0..0;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::docs => knob.doc = docs_text(p.into_inner()),
            Rule::ident => {
                knob.name = p.as_str().into();
                at = rel(&p);
            }
            Rule::knob_type => knob.ty = ParamType::parse(p.as_str()).unwrap_or(ParamType::String),
            Rule::literal => knob.default = literal(p),
            Rule::bounds => knob.bounds = Some(bounds_of(p)),
            Rule::expandable => knob.expandable = true,
            _ => {}
        }
    }
    Piece::Knob { knob, at }
}

fn args(pairs: Vec<Pair<'_, Rule>>) -> Vec<ArgPiece> {
    let mut out = Vec::new();
    for p in pairs {
        let mut it = p.into_inner();
        let (Some(name), Some(value)) = (it.next(), it.next()) else {
            continue;
        };
        let at = rel(&value);
        let value = value.into_inner().next().map(|v| match v.as_rule() {
            Rule::literal => ArgValue::Literal(literal(v)),
            _ => ArgValue::Name(v.as_str().into()),
        });
        out.push(ArgPiece {
            name: name.as_str().into(),
            value,
            at,
        });
    }
    out
}

fn use_decl(pair: Pair<'_, Rule>) -> Piece {
    let (doc, idents, arg_pairs) = head_parts(pair);
    let (sub, alias) = match (idents.first(), idents.get(1)) {
        (Some(s), Some(a)) => (named(s), named(a)),
        _ => ((String::new(), 0..0), (String::new(), 0..0)),
    };
    Piece::Use {
        subgraph: sub,
        alias,
        doc,
        args: args(arg_pairs),
    }
}

fn parallel_head(pair: Pair<'_, Rule>) -> Piece {
    let (doc, idents, arg_pairs) = head_parts(pair);
    Piece::ParallelHead {
        name: idents.first().map(named),
        doc,
        isolation: idents.get(1).map(|p| p.as_str().to_string()),
        args: args(arg_pairs),
    }
}

fn statement(pair: Pair<'_, Rule>) -> Piece {
    let mut errors = Vec::new();
    let mut groups = Vec::new();
    let mut spans = Vec::new();
    for group in pair.into_inner() {
        let mut terms = Vec::new();
        let mut at = Vec::new();
        for t in group.into_inner() {
            let (term, term_at, bound_at) = term(t, &mut errors);
            terms.push(term);
            at.push((term_at, bound_at));
        }
        groups.push(terms);
        spans.push(at);
    }
    Piece::Statement {
        stmt: Arc::new(FlowStmt { groups }),
        spans: Arc::new(spans),
        errors,
    }
}

/// A term, where it is written, and where its bound is written.
fn term(pair: Pair<'_, Rule>, errors: &mut Vec<SyntaxError>) -> (Term, Option<Rel>, Option<Rel>) {
    let mut it = pair.into_inner();
    let mut name = String::new();
    let mut label = None;
    let mut at = None;
    if let Some(q) = it.next() {
        at = Some(rel(&q));
        let full = q.as_str();
        match full.rsplit_once('.') {
            Some((head, last)) if Label::parse(last).is_some() => {
                name = head.to_string();
                label = Label::parse(last);
            }
            _ => name = full.to_string(),
        }
    }
    let mut bound_at = None;
    let bound = it.next().and_then(|b| {
        bound_at = Some(rel(&b));
        let v = b.into_inner().next()?;
        Some(match v.as_rule() {
            Rule::number => match v.as_str().parse::<u32>() {
                Ok(n) => BoundRef::Count(n),
                Err(_) => {
                    errors.push(SyntaxError {
                        code: Code::Syntax,
                        span: rel(&v),
                        message: format!("`{}` is not a valid reloop bound", v.as_str()),
                        help: "write a whole number of at least 1, e.g. `(max 3)`".into(),
                        labels: Vec::new(),
                        subject: None,
                    });
                    BoundRef::Count(0)
                }
            },
            _ => BoundRef::Name(v.as_str().into()),
        })
    });
    (Term { name, label, bound }, at, bound_at)
}

fn node(pair: Pair<'_, Rule>) -> Piece {
    let mut doc = String::new();
    let mut decl = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::docs => doc = docs_text(p.into_inner()),
            _ => decl = Some(p),
        }
    }
    let kind = match decl.as_ref().map(Pair::as_rule) {
        Some(Rule::agent_decl) => NodeKind::Agent,
        Some(Rule::fn_decl) => NodeKind::Fn,
        Some(Rule::gate_decl) => NodeKind::Gate,
        Some(Rule::fork_decl) => NodeKind::Fork,
        Some(Rule::join_decl) => NodeKind::Join,
        Some(Rule::select_decl) => NodeKind::Select,
        Some(Rule::study_decl) => NodeKind::Study,
        _ => NodeKind::Llm,
    };
    let mut node = NodeDecl {
        doc,
        ..NodeDecl::new(String::new(), kind)
    };
    let mut name_at = None;
    let mut keys = Vec::new();
    let mut errors = Vec::new();
    let mut attr_pairs = Vec::new();
    for p in decl.into_iter().flat_map(Pair::into_inner) {
        match p.as_rule() {
            Rule::qual_ident if node.name.is_empty() => {
                node.name = p.as_str().into();
                name_at = Some(rel(&p));
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
        if node.attrs.iter().any(|at| at.key == key.as_str()) {
            errors.push(SyntaxError {
                code: Code::Syntax,
                span: rel(&key),
                message: format!("attribute `{}` is given twice", key.as_str()),
                help: "give each attribute once; list several values with commas".into(),
                labels: Vec::new(),
                subject: None,
            });
            continue;
        }
        keys.push(rel(&key));
        let values = it
            .filter_map(|v| v.into_inner().next())
            .map(value)
            .collect();
        node.attrs.push(Attr {
            key: key.as_str().into(),
            values,
        });
    }
    Piece::Node {
        node: Arc::new(node),
        spans: Arc::new(NodeSpans { name_at, keys }),
        errors,
    }
}
