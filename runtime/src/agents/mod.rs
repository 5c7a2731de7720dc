//! Agents: prompt resolution and invocation of one role through a runner (spec §8.4).
//!
//! - [`prompt`]: the three prompt tiers with the playbook appended at every tier.
//! - [`invoke`]: one invocation — the `agent.*` event pair, review capture, outputs.
//! - [`SpawnFailures`]: two consecutive failed invocations abort the run (Sacred Rule 8).
//! - [`run_role`]: what `factory agent ROLE` does, blocking.

pub mod invoke;
pub mod playbook;
pub mod prompt;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use invoke::{close_dangling, invoke, invoke_capturing, invoke_with_progress, review_path};
pub use prompt::{
    PromptSource, ResolvedPlaybook, ResolvedPrompt, Whereabouts, compose_prompt, known_roles,
    reads_section, resolve_playbook, resolve_prompt, resolve_prompt_in, whereabouts,
};

use crate::events::EventsError;
use crate::runners::{AgentOutput, AgentRequest, Capability, RunnerError, RunnerSpec};
use crate::sys::process::exit_text;
use crate::user_config::resolve::{Layers, Source, model_for_runner};

/// A finished invocation that exited 0.
#[derive(Debug, Clone)]
pub struct AgentResult {
    pub invocation_id: String,
    pub role: String,
    pub output: AgentOutput,
    /// `.factory/reviews/<role>[-TAG]-latest.md`, holding the captured stdout.
    pub review_path: PathBuf,
    /// Entries of `req.outputs` (other than the review) the agent did not write: absent,
    /// or unchanged since before it ran. The executor's checks fail the node on these.
    pub missing_outputs: Vec<PathBuf>,
}

/// Why an agent invocation did not succeed.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum AgentError {
    #[error("experiment {id} has no worktree at {path}")]
    #[diagnostic(
        code(factory::agent::no_worktree),
        help(
            "an open experiment's worktree is made by `factory begin --hypothesis \"...\"` (run again, it makes it anew)"
        )
    )]
    NoWorktree { id: u32, path: PathBuf },

    #[error(transparent)]
    #[diagnostic(transparent)]
    UserConfig(#[from] crate::user_config::UserConfigError),

    /// The runner could not be built (unknown name, missing command or binary, bad
    /// script, missing capability): the caller's setup, not the agent, is at fault.
    #[error("{source}")]
    #[diagnostic(code(factory::agent::setup))]
    Setup {
        source: Box<RunnerError>,
        #[help]
        help: Option<String>,
    },

    #[error("unknown role `{role}`; known roles: {known}")]
    #[diagnostic(
        code(factory::agent::unknown_role),
        help("pick a known role, or add its prompt as .factory/agents/<role>.md")
    )]
    UnknownRole { role: String, known: String },

    #[error("review tag `{tag}` must be letters, digits, `-`, `_` or `.`")]
    #[diagnostic(
        code(factory::agent::bad_tag),
        help("use a short word such as `exp-3` or `branch-a`")
    )]
    BadTag { tag: String },

    #[error("the {role} agent could not be run: {source}")]
    #[diagnostic(code(factory::agent::spawn))]
    Runner {
        role: String,
        // Boxed (with its help copied out) to keep every Result<_, AgentError> small.
        source: Box<RunnerError>,
        #[help]
        help: Option<String>,
    },

    #[error("the {role} agent failed ({}){}", exit_text(*exit_code), tail_text(stderr_tail))]
    #[diagnostic(
        code(factory::agent::failed),
        help(
            "read the agent's output in .factory/reviews/ and its stderr above; fix its command or prompt and re-run"
        )
    )]
    Failed {
        role: String,
        exit_code: Option<i32>,
        invocation_id: String,
        stderr_tail: String,
    },

    #[error(
        "the {role} agent ran out of time after {timeout:?}{}",
        tail_text(stderr_tail)
    )]
    #[diagnostic(
        code(factory::agent::timeout),
        help(
            "raise the timeout (--timeout SECS, or the node's timeout), or give the agent a smaller task"
        )
    )]
    TimedOut {
        role: String,
        timeout: Duration,
        invocation_id: String,
        stderr_tail: String,
    },

    #[error("{count} agent invocations failed in a row ({}); stopping the run", roles.join(", "))]
    #[diagnostic(
        code(factory::agent::consecutive_failures),
        help(
            "fix the agent command or its credentials and resume; factory never does a \
             specialist's work itself (Sacred Rule 8)"
        )
    )]
    ConsecutiveFailures { count: usize, roles: Vec<String> },

    #[error("no agent runner chosen, and none of claude, codex, opencode, gemini is on PATH")]
    #[diagnostic(
        code(factory::agent::no_runner),
        help(
            "install an agent CLI (`npm install -g @anthropic-ai/claude-code`, \
             `@openai/codex`, `opencode-ai` or `@google/gemini-cli`) and it is used by \
             default; or pass `--runner exec --agent-cmd \"<command>\"` to run any agent \
             CLI, or `--runner replay --script FILE` for a scripted one (FACTORY_RUNNER, \
             factory.md or ~/.factory/config.toml `defaults.runner` name one for every \
             command)"
        )
    )]
    NoRunner,

    #[error("the project directory {0} does not exist")]
    #[diagnostic(
        code(factory::agent::no_project),
        help("pass --project DIR pointing at the project root")
    )]
    NoProject(PathBuf),

    #[error("the {role} agent finished without writing {missing}")]
    #[diagnostic(
        code(factory::agent::missing_outputs),
        help(
            "its task lists the files it must write (--writes); run it again, or fix its prompt or command"
        )
    )]
    MissingOutputs { role: String, missing: String },

    #[error("interrupted; the {role} agent was stopped")]
    #[diagnostic(
        code(factory::agent::interrupted),
        help("re-run the command to start the agent again")
    )]
    Interrupted { role: String },

    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] EventsError),

    #[error("cannot access {path}: {source}")]
    #[diagnostic(
        code(factory::agent::io),
        help("check that .factory/ exists and is writable")
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    /// The evolved playbook of the role cannot be read: the agent would run without
    /// what was learned, so nothing runs.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Playbook(#[from] crate::agents::playbook::PlaybookError),

    #[error("cannot start the async runtime: {0}")]
    #[diagnostic(
        code(factory::agent::runtime),
        help("this is an operating-system limit (threads or file descriptors)")
    )]
    Runtime(std::io::Error),
}

fn help_of(err: &RunnerError) -> Option<String> {
    use miette::Diagnostic;
    err.help().map(|h| h.to_string())
}

fn tail_text(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!(":\n{tail}")
    }
}

impl AgentError {
    /// A runner failure while running `role`, keeping the runner's help.
    pub fn runner(role: &str, err: RunnerError) -> Self {
        Self::Runner {
            role: role.to_string(),
            help: help_of(&err),
            source: Box::new(err),
        }
    }

    /// A runner that could not be set up.
    pub fn setup(err: RunnerError) -> Self {
        Self::Setup {
            help: help_of(&err),
            source: Box::new(err),
        }
    }

    /// Whether this counts towards [`SpawnFailures`]: the agent could not be started,
    /// crashed, or ran out of time. A bad role or tag is the caller's mistake instead.
    pub fn is_agent_failure(&self) -> bool {
        matches!(
            self,
            Self::Runner { .. } | Self::Failed { .. } | Self::TimedOut { .. }
        )
    }
}

/// Counts consecutive failed invocations; the executor holds one per run.
#[derive(Debug, Clone, Default)]
pub struct SpawnFailures {
    roles: Vec<String>,
}

impl SpawnFailures {
    /// Failures in a row that abort the run (spec §8.4's threshold).
    pub const THRESHOLD: usize = 2;

    /// Records an invocation's outcome; `Err(ConsecutiveFailures)` once the threshold
    /// is reached. Errors that are not agent failures leave the count alone.
    pub fn record<T>(
        &mut self,
        role: &str,
        outcome: &Result<T, AgentError>,
    ) -> Result<(), AgentError> {
        match outcome {
            Ok(_) => {
                self.roles.clear();
                Ok(())
            }
            Err(e) if e.is_agent_failure() => {
                self.roles.push(role.to_string());
                if self.roles.len() >= Self::THRESHOLD {
                    let mut roles = self.roles.clone();
                    roles.dedup();
                    Err(AgentError::ConsecutiveFailures {
                        count: self.roles.len(),
                        roles,
                    })
                } else {
                    Ok(())
                }
            }
            Err(_) => Ok(()),
        }
    }

    /// Consecutive failures so far.
    pub fn count(&self) -> usize {
        self.roles.len()
    }
}

/// What `factory agent ROLE` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct RoleRun {
    pub project: PathBuf,
    pub role: String,
    pub task: String,
    pub review_tag: Option<String>,
    /// `None`: `FACTORY_RUNNER`, else the first agent CLI on `PATH`, else
    /// [`AgentError::NoRunner`].
    pub runner: Option<String>,
    pub agent_cmd: Option<String>,
    pub script: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub model: Option<String>,
    pub interactive: bool,
    /// Run in experiment N's worktree, for it: its `agent.*` events carry the
    /// experiment's id, which is how QA run by hand counts for precheck.
    pub exp: Option<u32>,
    /// The node of a mode this run stands for (a SKILL.md step): named in the task,
    /// and the name its outputs are kept under in the experiment's evidence.
    pub node: Option<String>,
    /// Files the agent should read (listed in its task).
    pub reads: Vec<String>,
    /// Files the agent must write: listed in its prompt, given to its runner, kept
    /// in the experiment's evidence; one left unwritten fails the run.
    pub writes: Vec<String>,
    /// A review checkpoint's verdict file: the prompt's `## Verdict file`, as a gate's
    /// agent gets it; kept in the evidence and required like a write.
    pub verdict: Option<String>,
}

/// How a [`run_role`] ended.
#[derive(Debug)]
pub enum RoleOutcome {
    /// Headless: the agent exited 0.
    Headless(Box<AgentResult>),
    /// Interactive: the agent's exit code.
    Interactive(i32),
}

/// Resolves the prompt, builds the runner and runs the role in the project (blocking);
/// Ctrl-C stops the agent and closes its events.
pub fn run_role(
    run: &RoleRun,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<RoleOutcome, AgentError> {
    let project = std::path::absolute(&run.project)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| AgentError::NoProject(run.project.clone()))?;
    let layers = Layers::load(Some(&project))?;
    let spec = RunnerSpec::resolve(
        run.runner.as_deref(),
        run.agent_cmd.as_deref(),
        run.script.as_deref(),
        &layers,
    )
    .ok_or(AgentError::NoRunner)?;
    let runner = crate::runners::build_runner(&spec).map_err(AgentError::setup)?;
    // An asked-for model (flag, environment) needs model selection; a configured
    // default (factory.md, config.toml) goes only to runners that select models.
    let model = layers.model(&run.role, run.model.as_deref(), None);
    let asked = model.as_ref().is_some_and(|m| m.is_explicit());
    let model = model_for_runner(model, runner.meta().capabilities.model_selection);
    // No layer naming one: `factory agent` runs without a timeout.
    let t = layers.agent_timeout(run.timeout.map(|d| d.as_secs()), None, 0);
    let timeout = (t.source != Source::Default).then(|| Duration::from_secs(t.value));
    let resolved = resolve_prompt(&project, &run.role)?;
    let (cwd, env) = match run.exp {
        Some(id) => {
            let wt = crate::worktrees::worktree_path(&project, id);
            let exp_env = vec![(crate::project::child::EXP_ID.to_string(), id.to_string())];
            if wt.is_dir() {
                (wt, exp_env)
            } else if finalized(&project, id) {
                // A finalized experiment's worktree is gone: its archivist works in
                // the project, for it.
                (project.clone(), exp_env)
            } else {
                return Err(AgentError::NoWorktree { id, path: wt });
            }
        }
        None => (project.clone(), Vec::new()),
    };
    // Which hypothesis of a parallel plan this agent works on, when the caller says
    // (a branch's agents get it from the executor; one run by hand from its shell).
    let mut env = env;
    if let Ok(i) = std::env::var(crate::runners::replay::HYPOTHESIS_INDEX_ENV) {
        env.push((crate::runners::replay::HYPOTHESIS_INDEX_ENV.to_string(), i));
    }
    // The executor's rule for where paths live: `.factory/` in the project, the
    // rest in the experiment's worktree.
    let roots = crate::project::roots::Roots {
        project: project.clone(),
        worktree: (cwd != project).then(|| cwd.clone()),
        overlay: None,
    };
    let reads: Vec<PathBuf> = run.reads.iter().map(|r| roots.resolve(r)).collect();
    let mut writes: Vec<(String, PathBuf)> = run
        .writes
        .iter()
        .map(|w| (w.clone(), roots.resolve_write(w)))
        .collect();
    let outputs: Vec<PathBuf> = writes.iter().map(|(_, p)| p.clone()).collect();
    let verdict_file = run.verdict.as_ref().map(|v| roots.resolve_write(v));
    if let (Some(v), Some(path)) = (&run.verdict, &verdict_file) {
        writes.push((v.clone(), path.clone()));
    }
    let visit = run
        .exp
        .zip(run.node.as_deref())
        .map_or(1, |(id, node)| next_visit(&project, id, node));
    let task = format!(
        "{}{}{}",
        run.task,
        reads_section(&reads),
        whereabouts(&Whereabouts {
            project: &project,
            node: run.node.as_deref(),
            visit,
            work_dir: &cwd,
            in_worktree: cwd != project,
            exp_id: run.exp,
            branch: None,
        })
    );
    let req = AgentRequest {
        role: run.role.clone(),
        prompt: compose_prompt(&resolved, &task, &outputs, verdict_file.as_deref()),
        task,
        cwd,
        env,
        project: project.clone(),
        outputs,
        verdict_file: verdict_file.clone(),
        timeout,
        model,
        node: run.node.clone(),
        visit,
        confinement: None,
    };
    // Asked-for capabilities are checked before anything runs: a setup mistake, not a
    // failed agent.
    if asked {
        runner
            .meta()
            .require(Capability::ModelSelection)
            .map_err(AgentError::setup)?;
    }
    if run.interactive {
        runner
            .meta()
            .require(Capability::Interactive)
            .map_err(AgentError::setup)?;
        return run_interactive(&project, &req, runner.as_ref(), run.review_tag.as_deref());
    }
    // Interactive CLIs let the person log in; headless ones must have credentials.
    runner.check_ready(&req.env).map_err(AgentError::setup)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(AgentError::Runtime)?;
    let result = rt.block_on(async {
        let tag = run.review_tag.as_deref();
        tokio::select! {
            r = invoke_with_progress(&project, &req, runner.as_ref(), tag, progress) => r,
            // Dropping the invocation kills the agent's process group and logs
            // `agent.failed {reason: "cancelled"}`.
            _ = tokio::signal::ctrl_c() => Err(AgentError::Interrupted { role: run.role.clone() }),
        }
    })?;
    if let Some(id) = run.exp {
        let node = run.node.as_deref().unwrap_or(&run.role);
        // As the executor does: a copy that cannot be made is a warning.
        if let Err(e) = crate::experiment::evidence::record(&project, id, node, visit, &writes) {
            tracing::warn!(
                "could not keep the outputs of `{node}` in experiment {id}'s evidence: {e}"
            );
        }
    }
    // Where each file was expected, in full: an agent that wrote a relative path
    // in its own working directory sees where it should have gone.
    let mut missing: Vec<String> = result
        .missing_outputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if let Some(v) = verdict_file.filter(|v| !v.is_file()) {
        missing.push(v.display().to_string());
    }
    if !missing.is_empty() {
        return Err(AgentError::MissingOutputs {
            role: run.role.clone(),
            missing: missing.join(", "),
        });
    }
    Ok(RoleOutcome::Headless(Box::new(result)))
}

/// The next visit of `node` in experiment `id`'s evidence (1 for its first).
fn next_visit(project: &Path, id: u32, node: &str) -> u32 {
    crate::experiment::evidence::list(project, id)
        .unwrap_or_default()
        .iter()
        .filter(|f| f.node == node)
        .map(|f| f.visit)
        .max()
        .map_or(1, |v| v + 1)
}

/// An interactive run, with the same event pair as a headless one (no review capture:
/// the output went to the person's terminal).
fn run_interactive(
    project: &Path,
    req: &AgentRequest,
    runner: &dyn crate::runners::Runner,
    tag: Option<&str>,
) -> Result<RoleOutcome, AgentError> {
    use crate::events::{AgentEnded, AgentStarted, Event, EventData};
    let paths = crate::project::layout::FactoryPaths::new(project);
    let started = AgentStarted {
        invocation_id: invoke::new_invocation_id(),
        role: req.role.clone(),
        runner: runner.meta().name.to_string(),
        interactive: Some(true),
        review_tag: tag.map(str::to_string),
        ..AgentStarted::default()
    };
    crate::events::append(
        &paths,
        &Event::new(EventData::AgentStarted(started.clone())),
    )?;
    let start = std::time::Instant::now();
    let result = runner.run_interactive(req);
    let ms = start.elapsed().as_millis() as u64;
    match result {
        Ok(code) => {
            let ended = AgentEnded {
                exit_code: Some(code),
                duration_ms: Some(ms),
                reason: (code != 0).then(|| "exit".to_string()),
                ..AgentEnded::of(&started)
            };
            let event = if code == 0 {
                EventData::AgentCompleted(ended)
            } else {
                EventData::AgentFailed(ended)
            };
            crate::events::append(&paths, &Event::new(event))?;
            Ok(RoleOutcome::Interactive(code))
        }
        Err(err) => {
            let ended = AgentEnded {
                reason: Some("spawn".into()),
                error: Some(err.to_string()),
                ..AgentEnded::of(&started)
            };
            crate::events::append(&paths, &Event::new(EventData::AgentFailed(ended)))?;
            Err(AgentError::runner(&req.role, err))
        }
    }
}

#[cfg(test)]
mod tests;

/// Whether experiment `id` has a verdict.
fn finalized(project: &Path, id: u32) -> bool {
    crate::store::ExperimentStore::open(project)
        .info(id)
        .ok()
        .flatten()
        .is_some_and(|i| i.verdict.is_some())
}
