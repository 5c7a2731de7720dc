//! Every named occurrence of one file, with its span and what it names: built once per
//! revision of the file (see [`super::file_symbols`]), so finding the symbol under a
//! cursor, a declaration or the references in a file is a lookup.
//!
//! Declarations, flow terms, arguments and bounds come from the parser's source map;
//! the names it keeps no position for (roles, knobs, parameters and artifacts in
//! attribute values, `{{template}}` variables, named writes) from the file's tokens.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::Symbol;
use super::scope::{Names, decl_range, dotted, instance_subgraph, root, term_name};
use crate::ir::conventions::placeholders;
use crate::lexical::is_ident;
use crate::syntax::lex::{Token, TokenKind, significant};
use crate::syntax::{Decl, Loc, Parsed};

/// One place of a file that names a symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub symbol: Symbol,
    /// The text that names the symbol: what a rename replaces.
    pub span: Range<usize>,
    /// Where a cursor selects it (wider than `span` for a flow term with a label: the
    /// cursor on `.reloop` still means the node).
    pub at: Range<usize>,
    /// This occurrence declares the symbol.
    pub declares: bool,
}

/// The occurrences of one file, in text order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SymbolIndex {
    occurrences: Vec<Occurrence>,
}

impl SymbolIndex {
    pub fn occurrences(&self) -> &[Occurrence] {
        &self.occurrences
    }

    /// The occurrence a cursor at `offset` is on (the narrowest, when they nest).
    pub fn at(&self, offset: usize) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .filter(|o| o.at.start <= offset && offset <= o.at.end)
            .min_by_key(|o| o.at.len())
    }

    /// The occurrences naming `symbol` (a subgraph's declaration and its `use`s alike).
    pub fn of<'a>(&'a self, symbol: &'a Symbol) -> impl Iterator<Item = &'a Occurrence> + 'a {
        self.occurrences
            .iter()
            .filter(move |o| o.symbol.same(symbol))
    }

    /// The occurrence declaring `symbol` in this file.
    pub fn declaration(&self, symbol: &Symbol) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .find(|o| o.declares && o.symbol.same(symbol))
    }
}

/// Indexes a parsed file.
pub fn build(parsed: &Parsed, text: &str) -> SymbolIndex {
    let mut out = Vec::new();
    let names = Names::new(parsed);
    for (loc, span) in parsed.map() {
        from_loc(parsed, &names, text, loc, span, &mut out);
    }
    // Text the source map covers is indexed from it; tokens there are not read again.
    let taken = merged(parsed.map().values().cloned().collect());
    from_tokens(parsed, &names, text, &taken, &mut out);
    out.sort_by_key(|o| (o.span.start, o.span.end));
    out.dedup();
    SymbolIndex { occurrences: out }
}

/// The union of `spans`, as disjoint ranges in order.
fn merged(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.sort_by_key(|s| s.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

fn occurrence(symbol: Symbol, span: Range<usize>, declares: bool) -> Occurrence {
    Occurrence {
        symbol,
        at: span.clone(),
        span,
        declares,
    }
}

fn from_loc(
    parsed: &Parsed,
    names: &Names<'_>,
    text: &str,
    loc: &Loc,
    span: &Range<usize>,
    out: &mut Vec<Occurrence>,
) {
    let Some(word) = text.get(span.clone()) else {
        return;
    };
    let mut push = |symbol, declares| out.push(occurrence(symbol, span.clone(), declares));
    match loc {
        Loc::Node(s, n) | Loc::Use(s, n) | Loc::Parallel(s, n) => push(
            Symbol::Node {
                scope: s.clone(),
                name: n.clone(),
            },
            true,
        ),
        Loc::Knob(s, n) => push(
            Symbol::Knob {
                workflow: root(s).into(),
                name: n.clone(),
            },
            true,
        ),
        Loc::Param(d, n) => push(
            Symbol::Param {
                decl: d.clone(),
                name: n.clone(),
            },
            true,
        ),
        Loc::Decl(n) => push(Symbol::Decl { name: n.clone() }, true),
        Loc::Import(i) => push(Symbol::Import { index: *i }, false),
        Loc::UseSubgraph(..) => push(Symbol::Subgraph { name: word.into() }, false),
        Loc::Attr(_, _, key) => push(Symbol::Attribute { key: key.clone() }, false),
        Loc::Input(s, n) => push(
            Symbol::Artifact {
                decl: root(s).into(),
                name: n.clone(),
            },
            true,
        ),
        Loc::Term(s, ..) => {
            let name = term_name(word);
            if let Some(symbol) = names.resolve(s, name) {
                out.push(Occurrence {
                    symbol,
                    span: span.start..span.start + name.len(),
                    at: span.clone(),
                    declares: false,
                });
            }
        }
        Loc::UseArg(s, alias, arg) => {
            // `use sub(arg: value)`: `arg` names a parameter of `sub`, which may be
            // declared in another file.
            if let Some(name) = arg_name(text, span.start, arg)
                && let Some(sub) = parsed
                    .map()
                    .get(&Loc::UseSubgraph(s.clone(), alias.clone()))
                && let Some(subgraph) = text.get(sub.clone())
            {
                let symbol = Symbol::Param {
                    decl: subgraph.into(),
                    name: arg.clone(),
                };
                out.push(occurrence(symbol, name, false));
            }
            value_name(names, s, word, span, out);
        }
        Loc::ParallelArg(s, ..) => value_name(names, s, word, span, out),
        Loc::Bound(s, ..) => {
            // `(max n)`: the name is a knob or parameter.
            for t in significant(word) {
                let name = &word[t.span.clone()];
                if t.kind == TokenKind::Ident
                    && name != "max"
                    && let Some(symbol) = names.resolve(s, name)
                {
                    let at = span.start + t.span.start..span.start + t.span.end;
                    out.push(occurrence(symbol, at, false));
                }
            }
        }
        Loc::FileStart => {}
    }
}

/// The value of an argument: a literal, or a node, knob or parameter name.
fn value_name(
    names: &Names<'_>,
    scope: &str,
    word: &str,
    span: &Range<usize>,
    out: &mut Vec<Occurrence>,
) {
    if word.split('.').all(is_ident)
        && let Some(symbol) = names.resolve(scope, word)
    {
        out.push(occurrence(symbol, span.clone(), false));
    }
}

/// The span of the name `arg` written before the argument value at `value` (`arg: value`):
/// the source map keeps the value's span only.
fn arg_name(text: &str, value: usize, arg: &str) -> Option<Range<usize>> {
    let before = text.get(..value)?.trim_end();
    let before = before.strip_suffix(':')?.trim_end();
    before
        .ends_with(arg)
        .then(|| before.len() - arg.len()..before.len())
}

/// The file's tokens with the declaration holding each.
struct Text<'a> {
    text: &'a str,
    toks: Vec<Token>,
    /// The spans of the source map, merged.
    taken: &'a [Range<usize>],
    /// Declarations by the start of their text, in order.
    decls: Vec<(usize, &'a Decl)>,
}

impl<'a> Text<'a> {
    fn word(&self, i: usize) -> Option<&'a str> {
        self.toks.get(i).map(|t| &self.text[t.span.clone()])
    }

    fn decl_at(&self, offset: usize) -> Option<&'a Decl> {
        let i = self.decls.partition_point(|(start, _)| *start <= offset);
        i.checked_sub(1).map(|i| self.decls[i].1)
    }

    /// Inside a span of the source map.
    fn is_taken(&self, span: &Range<usize>) -> bool {
        let i = self.taken.partition_point(|s| s.start <= span.start);
        i.checked_sub(1)
            .is_some_and(|i| span.end <= self.taken[i].end)
    }

    /// `writes: name = "path"` (or `, name = "path"`): the chain `first..=last` names
    /// the write.
    fn is_named_write(&self, first: usize, last: usize) -> bool {
        self.word(last + 1) == Some("=")
            && self.toks.get(last + 2).is_some_and(|t| t.kind.is_str())
            && first
                .checked_sub(1)
                .and_then(|p| self.word(p))
                .is_some_and(|p| p == ":" || p == ",")
    }

    fn chain_span(&self, first: usize, last: usize) -> Range<usize> {
        self.toks[first].span.start..self.toks[last].span.end
    }
}

fn from_tokens(
    parsed: &Parsed,
    names: &Names<'_>,
    text: &str,
    taken: &[Range<usize>],
    out: &mut Vec<Occurrence>,
) {
    let mut decls: Vec<(usize, &Decl)> = parsed
        .ast
        .decls
        .iter()
        .map(|d| (decl_range(parsed, text, &d.name).start, d))
        .collect();
    decls.sort_by_key(|(start, _)| *start);
    let t = Text {
        text,
        toks: significant(text),
        taken,
        decls,
    };
    // Artifacts each declaration declares: its inputs, then its named writes (the first
    // write of a name declares it).
    let mut artifacts: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for loc in parsed.map().keys() {
        if let Loc::Input(s, n) = loc
            && let Some(d) = parsed.ast.decls.iter().find(|d| d.name == root(s))
        {
            artifacts.entry(&d.name).or_default().insert(n.clone());
        }
    }
    let mut declared = artifacts.clone();
    for (i, tok) in t.toks.iter().enumerate() {
        if tok.kind != TokenKind::Ident {
            continue;
        }
        let (first, last) = dotted(&t.toks, text, i);
        if first == i
            && t.is_named_write(first, last)
            && let Some(d) = t.decl_at(tok.span.start)
        {
            let name = &text[t.chain_span(first, last)];
            artifacts.entry(&d.name).or_default().insert(name.into());
        }
    }
    for (i, tok) in t.toks.iter().enumerate() {
        let Some(decl) = t.decl_at(tok.span.start) else {
            continue;
        };
        match tok.kind {
            // Templates count in argument strings too (`use x(task: "{{knobs.k}}")`).
            TokenKind::Str | TokenKind::UnclosedStr => templates(parsed, &t, tok, decl, out),
            TokenKind::Ident if !t.is_taken(&tok.span) => {
                let mut declares = |name: &str| {
                    declared
                        .entry(decl.name.as_str())
                        .or_default()
                        .insert(name.to_string())
                };
                if let Some(o) = ident(names, &t, i, decl, &artifacts, &mut declares) {
                    out.push(o);
                }
            }
            _ => {}
        }
    }
}

/// `{{knobs.name}}` and `{{param}}` in a string of `decl`.
fn templates(parsed: &Parsed, t: &Text<'_>, tok: &Token, decl: &Decl, out: &mut Vec<Occurrence>) {
    let s = &t.text[tok.span.clone()];
    for p in placeholders(s).0 {
        let inner = &s[p.expr.clone()];
        let start = tok.span.start + p.expr.start;
        // The cursor anywhere inside the braces selects the variable.
        let at = tok.span.start + p.whole.start + 2..tok.span.start + p.whole.end - 2;
        let (symbol, span) = if let Some(k) = inner.strip_prefix("knobs.") {
            let symbol = Symbol::Knob {
                workflow: decl.name.clone(),
                name: k.into(),
            };
            (symbol, start + 6..start + 6 + k.len())
        } else if parsed
            .map()
            .contains_key(&Loc::Param(decl.name.clone(), inner.into()))
        {
            let symbol = Symbol::Param {
                decl: decl.name.clone(),
                name: inner.into(),
            };
            (symbol, start..start + inner.len())
        } else {
            continue;
        };
        out.push(Occurrence {
            symbol,
            span,
            at,
            declares: false,
        });
    }
}

/// What identifier token `i` (outside the source map) of `decl` names: a role, a knob or
/// parameter, or an artifact (of `decl`, or of a subgraph instance: `study.combined`).
/// A dotted name is taken whole, from its first token.
fn ident(
    names: &Names<'_>,
    t: &Text<'_>,
    i: usize,
    decl: &Decl,
    artifacts: &BTreeMap<&str, BTreeSet<String>>,
    first_declaration: &mut dyn FnMut(&str) -> bool,
) -> Option<Occurrence> {
    let tok = &t.toks[i];
    let word = t.word(i)?;
    let before = (
        i.checked_sub(2).and_then(|j| t.word(j)),
        i.checked_sub(1).and_then(|j| t.word(j)),
    );
    if matches!(
        before,
        (Some("role"), Some(":")) | (Some("agent"), Some("("))
    ) {
        return Some(occurrence(
            Symbol::Role { name: word.into() },
            tok.span.clone(),
            false,
        ));
    }
    let (first, last) = dotted(&t.toks, t.text, i);
    if first != i || t.word(last + 1) == Some(":") {
        // Part of a dotted name read from its first token, or a key (`reads:`).
        return None;
    }
    let span = t.chain_span(first, last);
    let name = &t.text[span.clone()];
    let own = artifacts.get(decl.name.as_str());
    let artifact = |name: &str| Symbol::Artifact {
        decl: decl.name.clone(),
        name: name.into(),
    };
    if t.is_named_write(first, last) {
        let declares = first_declaration(name);
        return Some(occurrence(artifact(name), span, declares));
    }
    if !name.contains('.') {
        if let Some(symbol) = names.knob_or_param(&decl.name, name) {
            return Some(occurrence(symbol, span, false));
        }
        return own
            .is_some_and(|a| a.contains(name))
            .then(|| occurrence(artifact(name), span, false));
    }
    if own.is_some_and(|a| a.contains(name)) {
        return Some(occurrence(artifact(name), span, false));
    }
    // `alias.name`: artifact `name` of the subgraph the instance `alias` instantiates.
    let subgraph = instance_subgraph(&decl.body, word)?;
    let rest = t.toks[first + 2].span.start..span.end;
    Some(occurrence(
        Symbol::Artifact {
            decl: subgraph.into(),
            name: t.text[rest.clone()].into(),
        },
        rest,
        false,
    ))
}
