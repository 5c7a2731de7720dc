//! The `replay` runner: a scripted agent for tests, the demo and offline evaluation
//! (docs/runners.md has the format).
//!
//! A YAML script says, per node or role and per visit, which files to write, which
//! shell commands to run, what to print and which verdict to return. The same script
//! and the same requests give the same files, commands and outputs every time.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{
    AgentOutput, AgentRequest, Capabilities, CommandSpec, RunFuture, Runner, RunnerError,
    RunnerMeta, factory_env, placed, tail,
};
use crate::sys::async_process::{self, ProcessSpec};
use crate::sys::files::atomic_write;

/// A parsed, validated script.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Key: a node id (exact, or a dotted suffix like `qa.verdict`) or a role name; in
    /// a parallel branch, `KEY#N` is for hypothesis N only and is tried first.
    pub agents: BTreeMap<String, Vec<Step>>,
}

/// What the agent does on one visit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Waited first, to simulate work (concurrency and timeout tests).
    #[serde(default)]
    pub sleep_ms: Option<u64>,
    /// Files to write: `.factory/...` in the project's `.factory/`, others in `cwd`.
    #[serde(default)]
    pub write: BTreeMap<String, String>,
    /// Shell commands run in order with `sh -c` in `cwd`; a failure ends the visit.
    #[serde(default)]
    pub run: Vec<String>,
    /// `proceed`, `reloop` or `halt`: written as a verdict file.
    #[serde(default)]
    pub verdict: Option<String>,
    /// The verdict's rationale (a default one names the script).
    #[serde(default)]
    pub rationale: Option<String>,
    /// The agent's stdout (its final message, captured as the review).
    #[serde(default)]
    pub print: Option<String>,
    /// The exit code to report (default 0).
    #[serde(default)]
    pub exit: Option<i32>,
    /// Tokens and cost to report, as an agent CLI would (`input_tokens`,
    /// `output_tokens`, `cache_read_tokens`, `cost_usd`).
    #[serde(default)]
    pub usage: Option<crate::events::Usage>,
}

/// Verdicts a step may return.
pub const VERDICTS: &[&str] = &["proceed", "reloop", "halt"];

/// Why a script could not be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ScriptError {
    #[error("cannot read the replay script {path}: {source}")]
    #[diagnostic(
        code(factory::replay::read),
        help("check the path given to --script (relative paths start from the current directory)")
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the replay script {path} is not valid: {message}")]
    #[diagnostic(
        code(factory::replay::invalid),
        help(
            "a script is `agents:` mapping a node id or role to a list of steps with the keys \
             sleep_ms, write, run, verdict, rationale, print, exit (docs/runners.md)"
        )
    )]
    Invalid { path: PathBuf, message: String },
    #[error(
        "the replay script {path} has no entry for node `{node}` or role `{role}` (it has: {keys})"
    )]
    #[diagnostic(
        code(factory::replay::no_entry),
        help("add `{role}:` (or the node id, or its dotted suffix) under `agents:` in the script")
    )]
    NoEntry {
        path: PathBuf,
        node: String,
        role: String,
        keys: String,
    },
    #[error(
        "the replay script {path} gives `{key}` a verdict, but the invocation has no verdict file or output"
    )]
    #[diagnostic(
        code(factory::replay::no_verdict_file),
        help("give the verdict to an agent gate's role, or drop `verdict:` from that step")
    )]
    NoVerdictFile { path: PathBuf, key: String },
}

/// Plays a [`Script`].
#[derive(Debug)]
pub struct ReplayRunner {
    path: PathBuf,
    script: Script,
    meta: RunnerMeta,
}

impl ReplayRunner {
    /// Reads and validates the script at `path` (relative to the current directory).
    pub fn load(path: &Path) -> Result<Self, ScriptError> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let text = std::fs::read_to_string(&path).map_err(|source| ScriptError::Read {
            path: path.clone(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates `text`; `path` names it in errors.
    pub fn parse(text: &str, path: PathBuf) -> Result<Self, ScriptError> {
        let invalid = |message: String| ScriptError::Invalid {
            path: path.clone(),
            message,
        };
        let script: Script = serde_yaml_ng::from_str(text).map_err(|e| invalid(e.to_string()))?;
        for (key, steps) in &script.agents {
            if steps.is_empty() {
                return Err(invalid(format!("`{key}` has no steps")));
            }
            for (i, step) in steps.iter().enumerate() {
                let at = format!("`{key}` step {}", i + 1);
                if let Some(v) = &step.verdict
                    && !VERDICTS.contains(&v.to_ascii_lowercase().as_str())
                {
                    return Err(invalid(format!(
                        "{at}: verdict `{v}` is not one of proceed, reloop, halt"
                    )));
                }
                for file in step.write.keys() {
                    if !is_safe_relative(file) {
                        return Err(invalid(format!(
                            "{at}: `{file}` must be a relative path without `..`"
                        )));
                    }
                }
            }
        }
        Ok(Self {
            path,
            script,
            meta: RunnerMeta {
                name: "replay",
                binary: None,
                required_env: Vec::new(),
                capabilities: Capabilities {
                    // A scripted agent accepts any model: it records it in FACTORY_MODEL.
                    model_selection: true,
                    ..Capabilities::default()
                },
            },
        })
    }

    /// The script's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The step for `req`: its key and the step of its visit (the last one repeats).
    pub fn step_for(&self, req: &AgentRequest) -> Result<(&str, &Step), ScriptError> {
        let node = req.node.as_deref().unwrap_or("");
        // In a parallel branch, `builder#2` is hypothesis 2's builder: tried first.
        let branch = req
            .env
            .iter()
            .find(|(k, _)| k == HYPOTHESIS_INDEX_ENV)
            .map(|(_, v)| v.as_str());
        let entry = |name: &str| -> Option<(&String, &Vec<Step>)> {
            let by_node = (!node.is_empty())
                .then(|| {
                    self.script
                        .agents
                        .iter()
                        .filter(|(k, _)| {
                            unqualified(k, branch)
                                .is_some_and(|k| node == k || node.ends_with(&format!(".{k}")))
                        })
                        .filter(|(k, _)| k.ends_with(name))
                        // The most specific (longest) match wins.
                        .max_by_key(|(k, _)| k.len())
                })
                .flatten();
            by_node.or_else(|| {
                self.script
                    .agents
                    .get_key_value(&format!("{}{name}", req.role))
            })
        };
        let qualified = branch.map(|i| format!("#{i}"));
        let (key, steps) = qualified
            .as_deref()
            .and_then(&entry)
            .or_else(|| entry(""))
            .ok_or_else(|| ScriptError::NoEntry {
                path: self.path.clone(),
                node: if node.is_empty() { "-" } else { node }.to_string(),
                role: req.role.clone(),
                keys: self
                    .script
                    .agents
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let i = (req.visit.max(1) as usize - 1).min(steps.len() - 1);
        Ok((key.as_str(), &steps[i]))
    }

    async fn play(
        &self,
        req: &AgentRequest,
        progress: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<AgentOutput, RunnerError> {
        let start = Instant::now();
        let (key, step) = self.step_for(req)?;
        // No prompt file: a scripted agent does not read its prompt.
        let env = factory_env(req, Path::new(""));
        let done = |stdout: String, stderr: String, exit_code| AgentOutput {
            stdout,
            stderr_tail: tail(&stderr, 20),
            exit_code: Some(exit_code),
            timed_out: false,
            duration: start.elapsed(),
            usage: step.usage,
            ..AgentOutput::default()
        };
        if let Some(ms) = step.sleep_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        for (file, content) in &step.write {
            let path = resolve(req, file);
            if let Some((stderr, code)) =
                write_as_agent(req, &env, &path, content, progress).await?
            {
                return Ok(done(String::new(), stderr, code));
            }
        }
        // Commands' stderr is kept for the failure message; their stdout is only shown.
        let mut stderr = String::new();
        for command in &step.run {
            let spec = placed_shell(req, &env, command, None);
            let out = async_process::run(&spec, progress).await?;
            stderr.push_str(&out.stderr);
            if !out.success() {
                let code = out.code.unwrap_or(-1);
                stderr.push_str(&format!(
                    "replay: `{command}` (from {}) exited {code}",
                    self.path.display()
                ));
                return Ok(done(String::new(), stderr, code));
            }
        }
        if let Some(verdict) = &step.verdict {
            let path = req
                .verdict_file
                .clone()
                .or_else(|| req.outputs.first().cloned())
                .ok_or_else(|| ScriptError::NoVerdictFile {
                    path: self.path.clone(),
                    key: key.to_string(),
                })?;
            let rationale = step.rationale.clone().unwrap_or_else(|| {
                format!("Scripted by the replay script {}.", self.path.display())
            });
            let text = format!(
                "## Verdict\n{}\n\n## Rationale\n{rationale}\n\n## Issues found\n- none\n",
                verdict.to_ascii_uppercase()
            );
            if let Some((stderr, code)) = write_as_agent(req, &env, &path, &text, progress).await? {
                return Ok(done(String::new(), stderr, code));
            }
        }
        let stdout = step.print.clone().unwrap_or_default();
        for line in stdout.lines() {
            progress(line);
        }
        Ok(done(stdout, stderr, step.exit.unwrap_or(0)))
    }
}

/// `sh -c script` as the request's placement runs it, in the request's directory.
fn placed_shell(
    req: &AgentRequest,
    env: &[(String, String)],
    script: &str,
    stdin: Option<Vec<u8>>,
) -> ProcessSpec {
    let cmd = placed(
        req,
        CommandSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: req.cwd.clone(),
            env: env.to_vec(),
            stdin: None,
        },
        &[],
        Vec::new(),
    );
    ProcessSpec {
        program: cmd.program,
        args: cmd.args,
        cwd: cmd.cwd,
        env: cmd.env,
        stdin,
        timeout: None,
    }
}

/// Writes `content` to `path` as the scripted agent: directly on the host, and from
/// inside the sandbox when the node runs in one, so the sandbox decides what a scripted
/// agent may write as it would for a real one. `Some((stderr, exit code))` when the
/// write was refused.
async fn write_as_agent(
    req: &AgentRequest,
    env: &[(String, String)],
    path: &Path,
    content: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<Option<(String, i32)>, RunnerError> {
    if req.confinement.is_none() {
        atomic_write(path, content.as_bytes()).map_err(|source| RunnerError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        return Ok(None);
    }
    let script = format!(
        "mkdir -p -- \"$(dirname -- {0})\" && cat > {0}",
        super::shell_quote(&path.display().to_string())
    );
    let spec = placed_shell(req, env, &script, Some(content.as_bytes().to_vec()));
    let out = async_process::run(&spec, progress).await?;
    if out.success() {
        return Ok(None);
    }
    let why = format!(
        "replay: could not write {} in the sandbox: {}",
        path.display(),
        out.tail(3)
    );
    Ok(Some((why, out.code.unwrap_or(-1))))
}

impl Runner for ReplayRunner {
    fn meta(&self) -> &RunnerMeta {
        &self.meta
    }

    fn command(&self, req: &AgentRequest) -> Result<CommandSpec, RunnerError> {
        let (key, _) = self.step_for(req)?;
        // A scripted agent runs no program of its own; its commands and writes go
        // through the same placement (see `write_as_agent`).
        Ok(CommandSpec {
            program: "replay".into(),
            args: vec![
                self.path.display().to_string(),
                key.to_string(),
                format!("visit {}", req.visit.max(1)),
            ],
            cwd: req.cwd.clone(),
            env: factory_env(req, Path::new("")),
            stdin: None,
        })
    }

    fn run<'a>(
        &'a self,
        req: &'a AgentRequest,
        progress: &'a (dyn Fn(&str) + Send + Sync),
    ) -> RunFuture<'a> {
        Box::pin(async move {
            let Some(limit) = req.timeout else {
                return self.play(req, progress).await;
            };
            // Dropping `play` on the deadline kills any command it is running.
            match tokio::time::timeout(limit, self.play(req, progress)).await {
                Ok(result) => result,
                Err(_) => Ok(AgentOutput {
                    stdout: String::new(),
                    stderr_tail: format!("replay: timed out after {limit:?}"),
                    exit_code: None,
                    timed_out: true,
                    duration: limit,
                    ..AgentOutput::default()
                }),
            }
        })
    }

    fn run_interactive(&self, _req: &AgentRequest) -> Result<i32, RunnerError> {
        self.meta.require(super::Capability::Interactive)?;
        Ok(0)
    }
}

/// Where a script path lands: `.factory/...` in the project, the rest in `cwd`.
/// Where a scripted write lands: a `.factory/` file the node was asked to write goes
/// where it asked for it (a parallel branch keeps its own), any other `.factory/` file
/// in the project's, and code in the working directory.
fn resolve(req: &AgentRequest, file: &str) -> PathBuf {
    match file.strip_prefix(".factory/") {
        Some(rest) => req
            .outputs
            .iter()
            .chain(&req.verdict_file)
            .find(|out| out.ends_with(rest))
            .cloned()
            .unwrap_or_else(|| req.factory_dir().join(rest)),
        None => req.cwd.join(file),
    }
}

/// Set in a parallel branch's agents: the 1-based position of its hypothesis.
pub const HYPOTHESIS_INDEX_ENV: &str = "FACTORY_HYPOTHESIS_INDEX";

/// The key without its `#N` branch qualifier, when it applies to `branch` (a key
/// qualified for another branch, or any qualified key outside a branch, does not).
fn unqualified<'k>(key: &'k str, branch: Option<&str>) -> Option<&'k str> {
    match key.split_once('#') {
        None => Some(key),
        Some((k, i)) => (branch == Some(i)).then_some(k),
    }
}

fn is_safe_relative(file: &str) -> bool {
    let p = Path::new(file);
    !file.is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests;
