//! Rules about one node, edge or knob at a time.

use std::collections::BTreeMap;

use super::{Context, Finding, IrRef, a_kind};
use crate::diagnostic::fix::DEFAULT_BOUND;
use crate::diagnostic::{Code, Fix, Subject};
use crate::ir::conventions::{MAX_PARALLEL, MAX_RELOOP, parallel_count_ok};
use crate::ir::{Evaluator, Ir, Knob, KnobType, Label, Literal, NodeKind};

pub(super) fn check(ir: &Ir, cx: &Context, apart: impl Fn(usize) -> bool, out: &mut Vec<Finding>) {
    knobs(ir, out);
    for (i, e) in ir.edges.iter().enumerate() {
        edge(ir, i, e, out);
    }
    for (i, n) in ir.nodes.iter().enumerate() {
        if !apart(i) {
            node(n, &ir.knobs, ir.workflow.headless, cx.roles.as_ref(), out);
        }
    }
    outcomes(ir, out);
}

pub(super) fn node(
    n: &crate::ir::Node,
    knobs: &[Knob],
    headless: bool,
    roles: Option<&std::collections::BTreeSet<String>>,
    out: &mut Vec<Finding>,
) {
    let at = IrRef::Node(n.id.clone());
    if let (Some(roles), Some(role)) = (roles, &n.attrs.role)
        && matches!(n.kind, NodeKind::Agent | NodeKind::Gate)
        && !roles.contains(role)
    {
        let known: Vec<&str> = roles.iter().map(String::as_str).collect();
        out.push(
            Finding::new(Code::UnknownRole, at.clone(), format!("unknown role `{role}`"))
                .about(Subject::Role(role.clone()))
                .fix(Fix::CreatePrompt { role: role.clone() })
                .label("no prompt for this role")
                .attr("role")
                .help(format!(
                    "create `prompts/{role}.md` or `.factory/agents/{role}.md` in the project (or `$FACTORY_HOME/agents/prompts/{role}.md` for all your projects), or use a known role: {}",
                    known.join(", ")
                )),
        );
    }
    if n.kind == NodeKind::Parallel {
        parallel_count(knobs, n, out);
    }
    if headless && n.kind == NodeKind::Gate && n.attrs.evaluator == Some(Evaluator::User) {
        out.push(
            Finding::new(
                Code::UserGateInHeadless,
                at,
                format!("gate `{}` waits for a person, but this mode is headless", n.id),
            )
            .about(Subject::Node(n.id.clone()))
            .label("a user gate")
            .help("evaluate the gate with `agent(ceo)` or `fn(\"...\")`, or drop `headless` from the workflow"),
        );
    }
    super::templates::check(n, knobs, out);
}

fn edge(ir: &Ir, i: usize, e: &crate::ir::Edge, out: &mut Vec<Finding>) {
    let at = IrRef::Edge(i);
    if let Some(label) = e.label
        && label.is_verdict()
        && let Some(src) = ir.node(&e.from)
        && src.kind != NodeKind::Gate
    {
        out.push(
            Finding::new(
                Code::LabelOnNonGate,
                at.clone(),
                format!(
                    "`{label}` is a gate verdict, but `{}` is {}",
                    e.from,
                    a_kind(src.kind)
                ),
            )
            .about(Subject::Edge {
                from: e.from.clone(),
                to: e.to.clone(),
            })
            .label(format!("`{label}` edge from {}", a_kind(src.kind)))
            .help(format!(
                "remove `.{label}`, or make `{}` a gate; only `fail` may leave any node",
                e.from
            )),
        );
    }
    if e.label == Some(Label::Reloop) && e.max.is_none_or(|m| m == 0) {
        out.push(
            Finding::new(
                Code::UnboundedReloop,
                at.clone(),
                format!("reloop from `{}` to `{}` has no bound", e.from, e.to),
            )
            .about(Subject::Edge {
                from: e.from.clone(),
                to: e.to.clone(),
            })
            .label("unbounded reloop")
            .fix(Fix::BoundReloop {
                bound: DEFAULT_BOUND,
            })
            .help(format!(
                "give it a bound of at least 1: `{}.reloop(max 3) -> {}`",
                e.from, e.to
            )),
        );
    }
    // A bound no run could reach bounds nothing: it is as unbounded as no bound.
    if let (Some(Label::Reloop), Some(max)) = (e.label, e.max)
        && max > MAX_RELOOP
    {
        let from = match &e.max_knob {
            Some(k) => format!(" (from knob `{k}`)"),
            None => String::new(),
        };
        out.push(
            Finding::new(
                Code::UnboundedReloop,
                at,
                format!(
                    "reloop from `{}` to `{}` has a bound of {max}{from}, more than any run could take",
                    e.from, e.to
                ),
            )
            .about(Subject::Edge {
                from: e.from.clone(),
                to: e.to.clone(),
            })
            .label("no real bound")
            .help(format!(
                "give it a bound from 1 to {MAX_RELOOP}: `{}.reloop(max 3) -> {}`",
                e.from, e.to
            )),
        );
    }
}

/// A `parallel` block runs 1..=MAX_PARALLEL copies. A count from a knob must stay in
/// range whatever the outer loop tunes the knob to, so the knob's bounds are checked,
/// not just its default.
fn parallel_count(knobs: &[Knob], n: &crate::ir::Node, out: &mut Vec<Finding>) {
    let at = IrRef::Node(n.id.clone());
    let Some(count) = n.attrs.count else { return };
    let Some(knob_name) = &n.attrs.count_knob else {
        if !parallel_count_ok(i64::from(count)) {
            let (message, help) = count_problem(&n.id, i64::from(count));
            out.push(
                Finding::new(Code::ParallelCount, at, message)
                    .about(Subject::Parallel(n.id.clone()))
                    .label("out of range")
                    .attr("count")
                    .help(help),
            );
        }
        return;
    };
    let Some(knob) = knobs.iter().find(|k| &k.name == knob_name) else {
        return;
    };
    let int = |l: Option<&Literal>| match l {
        Some(Literal::Int(i)) => Some(*i),
        _ => None,
    };
    let (lo, hi) = (int(knob.min.as_ref()), int(knob.max.as_ref()));
    let fits =
        matches!((lo, hi), (Some(lo), Some(hi)) if parallel_count_ok(lo) && parallel_count_ok(hi));
    if fits && parallel_count_ok(i64::from(count)) {
        return;
    }
    let (range, label) = match (lo, hi) {
        (Some(lo), Some(hi)) => (format!("{lo}..={hi}"), format!("in {lo}..={hi}")),
        _ => ("any number".to_string(), "no bounds".to_string()),
    };
    out.push(
        Finding::new(
            Code::ParallelCount,
            at,
            format!(
                "knob `{knob_name}` may set the count of parallel block `{}` to {range}, outside 1..={MAX_PARALLEL}",
                n.id
            ),
        )
        .about(Subject::Parallel(n.id.clone()))
        .label("count from the knob")
        .attr("count")
        .with(IrRef::Knob(knob_name.clone()), label)
        .help(format!(
            "bound the knob inside 1..={MAX_PARALLEL}: `knob {knob_name}: int = {} in 1..={MAX_PARALLEL}`",
            count.clamp(1, MAX_PARALLEL)
        )),
    );
}

/// The message and help for a literal `count` outside 1..=MAX_PARALLEL; lowering
/// uses it too, for counts the IR cannot hold (negative ones).
pub(crate) fn count_problem(block: &str, count: i64) -> (String, String) {
    (
        format!("parallel block `{block}` has a count of {count}; a count is 1..={MAX_PARALLEL}"),
        format!(
            "write how many copies run at once, from 1 to {MAX_PARALLEL}: `parallel {block}(count: 3) in worktrees {{ ... }}`"
        ),
    )
}

/// Every outcome a gate can emit needs an edge. A plain edge from a gate is `proceed`.
fn outcomes(ir: &Ir, out: &mut Vec<Finding>) {
    let mut have: BTreeMap<&str, Vec<Label>> = BTreeMap::new();
    for e in &ir.edges {
        have.entry(&e.from)
            .or_default()
            .push(e.label.unwrap_or(Label::Proceed));
    }
    for n in ir.nodes.iter().filter(|n| n.kind == NodeKind::Gate) {
        let emits: Vec<Label> = if n.attrs.outcomes.is_empty() {
            match n.attrs.evaluator {
                Some(Evaluator::Fn) => vec![Label::Proceed, Label::Halt],
                _ => vec![Label::Proceed, Label::Reloop, Label::Halt],
            }
        } else {
            n.attrs.outcomes.clone()
        };
        let got = have.get(n.id.as_str()).cloned().unwrap_or_default();
        let missing: Vec<&str> = emits
            .iter()
            .filter(|l| !got.contains(l))
            .map(|l| l.as_str())
            .collect();
        if !missing.is_empty() {
            let example = missing[0];
            let bound = if example == "reloop" { "(max 2)" } else { "" };
            out.push(
                Finding::new(
                    Code::MissingOutcome,
                    IrRef::Node(n.id.clone()),
                    format!(
                        "gate `{}` can decide {} but no edge says where that goes",
                        n.id,
                        missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                    ),
                )
                .about(Subject::Node(n.id.clone()))
                .label("missing outcome")
                .help(format!(
                    "add `{}.{example}{bound} -> <node>` to the flow, or narrow the gate with `outcomes: {}`",
                    n.id,
                    emits.iter().filter(|l| got.contains(l)).map(|l| l.as_str()).collect::<Vec<_>>().join(", ")
                )),
            );
        }
    }
}

fn knobs(ir: &Ir, out: &mut Vec<Finding>) {
    for k in &ir.knobs {
        if let Some(problem) = literal_fits(
            &k.default,
            k.ty,
            k.min.as_ref(),
            k.max.as_ref(),
            &k.choices,
            k.expandable,
        ) {
            out.push(
                Finding::new(
                    Code::OutOfBounds,
                    IrRef::Knob(k.name.clone()),
                    format!("knob `{}`: default {} {problem}", k.name, k.default),
                )
                .about(Subject::Knob(k.name.clone()))
                .label("out of bounds")
                .help("change the default to a value inside the bounds, or widen the bounds"),
            );
        }
    }
}

/// Why `value` does not fit a type and its bounds, if it does not.
pub fn literal_fits(
    value: &Literal,
    ty: KnobType,
    min: Option<&Literal>,
    max: Option<&Literal>,
    choices: &[String],
    expandable: bool,
) -> Option<String> {
    let type_ok = matches!(
        (ty, value),
        (KnobType::Int, Literal::Int(_))
            | (KnobType::Float, Literal::Int(_) | Literal::Float(_))
            | (KnobType::String, Literal::Str(_))
            | (KnobType::Bool, Literal::Bool(_))
    );
    if !type_ok {
        return Some(format!("is not of type {}", knob_type_name(ty)));
    }
    if let Some(v) = value.as_f64() {
        if let Some(lo) = min.and_then(Literal::as_f64)
            && v < lo
        {
            return Some(format!(
                "is below the minimum {}",
                min.map(ToString::to_string).unwrap_or_default()
            ));
        }
        if let Some(hi) = max.and_then(Literal::as_f64)
            && v > hi
        {
            return Some(format!(
                "is above the maximum {}",
                max.map(ToString::to_string).unwrap_or_default()
            ));
        }
    }
    if let Literal::Str(s) = value
        && !choices.is_empty()
        && !expandable
        && !choices.contains(s)
    {
        return Some(format!("is not one of {}", choices.join(", ")));
    }
    None
}

pub fn knob_type_name(ty: KnobType) -> &'static str {
    match ty {
        KnobType::Int => "int",
        KnobType::Float => "float",
        KnobType::String => "string",
        KnobType::Bool => "bool",
    }
}
