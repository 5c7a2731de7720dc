//! Proof that QA ran (Sacred Rule 9), read only from the verified event log
//! ([`events::verify`]): each of the three QA roles — health_checker, code_reviewer,
//! adversarial_tester — completed for this experiment id after its last
//! `experiment.begin` (a begin that only resumed it does not count) and after the last
//! event of its `builder` (the role that commits), and before its `experiment.finalize`
//! if there is one.
//!
//! "After the builder" is by position in the chained log, not by commit time: a
//! commit's time is whatever its author's clock or `GIT_COMMITTER_DATE` said, the
//! log's order is sealed. A line factory did not write never counts; a log that does
//! not verify fails the check with the line that breaks it.

use std::path::Path;

use serde_json::Value;

use super::CheckOutcome;
use crate::events::{
    self, ChainError, Event, EventData, EventsError, ExpRef, VerifiedEvent, VerifiedLog, kinds,
};
use crate::project::layout::FactoryPaths;

/// Roles whose completed run is QA (deep QA's three, plus the legacy monolith, which
/// no longer proves QA on its own but still orders a keep after it).
pub const QA_ROLES: &[&str] = &[
    "health_checker",
    "code_reviewer",
    "adversarial_tester",
    "qa",
];
/// The roles that must each have completed for an experiment to have had QA (one list
/// with the compiler's FWF106).
pub const REQUIRED_QA_ROLES: &[&str] = factory_compiler::ir::conventions::REQUIRED_QA_ROLES;
/// The role whose events mark the experiment's last change.
pub const BUILDER_ROLE: &str = "builder";
/// Legacy monolithic QA event types.
const LEGACY_QA_KINDS: &[&str] = &["qa", "qa.completed", "qa.complete"];

/// The experiment an event is about: typed for the runtime's own events, read from
/// an `exp_id` field (a number or a numeric string) for anything else.
fn exp_of(event: &Event) -> Option<u64> {
    match &event.data {
        EventData::ExperimentBegin { exp_id, .. }
        | EventData::ExperimentFinalize { exp_id, .. }
        | EventData::ExperimentForgotten { exp_id }
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

/// The agent role an event names (typed, or an older writer's `role`/`agent` field).
fn role_of(event: &Event) -> Option<String> {
    match &event.data {
        EventData::AgentStarted(a) => Some(a.role.clone()),
        EventData::Other { fields, .. } => ["role", "agent"]
            .iter()
            .find_map(|k| fields.get(*k).and_then(Value::as_str))
            .map(str::to_string),
        data => data.agent_ended().map(|a| a.role.clone()),
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

/// `event` is of type `kind` and about experiment `id`.
fn is_of(event: &Event, kind: &str, id: u32) -> bool {
    event.kind() == kind && exp_of(event) == Some(u64::from(id))
}

/// Whether `event` began experiment `id`. A begin that only found the experiment again
/// (`resumed`: a resumed run, a parallel node started again) starts no new attempt, so
/// QA that ran before it still counts; the builder rule catches any change after QA.
fn began(event: &Event, id: u32) -> bool {
    match &event.data {
        EventData::ExperimentBegin {
            exp_id, resumed, ..
        } => *exp_id == id && !resumed,
        _ => is_of(event, kinds::EXPERIMENT_BEGIN, id),
    }
}

/// The latest verified QA completion for experiment `id` after its last
/// `experiment.begin`; `None` when there is none (or no begin).
pub fn last_qa_completion(log: &VerifiedLog, id: u32) -> Option<&VerifiedEvent> {
    let begin = log.events.iter().rposition(|v| began(&v.event, id))?;
    log.events[begin..]
        .iter()
        .rev()
        .find(|v| qa_completion(&v.event).is_some() && exp_of(&v.event) == Some(u64::from(id)))
}

/// Where in the verified log QA for one experiment counts: after its last change (the
/// builder's last event, else its begin) and before its finalize.
struct QaWindow {
    after: usize,
    after_what: String,
    finalize: Option<usize>,
}

impl QaWindow {
    fn of(log: &VerifiedLog, begin: usize, id: u32) -> Self {
        let exp = Some(u64::from(id));
        let builder = log.events.iter().rfind(|v| {
            v.line > begin
                && exp_of(&v.event) == exp
                && v.event.kind().starts_with("agent.")
                && role_of(&v.event).as_deref() == Some(BUILDER_ROLE)
        });
        let (after, after_what) = match builder {
            Some(b) => (
                b.line,
                format!("the builder's last event (line {})", b.line),
            ),
            None => (begin, format!("experiment.begin (line {begin})")),
        };
        let finalize = log
            .events
            .iter()
            .find(|v| v.line > begin && is_of(&v.event, kinds::EXPERIMENT_FINALIZE, id))
            .map(|v| v.line);
        Self {
            after,
            after_what,
            finalize,
        }
    }

    /// Every verified QA completion for experiment `id`, with its role.
    fn completions<'a>(&self, log: &'a VerifiedLog, id: u32) -> Vec<(&'a VerifiedEvent, String)> {
        log.events
            .iter()
            .filter(|v| {
                v.event.kind() == kinds::AGENT_COMPLETED && exp_of(&v.event) == Some(u64::from(id))
            })
            .filter_map(|v| qa_completion(&v.event).map(|r| (v, r)))
            .collect()
    }

    fn counts(&self, v: &VerifiedEvent) -> bool {
        v.line > self.after && self.finalize.is_none_or(|f| v.line < f)
    }
}

/// The tests QA confirmed by name as intended behaviour changes of experiment `id`
/// (`Confirmed behaviour change: …` in a QA role's review), from verified completions
/// that count as its QA; empty when the log does not verify or holds none.
pub fn confirmed_behaviour_changes(root: &Path, id: u32) -> Vec<String> {
    let Ok(log) = events::verify(&FactoryPaths::new(root)) else {
        return Vec::new();
    };
    let Some(begin) = log.events.iter().rfind(|v| began(&v.event, id)) else {
        return Vec::new();
    };
    let window = QaWindow::of(&log, begin.line, id);
    let mut out: Vec<String> = Vec::new();
    for (v, _) in window.completions(&log, id) {
        if !window.counts(v) {
            continue;
        }
        // Typed or an older writer's shape alike: the sealed `confirmed` field.
        let names = v.event.get("confirmed");
        for name in names.iter().filter_map(Value::as_array).flatten() {
            if let Some(name) = name.as_str()
                && !out.iter().any(|n| n == name)
            {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Passes when no experiment is given (nothing to verify); otherwise fails closed
/// unless the verified log proves all three QA roles completed for it after its last
/// change (see the module docs).
pub fn check_qa_execution(root: &Path, exp_id: Option<u32>) -> Result<CheckOutcome, EventsError> {
    const NAME: &str = "qa_execution";
    let Some(id) = exp_id else {
        return Ok(CheckOutcome::pass(
            NAME,
            "no experiment given; QA proof not checked",
        ));
    };
    let log = match events::verify(&FactoryPaths::new(root)) {
        Ok(log) => log,
        Err(ChainError::Events(e)) => return Err(e),
        Err(broken) => {
            return Ok(CheckOutcome::fail(
                NAME,
                vec![format!(
                    "no QA proof can be read for experiment {id}: {broken}"
                )],
            ));
        }
    };
    Ok(qa_outcome(&log, id))
}

/// The QA verdict for experiment `id` on a verified log.
pub fn qa_outcome(log: &VerifiedLog, id: u32) -> CheckOutcome {
    const NAME: &str = "qa_execution";
    let exp = Some(u64::from(id));
    let Some(begin) = log.events.iter().rfind(|v| began(&v.event, id)) else {
        return CheckOutcome::fail(
            NAME,
            vec![format!(
                "Sacred Rule 9 (mandatory QA, docs/sacred-rules.md): the verified event \
                 log has no experiment.begin for experiment {id}, so no QA can be shown \
                 to have followed it"
            )],
        );
    };
    let window = QaWindow::of(log, begin.line, id);
    let (after, after_what) = (window.after, window.after_what.clone());
    let completions = window.completions(log, id);
    let counted = |role: &str| {
        completions
            .iter()
            .rev()
            .find(|(v, r)| r == role && window.counts(v))
    };
    let missing: Vec<&str> = REQUIRED_QA_ROLES
        .iter()
        .copied()
        .filter(|r| counted(r).is_none())
        .collect();
    if missing.is_empty() {
        let who: Vec<String> = REQUIRED_QA_ROLES
            .iter()
            .filter_map(|r| counted(r).map(|(v, _)| format!("{r} (line {})", v.line)))
            .collect();
        return CheckOutcome::pass(
            NAME,
            format!(
                "QA completed after {after_what}, in verified events: {}",
                who.join(", ")
            ),
        );
    }
    let mut details = vec![format!(
        "Sacred Rule 9 (mandatory QA, docs/sacred-rules.md): experiment {id} has no \
         verified agent.completed by {} after {after_what}; all of {} must complete after \
         the last change. Run each through factory for this experiment, e.g. `factory \
         agent {} --exp {id} --runner exec --agent-cmd \"...\"`",
        missing.join(", "),
        REQUIRED_QA_ROLES.join(", "),
        missing.first().copied().unwrap_or("health_checker")
    )];
    for (v, role) in &completions {
        if missing.contains(&role.as_str()) && v.line <= after && v.line > begin.line {
            details.push(format!(
                "line {}: {role} completed before {after_what}; it reviewed an earlier change",
                v.line
            ));
        }
    }
    // Lines that claim QA but that factory did not write: named, never counted.
    for f in &log.foreign {
        let Ok(event) = serde_json::from_str::<Event>(&f.text) else {
            continue;
        };
        if let Some(role) = qa_completion(&event)
            && exp_of(&event) == exp
        {
            details.push(format!(
                "line {}: claims {} by {role} for experiment {id}, but factory did not write it \
                 (it has no chain); it is not evidence",
                f.line,
                event.kind()
            ));
        }
    }
    CheckOutcome::fail(NAME, details)
}
