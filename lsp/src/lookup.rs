//! What is under the cursor, where it is declared and where it is used: the name lookup
//! every feature shares. It works from the parser's source map (declarations, flow terms,
//! arguments, bounds) and, for names the map does not hold (roles, knob names in
//! attribute values and templates), from the tokens of the text.

use factory_compiler::ir::conventions::placeholders;
use std::ops::Range;

use factory_compiler::ir::Label;
use factory_compiler::syntax::{Body, Decl, Loc, Parsed};

pub use crate::lex::{Tok, TokKind, is_ident, line_start, tokens};

/// A named thing of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Symbol {
    /// A node, a `use` instance or a `parallel` block, declared in `scope`.
    Node {
        scope: String,
        name: String,
    },
    Knob {
        workflow: String,
        name: String,
    },
    Param {
        decl: String,
        name: String,
    },
    Decl {
        name: String,
    },
    /// The subgraph named by a `use`.
    Subgraph {
        name: String,
    },
    Import {
        index: usize,
    },
    Role {
        name: String,
    },
    /// A named artifact: an `input`, or `writes: name = "path"`, read by name.
    Artifact {
        decl: String,
        name: String,
    },
    /// An attribute key (`role`, `reads`, ...).
    Attribute {
        key: String,
    },
}

/// A symbol and the span of the text that names it at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub symbol: Symbol,
    pub span: Range<usize>,
}

/// The declaration (`workflow`/`subgraph`) whose text contains `offset`.
pub fn decl_at(parsed: &Parsed, offset: usize) -> Option<&Decl> {
    let mut best: Option<(&Decl, usize)> = None;
    for d in &parsed.ast.decls {
        if let Some(span) = parsed.map.get(&Loc::Decl(d.name.clone()))
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
    let Some(span) = parsed.map.get(&Loc::Decl(name.to_string())) else {
        return 0..0;
    };
    let start = line_start(text, span.start);
    let end = parsed
        .ast
        .decls
        .iter()
        .filter_map(|d| parsed.map.get(&Loc::Decl(d.name.clone())))
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

fn root(scope: &str) -> &str {
    scope.split('/').next().unwrap_or(scope)
}

/// The span declaring a node-like name in exactly `scope`.
pub fn node_decl_span(parsed: &Parsed, scope: &str, name: &str) -> Option<Range<usize>> {
    let (s, n) = (scope.to_string(), name.to_string());
    [
        Loc::Node(s.clone(), n.clone()),
        Loc::Use(s.clone(), n.clone()),
        Loc::Parallel(s, n),
    ]
    .iter()
    .find_map(|l| parsed.map.get(l).cloned())
}

/// What `name`, written in `scope`, refers to: a node of the scope (or an enclosing one),
/// a knob of the workflow, or a parameter of the subgraph.
pub fn resolve(parsed: &Parsed, scope: &str, name: &str) -> Option<Symbol> {
    let mut s = scope;
    loop {
        if node_decl_span(parsed, s, name).is_some() {
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
    let r = root(scope);
    if parsed.map.contains_key(&Loc::Knob(r.into(), name.into())) {
        return Some(Symbol::Knob {
            workflow: r.into(),
            name: name.into(),
        });
    }
    if parsed.map.contains_key(&Loc::Param(r.into(), name.into())) {
        return Some(Symbol::Param {
            decl: r.into(),
            name: name.into(),
        });
    }
    None
}

/// The name a flow term stands for (`review.reloop` → `review`).
pub fn term_name(text: &str) -> &str {
    match text.rsplit_once('.') {
        Some((head, last)) if Label::parse(last).is_some() => head,
        _ => text,
    }
}

/// The dotted name (`plan.plan`, `experiment.trial.built`) that identifier token `i` is
/// part of: the first and last token of the chain, its span and its text. The lexer
/// splits at the dots; a name has no spaces around them.
pub fn dotted<'t>(toks: &[Tok], text: &'t str, i: usize) -> (usize, usize, &'t str) {
    let joined = |a: &Tok, b: &Tok| a.span.end == b.span.start;
    let is = |j: usize, what: &str| toks.get(j).is_some_and(|t| &text[t.span.clone()] == what);
    let ident = |j: usize| toks.get(j).is_some_and(|t| t.kind == TokKind::Ident);
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
    (
        first,
        last,
        &text[toks[first].span.start..toks[last].span.end],
    )
}

/// The symbol under the cursor at byte `offset`.
pub fn symbol_at(parsed: &Parsed, text: &str, offset: usize) -> Option<Hit> {
    let mut best: Option<(&Loc, &Range<usize>)> = None;
    for (loc, span) in &parsed.map {
        if span.start <= offset
            && offset <= span.end
            && best.is_none_or(|(_, b)| span.len() < b.len())
        {
            best = Some((loc, span));
        }
    }
    if let Some((loc, span)) = best
        && let Some(hit) = from_loc(parsed, text, loc, span, offset)
    {
        return Some(hit);
    }
    from_word(parsed, text, offset)
}

fn from_loc(
    parsed: &Parsed,
    text: &str,
    loc: &Loc,
    span: &Range<usize>,
    offset: usize,
) -> Option<Hit> {
    let word = text.get(span.clone())?;
    let hit = |symbol| {
        Some(Hit {
            symbol,
            span: span.clone(),
        })
    };
    match loc {
        Loc::Node(s, n) | Loc::Use(s, n) | Loc::Parallel(s, n) => hit(Symbol::Node {
            scope: s.clone(),
            name: n.clone(),
        }),
        Loc::Knob(s, n) => hit(Symbol::Knob {
            workflow: root(s).into(),
            name: n.clone(),
        }),
        Loc::Param(d, n) => hit(Symbol::Param {
            decl: d.clone(),
            name: n.clone(),
        }),
        Loc::Decl(n) => hit(Symbol::Decl { name: n.clone() }),
        Loc::Import(i) => hit(Symbol::Import { index: *i }),
        Loc::UseSubgraph(_, _) => hit(Symbol::Subgraph { name: word.into() }),
        Loc::Attr(_, _, key) => hit(Symbol::Attribute { key: key.clone() }),
        Loc::Input(s, n) => hit(Symbol::Artifact {
            decl: root(s).into(),
            name: n.clone(),
        }),
        Loc::Term(s, ..) => {
            let name = term_name(word);
            // The cursor on the label (`.reloop`) still means the node.
            let symbol = resolve(parsed, s, name)?;
            Some(Hit {
                symbol,
                span: span.start..span.start + name.len(),
            })
        }
        Loc::UseArg(s, _, _) | Loc::ParallelArg(s, _, _) | Loc::Bound(s, ..) => {
            // The span holds a value; the name is the identifier under the cursor.
            let tok = tokens(word).into_iter().find(|t| {
                t.kind == TokKind::Ident
                    && span.start + t.span.start <= offset
                    && offset <= span.start + t.span.end
            })?;
            let name = &word[tok.span.clone()];
            if name == "max" {
                return None;
            }
            Some(Hit {
                symbol: resolve(parsed, s, name)?,
                span: span.start + tok.span.start..span.start + tok.span.end,
            })
        }
        _ => None,
    }
}

/// Names the source map does not hold: a role after `role:` or `agent(`, a knob or
/// parameter named in an attribute value or a `{{knobs.x}}` template.
fn from_word(parsed: &Parsed, text: &str, offset: usize) -> Option<Hit> {
    let toks = tokens(text);
    let i = toks
        .iter()
        .position(|t| t.span.start <= offset && offset <= t.span.end && t.kind != TokKind::Other)?;
    let tok = &toks[i];
    let decl = decl_at(parsed, offset)?;
    if tok.kind == TokKind::Str {
        // `{{knobs.name}}` or `{{param}}` inside a template.
        let s = &text[tok.span.clone()];
        let rel = offset - tok.span.start;
        // The placeholder the cursor is in, braces excluded.
        let p = placeholders(s)
            .0
            .into_iter()
            .find(|p| p.whole.start + 2 <= rel && rel + 2 <= p.whole.end)?;
        let inner = &s[p.expr.clone()];
        let start = tok.span.start + p.expr.start;
        if let Some(k) = inner.strip_prefix("knobs.") {
            return Some(Hit {
                symbol: Symbol::Knob {
                    workflow: decl.name.clone(),
                    name: k.into(),
                },
                span: start + 6..start + 6 + k.len(),
            });
        }
        if parsed
            .map
            .contains_key(&Loc::Param(decl.name.clone(), inner.into()))
        {
            return Some(Hit {
                symbol: Symbol::Param {
                    decl: decl.name.clone(),
                    name: inner.into(),
                },
                span: start..start + inner.len(),
            });
        }
        return None;
    }
    if tok.kind != TokKind::Ident {
        return None;
    }
    let word = &text[tok.span.clone()];
    let before: Vec<&str> = toks[..i]
        .iter()
        .rev()
        .take(2)
        .map(|t| &text[t.span.clone()])
        .collect();
    let hit = |symbol| {
        Some(Hit {
            symbol,
            span: tok.span.clone(),
        })
    };
    if matches!(before.as_slice(), [":", "role"] | ["(", "agent"]) {
        return hit(Symbol::Role { name: word.into() });
    }
    // A dotted artifact name written in this declaration (`writes: plan.plan = ...`, as a
    // flattened file has them), wherever in the name the cursor is.
    let (first, last, name) = dotted(&toks, text, i);
    if name.contains('.') {
        let artifact = Symbol::Artifact {
            decl: decl.name.clone(),
            name: name.into(),
        };
        if declaration_in(parsed, text, &artifact).is_some() {
            return Some(Hit {
                symbol: artifact,
                span: toks[first].span.start..toks[last].span.end,
            });
        }
    }
    if before.first() == Some(&".") {
        // `study.combined`: artifact `combined` of the subgraph instance `study`.
        let alias = i.checked_sub(2).map(|j| &toks[j])?;
        if alias.kind != TokKind::Ident {
            return None;
        }
        let subgraph = instance_subgraph(&decl.body, &text[alias.span.clone()])?;
        return hit(Symbol::Artifact {
            decl: subgraph.to_string(),
            name: word.into(),
        });
    }
    match resolve(parsed, &decl.name, word) {
        Some(symbol @ (Symbol::Knob { .. } | Symbol::Param { .. })) => hit(symbol),
        Some(_) => None,
        None => {
            let artifact = Symbol::Artifact {
                decl: decl.name.clone(),
                name: word.into(),
            };
            declaration_in(parsed, text, &artifact).and_then(|_| hit(artifact))
        }
    }
}

/// The subgraph that the instance `alias` (`use sub(...) as alias`) of `body`, or of a
/// `parallel` block in it, instantiates.
fn instance_subgraph<'a>(body: &'a factory_compiler::syntax::Body, alias: &str) -> Option<&'a str> {
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

/// Where artifact `name` of declaration `decl` is declared: its `input`, or the
/// `writes: name = "path"` that names it.
pub fn artifact_declaration(
    parsed: &Parsed,
    text: &str,
    decl: &str,
    name: &str,
) -> Option<Range<usize>> {
    let input = parsed.map.iter().find_map(|(loc, span)| match loc {
        Loc::Input(s, n) if root(s) == decl && n == name => Some(span.clone()),
        _ => None,
    });
    if input.is_some() {
        return input;
    }
    let range = decl_range(parsed, text, decl);
    let toks = tokens(text);
    let at = |i: usize| toks.get(i).map(|t| &text[t.span.clone()]);
    toks.iter().enumerate().find_map(|(i, t)| {
        if t.kind != TokKind::Ident || t.span.start < range.start || t.span.end > range.end {
            return None;
        }
        // The whole (possibly dotted) name, from its first token.
        let (first, last, written) = dotted(&toks, text, i);
        let named_write = first == i
            && written == name
            && at(last + 1) == Some("=")
            && toks.get(last + 2).is_some_and(|n| n.kind == TokKind::Str)
            && i.checked_sub(1)
                .and_then(at)
                .is_some_and(|p| p == ":" || p == ",");
        named_write.then(|| t.span.start..toks[last].span.end)
    })
}

/// The declaration of a symbol, including those found from the text (artifacts).
pub fn declaration_in(parsed: &Parsed, text: &str, symbol: &Symbol) -> Option<Range<usize>> {
    match symbol {
        Symbol::Artifact { decl, name } => artifact_declaration(parsed, text, decl, name),
        other => declaration(parsed, other),
    }
}

/// The span where a symbol of this file is declared.
pub fn declaration(parsed: &Parsed, symbol: &Symbol) -> Option<Range<usize>> {
    match symbol {
        Symbol::Node { scope, name } => node_decl_span(parsed, scope, name),
        Symbol::Knob { workflow, name } => parsed
            .map
            .get(&Loc::Knob(workflow.clone(), name.clone()))
            .cloned(),
        Symbol::Param { decl, name } => parsed
            .map
            .get(&Loc::Param(decl.clone(), name.clone()))
            .cloned(),
        Symbol::Decl { name } | Symbol::Subgraph { name } => {
            parsed.map.get(&Loc::Decl(name.clone())).cloned()
        }
        Symbol::Import { index } => parsed.map.get(&Loc::Import(*index)).cloned(),
        Symbol::Role { .. } | Symbol::Artifact { .. } | Symbol::Attribute { .. } => None,
    }
}

/// Every span of this file that names `symbol`, its declaration included, in order.
pub fn references(parsed: &Parsed, text: &str, symbol: &Symbol) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = declaration_in(parsed, text, symbol).into_iter().collect();
    match symbol {
        Symbol::Node { scope, name } => {
            for (loc, span) in &parsed.map {
                match loc {
                    Loc::Term(s, ..) if s == scope || s.starts_with(&format!("{scope}/")) => {
                        let t = text.get(span.clone()).unwrap_or_default();
                        if term_name(t) == name && resolve(parsed, s, name).as_ref() == Some(symbol)
                        {
                            out.push(span.start..span.start + name.len());
                        }
                    }
                    Loc::UseArg(s, ..) | Loc::ParallelArg(s, ..)
                        if s == scope && text.get(span.clone()) == Some(name.as_str()) =>
                    {
                        out.push(span.clone());
                    }
                    _ => {}
                }
            }
        }
        Symbol::Knob { workflow: d, name } | Symbol::Param { decl: d, name } => {
            let template = match symbol {
                Symbol::Knob { .. } => format!("knobs.{name}"),
                _ => name.clone(),
            };
            out.extend(value_references(parsed, text, d, name, Some(&template)));
        }
        Symbol::Artifact { decl, name } => {
            out.extend(value_references(parsed, text, decl, name, None));
        }
        Symbol::Subgraph { name } | Symbol::Decl { name } => {
            for (loc, span) in &parsed.map {
                if matches!(loc, Loc::UseSubgraph(..))
                    && text.get(span.clone()) == Some(name.as_str())
                {
                    out.push(span.clone());
                }
            }
        }
        Symbol::Import { .. } | Symbol::Role { .. } | Symbol::Attribute { .. } => {}
    }
    out.sort_by_key(|r| (r.start, r.end));
    out.dedup();
    out
}

/// Uses of a knob, parameter or artifact inside declaration `decl`: bare names in values,
/// bounds and arguments, and `{{template}}` (`knobs.name`, `name`) in strings.
fn value_references(
    parsed: &Parsed,
    text: &str,
    decl: &str,
    name: &str,
    template: Option<&str>,
) -> Vec<Range<usize>> {
    let range = decl_range(parsed, text, decl);
    let toks = tokens(text);
    // Spans that name nodes or declarations, never a knob.
    let taken: Vec<&Range<usize>> = parsed
        .map
        .iter()
        .filter(|(l, _)| {
            matches!(
                l,
                Loc::Node(..)
                    | Loc::Use(..)
                    | Loc::Parallel(..)
                    | Loc::Term(..)
                    | Loc::Decl(..)
                    | Loc::Attr(..)
            )
        })
        .map(|(_, s)| s)
        .collect();
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.span.start < range.start || t.span.end > range.end {
            continue;
        }
        match t.kind {
            TokKind::Ident => {
                // Whole names only: `plan` is not in `plan.plan`, nor `plan.plan` in
                // `x.plan.plan`.
                let (first, last, written) = dotted(&toks, text, i);
                if first != i || written != name {
                    continue;
                }
                let span = t.span.start..toks[last].span.end;
                let next = toks.get(last + 1).map(|n| &text[n.span.clone()]);
                let declares = i >= 1 && matches!(&text[toks[i - 1].span.clone()], "knob");
                if next == Some(":") && !declares {
                    continue;
                }
                if taken
                    .iter()
                    .any(|s| s.start <= span.start && span.end <= s.end)
                {
                    continue;
                }
                out.push(span);
            }
            TokKind::Str => {
                let Some(pattern) = template else { continue };
                let s = &text[t.span.clone()];
                for p in placeholders(s).0 {
                    if s[p.expr.clone()] == *pattern {
                        let start = t.span.start + p.expr.start + (pattern.len() - name.len());
                        out.push(start..start + name.len());
                    }
                }
            }
            _ => {}
        }
    }
    out
}
