//! Writing declarations: knobs, nodes and `parallel` block headers, with every
//! attribute the IR holds. Every value is checked to read back as the same IR value;
//! what cannot is an error saying which node and attribute.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::layout::Body;
use super::words::{check_name, doc, is_dotted, is_ident, literal, quote};
use crate::ir::{
    Artifact, Attrs, Check, END, Evaluator, Ir, Knob, KnobType, Literal, Node, NodeKind, START,
};

/// Indentation per block level.
const INDENT: &str = "    ";

/// `knob name: type = default [in bounds] [expandable]`.
pub(super) fn knob(out: &mut String, k: &Knob) -> Result<(), String> {
    check_name("knob", &k.name)?;
    if k.name.contains('.') {
        return Err(format!("knob `{}` has a dotted name", k.name));
    }
    let what = format!("the default of knob `{}`", k.name);
    // The lowering makes an int default of a float knob a float: an int cannot come back.
    if k.ty == KnobType::Float && matches!(k.default, Literal::Int(_)) {
        return Err(format!("{what} is an int, but the knob is a float"));
    }
    let ty = crate::ir::text::knob_type_str(k.ty);
    let mut line = format!("knob {}: {ty} = {}", k.name, literal(&what, &k.default)?);
    let number = |l: &Literal| matches!(l, Literal::Int(_) | Literal::Float(_));
    match (&k.min, &k.max, k.choices.is_empty()) {
        (None, None, true) => {}
        (Some(lo), Some(hi), true)
            if matches!(k.ty, KnobType::Int | KnobType::Float) && number(lo) && number(hi) =>
        {
            let lo = literal(&format!("the lower bound of knob `{}`", k.name), lo)?;
            let hi = literal(&format!("the upper bound of knob `{}`", k.name), hi)?;
            let _ = write!(line, " in {lo}..={hi}");
        }
        (None, None, false) => {
            let list: Vec<String> = k.choices.iter().map(|c| quote(c)).collect();
            let _ = write!(line, " in [{}]", list.join(", "));
        }
        _ => {
            return Err(format!(
                "knob `{}` has bounds .fwf cannot write (a range needs both ends and a \
                 number type; a list of choices no range)",
                k.name
            ));
        }
    }
    if k.expandable {
        line.push_str(" expandable");
    }
    let _ = writeln!(out, "{INDENT}{line}");
    Ok(())
}

/// The named artifacts a body's `reads:` can name: the workflow's inputs, then the named
/// writes of the body's own nodes in declaration order (a later one wins, as in the
/// lowering). A parallel block sees the inputs, not its siblings' writes: the lowering
/// lowers the block before it records the names written beside it.
pub(super) fn artifacts(ir: &Ir, body: &Body<'_>, order: &[&Node]) -> BTreeMap<String, Artifact> {
    let mut map: BTreeMap<String, Artifact> = ir
        .workflow
        .inputs
        .iter()
        .filter_map(|a| Some((a.name.clone()?, a.clone())))
        .collect();
    for n in order {
        for w in &n.attrs.writes {
            if let Some(name) = &w.name {
                map.insert(body.local(name).to_string(), w.clone());
            }
        }
    }
    map
}

/// Writes one node declaration (not a parallel node) at `indent`.
pub(super) fn node(
    out: &mut String,
    indent: &str,
    body: &Body<'_>,
    n: &Node,
    names: &BTreeMap<String, Artifact>,
) -> Result<(), String> {
    let name = body.local(&n.id);
    check_name("node", &n.id)?;
    if name == START || name == END {
        return Err(format!(
            "node `{}` would be declared as `{name}`, a reserved name",
            n.id
        ));
    }
    let a = &n.attrs;
    reject_foreign(n)?;
    if let Some(d) = &a.doc {
        doc(out, indent, "///", &format!("node `{}`", n.id), d)?;
    }
    let mut head = format!("{} {name}", n.kind.as_str());
    let mut attrs: Vec<(&str, String)> = Vec::new();
    match n.kind {
        NodeKind::Agent => {
            let role = a.role.as_deref().ok_or_else(|| {
                format!(
                    "agent `{}` has no role; in .fwf an agent always has one",
                    n.id
                )
            })?;
            attrs.push(("role", word(role)));
        }
        NodeKind::Fn | NodeKind::Study => match &a.run {
            Some(run) => {
                let _ = write!(head, " {}", quote(run));
            }
            None if n.kind == NodeKind::Fn => {
                return Err(format!("fn `{}` has no command", n.id));
            }
            None => {}
        },
        NodeKind::Gate => {
            let by = match (a.evaluator, &a.role, &a.run) {
                (Some(Evaluator::Agent), Some(role), None) if is_ident(role) => {
                    format!("agent({role})")
                }
                (Some(Evaluator::Fn), None, Some(run)) => format!("fn({})", quote(run)),
                (Some(Evaluator::User), None, None) => "user".to_string(),
                _ => {
                    return Err(format!(
                        "gate `{}` has no evaluator .fwf can write: it needs `by agent(ROLE)` \
                         with a role that is a plain name, `by fn(\"command\")` or `by user`, \
                         and no role or command besides",
                        n.id
                    ));
                }
            };
            let _ = write!(head, " by {by}");
            if let Some(q) = &a.question {
                let _ = write!(head, " {}", quote(q));
            }
        }
        NodeKind::Select => match &a.strategy {
            Some(s) if is_ident(s) => {
                let _ = write!(head, " by {s}");
            }
            _ => {
                return Err(format!(
                    "select `{}` has no strategy that is a plain name",
                    n.id
                ));
            }
        },
        _ => {}
    }
    if let Some(p) = &a.prompt {
        attrs.push(("prompt", quote(p)));
    }
    if let Some(t) = &a.task {
        attrs.push(("task", quote(t)));
    }
    if let Some(m) = &a.model {
        attrs.push(("model", quote(m)));
    }
    if let Some(r) = &a.runner {
        attrs.push(("runner", quote(r)));
    }
    if let Some(p) = a.placement {
        attrs.push(("placement", p.as_str().to_string()));
    }
    if let Some(t) = a.timeout {
        attrs.push(("timeout", t.to_string()));
    }
    if a.is_async {
        attrs.push(("async", "true".into()));
    }
    if !a.outcomes.is_empty() {
        let list: Vec<&str> = a.outcomes.iter().map(|l| l.as_str()).collect();
        attrs.push(("outcomes", list.join(", ")));
    }
    if !a.reads.is_empty() {
        let list = a
            .reads
            .iter()
            .map(|r| read(n, body, names, r))
            .collect::<Result<Vec<_>, _>>()?;
        attrs.push(("reads", list.join(", ")));
    }
    if !a.writes.is_empty() {
        let list = a
            .writes
            .iter()
            .map(|w| write_value(n, body, w))
            .collect::<Result<Vec<_>, _>>()?;
        attrs.push(("writes", list.join(", ")));
    }
    if !a.checks.is_empty() {
        let list: Vec<String> = a
            .checks
            .iter()
            .map(|c| match c {
                Check::Exists => "exists".to_string(),
                Check::MinSize(n) => format!("min_size({n})"),
                Check::Contains(s) => format!("contains({})", quote(s)),
            })
            .collect();
        attrs.push(("check", list.join(", ")));
    }
    if attrs.is_empty() {
        let _ = writeln!(out, "{indent}{head}");
    } else {
        let _ = writeln!(out, "{indent}{head} {{");
        for (key, value) in attrs {
            let _ = writeln!(out, "{indent}{INDENT}{key}: {value}");
        }
        let _ = writeln!(out, "{indent}}}");
    }
    Ok(())
}

/// A role as hand-written files have it: a bare name when it is one.
fn word(s: &str) -> String {
    if is_ident(s) && s != "true" && s != "false" {
        s.to_string()
    } else {
        quote(s)
    }
}

/// Refuses attributes the node's kind cannot carry in `.fwf` (the lowering would
/// report them, or drop them).
fn reject_foreign(n: &Node) -> Result<(), String> {
    let a = &n.attrs;
    let present: [(&str, bool); 18] = [
        ("role", a.role.is_some()),
        ("prompt", a.prompt.is_some()),
        ("task", a.task.is_some()),
        ("run", a.run.is_some()),
        ("evaluator", a.evaluator.is_some()),
        ("question", a.question.is_some()),
        ("outcomes", !a.outcomes.is_empty()),
        ("reads", !a.reads.is_empty()),
        ("writes", !a.writes.is_empty()),
        ("check", !a.checks.is_empty()),
        ("timeout", a.timeout.is_some()),
        ("model", a.model.is_some()),
        ("runner", a.runner.is_some()),
        ("placement", a.placement.is_some()),
        ("async", a.is_async),
        ("count", a.count.is_some() || a.count_knob.is_some()),
        ("isolation", a.isolation.is_some()),
        ("strategy", a.strategy.is_some()),
    ];
    let allowed = crate::lower::ALLOWED_ATTRS
        .iter()
        .find(|(k, _)| *k == n.kind)
        .map_or(&[][..], |(_, keys)| *keys);
    // What a kind's header carries besides its attribute block.
    let header: &[&str] = match n.kind {
        NodeKind::Gate => &["evaluator", "role", "run"],
        NodeKind::Select => &["strategy"],
        _ => &[],
    };
    for (key, set) in present {
        if set && !allowed.contains(&key) && !header.contains(&key) {
            return Err(format!(
                "{} `{}` has `{key}`, which {} cannot carry in .fwf",
                n.kind,
                n.id,
                crate::validate::a_kind(n.kind)
            ));
        }
    }
    Ok(())
}

/// One `reads:` value: a path, or the name that resolves to exactly this artifact.
fn read(
    n: &Node,
    body: &Body<'_>,
    names: &BTreeMap<String, Artifact>,
    r: &Artifact,
) -> Result<String, String> {
    let Some(name) = &r.name else {
        return Ok(quote(&r.path));
    };
    [body.local(name), name.as_str()]
        .into_iter()
        .find(|key| names.get(*key) == Some(r) && is_dotted(key))
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "node `{}` reads the artifact `{name}` ({}), but no input or named write of \
                 its block declares `{name}` with that path",
                n.id, r.path
            )
        })
}

/// One `writes:` value: a path, or `name = "path"` with the name local to the block.
fn write_value(n: &Node, body: &Body<'_>, w: &Artifact) -> Result<String, String> {
    let Some(name) = &w.name else {
        return Ok(quote(&w.path));
    };
    let local = name.strip_prefix(body.prefix.as_str()).ok_or_else(|| {
        format!(
            "node `{}` writes the artifact `{name}`, which is not named under its parallel \
             block `{}`",
            n.id,
            body.prefix.trim_end_matches('.')
        )
    })?;
    check_name("artifact", local)?;
    Ok(format!("{local} = {}", quote(&w.path)))
}

/// `parallel name(count: N) in worktrees {` for parallel node `p` of `body`.
pub(super) fn parallel_head(ir: &Ir, body: &Body<'_>, p: &Node) -> Result<String, String> {
    check_name("parallel node", &p.id)?;
    let a = &p.attrs;
    let only = Attrs {
        doc: a.doc.clone(),
        count: a.count,
        count_knob: a.count_knob.clone(),
        isolation: a.isolation.clone(),
        ..Attrs::default()
    };
    if *a != only {
        return Err(format!(
            "parallel node `{}` has attributes besides its count and isolation",
            p.id
        ));
    }
    if a.isolation.as_deref() != Some("worktrees") {
        return Err(format!(
            "parallel node `{}` does not run in worktrees, the one isolation .fwf has",
            p.id
        ));
    }
    let count = match (a.count, &a.count_knob) {
        (None, None) => String::new(),
        (Some(n), None) => format!("count: {n}"),
        (Some(n), Some(k))
            if ir.knob(k).map(|k| &k.default) == Some(&Literal::Int(i64::from(n))) =>
        {
            format!("count: {k}")
        }
        _ => {
            return Err(format!(
                "parallel node `{}` has a count that does not match its knob's value",
                p.id
            ));
        }
    };
    Ok(format!(
        "parallel {}({count}) in worktrees {{",
        body.local(&p.id)
    ))
}
