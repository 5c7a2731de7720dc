//! Proof that QA ran (Sacred Rule 9): after the experiment's `experiment.begin` event,
//! and before its `experiment.finalize` if there is one, the log must hold a QA
//! completion — an `agent.completed` event of a QA role, or a legacy `qa` event.

use std::path::Path;

use serde_json::Value;

use super::CheckOutcome;
use crate::events::{self, Event, EventsError, kinds};
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

fn exp_of(event: &Event) -> Option<u64> {
    match event.get("exp_id")? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn is_qa_completion(event: &Event) -> bool {
    if LEGACY_QA_KINDS.contains(&event.kind.as_str()) {
        return true;
    }
    event.kind == kinds::AGENT_COMPLETED
        && ["role", "agent"]
            .iter()
            .filter_map(|k| event.get(k).and_then(Value::as_str))
            .any(|r| QA_ROLES.contains(&r))
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
        .find(|(_, e)| e.kind == kinds::EXPERIMENT_BEGIN && exp_of(e) == Some(u64::from(id)))
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
        .find(|(_, e)| e.kind == kinds::EXPERIMENT_BEGIN && exp_of(e) == Some(u64::from(id)))
    else {
        return Ok(CheckOutcome::pass(
            NAME,
            format!("no experiment.begin event for experiment {id}; nothing to verify"),
        ));
    };
    let finalize = indexed.iter().copied().find(|(i, e)| {
        *i > begin.0 && e.kind == kinds::EXPERIMENT_FINALIZE && exp_of(e) == Some(u64::from(id))
    });
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
    let who: Vec<String> = qa
        .iter()
        .map(|e| {
            e.get("role")
                .or_else(|| e.get("agent"))
                .and_then(Value::as_str)
                .unwrap_or(&e.kind)
                .to_string()
        })
        .collect();
    Ok(CheckOutcome::pass(
        NAME,
        format!("QA completed after begin: {}", who.join(", ")),
    ))
}
