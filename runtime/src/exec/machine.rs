//! The executor's pure state machine (durable-execution style): it is fed what happened
//! (`Input`) and answers what to do next (`Command`). It does no I/O and never waits, so
//! a checkpoint is just its [`MachineState`], and resume is "load it and feed it the
//! inputs recorded since".
//!
//! Rules (spec §7.3): a fork starts every branch; a join waits for each of its
//! predecessors; a gate's verdict picks the edge with that label; a `reloop` edge is
//! taken at most its `max` times per run, after which the gate counts as `halt`; a
//! failed node follows its `fail` edge, else the run fails; an `async` node is started
//! and passed at once, and the run ends only when it has finished too.

use std::collections::{BTreeMap, BTreeSet};

use factory_compiler::ir::{Label, NodeKind};
use serde::{Deserialize, Serialize};

use super::failure::NodeFailure;
use super::graph::Graph;

/// How a node ended, as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum NodeResult {
    /// Finished; follow the unconditional edges.
    Done,
    /// A gate decided.
    Verdict { verdict: Label },
    /// Failed (a crash, a timeout, a failed post-check, an unreadable verdict), made
    /// by [`NodeResult::failed`]. `reason` is the failure's text, for every reader of
    /// the journal (the terminal, the dashboard, an older factory); `failure` the
    /// failure as data (absent in journals older than it). `retryable`: the node's agent
    /// could not run, crashed or ran out of time, so nothing was judged and running it
    /// again may succeed (`factory resume`).
    Failed {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<NodeFailure>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        retryable: bool,
    },
}

impl NodeResult {
    pub fn failed(failure: NodeFailure) -> Self {
        NodeResult::Failed {
            reason: failure.to_string(),
            retryable: failure.retryable(),
            failure: Some(failure),
        }
    }
}

/// What the machine is told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Input {
    /// Begin the run at the start node.
    Start,
    /// A node the machine asked for has finished. `vars` are values the node made
    /// known to later nodes (an experiment id, its branch); they are kept in the state.
    Finished {
        node: String,
        result: NodeResult,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        vars: BTreeMap<String, String>,
    },
    /// Run again the node whose retryable failure ended the run (see
    /// [`MachineState::retry`]), and what the failure stopped with it.
    Retry,
}

/// What the machine asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run `node` (its `visit`-th time in this run).
    Run { node: String, visit: u32 },
    /// The run is over; stop anything still running.
    Finish(RunOutcome),
}

/// The variable holding why the walk took its last halt or fail edge (`{{reason}}`).
pub const REASON_VAR: &str = "reason";

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RunOutcome {
    /// The walk reached `end`.
    Completed,
    /// A gate said halt (or exhausted a reloop bound) with no halt edge to follow.
    Halted { node: String, reason: String },
    /// A node failed with no fail edge, or the graph could not go on.
    Failed { node: String, reason: String },
}

impl RunOutcome {
    pub fn name(&self) -> &'static str {
        match self {
            RunOutcome::Completed => "completed",
            RunOutcome::Halted { .. } => "halted",
            RunOutcome::Failed { .. } => "failed",
        }
    }
}

/// Everything the machine knows; serialized as the checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineState {
    /// How many inputs were applied (the journal position of this state).
    pub seq: u64,
    /// Times each node was started.
    pub visits: BTreeMap<String, u32>,
    /// Times each reloop edge (`from->to`) was taken.
    pub reloops: BTreeMap<String, u32>,
    /// Nodes started and not yet finished; the walk waits for them.
    pub running: BTreeSet<String>,
    /// `async` nodes started and not yet finished; only the end of the run waits.
    pub async_running: BTreeSet<String>,
    /// For each join, the predecessors that have arrived.
    pub arrivals: BTreeMap<String, BTreeSet<String>>,
    /// The walk reached `end`.
    pub reached_end: bool,
    /// Set once the run's fate is known; nothing new starts after it.
    pub outcome: Option<RunOutcome>,
    /// Values nodes made known (`exp_id`, `branch`, `worktree`, ...).
    pub vars: BTreeMap<String, String>,
    /// Gates that said halt, in order (a halt edge to `end` completes the run, but the
    /// halt is still worth reporting).
    pub halts: Vec<String>,
    /// Why each of `halts` halted, in the same order: "`review` said halt", "reloop
    /// limit 2 reached at `decide`" (empty in checkpoints older than the field).
    #[serde(default)]
    pub halt_reasons: Vec<String>,
    /// The most recent gate verdict.
    pub last_verdict: Option<Label>,
    /// Failures of `async` nodes (they do not change the outcome).
    pub async_failures: Vec<String>,
    /// The run finished (the Finish command was issued).
    pub finished: bool,
    /// The node whose retryable failure (its agent could not run, crashed or timed
    /// out) ended the run: [`Input::Retry`] runs it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
}

pub struct Machine<'g> {
    graph: &'g Graph,
    pub state: MachineState,
}

impl<'g> Machine<'g> {
    pub fn new(graph: &'g Graph) -> Self {
        Self::with_state(graph, MachineState::default())
    }

    pub fn with_state(graph: &'g Graph, state: MachineState) -> Self {
        Self { graph, state }
    }

    /// Commands that restart what was running when the state was saved: the nodes a
    /// killed run had started and not finished run again, with the same visit number.
    pub fn resume(&self) -> Vec<Command> {
        let mut commands = Vec::new();
        if self.state.finished {
            return commands;
        }
        if self.state.outcome.is_none() {
            commands.extend(
                self.state
                    .running
                    .iter()
                    .chain(&self.state.async_running)
                    .map(|node| Command::Run {
                        node: node.clone(),
                        visit: self.state.visits.get(node).copied().unwrap_or(1),
                    }),
            );
        }
        self.maybe_finish(&mut commands);
        commands
    }

    /// Whether [`Input::Retry`] would run something again: the run ended on a
    /// retryable failure.
    pub fn can_retry(&self) -> bool {
        self.retry_node().is_some()
    }

    fn retry_node(&self) -> Option<String> {
        let node = self.state.retry.as_ref()?;
        match &self.state.outcome {
            Some(RunOutcome::Failed { node: failed, .. }) if failed == node => Some(node.clone()),
            _ => None,
        }
    }

    /// Reopens a run its retryable failure ended: the failed node runs again (as its
    /// next visit) and so does what was cancelled with it, each where it was.
    fn retry(&mut self, commands: &mut Vec<Command>) {
        let Some(node) = self.retry_node() else {
            return;
        };
        self.state.retry = None;
        self.state.outcome = None;
        self.state.finished = false;
        *self.state.visits.entry(node.clone()).or_default() += 1;
        self.state.running.insert(node);
        commands.extend(self.resume());
    }

    /// Applies one input and returns what to do next.
    pub fn on_input(&mut self, input: Input) -> Vec<Command> {
        self.state.seq += 1;
        let mut commands = Vec::new();
        if input == Input::Retry {
            self.retry(&mut commands);
            return commands;
        }
        if self.state.finished {
            return commands;
        }
        match input {
            Input::Retry => {}
            Input::Start => match self.graph.start() {
                Some(start) => self.activate(start, None, &mut commands),
                None => self.fail("start", "the workflow has no start node".into()),
            },
            Input::Finished { node, result, vars } => {
                self.state.vars.extend(vars);
                self.finished(&node, result, &mut commands);
            }
        }
        self.maybe_finish(&mut commands);
        commands
    }

    fn finished(&mut self, node: &str, result: NodeResult, commands: &mut Vec<Command>) {
        let Some(i) = self.graph.id(node) else {
            // A journal entry for a node this graph does not have: ignore it rather
            // than crash; the checkpoint's IR hash check makes this unreachable.
            return;
        };
        if self.state.async_running.remove(node) {
            if let NodeResult::Failed { reason, .. } = result {
                self.state.async_failures.push(format!("{node}: {reason}"));
            }
            return;
        }
        if !self.state.running.remove(node) {
            return; // a duplicate report; the first one counted
        }
        if self.state.outcome.is_some() {
            return; // winding down: nothing new starts
        }
        match result {
            NodeResult::Done => {
                let targets = self.graph.continuations(i);
                if targets.is_empty() {
                    self.fail(node, "it has no outgoing edge to continue on".into());
                }
                for t in targets {
                    self.activate(t, Some(i), commands);
                }
            }
            NodeResult::Failed {
                reason, retryable, ..
            } => match self.graph.targets(i, Some(Label::Fail)).next() {
                Some((_, t)) => {
                    let why = format!("`{node}` failed: {reason}");
                    self.state.vars.insert(REASON_VAR.into(), why);
                    self.activate(t, Some(i), commands)
                }
                None => {
                    if retryable && self.state.outcome.is_none() {
                        self.state.retry = Some(node.to_string());
                    }
                    self.fail(node, reason)
                }
            },
            NodeResult::Verdict { verdict } => self.verdict(i, verdict, commands),
        }
    }

    fn verdict(&mut self, gate: usize, verdict: Label, commands: &mut Vec<Command>) {
        let id = self.graph.node(gate).id.clone();
        self.state.last_verdict = Some(verdict);
        let mut label = verdict;
        let mut why = format!("`{id}` said {verdict}");
        if verdict == Label::Reloop {
            match self.graph.targets(gate, Some(Label::Reloop)).next() {
                Some((e, t)) => {
                    let edge = &self.graph.ir.edges[e];
                    let key = format!("{}->{}", edge.from, edge.to);
                    let taken = self.state.reloops.get(&key).copied().unwrap_or(0);
                    let max = self.graph.reloop_max(e);
                    if taken < max {
                        self.state.reloops.insert(key, taken + 1);
                        self.activate(t, Some(gate), commands);
                        return;
                    }
                    // A reloop past its bound is a halt, never a silent loop.
                    label = Label::Halt;
                    why = format!("reloop limit {max} reached at `{id}`");
                }
                None => {
                    self.fail(&id, "it said reloop but has no reloop edge".into());
                    return;
                }
            }
        }
        if label == Label::Halt {
            self.state.halts.push(id.clone());
            self.state.halt_reasons.push(why.clone());
            // What the next node (a revert, say) can record as the reason.
            self.state.vars.insert(REASON_VAR.into(), why.clone());
        }
        match self.graph.targets(gate, Some(label)).next() {
            Some((_, t)) => self.activate(t, Some(gate), commands),
            None if label == Label::Halt => {
                self.state.outcome = Some(RunOutcome::Halted {
                    node: id,
                    reason: why,
                });
            }
            None => self.fail(&id, format!("it said {label} but has no {label} edge")),
        }
    }

    /// Starts `node`, reached from `from`. Structural nodes (fork, join, end) complete
    /// here, iteratively: a long chain of them never recurses.
    fn activate(&mut self, node: usize, from: Option<usize>, commands: &mut Vec<Command>) {
        let mut work = vec![(node, from)];
        while let Some((n, from)) = work.pop() {
            if self.state.outcome.is_some() {
                return;
            }
            let spec = self.graph.node(n);
            let id = spec.id.clone();
            match spec.kind {
                NodeKind::End => self.state.reached_end = true,
                NodeKind::Join => {
                    let arrived = self.state.arrivals.entry(id.clone()).or_default();
                    if let Some(f) = from {
                        arrived.insert(self.graph.node(f).id.clone());
                    }
                    let all = self
                        .graph
                        .preds(n)
                        .iter()
                        .all(|p| arrived.contains(&self.graph.node(*p).id));
                    if all {
                        self.state.arrivals.remove(&id);
                        *self.state.visits.entry(id).or_default() += 1;
                        self.push_targets(n, &mut work);
                    }
                }
                NodeKind::Start | NodeKind::Fork => {
                    *self.state.visits.entry(id).or_default() += 1;
                    self.push_targets(n, &mut work);
                }
                _ => {
                    let visit = {
                        let v = self.state.visits.entry(id.clone()).or_default();
                        *v += 1;
                        *v
                    };
                    commands.push(Command::Run {
                        node: id.clone(),
                        visit,
                    });
                    if spec.attrs.is_async {
                        self.state.async_running.insert(id);
                        self.push_targets(n, &mut work);
                    } else {
                        self.state.running.insert(id);
                    }
                }
            }
        }
    }

    fn push_targets(&mut self, n: usize, work: &mut Vec<(usize, Option<usize>)>) {
        let targets: Vec<usize> = self.graph.targets(n, None).map(|(_, t)| t).collect();
        if targets.is_empty() {
            let id = self.graph.node(n).id.clone();
            self.fail(&id, "it has no outgoing edge to continue on".into());
        }
        // Reversed so the first branch is started first.
        work.extend(targets.into_iter().rev().map(|t| (t, Some(n))));
    }

    fn fail(&mut self, node: &str, reason: String) {
        if self.state.outcome.is_none() {
            self.state.outcome = Some(RunOutcome::Failed {
                node: node.to_string(),
                reason,
            });
        }
    }

    /// Issues Finish once nothing is left to wait for.
    fn maybe_finish(&self, commands: &mut Vec<Command>) {
        if self.state.finished || commands.iter().any(|c| matches!(c, Command::Run { .. })) {
            return;
        }
        let idle = self.state.running.is_empty();
        let outcome = match &self.state.outcome {
            // A failure or a halt stops the run at once: what still runs is cancelled.
            Some(o) => o.clone(),
            None if idle && self.state.async_running.is_empty() => {
                if self.state.reached_end {
                    RunOutcome::Completed
                } else if self.state.seq > 0 {
                    RunOutcome::Failed {
                        node: self.waiting_join().unwrap_or_else(|| "start".into()),
                        reason: "the walk stalled: nothing runs and `end` was not reached (a join waits for a branch that ended elsewhere)".into(),
                    }
                } else {
                    return;
                }
            }
            None => return,
        };
        commands.push(Command::Finish(outcome));
    }

    fn waiting_join(&self) -> Option<String> {
        self.state.arrivals.keys().next().cloned()
    }

    pub fn graph(&self) -> &'g Graph {
        self.graph
    }

    /// Marks the Finish command as carried out.
    pub fn mark_finished(&mut self) {
        self.state.finished = true;
    }
}
