//! The executor: runs a workflow's IR to an outcome.
//!
//! - [`graph`]: the IR indexed for walking.
//! - [`machine`]: the pure state machine (what runs next); no I/O.
//! - [`driver`]: the tokio driver that performs the machine's commands.
//! - [`node`], [`agents`]: what running one node means, per kind.
//! - [`checkpoint`]: `state/run.json`, the journal in `events.jsonl`, run summaries.
//! - [`progress`]: a run's per-node progress folded from its events (for outside readers).
//! - [`template`], [`artifacts`], [`view`], [`plan`].

pub mod agents;
mod announce;
pub mod artifacts;
pub mod branch;
pub mod checkpoint;
pub mod driver;
pub mod failure;
pub mod graph;
pub mod machine;
pub mod node;
pub mod parallel;
pub mod plan;
pub mod progress;
pub mod template;
pub mod view;

#[cfg(test)]
mod machine_tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use factory_compiler::ir::{Ir, Literal, content_hash, to_text};
use serde_json::Value;

use checkpoint::{Checkpoint, RunSettings};
use driver::{DriveError, RunEnd};
use graph::Graph;
use machine::{Input, Machine};
use node::NodeEnv;
use view::View;

use crate::events::{self, Event, EventData};
use crate::project::layout::FactoryPaths;
use crate::runners::{self, Runner, RunnerSpec};
use crate::user_config::{UserConfigError, resolve::Layers};

/// A checkpoint older than this is not resumed without `--force` (spec §12.3).
pub const STALE_AFTER_HOURS: i64 = 24;
/// Resumes of one run allowed before it must be looked at (spec §7.5).
pub const DEFAULT_MAX_RESPAWNS: u32 = 5;
pub const MAX_RESPAWNS_ENV: &str = "FACTORY_MAX_RESPAWNS";

/// Why a run could not start or go on.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RunError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    UserConfig(#[from] UserConfigError),

    #[error("{0} is not a git repository")]
    #[diagnostic(
        code(factory::run::no_repo),
        help("run `git init` and commit your project, then run factory again")
    )]
    NotARepo(PathBuf),
    #[error("{0} has no factory.md")]
    #[diagnostic(
        code(factory::run::no_factory_md),
        help("write factory.md (goal, scope, guards, eval) and run `factory init`")
    )]
    NoFactoryMd(PathBuf),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] crate::project::config::ConfigError),
    #[error("the eval profile of {0} has not been reviewed")]
    #[diagnostic(
        code(factory::run::eval_pending),
        help(
            "read .factory/eval_profile.json, then approve it with `factory discover --approve` (or edit it first)"
        )
    )]
    EvalPending(PathBuf),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Runner(#[from] runners::RunnerError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    NoRunner(crate::agents::AgentError),
    #[error("no run to resume in {0}")]
    #[diagnostic(
        code(factory::run::nothing_to_resume),
        help("start one with `factory run MODE`")
    )]
    NothingToResume(PathBuf),
    #[error("{0}")]
    #[diagnostic(
        code(factory::run::checkpoint_unreadable),
        help("the checkpoint is kept as it is; start a new run with `factory run MODE`")
    )]
    Checkpoint(String),
    #[error("run {run_id} already finished ({status})")]
    #[diagnostic(
        code(factory::run::finished),
        help("start a new run with `factory run MODE`")
    )]
    AlreadyFinished { run_id: String, status: String },
    #[error("the checkpoint of run {run_id} is {hours} hours old")]
    #[diagnostic(
        code(factory::run::stale),
        help("the code may have moved on; pass --force to resume anyway, or start a new run")
    )]
    Stale { run_id: String, hours: i64 },
    #[error("run {run_id} was resumed {respawns} times already (limit {max})")]
    #[diagnostic(
        code(factory::run::respawns),
        help(
            "something keeps killing it; read .factory/events.jsonl, or raise FACTORY_MAX_RESPAWNS"
        )
    )]
    TooManyRespawns {
        run_id: String,
        respawns: u32,
        max: u32,
    },
    #[error("the workflow of run {0} is missing or changed since it started")]
    #[diagnostic(
        code(factory::run::ir_changed),
        help("start a new run with `factory run MODE`")
    )]
    IrChanged(String),
    #[error("cannot write under {path}: {source}")]
    #[diagnostic(
        code(factory::run::io),
        help("check the disk space and permissions of .factory/")
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    #[diagnostic(
        code(factory::run::run_id),
        help("leave --run-id out; it is for starters that reserved an id (`factory serve-mcp`)")
    )]
    RunId(String),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] events::EventsError),
}

/// What `factory run` was asked for.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub project: PathBuf,
    pub settings: RunSettings,
    /// An id reserved beforehand with [`checkpoint::reserve_run_id`] (a run started in
    /// the background, whose starter must name it before it exists); `None` makes one.
    pub run_id: Option<String>,
    /// The mode as the user named it (`parallel-improve`), shown by `factory runs`;
    /// `None` shows the workflow's own name (a `.fwf` file run by path).
    pub mode: Option<String>,
}

/// Checks the project can be run on: a git repository with factory.md, a config, and
/// a reviewed eval profile.
pub fn preflight(project: &Path) -> Result<(), RunError> {
    if git2::Repository::open(project).is_err() {
        return Err(RunError::NotARepo(project.to_path_buf()));
    }
    if !project.join("factory.md").is_file() {
        return Err(RunError::NoFactoryMd(project.to_path_buf()));
    }
    crate::project::config::load(project)?;
    // The same rule `factory detect` applies (evals_pending_review).
    if crate::eval::discovery::profile::eval_profile_pending(&FactoryPaths::new(project))
        == Some(true)
    {
        return Err(RunError::EvalPending(project.to_path_buf()));
    }
    Ok(())
}

/// The settings with the runner the environment names filled in, so a resumed run
/// uses the runner the run started with.
pub fn resolved_settings(settings: &RunSettings, layers: &Layers) -> RunSettings {
    let mut out = settings.clone();
    if let Some(spec) = RunnerSpec::resolve(
        settings.runner.as_deref(),
        settings.agent_cmd.as_deref(),
        settings.script.as_deref(),
        layers,
    ) {
        out.runner = Some(spec.name);
        out.agent_cmd = spec.agent_cmd;
        out.script = spec.script.map(|s| std::path::absolute(&s).unwrap_or(s));
    }
    out
}

/// Whether running `ir` needs an agent runner (agent nodes, agent gates).
pub fn needs_agents(ir: &Ir) -> bool {
    ir.nodes.iter().any(|n| {
        n.kind == factory_compiler::ir::NodeKind::Agent
            || factory_compiler::ir::conventions::verdict_file(n).is_some()
    })
}

/// Builds the runner the settings name, else the default one on `PATH` (none when
/// there is neither).
pub fn runner_for(
    settings: &RunSettings,
    layers: &Layers,
) -> Result<Option<Arc<dyn Runner>>, RunError> {
    let Some(spec) = RunnerSpec::resolve(
        settings.runner.as_deref(),
        settings.agent_cmd.as_deref(),
        settings.script.as_deref(),
        layers,
    ) else {
        return Ok(None);
    };
    Ok(Some(Arc::from(runners::build_runner(&spec)?)))
}

/// The knobs' default values, by name, as template values.
pub fn knob_values(ir: &Ir) -> Value {
    Value::Object(
        ir.knobs
            .iter()
            .map(|k| {
                let v = match &k.default {
                    Literal::Bool(b) => Value::from(*b),
                    Literal::Int(i) => Value::from(*i),
                    Literal::Str(s) => Value::from(s.as_str()),
                    Literal::Float(f) => f.value().map(Value::from).unwrap_or(Value::Null),
                };
                (k.name.clone(), v)
            })
            .collect(),
    )
}

pub(crate) fn new_run_id() -> String {
    let now = jiff::Zoned::now();
    format!(
        "{}-{:05}",
        now.strftime("%Y%m%dT%H%M%S"),
        std::process::id() % 100_000
    )
}

fn env_for(
    project: &Path,
    run_id: &str,
    ir: &Ir,
    settings: &RunSettings,
    runner: Option<Arc<dyn Runner>>,
    layers: Layers,
    view: &View,
) -> NodeEnv {
    let goal = settings
        .goal
        .clone()
        .or_else(|| crate::project::config::load(project).ok().map(|c| c.goal))
        .unwrap_or_default();
    let placement = crate::placement::for_run(settings.placement, project);
    NodeEnv {
        layers,
        project: project.to_path_buf(),
        run_id: run_id.to_string(),
        goal,
        knobs: knob_values(ir),
        auto_approve: settings.auto_approve,
        runner,
        runner_env: [
            ("FACTORY_RUNNER", settings.runner.clone()),
            ("FACTORY_AGENT_CMD", settings.agent_cmd.clone()),
            (
                "FACTORY_REPLAY_SCRIPT",
                settings.script.as_ref().map(|s| s.display().to_string()),
            ),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v?)))
        .collect(),
        bin_dir: std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf)),
        view: view.clone(),
        branch: None,
        placement,
        sandbox: None,
    }
}

/// Probes the sandbox when the run or one of its nodes asks for it. A failed probe is
/// said loudly, journaled, and the run goes on on the host.
fn prepare_sandbox(env: &mut NodeEnv, ir: &Ir, paths: &FactoryPaths) {
    use crate::placement::Placement;
    let wanted = env.placement == Placement::Sandbox
        || ir
            .nodes
            .iter()
            .any(|n| n.attrs.placement == Some(Placement::Sandbox));
    if wanted {
        probe_sandbox(env, paths);
    }
    // The gate (`factory precheck`) follows the run: sandboxed when its agents are.
    let gate = env.gate_placement();
    env.runner_env.push((
        crate::project::child::PLACEMENT.to_string(),
        gate.to_string(),
    ));
}

fn probe_sandbox(env: &mut NodeEnv, paths: &FactoryPaths) {
    use crate::placement::{Placement, Sandbox};
    match Sandbox::prepare() {
        Ok(s) => {
            if let Some(why) = &s.fallback {
                eprintln!(
                    "warning: bubblewrap cannot be used here, so this run's nodes are confined by landlock alone (writes and secrets; no pid or network namespaces): {}",
                    crate::sys::redact::redact(why)
                );
                let ev = Event::new(EventData::PlacementFallback {
                    run_id: env.run_id.clone(),
                    requested: Placement::Sandbox.to_string(),
                    used: "landlock".to_string(),
                    reason: why.clone(),
                });
                let _ = crate::events::append(paths, &ev);
            }
            if let Err(why) = &s.pids {
                eprintln!(
                    "note: the sandbox has no process limit here ({why}): a fork bomb in a node is bounded only by its timeout"
                );
            }
            env.sandbox = Some(Arc::new(s));
        }
        Err(why) => {
            let reason = why.to_string();
            eprintln!(
                "warning: the sandbox cannot be used here, so this run's nodes run on the host with your full rights: {}",
                crate::sys::redact::redact(&reason)
            );
            let ev = Event::new(EventData::PlacementFallback {
                run_id: env.run_id.clone(),
                requested: Placement::Sandbox.to_string(),
                used: Placement::Host.to_string(),
                reason,
            });
            let _ = crate::events::append(paths, &ev);
        }
    }
}

/// Starts a fresh machine on `cp`: feeds it Start, saves the checkpoint, then
/// journals the start. Returns the first commands.
fn begin_fresh(
    graph: &Graph,
    cp: &mut Checkpoint,
    paths: &FactoryPaths,
    vars: std::collections::BTreeMap<String, String>,
) -> Result<Vec<machine::Command>, RunError> {
    let mut machine = Machine::new(graph);
    machine.state.vars = vars;
    let first = machine.on_input(Input::Start);
    // The checkpoint first: a kill between the two still resumes (the journal entry
    // for Start is older than the state that includes it).
    cp.state = machine.state.clone();
    cp.save(paths).map_err(|source| RunError::Io {
        path: cp.own_path(paths),
        source,
    })?;
    let mut started = checkpoint::journal_event(&cp.run_id, 1, &Input::Start, 0);
    if let EventData::RunStarted { workflow, .. } = &mut started.data {
        *workflow = Some(cp.workflow.clone());
    }
    events::append(paths, &started)?;
    Ok(first)
}

/// The machine of a saved checkpoint, with every input journaled after it applied.
fn caught_up<'g>(
    graph: &'g Graph,
    cp: &mut Checkpoint,
    paths: &FactoryPaths,
) -> Result<Machine<'g>, RunError> {
    let mut machine = Machine::with_state(graph, std::mem::take(&mut cp.state));
    for (_, input) in checkpoint::journal_after(paths, &cp.run_id, machine.state.seq)? {
        machine.on_input(input);
    }
    Ok(machine)
}

/// Whether a caught-up machine has nothing left to do.
fn is_over(machine: &Machine<'_>) -> bool {
    machine.state.finished || (machine.state.outcome.is_some() && machine.resume().is_empty())
}

/// What a run needs that [`startable`] found.
pub struct Startable {
    pub layers: Layers,
    /// The settings with the runner resolved.
    pub settings: RunSettings,
    pub runner: Option<Arc<dyn Runner>>,
}

/// Everything [`start`] checks before it writes anything: the project (see
/// [`preflight`]), the user config, and a runner that is ready when the workflow has
/// agents. A starter that runs `factory run` in the background checks this first, so
/// its caller hears of a problem at once.
pub fn startable(ir: &Ir, project: &Path, settings: &RunSettings) -> Result<Startable, RunError> {
    preflight(project)?;
    let layers = Layers::load(Some(project))?;
    let settings = resolved_settings(settings, &layers);
    let runner = runner_for(&settings, &layers)?;
    if needs_agents(ir) {
        match &runner {
            None => return Err(RunError::NoRunner(crate::agents::AgentError::NoRunner)),
            // Missing credentials fail now, not as two failed agents later.
            Some(r) => r.check_ready(&[])?,
        }
    }
    Ok(Startable {
        layers,
        settings,
        runner,
    })
}

/// Starts a new run of `ir` on the project.
pub async fn start(ir: Ir, req: RunRequest, view: &View) -> Result<RunEnd, RunError> {
    let project = absolute(&req.project);
    let Startable {
        layers,
        settings,
        runner,
    } = startable(&ir, &project, &req.settings)?;
    let req = RunRequest { settings, ..req };
    let paths = crate::project::layout::ensure_factory_dir(&project).map_err(|e| RunError::Io {
        path: project.join(".factory"),
        source: std::io::Error::other(e.to_string()),
    })?;
    let run_id = match &req.run_id {
        Some(id) => checkpoint::claim_reserved(&paths, id)?,
        None => new_run_id(),
    };
    let dir = checkpoint::run_dir(&paths, &run_id);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RunError::Io { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let ir_file = dir.join("workflow.fwir");
    crate::sys::files::atomic_write(&ir_file, to_text(&ir).as_bytes()).map_err(io(&ir_file))?;
    let now = crate::sys::clock::now_iso8601();
    let mut cp = Checkpoint {
        run_id: run_id.clone(),
        workflow: req.mode.clone().unwrap_or_else(|| ir.workflow.name.clone()),
        ir_hash: content_hash(&ir),
        settings: req.settings.clone(),
        started_at: now.clone(),
        saved_at: now,
        respawns: 0,
        parent_run: crate::project::child::ChildEnv::current().run_id,
        branch_exp: None,
        state: Default::default(),
    };
    let mut env = env_for(&project, &run_id, &ir, &req.settings, runner, layers, view);
    prepare_sandbox(&mut env, &ir, &paths);
    let env = Arc::new(env);
    let nested = cp.parent_run.is_some();
    if !nested {
        close_unresumed(&project, &paths, &run_id);
    }
    let graph = Arc::new(Graph::new(ir));
    let first = begin_fresh(&graph, &mut cp, &paths, Default::default())?;
    let workflow = graph.ir.workflow.name.clone();
    let mut end = driver::drive(graph.clone(), cp, env, first).await?;
    if nested {
        // `factory resume` continues the project's top-level run only: a nested run's
        // experiment is settled now, never left open for a resume that cannot come.
        end.retry = None;
    }
    view.clear();
    let end = settle(project.clone(), Some(workflow), end).await;
    Ok(end)
}

/// Continues the project's last run from its checkpoint: the nodes it had not
/// finished run again; everything journaled is replayed, never re-run.
pub async fn resume(project: &Path, force: bool, view: &View) -> Result<RunEnd, RunError> {
    let project = absolute(project);
    let paths = FactoryPaths::new(&project);
    let mut cp = Checkpoint::load(&paths)
        .map_err(RunError::Checkpoint)?
        .ok_or_else(|| RunError::NothingToResume(project.clone()))?;
    let saved: jiff::Timestamp = cp
        .saved_at
        .parse()
        .unwrap_or_else(|_| jiff::Timestamp::now());
    let hours = (jiff::Timestamp::now().as_second() - saved.as_second()) / 3600;
    if hours >= STALE_AFTER_HOURS && !force {
        return Err(RunError::Stale {
            run_id: cp.run_id,
            hours,
        });
    }
    let max = std::env::var(MAX_RESPAWNS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_MAX_RESPAWNS);
    let ir_file = checkpoint::run_dir(&paths, &cp.run_id).join("workflow.fwir");
    let text =
        std::fs::read_to_string(&ir_file).map_err(|_| RunError::IrChanged(cp.run_id.clone()))?;
    let (ir, _) = factory_compiler::ir::parse_text(&text)
        .map_err(|_| RunError::IrChanged(cp.run_id.clone()))?;
    if content_hash(&ir) != cp.ir_hash {
        return Err(RunError::IrChanged(cp.run_id.clone()));
    }
    let graph = Arc::new(Graph::new(ir));
    let mut machine = caught_up(&graph, &mut cp, &paths)?;
    // A run its agent's failure ended runs that node again, unless its experiment
    // was closed since (`factory finalize N --verdict error`).
    let retry = machine.can_retry() && !has_verdict(&project, &machine.state.vars);
    if is_over(&machine) && !retry {
        return Err(RunError::AlreadyFinished {
            run_id: cp.run_id,
            status: machine
                .state
                .outcome
                .as_ref()
                .map_or("finished", |o| o.name())
                .into(),
        });
    }
    if cp.respawns >= max {
        return Err(RunError::TooManyRespawns {
            run_id: cp.run_id,
            respawns: cp.respawns,
            max,
        });
    }
    cp.respawns += 1;
    // Agents the killed run left without a terminal event get one now, so every
    // agent.started keeps exactly one terminal event.
    let _ = crate::agents::close_dangling(&project, &cp.run_id);
    let layers = Layers::load(Some(&project))?;
    let runner = runner_for(&cp.settings, &layers)?;
    let mut env = env_for(
        &project,
        &cp.run_id,
        &graph.ir,
        &cp.settings,
        runner,
        layers,
        view,
    );
    prepare_sandbox(&mut env, &graph.ir, &paths);
    let env = Arc::new(env);
    let first = if retry {
        machine.on_input(Input::Retry)
    } else if machine.state.seq == 0 {
        machine.on_input(Input::Start)
    } else {
        machine.resume()
    };
    events::append(
        &paths,
        &Event::new(EventData::RunResumed {
            run_id: cp.run_id.clone(),
            respawns: cp.respawns,
            retry_seq: retry.then_some(machine.state.seq),
        }),
    )?;
    cp.state = machine.state.clone();
    cp.save(&paths).map_err(|source| RunError::Io {
        path: cp.own_path(&paths),
        source,
    })?;
    let workflow = graph.ir.workflow.name.clone();
    let end = driver::drive(graph.clone(), cp, env, first).await?;
    view.clear();
    let end = settle(project.clone(), Some(workflow), end).await;
    Ok(end)
}

/// [`settle_experiment`], then (for a top-level run, whose `workflow` is given) the
/// notification of its end, off the async threads: finalizing touches git and the
/// store, notifying the network. A parallel branch's end is part of its run's.
pub(crate) async fn settle(project: PathBuf, workflow: Option<String>, mut end: RunEnd) -> RunEnd {
    let fallback = end.clone();
    tokio::task::spawn_blocking(move || {
        settle_experiment(&project, &mut end, workflow.is_some());
        if let Some(workflow) = workflow {
            announce::run_ended(&project, &workflow, &end);
        }
        end
    })
    .await
    .unwrap_or(fallback)
}

/// A run that failed or halted with its experiment still open records it as `error`
/// (spec §7.2: an agent or eval crash is never a keep), which also removes its
/// worktree (a branch with commits is kept under `factory/failed/`). An experiment
/// that already has a verdict is left as it is, and so is the experiment of a
/// `resumable` run that its agent's failure ended: `factory resume` runs that agent
/// again, and a new run closes it ([`close_unresumed`]).
fn settle_experiment(project: &Path, end: &mut RunEnd, resumable: bool) {
    if resumable && end.retry.is_some() {
        return;
    }
    if let Err(e) = close_as_error(project, &end.run_id, &end.vars, end.outcome.as_ref(), "") {
        end.async_failures.push(e);
    }
}

/// The experiment `vars` name, when it has a recorded verdict.
fn has_verdict(project: &Path, vars: &std::collections::BTreeMap<String, String>) -> bool {
    let Some(id) = vars.get("exp_id").and_then(|v| v.parse::<u32>().ok()) else {
        return false;
    };
    crate::store::load_history(project)
        .map(|h| h.records.iter().any(|r| r.id == id))
        .unwrap_or(false)
}

/// Records the open experiment of a run that failed or halted as `error`, its notes
/// saying where and why the run stopped (and `addendum`).
fn close_as_error(
    project: &Path,
    run_id: &str,
    vars: &std::collections::BTreeMap<String, String>,
    outcome: Option<&machine::RunOutcome>,
    addendum: &str,
) -> Result<(), String> {
    let Some(
        machine::RunOutcome::Failed { node, reason } | machine::RunOutcome::Halted { node, reason },
    ) = outcome
    else {
        return Ok(());
    };
    let Some(id) = vars.get("exp_id").and_then(|v| v.parse::<u32>().ok()) else {
        return Ok(());
    };
    if has_verdict(project, vars) {
        return Ok(());
    }
    let mut outcome = crate::store::Outcome::new(crate::store::Verdict::Error);
    outcome.notes = format!(
        "run {run_id} stopped at {node}: {}{addendum}",
        reason.lines().next().unwrap_or("")
    );
    crate::experiment::finalize(project, id, outcome)
        .map(|_| ())
        .map_err(|e| format!("could not record experiment {id} as error: {e}"))
}

/// Before a new top-level run replaces the checkpoint: the last run, if its agent's
/// failure ended it and it was never resumed, still holds its experiment open; that
/// experiment is recorded as `error` now (its commits kept), and the run's summary
/// stops offering a resume. Failing to close it is a warning: the new run goes on.
fn close_unresumed(project: &Path, paths: &FactoryPaths, new_run: &str) {
    let Ok(Some(old)) = Checkpoint::load(paths) else {
        return;
    };
    if old.state.retry.is_none() || !old.state.finished {
        return;
    }
    let addendum = format!(" (not resumed; run {new_run} started instead)");
    let closed = close_as_error(
        project,
        &old.run_id,
        &old.state.vars,
        old.state.outcome.as_ref(),
        &addendum,
    );
    if let Err(e) = closed {
        tracing::warn!("{e}");
    }
    if let Some(mut summary) = checkpoint::RunSummary::load(paths, &old.run_id) {
        summary.retry = None;
        summary.verdict = summary
            .exp_id
            .is_some()
            .then(|| crate::store::Verdict::Error.to_string());
        let _ = summary.save(paths);
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p)
        .or_else(|_| std::path::absolute(p))
        .unwrap_or_else(|_| p.to_path_buf())
}
