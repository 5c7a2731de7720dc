//! The tokio driver: performs the machine's commands (run a node), feeds their results
//! back, journals every input to `events.jsonl`, checkpoints to `state/run.json`, and
//! stops cleanly on Ctrl-C leaving a resumable checkpoint.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::task::JoinSet;

use super::checkpoint::{self, Checkpoint, RunSummary};
use super::failure::NodeFailure;
use super::graph::Graph;
use super::machine::{Command, Input, Machine, NodeResult, RunOutcome};
use super::node::{self, NodeEnv, NodeReport};
use super::view::View;
use crate::events::{self, Event, EventData};
use crate::project::layout::FactoryPaths;

/// How the run ended, for the caller to print.
#[derive(Debug, Clone)]
pub struct RunEnd {
    pub run_id: String,
    pub outcome: Option<RunOutcome>,
    /// Ctrl-C: the checkpoint is resumable with `factory resume`.
    pub interrupted: bool,
    pub vars: BTreeMap<String, String>,
    /// Why each gate that halted did ("`review` said halt", "reloop limit 2 reached at
    /// `decide`"), in order.
    pub halts: Vec<String>,
    pub async_failures: Vec<String>,
    /// The node whose agent's failure ended the run: `factory resume` runs it again,
    /// and the run's experiment stays open until then.
    pub retry: Option<String>,
    pub nodes_run: u64,
    /// The agents' tokens and cost, summed over the run.
    pub usage: Option<crate::events::Usage>,
}

/// The snapshot is rewritten after a node once this much time has passed since the
/// last one. Between snapshots the journal (`node.finished` in `events.jsonl`, written
/// after every node) holds the state, so a kill loses nothing; the interval only bounds
/// how much resume replays, and keeps graphs of many quick nodes from spending their
/// time rewriting the snapshot. Every node of a real mode (seconds to minutes) gets
/// its own snapshot.
const SNAPSHOT_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

pub async fn drive(
    graph: Arc<Graph>,
    mut cp: Checkpoint,
    env: Arc<NodeEnv>,
    initial: Vec<Command>,
) -> Result<RunEnd, DriveError> {
    let paths = FactoryPaths::new(&env.project);
    let view = &env.view;
    // A parallel branch is part of the run that started it: that run lists it, and
    // that run's Ctrl-C stops it (dropping this future).
    let top_level = env.branch.is_none();
    let mut summary = RunSummary {
        run_id: cp.run_id.clone(),
        workflow: cp.workflow.clone(),
        status: "running".into(),
        started_at: cp.started_at.clone(),
        pid: Some(std::process::id()),
        ..Default::default()
    };
    if top_level {
        summary
            .save(&paths)
            .map_err(|e| DriveError::io(&paths, e))?;
    }
    let mut machine = Machine::with_state(&graph, std::mem::take(&mut cp.state));
    let mut pending: std::collections::VecDeque<Command> = initial.into();
    let mut tasks: JoinSet<(String, u32, NodeReport)> = JoinSet::new();
    let mut started: BTreeMap<String, Instant> = BTreeMap::new();
    let mut last_saved = Instant::now();
    let mut spawn_failures = 0usize;
    let ctrl_c = async {
        if top_level {
            let _ = tokio::signal::ctrl_c().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::pin!(ctrl_c);
    loop {
        while let Some(cmd) = pending.pop_front() {
            match cmd {
                Command::Run { node, visit } => {
                    let ev = Event::new(EventData::NodeStarted {
                        run_id: cp.run_id.clone(),
                        node: node.clone(),
                        visit,
                        kind: graph
                            .id(&node)
                            .map(|i| graph.node(i).kind.as_str())
                            .unwrap_or("")
                            .to_string(),
                    });
                    append(&paths, &ev, view)?;
                    started.insert(node.clone(), Instant::now());
                    let graph = graph.clone();
                    let env = env.clone();
                    let vars = machine.state.vars.clone();
                    let last_verdict = machine.state.last_verdict;
                    tasks.spawn(async move {
                        let report = match graph.id(&node) {
                            Some(i) => node::run(&graph, i, visit, &env, &vars, last_verdict).await,
                            None => {
                                NodeReport::failed(NodeFailure::UnknownNode { node: node.clone() })
                            }
                        };
                        (node, visit, report)
                    });
                }
                Command::Finish(outcome) => {
                    tasks.abort_all();
                    while tasks.join_next().await.is_some() {}
                    machine.mark_finished();
                    cp.state = machine.state.clone();
                    cp.save(&paths).map_err(|e| DriveError::io(&paths, e))?;
                    let usage = checkpoint::run_usage(&paths, &cp.run_id);
                    let ev = Event::new(EventData::RunFinished {
                        run_id: cp.run_id.clone(),
                        outcome: serde_json::to_value(&outcome).unwrap_or_default(),
                        usage,
                    });
                    append(&paths, &ev, view)?;
                    summary.status = outcome.name().into();
                    summary.pid = None;
                    summary.outcome = Some(outcome.clone());
                    summary.ended_at = Some(crate::sys::clock::now_iso8601());
                    summary.exp_id = machine.state.vars.get("exp_id").cloned();
                    let record = summary.exp_id.as_deref().and_then(|id| {
                        let id = id.parse::<u32>().ok()?;
                        crate::store::ExperimentStore::open(&env.project)
                            .record(id)
                            .ok()
                            .flatten()
                    });
                    summary.verdict = record.as_ref().map(|r| r.verdict.to_string());
                    summary.reason = record
                        .filter(|r| r.verdict != crate::store::Verdict::Keep)
                        .and_then(|r| r.notes.lines().next().map(str::to_string))
                        .filter(|n| !n.trim().is_empty());
                    summary.nodes_run = nodes_run(&graph, &machine.state);
                    // Only the project's own run is resumed (a nested one settles).
                    summary.retry = machine
                        .state
                        .retry
                        .clone()
                        .filter(|_| cp.parent_run.is_none());
                    summary.usage = usage;
                    if top_level {
                        summary
                            .save(&paths)
                            .map_err(|e| DriveError::io(&paths, e))?;
                    }
                    return Ok(RunEnd {
                        usage,
                        ..end(&cp.run_id, &machine, Some(outcome), false)
                    });
                }
            }
        }
        tokio::select! {
            joined = tasks.join_next() => {
                let Some(joined) = joined else {
                    // Nothing runs and the machine asked for nothing: it has already
                    // decided (a fresh state not yet started cannot reach here).
                    let cmds = machine.resume();
                    if cmds.is_empty() {
                        return Err(DriveError::Stalled);
                    }
                    pending.extend(cmds);
                    continue;
                };
                let (node, visit, report) = match joined {
                    Ok(done) => done,
                    Err(e) => return Err(DriveError::Task(e.to_string())),
                };
                let elapsed = started.remove(&node).map(|t| t.elapsed());
                if report.spawn_failure {
                    spawn_failures += 1;
                } else if report.agent.is_some() {
                    spawn_failures = 0;
                }
                if let NodeResult::Verdict { verdict } = &report.result {
                    let ev = Event::new(EventData::NodeVerdict {
                        run_id: cp.run_id.clone(),
                        node: node.clone(),
                        verdict: verdict.as_str().to_string(),
                    });
                    append(&paths, &ev, view)?;
                }
                let kept = keep_evidence(&env.project, &machine.state.vars, &node, visit, &report);
                let input = Input::Finished { node: node.clone(), result: report.result, vars: report.vars };
                let mut ev = checkpoint::journal_event(&cp.run_id, machine.state.seq + 1, &input, visit);
                if let EventData::NodeFinished { duration_ms, evidence, .. } = &mut ev.data {
                    *duration_ms = elapsed.map(|d| d.as_millis() as u64);
                    *evidence = (!kept.is_empty()).then(|| kept.iter().map(Into::into).collect());
                }
                append(&paths, &ev, view)?;
                let cmds = machine.on_input(input);
                if spawn_failures >= crate::agents::SpawnFailures::THRESHOLD {
                    // Sacred Rule 8: two agents in a row failed to run; stop
                    // rather than let anything do their work for them.
                    pending.push_back(Command::Finish(RunOutcome::Failed {
                        node,
                        reason: "two consecutive agent invocations failed; check the runner (`factory agent ROLE` reproduces it)".into(),
                    }));
                } else {
                    pending.extend(cmds);
                }
                if last_saved.elapsed() >= SNAPSHOT_EVERY {
                    cp.state = machine.state.clone();
                    cp.save(&paths).map_err(|e| DriveError::io(&paths, e))?;
                    last_saved = Instant::now();
                }
            }
            _ = &mut ctrl_c => {
                tasks.abort_all();
                while tasks.join_next().await.is_some() {}
                cp.state = machine.state.clone();
                cp.save(&paths).map_err(|e| DriveError::io(&paths, e))?;
                append(&paths, &Event::new(EventData::RunInterrupted { run_id: cp.run_id.clone() }), view)?;
                summary.status = "interrupted".into();
                summary.pid = None;
                summary.usage = checkpoint::run_usage(&paths, &cp.run_id);
                let _ = summary.save(&paths);
                return Ok(RunEnd { usage: summary.usage, ..end(&cp.run_id, &machine, None, true) });
            }
        }
    }
}

fn end(run_id: &str, m: &Machine<'_>, outcome: Option<RunOutcome>, interrupted: bool) -> RunEnd {
    end_of(m.graph(), run_id, &m.state, outcome, interrupted)
}

/// A run's end as `state` records it.
pub(crate) fn end_of(
    graph: &Graph,
    run_id: &str,
    state: &super::machine::MachineState,
    outcome: Option<RunOutcome>,
    interrupted: bool,
) -> RunEnd {
    RunEnd {
        run_id: run_id.to_string(),
        outcome,
        interrupted,
        vars: state.vars.clone(),
        halts: state
            .halts
            .iter()
            .enumerate()
            .map(|(i, gate)| {
                // A checkpoint older than the reasons has only the gate's id.
                state
                    .halt_reasons
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("`{gate}` said halt"))
            })
            .collect(),
        async_failures: state.async_failures.clone(),
        retry: state.retry.clone(),
        nodes_run: nodes_run(graph, state),
        usage: None,
    }
}

/// Copies a finished node's declared outputs into its experiment's evidence (the
/// experiment it began, or the one the run is in); nothing before an experiment is
/// begun. A copy that cannot be made is a warning: the run and its verdict go on.
fn keep_evidence(
    project: &std::path::Path,
    vars: &BTreeMap<String, String>,
    node: &str,
    visit: u32,
    report: &NodeReport,
) -> Vec<crate::experiment::evidence::EvidenceFile> {
    let exp = report.vars.get("exp_id").or_else(|| vars.get("exp_id"));
    let Some(id) = exp.and_then(|v| v.parse::<u32>().ok()) else {
        return Vec::new();
    };
    if report.outputs.is_empty() {
        return Vec::new();
    }
    crate::experiment::evidence::record(project, id, node, visit, &report.outputs).unwrap_or_else(
        |e| {
            tracing::warn!(
                "could not keep the outputs of `{node}` in experiment {id}'s evidence: {e}"
            );
            Vec::new()
        },
    )
}

/// How many times a node ran (structural nodes — start, fork, join — do not count).
fn nodes_run(graph: &Graph, state: &super::machine::MachineState) -> u64 {
    state
        .visits
        .iter()
        .filter(|(id, _)| graph.id(id).is_some_and(|i| !graph.is_structural(i)))
        .map(|(_, v)| *v as u64)
        .sum()
}

fn append(paths: &FactoryPaths, ev: &Event, view: &View) -> Result<(), DriveError> {
    events::append_unsynced(paths, ev).map_err(DriveError::Events)?;
    view.event(ev);
    Ok(())
}

/// Why the driver stopped without an outcome. The store stays consistent: every
/// journaled input is complete, and the checkpoint is the last one written.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DriveError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(events::EventsError),
    #[error("cannot write the checkpoint under {dir}: {source}")]
    #[diagnostic(
        code(factory::run::checkpoint),
        help("free disk space or fix the permissions of .factory/, then `factory resume`")
    )]
    Io {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("a node task crashed: {0}")]
    #[diagnostic(
        code(factory::run::task),
        help("this is a bug in factory; `factory resume` continues from the last checkpoint")
    )]
    Task(String),
    #[error("the run stalled with nothing left to run")]
    #[diagnostic(
        code(factory::run::stalled),
        help("this is a bug in factory; please report the workflow")
    )]
    Stalled,
}

impl DriveError {
    fn io(paths: &FactoryPaths, source: std::io::Error) -> Self {
        DriveError::Io {
            dir: paths.dir().to_path_buf(),
            source,
        }
    }
}
