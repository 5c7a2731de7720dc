//! A run's progress as its events tell it: each node's state, visits, elapsed time
//! and the gates' verdicts and reloops, folded event by event. Readers that follow a
//! run from outside (the dashboard) use this one fold, so "what state is node X in"
//! has a single answer.
//!
//! A parallel node's body runs in branch runs (`RUN.NODE-N`), whose events count for
//! the body's nodes: one running makes the node running. Structural nodes (start,
//! fork, join) get no events of their own; given the graph ([`RunProgress::with_ir`]),
//! one is done once a node it leads to has started.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use factory_compiler::ir::{END, Ir, NodeKind, START};

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

    /// Which of two branches' states a node shows: running over failed over done.
    fn rank(self) -> u8 {
        match self {
            Self::Pending => 0,
            Self::Done => 1,
            Self::Failed => 2,
            Self::Running => 3,
        }
    }
}

/// One node's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NodeProgress {
    pub node: String,
    pub state: NodeState,
    /// Times it was started (over every branch, for a parallel body's node).
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
    /// Its state and visits in each run it ran in (the run, or a branch of it).
    #[serde(skip)]
    per_run: BTreeMap<String, (NodeState, u32)>,
}

impl NodeProgress {
    fn set(&mut self, run: &str, state: NodeState, visit: Option<u32>) {
        let entry = self.per_run.entry(run.to_string()).or_default();
        entry.0 = state;
        if let Some(v) = visit {
            entry.1 = entry.1.max(v);
        }
        self.state = self
            .per_run
            .values()
            .map(|(s, _)| *s)
            .max_by_key(|s| s.rank())
            .unwrap_or_default();
        self.visits = self.per_run.values().map(|(_, v)| v).sum();
    }
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
    /// For each node, the structural nodes that lead into it (through structural
    /// nodes only): done once it starts.
    #[serde(skip)]
    lead_ins: BTreeMap<String, Vec<String>>,
}

impl RunProgress {
    pub fn new(run_id: &str) -> Self {
        Self {
            run_id: run_id.to_string(),
            status: "unknown".into(),
            ..Self::default()
        }
    }

    /// The progress of a run of `ir`, whose structural nodes it can tell done.
    pub fn with_ir(run_id: &str, ir: &Ir) -> Self {
        let structural: BTreeSet<&str> = ir
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Start | NodeKind::Fork | NodeKind::Join))
            .map(|n| n.id.as_str())
            .collect();
        let mut preds: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for e in &ir.edges {
            if structural.contains(e.from.as_str()) {
                preds
                    .entry(e.to.as_str())
                    .or_default()
                    .push(e.from.as_str());
            }
        }
        let mut lead_ins = BTreeMap::new();
        for node in &ir.nodes {
            let mut found: Vec<String> = Vec::new();
            let mut work: Vec<&str> = preds.get(node.id.as_str()).cloned().unwrap_or_default();
            while let Some(p) = work.pop() {
                if found.iter().any(|f| f == p) {
                    continue;
                }
                found.push(p.to_string());
                work.extend(preds.get(p).into_iter().flatten());
            }
            if !found.is_empty() {
                lead_ins.insert(node.id.clone(), found);
            }
        }
        Self {
            lead_ins,
            ..Self::new(run_id)
        }
    }

    /// Whether `run_id` is this run or one of its parallel branches (`RUN.NODE-N`).
    fn owns(&self, run_id: &str) -> bool {
        run_id == self.run_id
            || run_id
                .strip_prefix(self.run_id.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
    }

    /// Applies `event`; returns the nodes it changed (perhaps none) when it was one of
    /// this run's (or its branches'), `None` for events of other runs or kinds that
    /// change nothing here. The run's start marks `start` done, and a completed run
    /// `end`.
    pub fn apply(&mut self, event: &Event) -> Option<Vec<String>> {
        let ts = &event.timestamp;
        let own = self.run_id.clone();
        match &event.data {
            EventData::RunStarted { run_id, .. } if *run_id == own => {
                self.started_at.get_or_insert_with(|| ts.clone());
                self.status = "running".into();
                self.node_mut(START).set(&own, NodeState::Done, Some(1));
                Some(vec![START.to_string()])
            }
            EventData::RunResumed { run_id, .. } if *run_id == own => {
                self.status = "running".into();
                self.ended_at = None;
                Some(Vec::new())
            }
            EventData::RunInterrupted { run_id } if *run_id == own => {
                self.status = "interrupted".into();
                self.ended_at = Some(ts.clone());
                Some(self.stop_running())
            }
            EventData::RunFinished {
                run_id, outcome, ..
            } if *run_id == own => {
                self.status = outcome
                    .get("outcome")
                    .and_then(|o| o.as_str())
                    .unwrap_or("finished")
                    .to_string();
                self.ended_at = Some(ts.clone());
                let mut changed = self.stop_running();
                if self.status == "completed" {
                    self.node_mut(END).set(&own, NodeState::Done, Some(1));
                    changed.push(END.to_string());
                }
                Some(changed)
            }
            EventData::NodeStarted {
                run_id,
                node,
                visit,
                kind,
            } if self.owns(run_id) => {
                if self.status == "unknown" {
                    self.status = "running".into();
                }
                if kind == "gate" {
                    self.current_gate = Some(node.clone());
                }
                let n = self.node_mut(node);
                n.set(run_id, NodeState::Running, Some(*visit));
                n.started_at = Some(ts.clone());
                n.reason = None;
                let mut changed = vec![node.clone()];
                for lead in self.lead_ins.get(node).cloned().unwrap_or_default() {
                    let l = self.node_mut(&lead);
                    if l.per_run
                        .get(run_id.as_str())
                        .is_none_or(|(s, _)| *s == NodeState::Pending)
                    {
                        l.set(run_id, NodeState::Done, Some(1));
                        changed.push(lead);
                    }
                }
                Some(changed)
            }
            EventData::NodeFinished {
                run_id,
                node,
                result,
                duration_ms,
                ..
            } if self.owns(run_id) => {
                let status = result.get("status").and_then(|s| s.as_str());
                let n = self.node_mut(node);
                if status == Some("failed") {
                    n.set(run_id, NodeState::Failed, None);
                    n.reason = result
                        .get("reason")
                        .and_then(|r| r.as_str())
                        .map(str::to_string);
                } else {
                    n.set(run_id, NodeState::Done, None);
                }
                n.duration_ms = *duration_ms;
                Some(vec![node.clone()])
            }
            EventData::NodeVerdict {
                run_id,
                node,
                verdict,
            } if self.owns(run_id) => {
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
            let running: Vec<String> = n
                .per_run
                .iter()
                .filter(|(_, (s, _))| *s == NodeState::Running)
                .map(|(r, _)| r.clone())
                .collect();
            for r in &running {
                n.set(r, NodeState::Pending, None);
            }
            if !running.is_empty() {
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

    #[test]
    fn branches_count_for_the_body_and_structural_nodes_are_done_once_passed() {
        let text = "fwir 1\nworkflow t\nnode start start\nnode par parallel count=2 isolation=\"worktrees\"\n\
                    node par.split fork in=par\nnode par.a fn in=par run=\"a\"\n\
                    node par.b fn in=par run=\"b\"\nnode par.merged join in=par\nnode after fn run=\"x\"\nnode end end\n\
                    edge start -> par\nedge par -> par.split\nedge par.split -> par.a\n\
                    edge par.split -> par.b\nedge par.a -> par.merged\nedge par.b -> par.merged\n\
                    edge par.merged -> after\nedge after -> end\n";
        let ir = match factory_compiler::ir::parse_text(text) {
            Ok((ir, _)) => ir,
            Err(e) => panic!("bad IR in test: {e:?}"),
        };
        let mut p = RunProgress::with_ir("r", &ir);
        let started = |run: &str, node: &str| {
            ev(EventData::NodeStarted {
                run_id: run.into(),
                node: node.into(),
                visit: 1,
                kind: "fn".into(),
            })
        };
        let finished = |run: &str, node: &str, status: &str| {
            ev(EventData::NodeFinished {
                run_id: run.into(),
                seq: 1,
                node: node.into(),
                visit: 1,
                result: json!({ "status": status }),
                vars: None,
                duration_ms: None,
                evidence: None,
            })
        };
        p.apply(&started("r", "par"));
        let changed = p.apply(&started("r.par-1", "par.a")).unwrap();
        assert_eq!(
            changed,
            ["par.a", "par.split"],
            "the fork passed in branch 1"
        );
        assert_eq!(p.node("par.split").state, NodeState::Done);
        p.apply(&started("r.par-2", "par.a"));
        p.apply(&finished("r.par-1", "par.a", "done"));
        assert_eq!(
            p.node("par.a").state,
            NodeState::Running,
            "branch 2 still runs it"
        );
        assert_eq!(p.node("par.a").visits, 2, "once in each branch");
        p.apply(&finished("r.par-2", "par.a", "done"));
        assert_eq!(p.node("par.a").state, NodeState::Done);
        assert_eq!(p.node("par.merged").state, NodeState::Pending);
        p.apply(&finished("r", "par", "done"));
        p.apply(&started("r", "after"));
        assert_eq!(
            p.node("par.merged").state,
            NodeState::Done,
            "the join passed"
        );
        assert_eq!(
            p.apply(&started("rx.par-1", "par.b")),
            None,
            "a run whose id only starts like this one's is another run"
        );
    }
}
