//! The `opencode` runner: opencode (`opencode-ai`).
//!
//! Headless: `opencode run --format json --dir CWD --auto [-m PROVIDER/MODEL] --
//! PROMPT`. `--auto` approves the permissions a config does not deny, so it edits
//! unattended. A model must be `provider/model` (`anthropic/claude-sonnet-4-5`);
//! without one opencode uses its configured default. The stream: `step_start`,
//! `text`, `tool_use`, `reasoning`, `step_finish` (tokens and cost of the step) and
//! `error`, each with a `part`.

use std::path::PathBuf;

use serde_json::Value;

use super::cli::{self, CliDef, EnvView, Transcript, json_line, num, text, tool_line};
use super::{AgentRequest, Capabilities, RunnerError, Usage};

pub struct Opencode;

impl Opencode {
    fn model_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let args = cli::model_args("-m", req);
        if let Some(m) = args.get(1) {
            let ok = m
                .split_once('/')
                .is_some_and(|(p, n)| !p.is_empty() && !n.is_empty());
            if !ok {
                return Err(RunnerError::BadModel {
                    runner: self.name().into(),
                    model: m.clone(),
                    why: "opencode names a model as provider/model".into(),
                    help: format!(
                        "write it with its provider, e.g. `anthropic/{m}` or `openai/{m}` \
                         (`opencode models` lists them)"
                    ),
                });
            }
        }
        Ok(args)
    }
}

impl CliDef for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn install(&self) -> &'static str {
        "npm install -g opencode-ai"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            session_resume: true,
            json_events: true,
            cost_reporting: true,
            model_selection: true,
            // opencode has permissions (`--auto`) but no sandbox to choose.
            sandbox_control: false,
            interactive: true,
        }
    }

    fn auth_env(&self) -> &'static [&'static str] {
        &[
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "GOOGLE_GENERATIVE_AI_API_KEY",
            "OPENROUTER_API_KEY",
            "GROQ_API_KEY",
            "XAI_API_KEY",
            "OPENCODE_API_KEY",
        ]
    }

    fn login_files(&self, env: &EnvView<'_>) -> Vec<PathBuf> {
        let data = env
            .get("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| env.home().map(|h| h.join(".local/share")));
        data.map(|d| d.join("opencode/auth.json"))
            .into_iter()
            .collect()
    }

    fn login_hint(&self) -> &'static str {
        "set your provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...), or run `opencode auth login`"
    }

    fn needs_credentials(&self) -> bool {
        // Without a key opencode runs its own free models (`opencode/...`).
        false
    }

    fn headless_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args: Vec<String> = ["run", "--format", "json", "--dir"]
            .map(String::from)
            .to_vec();
        args.push(req.cwd.display().to_string());
        args.push("--auto".into());
        args.extend(self.model_args(req)?);
        args.push("--".into());
        args.push(cli::prompt_arg(self, &req.prompt)?);
        Ok(args)
    }

    fn interactive_args(&self, req: &AgentRequest) -> Result<Vec<String>, RunnerError> {
        let mut args = vec![req.cwd.display().to_string()];
        args.extend(self.model_args(req)?);
        // `=`: a prompt starting with `-` stays the option's value.
        args.push(format!("--prompt={}", cli::prompt_arg(self, &req.prompt)?));
        Ok(args)
    }

    fn parse_line(&self, line: &str, t: &mut Transcript) -> Vec<String> {
        let v = match json_line(line) {
            Ok(v) => v,
            Err(shown) => return shown,
        };
        if t.session.is_none() {
            t.session = text(&v, "sessionID").map(str::to_string);
        }
        let part = v.get("part").cloned().unwrap_or_default();
        match text(&v, "type") {
            Some("text") => t.message(text(&part, "text").unwrap_or("")),
            Some("tool_use") => {
                let state = part.get("state").cloned().unwrap_or_default();
                let name = text(&part, "tool").unwrap_or("tool");
                if text(&state, "status") == Some("error") {
                    return vec![format!(
                        "[tool error] {name}: {}",
                        cli::one_line(text(&state, "error").unwrap_or(""), 200)
                    )];
                }
                tool_line(name, state.get("input"))
            }
            Some("step_finish") => {
                let tokens = part.get("tokens").cloned().unwrap_or_default();
                let cache = tokens.get("cache").cloned().unwrap_or_default();
                t.add_usage(Usage {
                    input_tokens: num(&tokens, "input") + num(&cache, "write"),
                    // Reasoning is billed as output.
                    output_tokens: num(&tokens, "output") + num(&tokens, "reasoning"),
                    cache_read_tokens: num(&cache, "read"),
                    cost_usd: Some(part.get("cost").and_then(Value::as_f64).unwrap_or(0.0)),
                });
                Vec::new()
            }
            Some("error") => {
                let e = v.get("error").cloned().unwrap_or_default();
                let name = text(&e, "name").unwrap_or("error");
                let msg = e
                    .pointer("/data/message")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                t.error(&format!("{name}: {msg}"))
            }
            _ => Vec::new(),
        }
    }
}
