//! What the four agent-CLI runners share: finding the binary, the auth check, the dry
//! run, spawning headless with the JSON event stream parsed into progress lines, the
//! final text and usage, and handing the terminal over for an interactive run.
//!
//! Each CLI ([`super::claude`], [`super::codex`], [`super::opencode`],
//! [`super::gemini`]) is a [`CliDef`]: its argv, its credentials, and a parser of one
//! line of its event stream. The CLIs depend on this module, never it on them: the
//! list of them is the runners room's ([`super::CLI_DEFS`]).

mod auth;
mod stream;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use auth::{AuthState, auth_state};
use stream::truncate;
pub use stream::{Transcript, json_line, num, one_line, parse_stream, text, tool_line};

use super::prompt_file::PromptFile;
use super::{
    AgentOutput, AgentRequest, Capabilities, Capability, CommandSpec, RunFuture, Runner,
    RunnerError, RunnerMeta, Usage, factory_env, placed, tail,
};
use crate::sys::async_process::{self, ProcessSpec};

/// The longest single argument Linux passes to a program (MAX_ARG_STRLEN): the
/// prompt travels as one.
pub const MAX_ARG: usize = 128 * 1024;

/// One agent CLI: how to call it and how to read what it prints.
pub trait CliDef: Send + Sync {
    /// The runner's name (`--runner NAME`).
    fn name(&self) -> &'static str;
    /// The program on `PATH`.
    fn binary(&self) -> &'static str {
        self.name()
    }
    /// How to install it (shown when it is missing).
    fn install(&self) -> &'static str;
    fn capabilities(&self) -> Capabilities;
    /// Environment variables any one of which is a credential.
    fn auth_env(&self) -> &'static [&'static str];
    /// Files a login leaves behind, given the environment.
    fn login_files(&self, env: &EnvView<'_>) -> Vec<PathBuf>;
    /// How to log in (shown when no credential is found).
    fn login_hint(&self) -> &'static str;
    /// What the CLI writes under the home directory as it runs (its login and session
    /// state): writable in the sandbox, where the rest of the home is read-only.
    fn state_paths(&self, env: &EnvView<'_>) -> Vec<PathBuf> {
        self.login_files(env)
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect()
    }
    /// Whether a headless run needs a credential at all (opencode has free models).
    fn needs_credentials(&self) -> bool {
        true
    }
    /// Arguments of a headless run of `req` in `req.cwd`, unattended.
    fn headless_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError>;
    /// Arguments of an interactive run that starts with the prompt.
    fn interactive_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError>;
    /// Variables the CLI itself needs to run unattended (on top of `FACTORY_*`).
    fn own_env(&self, env: &EnvView<'_>) -> Vec<(String, String)> {
        let _ = env;
        Vec::new()
    }
    /// Reads one line of the CLI's stdout into `t`; returns the progress lines to show.
    fn parse_line(&self, line: &str, t: &mut Transcript) -> Vec<String>;
}

/// The process environment with a request's extra variables on top: a variable the
/// request sets counts as set. Empty values count as unset.
#[derive(Debug, Clone, Copy)]
pub struct EnvView<'a> {
    extra: &'a [(String, String)],
}

impl<'a> EnvView<'a> {
    pub fn new(extra: &'a [(String, String)]) -> Self {
        Self { extra }
    }

    pub fn get(&self, key: &str) -> Option<String> {
        match self.extra.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => Some(v.clone()),
            None => std::env::var(key).ok(),
        }
        .filter(|v| !v.is_empty())
    }

    /// `$HOME`, for login files.
    pub fn home(&self) -> Option<PathBuf> {
        self.get("HOME").map(PathBuf::from)
    }

    /// Whether `FACTORY_<RUNNER>_DRY_RUN` asks for a dry run.
    pub fn dry_run(&self, runner: &str) -> bool {
        self.get(&dry_run_var(runner))
            .is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no"))
    }
}

/// `FACTORY_CLAUDE_DRY_RUN` for `claude`.
pub fn dry_run_var(runner: &str) -> String {
    format!("FACTORY_{}_DRY_RUN", runner.to_ascii_uppercase())
}

/// The error for a CLI runner whose binary is not on `PATH`, naming the ones that are.
pub fn not_found(def: &dyn CliDef) -> RunnerError {
    let found = super::cli_runners_on_path();
    let (found_text, help) = if found.is_empty() {
        (
            "no agent CLI is on PATH (looked for claude, codex, opencode, gemini)".to_string(),
            format!(
                "install it ({}), or run any command with `--runner exec --agent-cmd \"...\"`, \
                 or a scripted agent with `--runner replay --script FILE`",
                def.install()
            ),
        )
    } else {
        (
            format!("runners found on PATH: {}", found.join(", ")),
            format!(
                "pick one of those with `--runner {}`, or install {} ({})",
                found[0],
                def.binary(),
                def.install()
            ),
        )
    };
    RunnerError::CliNotFound {
        runner: def.name().to_string(),
        binary: def.binary().to_string(),
        found: found_text,
        help,
    }
}

/// The prompt as one argument, refused when the kernel would refuse it.
pub fn prompt_arg(def: &dyn CliDef, prompt: &str) -> Result<String, RunnerError> {
    if prompt.len() >= MAX_ARG {
        return Err(RunnerError::PromptTooLong {
            runner: def.name().to_string(),
            bytes: prompt.len(),
            max: MAX_ARG - 1,
        });
    }
    Ok(prompt.to_string())
}

/// An agent CLI behind the [`Runner`] trait.
pub struct CliRunner {
    def: &'static dyn CliDef,
    meta: RunnerMeta,
}

impl std::fmt::Debug for CliRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliRunner")
            .field("name", &self.def.name())
            .finish()
    }
}

impl CliRunner {
    /// The runner for `def`. Fails when its binary is not on `PATH`, unless a dry run
    /// is asked for (which starts nothing).
    pub fn build(def: &'static dyn CliDef) -> Result<Self, RunnerError> {
        if !EnvView::new(&[]).dry_run(def.name())
            && crate::sys::process::which(def.binary()).is_none()
        {
            return Err(not_found(def));
        }
        Ok(Self::unchecked(def))
    }

    /// The runner without looking for its binary (argv previews, tests).
    pub fn unchecked(def: &'static dyn CliDef) -> Self {
        Self {
            def,
            meta: RunnerMeta {
                name: def.name(),
                binary: Some(def.binary().to_string()),
                required_env: Vec::new(),
                capabilities: def.capabilities(),
            },
        }
    }

    fn check_model(&self, req: &AgentRequest) -> Result<(), RunnerError> {
        if req.model.is_some() {
            self.meta.require(Capability::ModelSelection)?;
        }
        Ok(())
    }

    fn spec(&self, req: &AgentRequest, prompt_file: &Path) -> Result<CommandSpec, RunnerError> {
        self.check_model(req)?;
        let mut env = factory_env(req, prompt_file);
        env.extend(self.def.own_env(&EnvView::new(&req.env)));
        Ok(CommandSpec {
            program: self.def.binary().to_string(),
            args: self.def.headless_args(req)?,
            cwd: req.cwd.clone(),
            env,
            stdin: None,
        })
    }

    /// [`Self::spec`] with `program` as the command, placed as the request says.
    fn placed_spec(
        &self,
        req: &AgentRequest,
        program: String,
        prompt_file: &Path,
    ) -> Result<CommandSpec, RunnerError> {
        let cmd = CommandSpec {
            program,
            ..self.spec(req, prompt_file)?
        };
        let state = self.def.state_paths(&EnvView::new(&req.env));
        Ok(placed(req, cmd, &[prompt_file.to_path_buf()], state))
    }

    /// A dry run: what would have run, as the agent's output, with zero usage.
    fn dry_run(&self, req: &AgentRequest, progress: &(dyn Fn(&str) + Send + Sync)) -> AgentOutput {
        let shown = self
            .command(req)
            .map(|c| c.to_string())
            .unwrap_or_else(|e| format!("(no command: {e})"));
        let line = format!(
            "[dry run] {} would run: {}",
            self.def.name(),
            truncate(&shown, 300)
        );
        progress(&line);
        AgentOutput {
            stdout: format!("{line}\n"),
            exit_code: Some(0),
            result: Some(format!(
                "Dry run ({}=1): the {} agent was not started.\n",
                dry_run_var(self.def.name()),
                req.role
            )),
            usage: Some(Usage {
                cost_usd: self.meta.capabilities.cost_reporting.then_some(0.0),
                ..Usage::default()
            }),
            ..AgentOutput::default()
        }
    }
}

impl Runner for CliRunner {
    fn meta(&self) -> &RunnerMeta {
        &self.meta
    }

    fn command(&self, req: &AgentRequest) -> Result<CommandSpec, RunnerError> {
        let planned = std::env::temp_dir().join(format!("factory-prompt-{}-XXXX.md", req.role));
        self.placed_spec(req, self.def.binary().to_string(), &planned)
    }

    fn check_ready(&self, extra_env: &[(String, String)]) -> Result<(), RunnerError> {
        let env = EnvView::new(extra_env);
        if env.dry_run(self.def.name())
            || !self.def.needs_credentials()
            || auth_state(self.def, &env).is_ready()
        {
            return Ok(());
        }
        Err(RunnerError::NotAuthenticated {
            runner: self.def.name().to_string(),
            needs: auth::auth_needs(self.def, &env),
            help: format!(
                "{}; or set {}=1 to try the run without starting the agent",
                self.def.login_hint(),
                dry_run_var(self.def.name())
            ),
        })
    }

    fn run<'a>(
        &'a self,
        req: &'a AgentRequest,
        progress: &'a (dyn Fn(&str) + Send + Sync),
    ) -> RunFuture<'a> {
        Box::pin(async move {
            if EnvView::new(&req.env).dry_run(self.def.name()) {
                self.check_model(req)?;
                self.def.headless_args(req)?;
                return Ok(self.dry_run(req, progress));
            }
            self.check_ready(&req.env)?;
            let program =
                crate::sys::process::which(self.def.binary()).ok_or_else(|| not_found(self.def))?;
            let prompt = PromptFile::write(&req.role, &req.prompt)?;
            let cmd = self.placed_spec(req, program.display().to_string(), &prompt.path)?;
            let spec = ProcessSpec {
                program: cmd.program,
                args: cmd.args,
                cwd: cmd.cwd,
                env: cmd.env,
                stdin: None,
                timeout: req.timeout,
            };
            let transcript = Mutex::new(Transcript::default());
            let on_line = |line: &str| {
                let shown = {
                    let mut t = transcript.lock().unwrap_or_else(|e| e.into_inner());
                    self.def.parse_line(line, &mut t)
                };
                for l in shown {
                    progress(&l);
                }
            };
            let out = async_process::run(&spec, &on_line).await?;
            let t = transcript.into_inner().unwrap_or_else(|e| e.into_inner());
            Ok(AgentOutput {
                stderr_tail: tail(&out.stderr, 20),
                result: t.final_text(),
                usage: t.usage,
                stdout: out.stdout,
                exit_code: out.code,
                timed_out: out.timed_out,
                duration: out.elapsed,
            })
        })
    }

    fn run_interactive(&self, req: &AgentRequest) -> Result<i32, RunnerError> {
        self.meta.require(Capability::Interactive)?;
        self.check_model(req)?;
        let program =
            crate::sys::process::which(self.def.binary()).ok_or_else(|| not_found(self.def))?;
        let prompt = PromptFile::write(&req.role, &req.prompt)?;
        let args = self.def.interactive_args(req)?;
        let mut env = factory_env(req, &prompt.path);
        env.extend(self.def.own_env(&EnvView::new(&req.env)));
        // The person owns the terminal: stdin, stdout and stderr stay theirs.
        let status = std::process::Command::new(&program)
            .args(&args)
            .current_dir(&req.cwd)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .status()
            .map_err(|source| {
                RunnerError::Spawn(crate::sys::process::ProcessError::Spawn {
                    command: program.display().to_string(),
                    dir: req.cwd.clone(),
                    source,
                })
            })?;
        Ok(status.code().unwrap_or(-1))
    }
}

/// The command the `name` runner builds for `req` (interactive or headless), with
/// only the runner's own variables in `env`: what `factory runners --print-argv`
/// shows and `scripts/check-real-clis` runs.
pub fn preview(
    name: &str,
    req: &AgentRequest,
    interactive: bool,
) -> Result<CommandSpec, RunnerError> {
    let def = super::cli_def(name).ok_or_else(|| RunnerError::UnknownRunner {
        name: name.to_string(),
        known: super::CLI_RUNNERS.join(", "),
    })?;
    let runner = CliRunner::unchecked(def);
    runner.check_model(req)?;
    let args = if interactive {
        def.interactive_args(req)?
    } else {
        def.headless_args(req)?
    };
    Ok(CommandSpec {
        program: def.binary().to_string(),
        args,
        cwd: req.cwd.clone(),
        env: def.own_env(&EnvView::new(&req.env)),
        stdin: None,
    })
}

/// `--model M` when a model is asked for.
pub fn model_args(flag: &str, req: &AgentRequest) -> Vec<String> {
    match req.model.as_deref().map(str::trim) {
        Some(m) if !m.is_empty() => vec![flag.to_string(), m.to_string()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
