//! Proof that QA ran (Sacred Rule 9): after the experiment's `experiment.begin` event,
//! and before its `experiment.finalize` if there is one, the log must hold a QA
//! completion — an `agent.completed` event of a QA role, or a legacy `qa` event.

use std::path::Path;

use serde_json::Value;

use super::CheckOutcome;
use crate::events::{self, Event, EventData, EventsError, ExpRef, kinds};
use crate::project::layout::FactoryPaths;

/// Roles whose completed run counts as QA (deep QA's three, plus the legacy monolith).
pub const QA_ROLES: &[&str] = &[
    "health_checker",
    "code_reviewer",
    "adversarial_tester",
    "qa",
];
/// Legacy monolithic QA event types.
const LEGACY_QA_KINDS: &[&str] = &["qa", "qa.completed", "qa.complete"];

/// The experiment an event is about: typed for the runtime's own events, read from
/// an `exp_id` field (a number or a numeric string) for anything else.
fn exp_of(event: &Event) -> Option<u64> {
    match &event.data {
        EventData::ExperimentBegin { exp_id, .. }
        | EventData::ExperimentFinalize { exp_id, .. }
        | EventData::PrecheckCompleted { exp_id, .. } => Some(u64::from(*exp_id)),
        EventData::AgentStarted(a) => a.exp_id.as_ref().and_then(ExpRef::id),
        data => match data.agent_ended() {
            Some(a) => a.exp_id.as_ref().and_then(ExpRef::id),
            None => match event.get("exp_id")? {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            },
        },
    }
}

/// The role that completed QA, when `event` is a QA completion: an `agent.completed`
/// of a QA role, or a legacy event (which may name it in `role` or `agent`).
pub fn qa_completion(event: &Event) -> Option<String> {
    match &event.data {
        EventData::AgentCompleted(a) => QA_ROLES.contains(&a.role.as_str()).then(|| a.role.clone()),
        EventData::Other { kind, fields } => {
            let named = ["role", "agent"]
                .iter()
                .find_map(|k| fields.get(*k).and_then(Value::as_str));
            if LEGACY_QA_KINDS.contains(&kind.as_str()) {
                Some(named.unwrap_or(kind).to_string())
            } else if kind == kinds::AGENT_COMPLETED {
                // An older writer's completion (say `agent` instead of `role`).
                ["role", "agent"]
                    .iter()
                    .filter_map(|k| fields.get(*k).and_then(Value::as_str))
                    .find(|r| QA_ROLES.contains(r))
                    .map(str::to_string)
            } else {
                None
            }
        }
        _ => None,
    }
}

fn is_qa_completion(event: &Event) -> bool {
    qa_completion(event).is_some()
}

/// `event` is of type `kind` and about experiment `id` (typed, or an older writer's
/// line that names the id as a string).
fn is_of(event: &Event, kind: &str, id: u32) -> bool {
    event.kind() == kind && exp_of(event) == Some(u64::from(id))
}

/// `a` happened at or after `b`: by timestamp when both parse, else by log position.
fn at_or_after(a: (usize, &Event), b: (usize, &Event)) -> bool {
    match (a.1.instant(), b.1.instant()) {
        (Some(x), Some(y)) => x >= y,
        _ => a.0 >= b.0,
    }
}

/// The latest QA completion for experiment `id` after its last `experiment.begin`,
/// with its position in the log; `None` when there is none (or no begin).
pub fn last_qa_completion(root: &Path, id: u32) -> Result<Option<(usize, Event)>, EventsError> {
    let log = events::read(&FactoryPaths::new(root))?;
    let indexed: Vec<(usize, &Event)> = log.events.iter().enumerate().collect();
    let Some(begin) = indexed
        .iter()
        .rev()
        .copied()
        .find(|(_, e)| is_of(e, kinds::EXPERIMENT_BEGIN, id))
    else {
        return Ok(None);
    };
    Ok(indexed
        .iter()
        .copied()
        .filter(|ev| is_qa_completion(ev.1) && at_or_after(*ev, begin))
        .max_by(|a, b| match (a.1.instant(), b.1.instant()) {
            (Some(x), Some(y)) => x.cmp(&y).then(a.0.cmp(&b.0)),
            _ => a.0.cmp(&b.0),
        })
        .map(|(i, e)| (i, e.clone())))
}

/// Passes when no experiment is given or no `experiment.begin` exists for it (nothing
/// to verify); fails closed when a begin exists and no QA completion followed it.
pub fn check_qa_execution(root: &Path, exp_id: Option<u32>) -> Result<CheckOutcome, EventsError> {
    const NAME: &str = "qa_execution";
    let Some(id) = exp_id else {
        return Ok(CheckOutcome::pass(
            NAME,
            "no experiment given; QA proof not checked",
        ));
    };
    let log = events::read(&FactoryPaths::new(root))?;
    let indexed: Vec<(usize, &Event)> = log.events.iter().enumerate().collect();
    let Some(begin) = indexed
        .iter()
        .rev()
        .copied()
        .find(|(_, e)| is_of(e, kinds::EXPERIMENT_BEGIN, id))
    else {
        return Ok(CheckOutcome::pass(
            NAME,
            format!("no experiment.begin event for experiment {id}; nothing to verify"),
        ));
    };
    let finalize = indexed
        .iter()
        .copied()
        .find(|(i, e)| *i > begin.0 && is_of(e, kinds::EXPERIMENT_FINALIZE, id));
    let qa: Vec<&Event> = indexed
        .iter()
        .copied()
        .filter(|ev| is_qa_completion(ev.1) && at_or_after(*ev, begin))
        .filter(|ev| finalize.is_none_or(|f| at_or_after(f, *ev)))
        .map(|(_, e)| e)
        .collect();
    if qa.is_empty() {
        return Ok(CheckOutcome::fail(
            NAME,
            vec![format!(
                "Sacred Rule 9 violation: experiment {id} began at {} and no QA completion \
                 (agent.completed by {} or a legacy qa event) followed",
                begin.1.timestamp,
                QA_ROLES.join("/")
            )],
        ));
    }
    let who: Vec<String> = qa.iter().filter_map(|e| qa_completion(e)).collect();
    Ok(CheckOutcome::pass(
        NAME,
        format!("QA completed after begin: {}", who.join(", ")),
    ))
}
