//! The `exec` runner: any command as an agent (docs/runners.md).
//!
//! The template (`--agent-cmd`) runs with `sh -c` in the request's `cwd`. Placeholders
//! `{prompt_file}` `{output}` `{role}` `{cwd}` `{model}` `{project}` become one
//! shell-quoted word each, so a prompt or path full of metacharacters stays inert. The
//! prompt also goes to stdin, and everything else in `FACTORY_*` variables.

use std::path::Path;

use super::prompt_file::PromptFile;
use super::{
    AgentOutput, AgentRequest, Capabilities, Capability, CommandSpec, RunFuture, Runner,
    RunnerError, RunnerMeta, factory_env, placed, shell_quote, tail,
};
use crate::sys::async_process::{self, ProcessSpec};

/// Placeholders the template may use.
pub const PLACEHOLDERS: &[&str] = &["prompt_file", "output", "role", "cwd", "model", "project"];

/// Runs a shell command template as the agent.
#[derive(Debug)]
pub struct ExecRunner {
    template: String,
    meta: RunnerMeta,
}

impl ExecRunner {
    /// A runner for `template`. Fails when its program is not installed.
    pub fn new(template: &str) -> Result<Self, RunnerError> {
        let program = first_program(template);
        if let Some(p) = &program {
            check_program(p, template)?;
        }
        Ok(Self {
            template: template.to_string(),
            meta: RunnerMeta {
                name: "exec",
                binary: program,
                required_env: Vec::new(),
                capabilities: Capabilities {
                    // Only when the command has somewhere to put the model.
                    model_selection: template.contains("{model}"),
                    interactive: true,
                    ..Capabilities::default()
                },
            },
        })
    }

    /// The template with its placeholders filled for `req`.
    pub fn expand(&self, req: &AgentRequest, prompt_file: &Path) -> String {
        let value = |name: &str| -> Option<String> {
            Some(match name {
                "prompt_file" => prompt_file.display().to_string(),
                "output" => req
                    .outputs
                    .first()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                "role" => req.role.clone(),
                "cwd" => req.cwd.display().to_string(),
                "model" => req.model.clone().unwrap_or_default(),
                "project" => req.project.display().to_string(),
                _ => return None,
            })
        };
        let mut out = String::with_capacity(self.template.len());
        let mut rest = self.template.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}').and_then(|close| {
                let name = &after[..close];
                value(name).map(|v| (close, v))
            }) {
                Some((close, v)) => {
                    out.push_str(&shell_quote(&v));
                    rest = &after[close + 1..];
                }
                // Not a placeholder (`${HOME}`, a brace group): left for the shell.
                None => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }

    fn spec(&self, req: &AgentRequest, prompt_file: &Path) -> Result<CommandSpec, RunnerError> {
        if req.model.is_some() {
            self.meta.require(Capability::ModelSelection)?;
        }
        let cmd = CommandSpec {
            program: "sh".into(),
            args: vec!["-c".into(), self.expand(req, prompt_file)],
            cwd: req.cwd.clone(),
            env: factory_env(req, prompt_file),
            stdin: Some(req.prompt.clone()),
        };
        Ok(placed(req, cmd, &[prompt_file.to_path_buf()], Vec::new()))
    }
}

impl Runner for ExecRunner {
    fn meta(&self) -> &RunnerMeta {
        &self.meta
    }

    fn command(&self, req: &AgentRequest) -> Result<CommandSpec, RunnerError> {
        // A dry run shows where the prompt would go; the real file is made per run.
        let planned = std::env::temp_dir().join(format!("factory-prompt-{}-XXXX.md", req.role));
        self.spec(req, &planned)
    }

    fn run<'a>(
        &'a self,
        req: &'a AgentRequest,
        progress: &'a (dyn Fn(&str) + Send + Sync),
    ) -> RunFuture<'a> {
        Box::pin(async move {
            let prompt = PromptFile::write(&req.role, &req.prompt)?;
            let cmd = self.spec(req, &prompt.path)?;
            let spec = ProcessSpec {
                program: cmd.program,
                args: cmd.args,
                cwd: cmd.cwd,
                env: cmd.env,
                stdin: cmd.stdin.map(String::into_bytes),
                timeout: req.timeout,
            };
            let out = async_process::run(&spec, progress).await?;
            Ok(AgentOutput {
                stderr_tail: tail(&out.stderr, 20),
                stdout: out.stdout,
                exit_code: out.code,
                timed_out: out.timed_out,
                duration: out.elapsed,
                ..AgentOutput::default()
            })
        })
    }

    fn run_interactive(&self, req: &AgentRequest) -> Result<i32, RunnerError> {
        let prompt = PromptFile::write(&req.role, &req.prompt)?;
        let cmd = self.spec(req, &prompt.path)?;
        // The person owns the terminal: stdin stays theirs, the prompt is in the file.
        let status = std::process::Command::new(&cmd.program)
            .args(&cmd.args)
            .current_dir(&cmd.cwd)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .status()
            .map_err(|source| {
                RunnerError::Spawn(crate::sys::process::ProcessError::Spawn {
                    command: self.template.clone(),
                    dir: cmd.cwd.clone(),
                    source,
                })
            })?;
        Ok(status.code().unwrap_or(-1))
    }
}

/// The program a template starts: its first word after any `VAR=value` assignments.
/// `None` when that cannot be told without running the shell (a quoted or computed
/// word, a subshell).
fn first_program(template: &str) -> Option<String> {
    let word = template
        .split_whitespace()
        .find(|w| !(w.contains('=') && !w.starts_with('=') && !w.starts_with('-')))?;
    if word.chars().any(|c| "'\"$`(){}<>|;&\\".contains(c)) {
        return None;
    }
    Some(word.to_string())
}

/// Whether the shell can run `program`: a builtin, a path, or a name on PATH.
fn check_program(program: &str, template: &str) -> Result<(), RunnerError> {
    if program.contains('/') {
        // A relative path depends on the agent's cwd, known only at run time.
        if Path::new(program).is_relative() || Path::new(program).exists() {
            return Ok(());
        }
    } else if crate::sys::process::which(program).is_some() || SHELL_BUILTINS.contains(&program) {
        return Ok(());
    }
    let found = super::agent_clis_on_path();
    Err(RunnerError::BinaryNotFound {
        runner: "exec".into(),
        program: program.to_string(),
        command: template.to_string(),
        found: if found.is_empty() {
            "; no agent CLI found on PATH (looked for claude, codex, opencode, gemini, aider, goose)"
                .into()
        } else {
            format!("; agent CLIs found on PATH: {}", found.join(", "))
        },
    })
}

/// Words `sh` runs itself, never found on PATH.
const SHELL_BUILTINS: &[&str] = &[
    "cd", "echo", "printf", "exec", "exit", "export", "test", "[", "true", "false", ":", ".",
    "set", "read", "eval", "command", "if", "for", "while", "case", "!",
];

#[cfg(test)]
mod tests;
