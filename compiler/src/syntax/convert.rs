//! Turning pest pairs into values of the position-free tree.

use pest::iterators::Pair;

use super::ast::{Bounds, GateBy, Value};
use super::parser::Rule;
use crate::ir::{FloatText, Literal};

/// The doc comment, names and argument pairs of a `use` or `parallel` header.
pub(super) fn head_parts(
    pair: Pair<'_, Rule>,
) -> (String, Vec<Pair<'_, Rule>>, Vec<Pair<'_, Rule>>) {
    let mut doc = String::new();
    let mut idents = Vec::new();
    let mut args = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::docs => doc = docs_text(p.into_inner()),
            Rule::ident | Rule::qual_ident => idents.push(p),
            Rule::arg => args.push(p),
            _ => {}
        }
    }
    (doc, idents, args)
}

pub(super) fn docs_text<'a>(pairs: impl Iterator<Item = Pair<'a, Rule>>) -> String {
    let lines: Vec<&str> = pairs
        .map(|p| {
            let s = p.as_str();
            let s = s
                .strip_prefix("///")
                .or_else(|| s.strip_prefix("//!"))
                .unwrap_or(s);
            s.strip_prefix(' ').unwrap_or(s).trim_end()
        })
        .collect();
    lines.join("\n").trim().to_string()
}

pub(super) fn join_docs(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}\n{b}"),
    }
}

/// Decodes a string literal's escapes (`\"`, `\\`, `\n`, `\t`); unknown escapes keep
/// the escaped character.
pub fn unquote(s: &str) -> String {
    let inner = s
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub(super) fn literal(pair: Pair<'_, Rule>) -> Literal {
    let p = match pair.as_rule() {
        Rule::literal => match pair.into_inner().next() {
            Some(p) => p,
            None => return Literal::Bool(false),
        },
        _ => pair,
    };
    match p.as_rule() {
        Rule::string => Literal::Str(unquote(p.as_str())),
        Rule::boolean => Literal::Bool(p.as_str() == "true"),
        _ => number(p.as_str()),
    }
}

pub(super) fn number(s: &str) -> Literal {
    if s.contains('.') {
        Literal::Float(FloatText::from_f64(s.parse().unwrap_or(0.0)))
    } else {
        s.parse()
            .map(Literal::Int)
            .unwrap_or_else(|_| Literal::Float(FloatText::from_f64(s.parse().unwrap_or(0.0))))
    }
}

pub(super) fn bounds_of(pair: Pair<'_, Rule>) -> Bounds {
    let Some(inner) = pair.into_inner().next() else {
        return Bounds::Choices(Vec::new());
    };
    match inner.as_rule() {
        Rule::range => {
            let mut it = inner.into_inner();
            let lo = it
                .next()
                .map(|p| number(p.as_str()))
                .unwrap_or(Literal::Int(0));
            let hi = it
                .next()
                .map(|p| number(p.as_str()))
                .unwrap_or(Literal::Int(0));
            Bounds::Range(lo, hi)
        }
        _ => Bounds::Choices(inner.into_inner().map(literal).collect()),
    }
}

pub(super) fn gate_by(pair: Pair<'_, Rule>) -> GateBy {
    match pair.as_rule() {
        Rule::by_agent => GateBy::Agent(
            pair.into_inner()
                .next()
                .map(|p| p.as_str().to_string())
                .unwrap_or_default(),
        ),
        Rule::by_fn => GateBy::Fn(
            pair.into_inner()
                .next()
                .map(|p| unquote(p.as_str()))
                .unwrap_or_default(),
        ),
        _ => GateBy::User,
    }
}

pub(super) fn value(pair: Pair<'_, Rule>) -> Value {
    match pair.as_rule() {
        Rule::named_path => {
            let mut it = pair.into_inner();
            let name = it
                .next()
                .map(|p| p.as_str().to_string())
                .unwrap_or_default();
            let path = it.next().map(|p| unquote(p.as_str())).unwrap_or_default();
            Value::Named { name, path }
        }
        Rule::call => {
            let mut it = pair.into_inner();
            let name = it
                .next()
                .map(|p| p.as_str().to_string())
                .unwrap_or_default();
            Value::Call {
                name,
                args: it.map(literal).collect(),
            }
        }
        Rule::literal => Value::Literal(literal(pair)),
        _ => Value::Name(pair.as_str().to_string()),
    }
}
