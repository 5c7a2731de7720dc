//! The notification of a run's end (run end, halt, error), sent once the run has
//! settled its experiment.

use std::path::Path;

use serde_json::Map;

use super::driver::RunEnd;
use super::machine::RunOutcome;
use crate::notify::{self, Notification, NotifyEvent};

/// Tells the user's notifiers how the run ended; an interrupted run (to be resumed)
/// has not ended. Failures are logged by [`notify::announce`] and never change `end`.
pub(super) fn run_ended(project: &Path, workflow: &str, end: &RunEnd) {
    if let Some(n) = notification(project, workflow, end) {
        notify::announce(&n);
    }
}

fn notification(project: &Path, workflow: &str, end: &RunEnd) -> Option<Notification> {
    let outcome = end.outcome.as_ref().filter(|_| !end.interrupted)?;
    let name = notify::message::project_name(project);
    let run = format!("{name}: run {} ({workflow})", end.run_id);
    let (event, mut text) = match outcome {
        RunOutcome::Completed => (NotifyEvent::RunEnd, format!("{run} completed")),
        RunOutcome::Halted { node, reason } => (
            NotifyEvent::Halt,
            format!("{run} halted at {node}: {}", first_line(reason)),
        ),
        RunOutcome::Failed { node, reason } => (
            NotifyEvent::Error,
            format!("{run} FAILED at {node}: {}", first_line(reason)),
        ),
    };
    let exp_id = end.vars.get("exp_id").and_then(|v| v.parse::<u32>().ok());
    let verdict = exp_id.and_then(|id| {
        crate::store::load_history(project)
            .ok()?
            .records
            .into_iter()
            .find(|r| r.id == id)
            .map(|r| r.verdict.to_string())
    });
    if let (Some(id), Some(v)) = (exp_id, &verdict) {
        text.push_str(&format!("; experiment {id}: {v}"));
    }
    let mut details = Map::new();
    details.insert("workflow".into(), workflow.into());
    details.insert(
        "outcome".into(),
        serde_json::to_value(outcome).unwrap_or_default(),
    );
    if let Some(v) = verdict {
        details.insert("verdict".into(), v.into());
    }
    Some(Notification {
        event,
        project: project.to_path_buf(),
        run_id: Some(end.run_id.clone()),
        exp_id,
        text,
        details,
    })
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
