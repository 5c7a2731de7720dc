//! Runners: the one trait every agent CLI sits behind (spec §8.13). The agent CLIs
//! users already have — [`claude`], [`codex`], [`opencode`], [`gemini`], sharing
//! [`cli`] — and the two runners every test and the demo need: [`exec`] (any command)
//! and [`replay`] (a YAML script). The contract for users is `docs/runners.md`.
//!
//! A runner knows nothing of events, reviews or prompts tiers; [`crate::agents`] does
//! that around it.

pub mod claude;
pub mod cli;
pub mod codex;
pub mod exec;
pub mod gemini;
pub mod opencode;
mod prompt_file;
pub mod replay;
pub mod status;

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

pub use crate::events::Usage;
use crate::project::layout::FACTORY_DIR;
use crate::sys::process::ProcessError;
use crate::user_config::resolve::Layers;

/// The agent-CLI runners, in the order the default runner is picked from `PATH`.
pub const CLI_RUNNERS: &[&str] = &["claude", "codex", "opencode", "gemini"];
/// Every runner this build ships.
pub const KNOWN_RUNNERS: &[&str] = &["claude", "codex", "opencode", "gemini", "exec", "replay"];

/// One agent invocation, as the executor or `factory agent` asks for it.
#[derive(Debug, Clone, Default)]
pub struct AgentRequest {
    pub role: String,
    /// Fully resolved prompt text (see `agents::resolve_prompt` and `agents::compose_prompt`).
    pub prompt: String,
    pub task: String,
    /// Where the agent works (experiment worktree, or the project).
    pub cwd: PathBuf,
    /// Project root; its `.factory/` is the store.
    pub project: PathBuf,
    /// Absolute paths the calling node expects written.
    pub outputs: Vec<PathBuf>,
    pub timeout: Option<Duration>,
    pub model: Option<String>,
    /// IR node id (e.g. `experiment.trial.builder`), for replay matching.
    pub node: Option<String>,
    /// 1-based visit of that node in this run.
    pub visit: u32,
    /// Set when the node is an agent gate: where its verdict goes.
    pub verdict_file: Option<PathBuf>,
    /// Extra environment (`FACTORY_RUN_ID`, `FACTORY_EXP_ID`, ...).
    pub env: Vec<(String, String)>,
    /// Set when the node runs in the sandbox: the policy its processes get.
    pub confinement: Option<crate::placement::Confinement>,
}

impl AgentRequest {
    /// `.factory/` of the project.
    pub fn factory_dir(&self) -> PathBuf {
        self.project.join(FACTORY_DIR)
    }

    /// The value of `key` in [`Self::env`], if given.
    pub fn env_value(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What a headless run produced. A nonzero exit or a timeout is reported here, not as
/// an error: the runner did its job of running the agent.
#[derive(Debug, Clone, Default)]
pub struct AgentOutput {
    pub stdout: String,
    pub stderr_tail: String,
    /// `None` when killed by a signal (including the timeout).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    /// The agent's final message, when the runner can tell it from the rest of stdout
    /// (the agent CLIs' JSON event streams); `None`: stdout is the message.
    pub result: Option<String>,
    /// Tokens and cost, when the runner reports them.
    pub usage: Option<Usage>,
}

impl AgentOutput {
    pub fn success(&self) -> bool {
        !self.timed_out && self.exit_code == Some(0)
    }

    /// What the review file holds: the final message, else all of stdout.
    pub fn review_text(&self) -> &str {
        self.result.as_deref().unwrap_or(&self.stdout)
    }
}

/// Something a runner may or may not be able to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    SessionResume,
    JsonEvents,
    CostReporting,
    ModelSelection,
    SandboxControl,
    Interactive,
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SessionResume => "session resume",
            Self::JsonEvents => "json events",
            Self::CostReporting => "cost reporting",
            Self::ModelSelection => "model selection",
            Self::SandboxControl => "sandbox control",
            Self::Interactive => "interactive run",
        })
    }
}

/// The capabilities a runner has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub session_resume: bool,
    pub json_events: bool,
    pub cost_reporting: bool,
    pub model_selection: bool,
    pub sandbox_control: bool,
    pub interactive: bool,
}

impl Capabilities {
    pub fn has(&self, c: Capability) -> bool {
        match c {
            Capability::SessionResume => self.session_resume,
            Capability::JsonEvents => self.json_events,
            Capability::CostReporting => self.cost_reporting,
            Capability::ModelSelection => self.model_selection,
            Capability::SandboxControl => self.sandbox_control,
            Capability::Interactive => self.interactive,
        }
    }
}

/// What a runner is (spec §8.13's RunnerMeta).
#[derive(Debug, Clone)]
pub struct RunnerMeta {
    pub name: &'static str,
    /// The program it starts, when known up front.
    pub binary: Option<String>,
    /// Environment variables that must be set and non-empty (credentials).
    pub required_env: Vec<&'static str>,
    pub capabilities: Capabilities,
}

impl RunnerMeta {
    /// `Ok` when the runner has `c`, else the named error (never a silent fallback).
    pub fn require(&self, c: Capability) -> Result<(), RunnerError> {
        if self.capabilities.has(c) {
            Ok(())
        } else {
            Err(RunnerError::Unsupported {
                runner: self.name.to_string(),
                capability: c,
            })
        }
    }

    /// The required environment variables that are unset or empty.
    pub fn missing_env(&self) -> Vec<&'static str> {
        self.required_env
            .iter()
            .copied()
            .filter(|k| std::env::var_os(k).is_none_or(|v| v.is_empty()))
            .collect()
    }
}

/// The command a headless run would execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The `FACTORY_*` variables and the request's extra env.
    pub env: Vec<(String, String)>,
    /// What goes to stdin, if anything.
    pub stdin: Option<String>,
}

impl fmt::Display for CommandSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shell_quote(&self.program))?;
        for a in &self.args {
            write!(f, " {}", shell_quote(a))?;
        }
        Ok(())
    }
}

/// `cmd` as the request's placement runs it: unchanged on the host; in the sandbox,
/// bubblewrap's argv with the command after `--`, seeing `readable` (files the runner
/// made for this run, such as the prompt file) and writing `state` (the CLI's own
/// login and session files under the home directory, those that exist). The dry run
/// and the live run both go through here, so they show and run the same argv.
pub fn placed(
    req: &AgentRequest,
    mut cmd: CommandSpec,
    readable: &[PathBuf],
    state: Vec<PathBuf>,
) -> CommandSpec {
    if let Some(c) = &req.confinement {
        let c = c
            .clone()
            .with_writable(state.into_iter().filter(|p| p.exists()));
        let (program, args) = c.command(&cmd.program, &cmd.args, &cmd.cwd, readable);
        cmd.program = program;
        cmd.args = args;
    }
    cmd
}

/// The future a headless run returns.
pub type RunFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AgentOutput, RunnerError>> + Send + 'a>>;

/// One agent CLI (or a stand-in for one).
pub trait Runner: Send + Sync {
    fn meta(&self) -> &RunnerMeta;
    /// The command a headless run would execute (argv, env, stdin); used by dry runs.
    fn command(&self, req: &AgentRequest) -> Result<CommandSpec, RunnerError>;
    /// Runs headless; streams output lines to `progress`.
    fn run<'a>(
        &'a self,
        req: &'a AgentRequest,
        progress: &'a (dyn Fn(&str) + Send + Sync),
    ) -> RunFuture<'a>;
    /// Interactive run (a person at the terminal); a runner without it returns
    /// [`RunnerError::Unsupported`] naming runner and capability.
    fn run_interactive(&self, req: &AgentRequest) -> Result<i32, RunnerError>;
    /// Whether a headless run can start: the credentials the runner needs are there
    /// (in the environment or `extra_env`, or as the CLI's login file). Checked before
    /// a run or `factory agent` starts anything.
    fn check_ready(&self, extra_env: &[(String, String)]) -> Result<(), RunnerError> {
        let _ = extra_env;
        Ok(())
    }
}

/// Which runner to build, as given on the command line or by the executor.
#[derive(Debug, Clone, Default)]
pub struct RunnerSpec {
    pub name: String,
    /// `exec`: the command template.
    pub agent_cmd: Option<String>,
    /// `replay`: the script (relative paths are taken from the current directory).
    pub script: Option<PathBuf>,
}

impl RunnerSpec {
    /// Just a runner name (the agent-CLI runners need nothing else).
    pub fn named(name: &str) -> RunnerSpec {
        RunnerSpec {
            name: name.to_string(),
            ..RunnerSpec::default()
        }
    }

    /// The runner the flags or a lower layer name (see [`Self::from_flags`]), else the
    /// default: the first agent CLI on `PATH` ([`default_runner_on_path`]).
    pub fn resolve(
        runner: Option<&str>,
        agent_cmd: Option<&str>,
        script: Option<&std::path::Path>,
        layers: &Layers,
    ) -> Option<RunnerSpec> {
        Self::from_flags(runner, agent_cmd, script, layers)
            .or_else(|| default_runner_on_path().map(Self::named))
    }

    /// The runner the flags name, with the lower layers filling what they leave out:
    /// the environment (`FACTORY_RUNNER`, `FACTORY_AGENT_CMD`, `FACTORY_REPLAY_SCRIPT`, so
    /// a parent — a run, a CEO agent calling `factory agent` — passes its runner down
    /// once), then factory.md, then `~/.factory/config.toml` ([`Layers::runner`]).
    /// `None` when no runner is named anywhere.
    pub fn from_flags(
        runner: Option<&str>,
        agent_cmd: Option<&str>,
        script: Option<&std::path::Path>,
        layers: &Layers,
    ) -> Option<RunnerSpec> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let name = layers.runner(runner)?.value;
        Some(RunnerSpec {
            name,
            agent_cmd: agent_cmd
                .map(str::to_string)
                .or_else(|| env("FACTORY_AGENT_CMD"))
                .or_else(|| layers.user.exec_command.clone()),
            script: script
                .map(std::path::Path::to_path_buf)
                .or_else(|| env("FACTORY_REPLAY_SCRIPT").map(PathBuf::from))
                .or_else(|| layers.user.replay_script.clone()),
        })
    }
}

/// Builds the runner `spec` names.
pub fn build_runner(spec: &RunnerSpec) -> Result<Box<dyn Runner>, RunnerError> {
    match spec.name.as_str() {
        "exec" => {
            let cmd = spec
                .agent_cmd
                .as_deref()
                .filter(|c| !c.trim().is_empty())
                .ok_or(RunnerError::MissingAgentCmd)?;
            Ok(Box::new(exec::ExecRunner::new(cmd)?))
        }
        "replay" => {
            let script = spec.script.as_deref().ok_or(RunnerError::MissingScript)?;
            Ok(Box::new(replay::ReplayRunner::load(script)?))
        }
        other => match cli_def(other) {
            Some(def) => Ok(Box::new(cli::CliRunner::build(def)?)),
            None => Err(RunnerError::UnknownRunner {
                name: other.to_string(),
                known: KNOWN_RUNNERS.join(", "),
            }),
        },
    }
}

/// The agent CLIs, in the order the default runner is picked ([`CLI_RUNNERS`]).
pub static CLI_DEFS: &[&dyn cli::CliDef] = &[
    &claude::Claude,
    &codex::Codex,
    &opencode::Opencode,
    &gemini::Gemini,
];

/// The CLI runner called `name`.
pub fn cli_def(name: &str) -> Option<&'static dyn cli::CliDef> {
    CLI_DEFS.iter().copied().find(|d| d.name() == name)
}

/// The runner used when none is named anywhere: the first of [`CLI_RUNNERS`] whose
/// binary is on `PATH`.
pub fn default_runner_on_path() -> Option<&'static str> {
    CLI_DEFS
        .iter()
        .find(|d| crate::sys::process::which(d.binary()).is_some())
        .map(|d| d.name())
}

/// The agent-CLI runners whose binary is on `PATH`, in [`CLI_RUNNERS`] order.
pub fn cli_runners_on_path() -> Vec<&'static str> {
    CLI_DEFS
        .iter()
        .filter(|d| crate::sys::process::which(d.binary()).is_some())
        .map(|d| d.name())
        .collect()
}

/// Agent CLIs found on `PATH`, to suggest a command when none was given or found.
pub fn agent_clis_on_path() -> Vec<String> {
    ["claude", "codex", "opencode", "gemini", "aider", "goose"]
        .iter()
        .filter_map(|b| crate::sys::process::which(b).map(|_| (*b).to_string()))
        .collect()
}

/// The `FACTORY_*` environment every runner gives its agent (docs/runners.md).
pub fn factory_env(req: &AgentRequest, prompt_file: &Path) -> Vec<(String, String)> {
    use crate::project::child;
    let s = |p: &Path| p.display().to_string();
    let first = req.outputs.first().map(|p| s(p)).unwrap_or_default();
    let all = req
        .outputs
        .iter()
        .map(|p| s(p))
        .collect::<Vec<_>>()
        .join("\n");
    let mut env = vec![
        ("FACTORY_ROLE".to_string(), req.role.clone()),
        ("FACTORY_TASK".into(), req.task.clone()),
        ("FACTORY_CWD".into(), s(&req.cwd)),
        (child::WORKTREE.into(), s(&req.cwd)),
        (child::PROJECT.into(), s(&req.project)),
        ("FACTORY_DIR".into(), s(&req.factory_dir())),
        ("FACTORY_OUTPUT".into(), first),
        ("FACTORY_OUTPUTS".into(), all),
        ("FACTORY_PROMPT_FILE".into(), s(prompt_file)),
        (child::NODE.into(), req.node.clone().unwrap_or_default()),
        (child::VISIT.into(), req.visit.max(1).to_string()),
        (
            "FACTORY_VERDICT_FILE".into(),
            req.verdict_file.as_deref().map(s).unwrap_or_default(),
        ),
        (
            "FACTORY_MODEL".into(),
            req.model.clone().unwrap_or_default(),
        ),
    ];
    // The caller's extras come last so an explicit value wins.
    env.extend(req.env.iter().cloned());
    env
}

/// Quotes `s` as one POSIX shell word: nothing inside is ever interpreted.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

pub(crate) use crate::sys::process::last_lines as tail;

/// Why a runner could not be built or could not run an agent.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RunnerError {
    #[error("unknown runner `{name}`; known runners: {known}")]
    #[diagnostic(
        code(factory::runner::unknown),
        help(
            "pick one: `--runner exec --agent-cmd \"<command>\"` runs any agent CLI; \
             `--runner replay --script FILE` plays a scripted agent"
        )
    )]
    UnknownRunner { name: String, known: String },

    #[error("the {runner} runner needs `{binary}`, which is not on PATH; {found}")]
    #[diagnostic(code(factory::runner::cli_missing))]
    CliNotFound {
        runner: String,
        binary: String,
        /// `agent CLIs found on PATH: ...` or `no agent CLI is on PATH`.
        found: String,
        #[help]
        help: String,
    },

    #[error("the {runner} runner has no credentials: {needs}")]
    #[diagnostic(code(factory::runner::no_credentials))]
    NotAuthenticated {
        runner: String,
        /// What would count (env vars, login file).
        needs: String,
        #[help]
        help: String,
    },

    #[error(
        "the prompt for the {runner} runner is {bytes} bytes; a command-line argument holds at most {max}"
    )]
    #[diagnostic(
        code(factory::runner::prompt_too_long),
        help(
            "shorten the role's prompt or playbook, or the task, or run the CLI through the exec runner with {{prompt_file}}"
        )
    )]
    PromptTooLong {
        runner: String,
        bytes: usize,
        max: usize,
    },

    #[error("the {runner} runner cannot use the model `{model}`: {why}")]
    #[diagnostic(code(factory::runner::bad_model))]
    BadModel {
        runner: String,
        model: String,
        why: String,
        #[help]
        help: String,
    },

    #[error("the exec runner needs a command")]
    #[diagnostic(
        code(factory::runner::no_agent_cmd),
        help(
            "pass `--agent-cmd \"aider --yes-always --message-file {{prompt_file}}\"`, set \
             FACTORY_AGENT_CMD, or put it in config.toml as `[runners.exec]` `command = \"…\"` \
             (placeholders: {{prompt_file}} {{output}} {{role}} {{cwd}} {{model}} {{project}})"
        )
    )]
    MissingAgentCmd,

    #[error("the replay runner needs a script")]
    #[diagnostic(
        code(factory::runner::no_script),
        help("pass `--script FILE` (its format is in docs/runners.md)")
    )]
    MissingScript,

    #[error("`{program}` (from the {runner} command `{command}`) is not on PATH{found}")]
    #[diagnostic(
        code(factory::runner::binary_missing),
        help(
            "install it, or pick another command with `--runner exec --agent-cmd \"...\"`, \
             or a scripted agent with `--runner replay --script FILE`"
        )
    )]
    BinaryNotFound {
        runner: String,
        program: String,
        command: String,
        /// `"; agent CLIs found: ..."` or `"; no agent CLI found on PATH"`.
        found: String,
    },

    #[error("the {runner} runner does not support {capability}")]
    #[diagnostic(
        code(factory::runner::unsupported),
        help(
            "drop the option that asks for it, or use a runner that has it \
             (for exec, model selection needs a {{model}} placeholder in --agent-cmd)"
        )
    )]
    Unsupported {
        runner: String,
        capability: Capability,
    },

    #[error(transparent)]
    #[diagnostic(transparent)]
    Script(#[from] replay::ScriptError),

    #[error("could not start the agent: {0}")]
    #[diagnostic(
        code(factory::runner::spawn),
        help("check the agent command and that the working directory exists")
    )]
    Spawn(#[from] ProcessError),

    #[error("cannot write {path}: {source}")]
    #[diagnostic(
        code(factory::runner::io),
        help("check that the directory exists and is writable")
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_runner_lists_the_known_ones() {
        let err = build_runner(&RunnerSpec {
            name: "bob".into(),
            ..RunnerSpec::default()
        })
        .err()
        .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("claude, codex, opencode, gemini, exec, replay"),
            "{text}"
        );
        assert!(matches!(
            build_runner(&RunnerSpec {
                name: "exec".into(),
                ..RunnerSpec::default()
            })
            .err()
            .unwrap(),
            RunnerError::MissingAgentCmd
        ));
    }

    #[test]
    fn shell_quote_is_inert() {
        assert_eq!(shell_quote("plain/path.md"), "plain/path.md");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(x)"), "'$(x)'");
    }

    #[test]
    fn capabilities_name_the_missing_one() {
        let meta = RunnerMeta {
            name: "exec",
            binary: None,
            required_env: vec![],
            capabilities: Capabilities::default(),
        };
        let err = meta.require(Capability::ModelSelection).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the exec runner does not support model selection"
        );
    }
}
