//! Scopes of one file's tree: which declaration holds an offset, the body a scope names,
//! and what a name written in a scope refers to.

use std::collections::HashSet;
use std::ops::Range;

use super::Symbol;
use crate::ir::Label;
use crate::lexical::line_start;
use crate::syntax::lex::{Token, TokenKind};
use crate::syntax::{Body, Decl, Loc, Parsed};

/// The declaration (`workflow`/`subgraph`) whose text contains `offset`.
pub fn decl_at(parsed: &Parsed, offset: usize) -> Option<&Decl> {
    let mut best: Option<(&Decl, usize)> = None;
    for d in &parsed.ast.decls {
        if let Some(span) = parsed.map().get(&Loc::Decl(d.name.clone()))
            && span.start <= offset
            && best.is_none_or(|(_, s)| span.start > s)
        {
            best = Some((d, span.start));
        }
    }
    best.map(|(d, _)| d)
}

/// The text range of declaration `name`: from its line to the next declaration's line.
pub fn decl_range(parsed: &Parsed, text: &str, name: &str) -> Range<usize> {
    let Some(span) = parsed.map().get(&Loc::Decl(name.to_string())) else {
        return 0..0;
    };
    let start = line_start(text, span.start);
    let end = parsed
        .ast
        .decls
        .iter()
        .filter_map(|d| parsed.map().get(&Loc::Decl(d.name.clone())))
        .filter(|s| s.start > span.start)
        .map(|s| line_start(text, s.start))
        .min()
        .unwrap_or(text.len());
    start..end.max(start)
}

/// The body a scope names: `decl`, or `decl/parallel/...`.
pub fn body<'a>(parsed: &'a Parsed, scope: &str) -> Option<&'a Body> {
    let mut parts = scope.split('/');
    let first = parts.next()?;
    let decl = parsed.ast.decls.iter().find(|d| d.name == first)?;
    let mut body = &decl.body;
    for p in parts {
        body = &body.parallels.iter().find(|x| x.name == p)?.body;
    }
    Some(body)
}

/// The declaration a scope belongs to (`w/p` → `w`).
pub fn root(scope: &str) -> &str {
    scope.split('/').next().unwrap_or(scope)
}

/// The span declaring a node-like name (node, instance, parallel block) in exactly `scope`.
pub fn node_decl_span(parsed: &Parsed, scope: &str, name: &str) -> Option<Range<usize>> {
    let (s, n) = (scope.to_string(), name.to_string());
    [
        Loc::Node(s.clone(), n.clone()),
        Loc::Use(s.clone(), n.clone()),
        Loc::Parallel(s, n),
    ]
    .iter()
    .find_map(|l| parsed.map().get(l).cloned())
}

/// The names a file declares, by scope: what a name written somewhere refers to. Built
/// once per file from the source map, so resolving each of its names is a lookup.
pub struct Names<'p> {
    /// Nodes, instances and parallel blocks, by (scope, name).
    nodes: HashSet<(&'p str, &'p str)>,
    /// Knobs by (declaration, name).
    knobs: HashSet<(&'p str, &'p str)>,
    /// Parameters by (subgraph, name).
    params: HashSet<(&'p str, &'p str)>,
}

impl<'p> Names<'p> {
    pub fn new(parsed: &'p Parsed) -> Names<'p> {
        let mut names = Names {
            nodes: HashSet::new(),
            knobs: HashSet::new(),
            params: HashSet::new(),
        };
        for loc in parsed.map().keys() {
            match loc {
                Loc::Node(s, n) | Loc::Use(s, n) | Loc::Parallel(s, n) => {
                    names.nodes.insert((s, n));
                }
                Loc::Knob(s, n) => {
                    names.knobs.insert((root(s), n));
                }
                Loc::Param(d, n) => {
                    names.params.insert((d, n));
                }
                _ => {}
            }
        }
        names
    }

    /// What `name`, written in `scope`, refers to: a node of the scope (or an enclosing
    /// one), a knob of the workflow, or a parameter of the subgraph.
    pub fn resolve(&self, scope: &str, name: &str) -> Option<Symbol> {
        let mut s = scope;
        loop {
            if self.nodes.contains(&(s, name)) {
                return Some(Symbol::Node {
                    scope: s.to_string(),
                    name: name.to_string(),
                });
            }
            match s.rfind('/') {
                Some(i) => s = &s[..i],
                None => break,
            }
        }
        self.knob_or_param(root(scope), name)
    }

    /// A knob or parameter `name` of declaration `decl`: what a name in an attribute
    /// value can mean besides an artifact (a node name there is not a reference to the
    /// node).
    pub fn knob_or_param(&self, decl: &str, name: &str) -> Option<Symbol> {
        if self.knobs.contains(&(decl, name)) {
            return Some(Symbol::Knob {
                workflow: decl.into(),
                name: name.into(),
            });
        }
        self.params.contains(&(decl, name)).then(|| Symbol::Param {
            decl: decl.into(),
            name: name.into(),
        })
    }
}

/// The name a flow term stands for (`review.reloop` → `review`).
pub fn term_name(text: &str) -> &str {
    match text.rsplit_once('.') {
        Some((head, last)) if Label::parse(last).is_some() => head,
        _ => text,
    }
}

/// The dotted name (`plan.plan`, `experiment.trial.built`) that identifier token `i` is
/// part of: the first and last token of the chain. The tokens split at the dots; a name
/// has no spaces around them.
pub fn dotted(toks: &[Token], text: &str, i: usize) -> (usize, usize) {
    let joined = |a: &Token, b: &Token| a.span.end == b.span.start;
    let is = |j: usize, what: &str| toks.get(j).is_some_and(|t| &text[t.span.clone()] == what);
    let ident = |j: usize| toks.get(j).is_some_and(|t| t.kind == TokenKind::Ident);
    let (mut first, mut last) = (i, i);
    while first >= 2
        && is(first - 1, ".")
        && ident(first - 2)
        && joined(&toks[first - 2], &toks[first - 1])
        && joined(&toks[first - 1], &toks[first])
    {
        first -= 2;
    }
    while is(last + 1, ".")
        && ident(last + 2)
        && joined(&toks[last], &toks[last + 1])
        && joined(&toks[last + 1], &toks[last + 2])
    {
        last += 2;
    }
    (first, last)
}

/// The subgraph that the instance `alias` (`use sub(...) as alias`) of `body`, or of a
/// `parallel` block in it, instantiates.
pub fn instance_subgraph<'a>(body: &'a Body, alias: &str) -> Option<&'a str> {
    body.uses
        .iter()
        .find(|u| u.alias == alias)
        .map(|u| u.subgraph.as_str())
        .or_else(|| {
            body.parallels
                .iter()
                .find_map(|p| instance_subgraph(&p.body, alias))
        })
}
