//! The CycleAnalyzer: what happened in one run, rebuilt only from the files it left in
//! `.factory/` — the event log, the results and the reviews — never from the memory of
//! the process that ran it, so a cycle run by another process (a bench evaluation, an
//! earlier session) reads the same.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::events::{self, EventData, Usage};
use crate::project::layout::FactoryPaths;

/// One agent invocation, in the order they started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    pub role: String,
    pub node: Option<String>,
    pub visit: Option<u32>,
    /// `completed`, `failed`, `timeout`, or `open` when no terminal event followed.
    pub status: String,
}

/// An experiment's verdict and scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentOutcome {
    pub id: u32,
    pub verdict: String,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
}

/// The record of one cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleRecord {
    /// How the run ended (`completed`, `halted`, `failed`), when it ended.
    pub outcome: Option<String>,
    pub agents: Vec<AgentStep>,
    /// Each gate verdict, in order: (node, verdict).
    pub verdicts: Vec<(String, String)>,
    pub experiments: Vec<ExperimentOutcome>,
    /// Review files written, relative to `.factory/reviews/`.
    pub reviews: Vec<String>,
    /// Tokens and cost the agents reported, summed (what the cycle cost).
    #[serde(default)]
    pub usage: Usage,
}

impl CycleRecord {
    /// The score the cycle earned: the improvement of its kept experiments (a revert,
    /// an error or no experiment earns nothing).
    pub fn gain(&self) -> f64 {
        self.experiments
            .iter()
            .filter(|e| e.verdict == "keep")
            .map(|e| e.score_after.unwrap_or(0.0) - e.score_before.unwrap_or(0.0))
            .sum::<f64>()
            + 0.0 // an empty sum is -0.0
    }

    /// The verdict of the cycle's last experiment, if it had one.
    pub fn verdict(&self) -> Option<&str> {
        self.experiments.last().map(|e| e.verdict.as_str())
    }
}

/// Reads the cycle the project's `.factory/` holds.
pub fn analyze(project: &Path) -> Result<CycleRecord, String> {
    let paths = FactoryPaths::new(project);
    let log = events::read(&paths).map_err(|e| e.to_string())?;
    let mut record = CycleRecord::default();
    let mut open: Vec<(String, usize)> = Vec::new();
    for e in &log.events {
        match &e.data {
            EventData::AgentStarted(a) => {
                open.push((a.invocation_id.clone(), record.agents.len()));
                record.agents.push(AgentStep {
                    role: a.role.clone(),
                    node: a.node.clone(),
                    visit: a.visit,
                    status: "open".into(),
                });
            }
            EventData::NodeVerdict { node, verdict, .. } => {
                record.verdicts.push((node.clone(), verdict.clone()));
            }
            EventData::RunFinished { outcome, .. } => {
                record.outcome = outcome
                    .get("outcome")
                    .and_then(|o| o.as_str())
                    .map(str::to_string);
            }
            data => {
                let status = match data {
                    EventData::AgentCompleted(_) => "completed",
                    EventData::AgentFailed(_) => "failed",
                    EventData::AgentTimeout(_) => "timeout",
                    _ => continue,
                };
                if let Some(usage) = data.agent_ended().and_then(|a| a.usage.as_ref()) {
                    record.usage.add(usage);
                }
                if let Some(ended) = data.agent_ended()
                    && let Some(pos) = open.iter().position(|(id, _)| *id == ended.invocation_id)
                {
                    let (_, i) = open.remove(pos);
                    record.agents[i].status = status.into();
                }
            }
        }
    }
    if let Ok(history) = crate::store::load_history(project) {
        record.experiments = history
            .records
            .iter()
            .map(|r| ExperimentOutcome {
                id: r.id,
                verdict: r.verdict.to_string(),
                score_before: r.score_before,
                score_after: r.score_after,
            })
            .collect();
    }
    if let Ok(entries) = std::fs::read_dir(paths.reviews_dir()) {
        record.reviews = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        record.reviews.sort();
    }
    Ok(record)
}
