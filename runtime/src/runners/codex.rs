//! The `codex` runner: OpenAI's Codex CLI (`@openai/codex`).
//!
//! Headless: `codex -a never exec --json --color never -s workspace-write
//! --skip-git-repo-check -C CWD [--add-dir PROJECT/.git] [-m M] -- PROMPT`. The
//! workspace-write sandbox lets it edit its working directory unattended; in an
//! experiment's worktree, `--add-dir` also opens the project's `.git`, where a commit
//! in a worktree is written. The stream: `thread.started`, `turn.started`,
//! `item.started`/`item.completed` (agent messages, commands, file changes),
//! `turn.completed` with token usage, `turn.failed`/`error`. It reports no cost.

use std::path::PathBuf;

use super::cli::{self, CliDef, EnvView, Transcript, json_line, num, text, tool_line};
use super::{AgentRequest, Capabilities, RunnerError, Usage};

pub struct Codex;

impl CliDef for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn install(&self) -> &'static str {
        "npm install -g @openai/codex"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            session_resume: true,
            json_events: true,
            cost_reporting: false,
            model_selection: true,
            sandbox_control: true,
            interactive: true,
        }
    }

    fn auth_env(&self) -> &'static [&'static str] {
        &["OPENAI_API_KEY", "CODEX_API_KEY"]
    }

    fn login_files(&self, env: &EnvView<'_>) -> Vec<PathBuf> {
        let dir = env
            .get("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| env.home().map(|h| h.join(".codex")));
        dir.map(|d| d.join("auth.json")).into_iter().collect()
    }

    fn login_hint(&self) -> &'static str {
        "set OPENAI_API_KEY, or run `codex login`"
    }

    fn headless_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args: Vec<String> = [
            "-a",
            "never",
            "exec",
            "--json",
            "--color",
            "never",
            "-s",
            "workspace-write",
            "--skip-git-repo-check",
            "-C",
        ]
        .map(String::from)
        .to_vec();
        args.push(req.cwd.display().to_string());
        if req.cwd != req.project {
            args.push("--add-dir".into());
            args.push(req.project.join(".git").display().to_string());
        }
        args.extend(cli::model_args("-m", req));
        args.push("--".into());
        args.push(cli::prompt_arg(self, &req.prompt)?);
        Ok(args)
    }

    fn interactive_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args = vec!["-C".to_string(), req.cwd.display().to_string()];
        args.extend(cli::model_args("-m", req));
        args.push("--".into());
        args.push(cli::prompt_arg(self, &req.prompt)?);
        Ok(args)
    }

    fn parse_line(&self, line: &str, t: &mut Transcript) -> Vec<String> {
        let v = match json_line(line) {
            Ok(v) => v,
            Err(shown) => return shown,
        };
        let item = v.get("item").cloned().unwrap_or_default();
        match text(&v, "type") {
            Some("thread.started") => {
                t.session = text(&v, "thread_id").map(str::to_string);
                vec![format!(
                    "[codex] thread {}",
                    t.session.as_deref().unwrap_or("?")
                )]
            }
            Some("item.started") if text(&item, "type") == Some("command_execution") => {
                tool_line("shell", item.get("command"))
            }
            Some("item.completed") => match text(&item, "type") {
                Some("agent_message") => t.message(text(&item, "text").unwrap_or("")),
                Some("file_change") => {
                    let paths: Vec<&str> = item
                        .get("changes")
                        .and_then(|c| c.as_array())
                        .into_iter()
                        .flatten()
                        .filter_map(|c| text(c, "path"))
                        .collect();
                    vec![format!("[tool] edit: {}", paths.join(", "))]
                }
                Some("mcp_tool_call") => tool_line(
                    &format!(
                        "{}.{}",
                        text(&item, "server").unwrap_or("mcp"),
                        text(&item, "tool").unwrap_or("tool")
                    ),
                    item.get("arguments"),
                ),
                Some("web_search") => tool_line("web_search", item.get("query")),
                Some("error") => t.error(text(&item, "message").unwrap_or("error")),
                _ => Vec::new(),
            },
            Some("turn.completed") => {
                let u = v.get("usage").cloned().unwrap_or_default();
                let cached = num(&u, "cached_input_tokens");
                t.add_usage(Usage {
                    // OpenAI counts cached tokens inside input_tokens.
                    input_tokens: num(&u, "input_tokens").saturating_sub(cached),
                    output_tokens: num(&u, "output_tokens"),
                    cache_read_tokens: cached,
                    cost_usd: None,
                });
                Vec::new()
            }
            Some("turn.failed") => t.error(
                v.pointer("/error/message")
                    .and_then(|m| m.as_str())
                    .unwrap_or("turn failed"),
            ),
            Some("error") => t.error(text(&v, "message").unwrap_or("error")),
            _ => Vec::new(),
        }
    }
}
