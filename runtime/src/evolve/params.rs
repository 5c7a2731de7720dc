//! Operators that keep the graph's shape and change values: `PARAM_MUTATE` (an agent's
//! timeout, model or runner), `PROMPT_MUTATE` (a task text) and `KNOB_MUTATE`.

use factory_compiler::ir::{FloatText, Ir, Knob, KnobType, Literal, NodeKind};

use super::edit::finish;
use super::source::Source;

/// Timeouts (seconds) `PARAM_MUTATE` picks from.
pub const TIMEOUTS: &[u64] = &[300, 600, 900, 1800, 3600];
/// Models `PARAM_MUTATE` picks from (the names the Claude runner understands; other
/// runners take their own, which a project sets by hand).
pub const MODELS: &[&str] = &["haiku", "sonnet", "opus"];

/// Sentences `PROMPT_MUTATE` appends to a task when no agent proposes a rewrite. A
/// sentence already in the task is not added again.
pub const REWRITES: &[&str] = &[
    "Write tests first.",
    "Keep the diff minimal.",
    "State your assumptions before you start.",
    "Check your work against the plan before you finish.",
    "Prefer the simplest change that works.",
];

/// `PARAM_MUTATE`: one agent node's timeout, model or runner becomes another value of
/// a fixed list, or is unset (the project's default applies).
pub fn param_mutate(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let agents: Vec<usize> = (0..ir.nodes.len())
        .filter(|&i| ir.nodes[i].kind == NodeKind::Agent)
        .collect();
    let index = *src.pick(&agents)?;
    let mut out = ir.clone();
    let attrs = &mut out.nodes[index].attrs;
    match src.below(3) {
        0 => {
            let values: Vec<Option<u64>> = std::iter::once(None)
                .chain(TIMEOUTS.iter().copied().map(Some))
                .filter(|v| *v != attrs.timeout)
                .collect();
            attrs.timeout = *src.pick(&values)?;
        }
        1 => attrs.model = other(src, MODELS, attrs.model.as_deref())?,
        _ => {
            let runners = crate::runners::CLI_RUNNERS;
            attrs.runner = other(src, runners, attrs.runner.as_deref())?;
        }
    }
    Some(finish(out))
}

/// A value of `list`, or none, different from `current`.
fn other(src: &mut Source, list: &[&str], current: Option<&str>) -> Option<Option<String>> {
    let values: Vec<Option<&str>> = std::iter::once(None)
        .chain(list.iter().copied().map(Some))
        .filter(|v| *v != current)
        .collect();
    src.pick(&values).map(|v| v.map(str::to_string))
}

/// `PROMPT_MUTATE`: one agent node's task text is rewritten — by the [`Suggest`] hook
/// when there is one and it answers, else by appending a sentence from [`REWRITES`].
///
/// [`Suggest`]: super::Suggest
pub fn prompt_mutate(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let agents: Vec<usize> = (0..ir.nodes.len())
        .filter(|&i| ir.nodes[i].kind == NodeKind::Agent)
        .collect();
    let index = *src.pick(&agents)?;
    let node = &ir.nodes[index];
    let task = node.attrs.task.clone().unwrap_or_default();
    let proposed = src
        .hook()
        .and_then(|h| h.rewrite_task(node, &task))
        .filter(|t| !t.trim().is_empty() && *t != task);
    let rewritten = match proposed {
        Some(t) => t,
        None => {
            let unused: Vec<&str> = REWRITES
                .iter()
                .copied()
                .filter(|s| !task.contains(s))
                .collect();
            let sentence = *src.pick(&unused)?;
            if task.is_empty() {
                sentence.to_string()
            } else {
                format!("{} {sentence}", task.trim_end())
            }
        }
    };
    let mut out = ir.clone();
    out.nodes[index].attrs.task = Some(rewritten);
    Some(finish(out))
}

/// `KNOB_MUTATE`: one knob moves within its bounds (an int by one, a float by a tenth
/// of its range, a string to another choice, a bool flips) and every bound taken from
/// it (a reloop's `max`, a parallel's `count`) follows. An `expandable` knob at its
/// upper bound may go beyond it: to the hook's proposal, or offline to bound + 1, and
/// the bound moves with it.
pub fn knob_mutate(ir: &Ir, src: &mut Source) -> Option<Ir> {
    let index = src.below(ir.knobs.len().max(1));
    let knob = ir.knobs.get(index)?;
    let (value, max) = match knob.ty {
        KnobType::Int => step_int(knob, src)?,
        KnobType::Float => (step_float(knob, src)?, knob.max.clone()),
        KnobType::String => (other_choice(knob, src)?, knob.max.clone()),
        KnobType::Bool => match knob.default {
            Literal::Bool(b) => (Literal::Bool(!b), knob.max.clone()),
            _ => return None,
        },
    };
    Some(with_knob(ir, index, value, max))
}

/// `ir` with knob `index` at `value` (and its upper bound at `max`), every bound taken
/// from it (a reloop's `max`, a parallel's `count`) following.
pub fn with_knob(ir: &Ir, index: usize, value: Literal, max: Option<Literal>) -> Ir {
    let mut out = ir.clone();
    let Some(knob) = out.knobs.get_mut(index) else {
        return out;
    };
    let name = knob.name.clone();
    knob.default = value.clone();
    knob.max = max;
    if let Literal::Int(n) = value {
        let bound = u32::try_from(n).ok();
        for e in out.edges.iter_mut() {
            if e.max_knob.as_deref() == Some(&name) {
                e.max = bound;
            }
        }
        for node in out.nodes.iter_mut() {
            if node.attrs.count_knob.as_deref() == Some(&name) {
                node.attrs.count = bound;
            }
        }
    }
    finish(out)
}

/// Every int knob of `ir` one step up and one step down, within its bounds: the knob
/// neighbourhood the search sweeps around its best candidate.
pub fn knob_neighbours(ir: &Ir) -> Vec<Ir> {
    let mut out = Vec::new();
    for (i, knob) in ir.knobs.iter().enumerate() {
        let (KnobType::Int, Literal::Int(cur)) = (&knob.ty, &knob.default) else {
            continue;
        };
        let lo = knob.min.as_ref().and_then(Literal::as_f64);
        let hi = knob.max.as_ref().and_then(Literal::as_f64);
        for next in [cur - 1, cur + 1] {
            if lo.is_none_or(|lo| next as f64 >= lo) && hi.is_none_or(|hi| next as f64 <= hi) {
                out.push(with_knob(ir, i, Literal::Int(next), knob.max.clone()));
            }
        }
    }
    out
}

/// An int knob one step up or down, within its bounds; past the upper bound only when
/// it is expandable (the new value, and the bound raised to it).
fn step_int(knob: &Knob, src: &mut Source) -> Option<(Literal, Option<Literal>)> {
    let Literal::Int(cur) = knob.default else {
        return None;
    };
    let lo = knob.min.as_ref().and_then(Literal::as_f64);
    let hi = match knob.max {
        Some(Literal::Int(h)) => Some(h),
        _ => None,
    };
    let mut moves: Vec<(Literal, Option<Literal>)> = Vec::new();
    if lo.is_none_or(|lo| (cur - 1) as f64 >= lo) {
        moves.push((Literal::Int(cur - 1), knob.max.clone()));
    }
    match hi {
        Some(h) if cur >= h => {
            if knob.expandable {
                let proposed = src
                    .hook()
                    .and_then(|hook| hook.expand_knob(knob))
                    .and_then(|l| match l {
                        Literal::Int(n) if n > h => Some(n),
                        _ => None,
                    });
                let n = proposed.unwrap_or(h + 1);
                moves.push((Literal::Int(n), Some(Literal::Int(n))));
            }
        }
        _ => moves.push((Literal::Int(cur + 1), knob.max.clone())),
    }
    src.pick(&moves).cloned()
}

/// A float knob a tenth of its range (or of its value) up or down, within bounds.
fn step_float(knob: &Knob, src: &mut Source) -> Option<Literal> {
    let cur = knob.default.as_f64()?;
    let lo = knob.min.as_ref().and_then(Literal::as_f64);
    let hi = knob.max.as_ref().and_then(Literal::as_f64);
    let step = match (lo, hi) {
        (Some(lo), Some(hi)) if hi > lo => (hi - lo) / 10.0,
        _ if cur != 0.0 => cur.abs() / 10.0,
        _ => 0.1,
    };
    // Rounded so the text stays short (0.3, not 0.30000000000000004).
    let round = |v: f64| (v * 1e6).round() / 1e6;
    let moves: Vec<f64> = [round(cur - step), round(cur + step)]
        .into_iter()
        .filter(|v| lo.is_none_or(|lo| *v >= lo) && hi.is_none_or(|hi| *v <= hi))
        .collect();
    src.pick(&moves)
        .map(|v| Literal::Float(FloatText::from_f64(*v)))
}

/// A string knob's other choice; an expandable one may also take the hook's proposal.
fn other_choice(knob: &Knob, src: &mut Source) -> Option<Literal> {
    let Literal::Str(cur) = &knob.default else {
        return None;
    };
    let mut values: Vec<String> = knob.choices.iter().filter(|c| *c != cur).cloned().collect();
    if knob.expandable
        && let Some(Literal::Str(s)) = src.hook().and_then(|h| h.expand_knob(knob))
        && s != *cur
        && !values.contains(&s)
    {
        values.push(s);
    }
    src.pick(&values).map(|s| Literal::Str(s.clone()))
}
