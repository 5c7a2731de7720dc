//! The `gemini` runner: Gemini CLI (`@google/gemini-cli`).
//!
//! Headless: `gemini --output-format stream-json --approval-mode yolo --skip-trust
//! [-m M] [--include-directories PROJECT] --prompt=PROMPT` in the agent's cwd. `yolo`
//! approves every tool so it edits unattended; `--skip-trust` trusts the worktree for
//! the session. The prompt is passed as `--prompt=...`: yargs would read a prompt
//! starting with `-` as options. The stream: `init`, `message` (assistant text comes
//! in deltas), `tool_use`, `tool_result`, `error`, and `result` with token `stats`.
//! It reports no cost. Without credentials it exits 41 naming the auth methods.

use std::path::PathBuf;

use super::cli::{self, CliDef, EnvView, Transcript, json_line, num, text, tool_line};
use super::{AgentRequest, Capabilities, RunnerError, Usage};

pub struct Gemini;

impl CliDef for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn install(&self) -> &'static str {
        "npm install -g @google/gemini-cli"
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
        &[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_GENAI_USE_GCA",
        ]
    }

    fn login_files(&self, env: &EnvView<'_>) -> Vec<PathBuf> {
        env.home()
            .map(|h| h.join(".gemini/oauth_creds.json"))
            .into_iter()
            .collect()
    }

    fn login_hint(&self) -> &'static str {
        "set GEMINI_API_KEY, or run `gemini` once and log in with Google"
    }

    fn headless_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args: Vec<String> = [
            "--output-format",
            "stream-json",
            "--approval-mode",
            "yolo",
            "--skip-trust",
        ]
        .map(String::from)
        .to_vec();
        args.extend(cli::model_args("-m", req));
        if req.cwd != req.project {
            args.push("--include-directories".into());
            args.push(req.project.join(".git").display().to_string());
        }
        args.push(format!("--prompt={}", cli::prompt_arg(self, &req.prompt)?));
        Ok(args)
    }

    fn interactive_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args = cli::model_args("-m", req);
        args.push(format!(
            "--prompt-interactive={}",
            cli::prompt_arg(self, &req.prompt)?
        ));
        Ok(args)
    }

    fn parse_line(&self, line: &str, t: &mut Transcript) -> Vec<String> {
        let v = match json_line(line) {
            Ok(v) => v,
            Err(shown) => return shown,
        };
        match text(&v, "type") {
            Some("init") => {
                t.session = text(&v, "session_id").map(str::to_string);
                t.model = text(&v, "model").map(str::to_string);
                vec![format!(
                    "[gemini] session {} (model {})",
                    t.session.as_deref().unwrap_or("?"),
                    t.model.as_deref().unwrap_or("?")
                )]
            }
            Some("message") if text(&v, "role") == Some("assistant") => {
                let chunk = text(&v, "content").unwrap_or("");
                if v.get("delta").and_then(|d| d.as_bool()) == Some(true) {
                    t.pending.push_str(chunk);
                    Vec::new()
                } else {
                    let mut out = t.flush();
                    out.extend(t.message(chunk));
                    out
                }
            }
            Some("tool_use") => {
                let mut out = t.flush();
                out.extend(tool_line(
                    text(&v, "tool_name").unwrap_or("tool"),
                    v.get("parameters"),
                ));
                out
            }
            Some("tool_result") if text(&v, "status") == Some("error") => vec![format!(
                "[tool error] {}",
                cli::one_line(
                    v.pointer("/error/message")
                        .and_then(|m| m.as_str())
                        .unwrap_or(""),
                    200
                )
            )],
            Some("error") => {
                let mut out = t.flush();
                out.extend(t.error(text(&v, "message").unwrap_or("error")));
                out
            }
            Some("result") => {
                let mut out = t.flush();
                let stats = v.get("stats").cloned().unwrap_or_default();
                let cached = num(&stats, "cached");
                t.add_usage(Usage {
                    // Gemini counts cached tokens inside input_tokens.
                    input_tokens: num(&stats, "input_tokens").saturating_sub(cached),
                    output_tokens: num(&stats, "output_tokens"),
                    cache_read_tokens: cached,
                    cost_usd: None,
                });
                if text(&v, "status") == Some("error") {
                    out.extend(
                        t.error(
                            v.pointer("/error/message")
                                .and_then(|m| m.as_str())
                                .unwrap_or("the run failed"),
                        ),
                    );
                }
                out
            }
            _ => Vec::new(),
        }
    }
}
