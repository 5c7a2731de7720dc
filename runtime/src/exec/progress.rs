//! A run's progress as its events tell it: each node's state, visits, elapsed time
//! and the gates' verdicts and reloops, folded event by event. Readers that follow a
//! run from outside (the dashboard) use this one fold, so "what state is node X in"
//! has a single answer.

use std::collections::BTreeMap;

use serde::Serialize;

use factory_compiler::ir::{END, START};

use crate::events::{Event, EventData};

/// Where a node stands in the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    /// Not started yet in this run.
    #[default]
    Pending,
    Running,
    Done,
    Failed,
}

impl NodeState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }
}

/// One node's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NodeProgress {
    pub node: String,
    pub state: NodeState,
    /// Times it was started.
    pub visits: u32,
    /// A gate's verdicts that sent the run back (`reloop`).
    pub reloops: u32,
    /// A gate's latest verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// When its latest visit started (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// How long its latest finished visit took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Why its latest visit failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The whole run's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunProgress {
    pub run_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// `running`, or the outcome's name (`completed`, `halted`, `failed`),
    /// `interrupted`; `unknown` before the run's first event.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// The gate that most recently started or decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_gate: Option<String>,
    pub nodes: BTreeMap<String, NodeProgress>,
}

impl RunProgress {
    pub fn new(run_id: &str) -> Self {
        Self {
            run_id: run_id.to_string(),
            status: "unknown".into(),
            ..Self::default()
        }
    }

    /// Applies `event`; returns the nodes it changed (perhaps none) when it was one of
    /// this run's, `None` for events of other runs or kinds that change nothing here.
    /// The run's start marks `start` done, and a completed run `end`.
    pub fn apply(&mut self, event: &Event) -> Option<Vec<String>> {
        let ts = &event.timestamp;
        match &event.data {
            EventData::RunStarted { run_id, .. } if *run_id == self.run_id => {
                self.started_at.get_or_insert_with(|| ts.clone());
                self.status = "running".into();
                self.node_mut(START).state = NodeState::Done;
                Some(vec![START.to_string()])
            }
            EventData::RunResumed { run_id, .. } if *run_id == self.run_id => {
                self.status = "running".into();
                self.ended_at = None;
                Some(Vec::new())
            }
            EventData::RunInterrupted { run_id } if *run_id == self.run_id => {
                self.status = "interrupted".into();
                self.ended_at = Some(ts.clone());
                Some(self.stop_running())
            }
            EventData::RunFinished {
                run_id, outcome, ..
            } if *run_id == self.run_id => {
                self.status = outcome
                    .get("outcome")
                    .and_then(|o| o.as_str())
                    .unwrap_or("finished")
                    .to_string();
                self.ended_at = Some(ts.clone());
                let mut changed = self.stop_running();
                if self.status == "completed" {
                    self.node_mut(END).state = NodeState::Done;
                    changed.push(END.to_string());
                }
                Some(changed)
            }
            EventData::NodeStarted {
                run_id,
                node,
                visit,
                kind,
            } if *run_id == self.run_id => {
                if self.status == "unknown" {
                    self.status = "running".into();
                }
                if kind == "gate" {
                    self.current_gate = Some(node.clone());
                }
                let n = self.node_mut(node);
                n.state = NodeState::Running;
                n.visits = n.visits.max(*visit);
                n.started_at = Some(ts.clone());
                n.reason = None;
                Some(vec![node.clone()])
            }
            EventData::NodeFinished {
                run_id,
                node,
                result,
                duration_ms,
                ..
            } if *run_id == self.run_id => {
                let status = result.get("status").and_then(|s| s.as_str());
                let n = self.node_mut(node);
                if status == Some("failed") {
                    n.state = NodeState::Failed;
                    n.reason = result
                        .get("reason")
                        .and_then(|r| r.as_str())
                        .map(str::to_string);
                } else {
                    n.state = NodeState::Done;
                }
                n.duration_ms = *duration_ms;
                Some(vec![node.clone()])
            }
            EventData::NodeVerdict {
                run_id,
                node,
                verdict,
            } if *run_id == self.run_id => {
                self.current_gate = Some(node.clone());
                let n = self.node_mut(node);
                if verdict == "reloop" {
                    n.reloops += 1;
                }
                n.verdict = Some(verdict.clone());
                Some(vec![node.clone()])
            }
            _ => None,
        }
    }

    /// The progress of `node` (pending when nothing happened to it yet).
    pub fn node(&self, node: &str) -> NodeProgress {
        self.nodes
            .get(node)
            .cloned()
            .unwrap_or_else(|| NodeProgress {
                node: node.to_string(),
                ..NodeProgress::default()
            })
    }

    /// Whatever was still running was stopped with the run: back to pending.
    fn stop_running(&mut self) -> Vec<String> {
        let mut changed = Vec::new();
        for n in self.nodes.values_mut() {
            if n.state == NodeState::Running {
                n.state = NodeState::Pending;
                changed.push(n.node.clone());
            }
        }
        changed
    }

    fn node_mut(&mut self, node: &str) -> &mut NodeProgress {
        self.nodes
            .entry(node.to_string())
            .or_insert_with(|| NodeProgress {
                node: node.to_string(),
                ..NodeProgress::default()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(data: EventData) -> Event {
        Event::new(data)
    }

    #[test]
    fn a_gate_runs_reloops_and_the_run_completes() {
        let mut p = RunProgress::new("r");
        let start = |node: &str, visit, kind: &str| {
            ev(EventData::NodeStarted {
                run_id: "r".into(),
                node: node.into(),
                visit,
                kind: kind.into(),
            })
        };
        let finish = |node: &str, result| {
            ev(EventData::NodeFinished {
                run_id: "r".into(),
                seq: 1,
                node: node.into(),
                visit: 1,
                result,
                vars: None,
                duration_ms: Some(5),
                evidence: None,
            })
        };
        p.apply(&ev(EventData::RunStarted {
            run_id: "r".into(),
            seq: 1,
            workflow: None,
        }));
        assert_eq!(p.status, "running");
        assert_eq!(
            p.apply(&start("review", 1, "gate")),
            Some(vec!["review".to_string()])
        );
        assert_eq!(p.node("review").state, NodeState::Running);
        assert_eq!(p.current_gate.as_deref(), Some("review"));
        p.apply(&ev(EventData::NodeVerdict {
            run_id: "r".into(),
            node: "review".into(),
            verdict: "reloop".into(),
        }));
        p.apply(&finish(
            "review",
            json!({"status": "verdict", "verdict": "reloop"}),
        ));
        p.apply(&start("review", 2, "gate"));
        assert_eq!(p.node("review").visits, 2);
        assert_eq!(p.node("review").reloops, 1);
        p.apply(&start("build", 1, "fn"));
        p.apply(&finish(
            "build",
            json!({"status": "failed", "reason": "exit 1"}),
        ));
        assert_eq!(p.node("build").state, NodeState::Failed);
        assert_eq!(p.node("build").reason.as_deref(), Some("exit 1"));
        assert_eq!(p.node("other").state, NodeState::Pending);
        let other_run = ev(EventData::NodeStarted {
            run_id: "x".into(),
            node: "other".into(),
            visit: 1,
            kind: "fn".into(),
        });
        assert_eq!(p.apply(&other_run), None);
        p.apply(&ev(EventData::RunFinished {
            run_id: "r".into(),
            outcome: json!({"outcome": "failed", "node": "build", "reason": "x"}),
            usage: None,
        }));
        assert_eq!(p.status, "failed");
        assert_eq!(
            p.node("review").state,
            NodeState::Pending,
            "stopped with the run"
        );
    }
}
