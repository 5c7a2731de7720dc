//! The `claude` runner: Claude Code (`@anthropic-ai/claude-code`).
//!
//! Headless: `claude -p --output-format stream-json --verbose --permission-mode
//! bypassPermissions [--model M] -- PROMPT` in the agent's cwd. Bypassing permissions
//! is what lets it edit and run commands unattended; as root Claude Code refuses that
//! unless `IS_SANDBOX=1`, which the runner sets then. The stream is one JSON object a
//! line: `system` (init), `assistant`/`user` messages, and a final `result` with the
//! text, `total_cost_usd` and `usage`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cli::{self, CliDef, EnvView, Transcript, json_line, num, text, tool_line};
use super::{AgentRequest, Capabilities, RunnerError, Usage};

pub struct Claude;

impl CliDef for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn install(&self) -> &'static str {
        "npm install -g @anthropic-ai/claude-code"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            session_resume: true,
            json_events: true,
            cost_reporting: true,
            model_selection: true,
            sandbox_control: true,
            interactive: true,
        }
    }

    fn auth_env(&self) -> &'static [&'static str] {
        &[
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        ]
    }

    fn login_files(&self, env: &EnvView<'_>) -> Vec<PathBuf> {
        let dir = env
            .get("CLAUDE_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| env.home().map(|h| h.join(".claude")));
        dir.map(|d| d.join(".credentials.json"))
            .into_iter()
            .collect()
    }

    fn state_paths(&self, env: &EnvView<'_>) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self
            .login_files(env)
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        paths.extend(env.home().map(|h| h.join(".claude.json")));
        paths
    }

    fn login_hint(&self) -> &'static str {
        "set ANTHROPIC_API_KEY, or run `claude` once and log in with /login"
    }

    fn headless_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args: Vec<String> = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
        ]
        .map(String::from)
        .to_vec();
        args.extend(cli::model_args("--model", req));
        // `--`: a prompt starting with `-` is not an option.
        args.push("--".into());
        args.push(cli::prompt_arg(self, &req.prompt)?);
        Ok(args)
    }

    fn interactive_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args = cli::model_args("--model", req);
        args.push("--".into());
        args.push(cli::prompt_arg(self, &req.prompt)?);
        Ok(args)
    }

    fn own_env(&self, env: &EnvView<'_>) -> Vec<(String, String)> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        // Claude Code accepts only `1` (not `yes`, `true`).
        if root && env.get("IS_SANDBOX").as_deref() != Some("1") {
            vec![("IS_SANDBOX".into(), "1".into())]
        } else {
            Vec::new()
        }
    }

    fn parse_line(&self, line: &str, t: &mut Transcript) -> Vec<String> {
        let v = match json_line(line) {
            Ok(v) => v,
            Err(shown) => return shown,
        };
        match text(&v, "type") {
            Some("system") if text(&v, "subtype") == Some("init") => {
                t.session = text(&v, "session_id").map(str::to_string);
                t.model = text(&v, "model").map(str::to_string);
                vec![format!(
                    "[claude] session {} (model {})",
                    t.session.as_deref().unwrap_or("?"),
                    t.model.as_deref().unwrap_or("?")
                )]
            }
            Some("assistant") => {
                let mut out = Vec::new();
                let content = v.pointer("/message/content").and_then(Value::as_array);
                for item in content.into_iter().flatten() {
                    match text(item, "type") {
                        Some("text") => out.extend(t.message(text(item, "text").unwrap_or(""))),
                        Some("tool_use") => out.extend(tool_line(
                            text(item, "name").unwrap_or("tool"),
                            item.get("input"),
                        )),
                        _ => {}
                    }
                }
                out
            }
            Some("result") => {
                let result = text(&v, "result").unwrap_or("").to_string();
                let u = v.get("usage").cloned().unwrap_or(Value::Null);
                t.add_usage(Usage {
                    // Writing to the cache is billed as input.
                    input_tokens: num(&u, "input_tokens") + num(&u, "cache_creation_input_tokens"),
                    output_tokens: num(&u, "output_tokens"),
                    cache_read_tokens: num(&u, "cache_read_input_tokens"),
                    cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
                });
                if v.get("is_error").and_then(Value::as_bool) == Some(true) {
                    let shown = t.error(&result);
                    t.result = Some(result);
                    return shown;
                }
                t.result = Some(result);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}
