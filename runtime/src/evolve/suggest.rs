//! The [`Suggest`] hook as a command (`--suggest CMD`): where the offline lists run out,
//! an agent is asked. The command runs with `sh -c` in the project; the question is in
//! the file `$FACTORY_PROMPT_FILE` (plain words, ending with the form of the answer),
//! `$FACTORY_SUGGEST` says which kind it is (`task` or `knob`), and the answer is the
//! command's standard output. Any command that reads a prompt works, an agent CLI
//! included: `--suggest 'claude -p < "$FACTORY_PROMPT_FILE"'`. A failed, timed-out or
//! unusable answer declines, and the operator falls back to its offline behaviour.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use factory_compiler::ir::{Knob, KnobType, Literal, Node};

use super::Suggest;
use crate::sys::process::run_command;

/// How long one answer may take (an agent call).
pub const TIMEOUT: Duration = Duration::from_secs(300);

/// A [`Suggest`] that runs a command.
pub struct CommandSuggest {
    command: String,
    dir: PathBuf,
    /// Why each declined answer was declined, for the caller to report.
    declined: Mutex<Vec<String>>,
}

impl CommandSuggest {
    pub fn new(command: &str, dir: &Path) -> CommandSuggest {
        CommandSuggest {
            command: command.to_string(),
            dir: dir.to_path_buf(),
            declined: Mutex::new(Vec::new()),
        }
    }

    /// Why answers were declined so far.
    pub fn declined(&self) -> Vec<String> {
        self.declined.lock().map(|d| d.clone()).unwrap_or_default()
    }

    fn decline(&self, why: String) -> Option<String> {
        if let Ok(mut d) = self.declined.lock() {
            d.push(why);
        }
        None
    }

    /// The command's answer to `prompt`, trimmed; `None` (recorded) when there is none.
    fn ask(&self, kind: &str, prompt: &str) -> Option<String> {
        let file = match tempfile::Builder::new()
            .prefix("factory-suggest-")
            .suffix(".md")
            .tempfile()
        {
            Ok(f) => f,
            Err(e) => return self.decline(format!("no prompt file: {e}")),
        };
        if let Err(e) = std::fs::write(file.path(), prompt) {
            return self.decline(format!("cannot write the prompt: {e}"));
        }
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&self.command)
            .env("FACTORY_PROMPT_FILE", file.path())
            .env("FACTORY_SUGGEST", kind);
        match run_command(cmd, &self.command, &self.dir, TIMEOUT) {
            Ok(out) if out.success() => {
                let answer = strip_fences(out.stdout.trim());
                if answer.is_empty() {
                    self.decline(format!("`{}` answered nothing", self.command))
                } else {
                    Some(answer.to_string())
                }
            }
            Ok(out) => self.decline(format!(
                "`{}` failed ({}): {}",
                self.command,
                out.exit_text(),
                out.tail(3)
            )),
            Err(e) => self.decline(e.to_string()),
        }
    }
}

/// An answer wrapped in a Markdown code fence, as agents like to give it, unwrapped.
fn strip_fences(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or("", |(_, b)| b);
    body.strip_suffix("```").unwrap_or(body).trim()
}

impl Suggest for CommandSuggest {
    fn rewrite_task(&self, node: &Node, task: &str) -> Option<String> {
        let role = node.attrs.role.as_deref().unwrap_or("agent");
        let prompt = format!(
            "You are improving a step of an automated software-engineering workflow.\n\n\
             The step `{}` is run by the `{role}` agent with this task:\n\n{task}\n\n\
             Rewrite the task so the agent does its job better: more specific, checkable, \
             one paragraph. Answer with only the new task text.\n",
            node.id
        );
        self.ask("task", &prompt)
    }

    fn expand_knob(&self, knob: &Knob) -> Option<Literal> {
        let (kind, now) = match (&knob.ty, &knob.default) {
            (KnobType::Int, Literal::Int(n)) => ("an integer", n.to_string()),
            (KnobType::String, Literal::Str(s)) => ("a short string", format!("{s:?}")),
            _ => return None,
        };
        let known = if knob.choices.is_empty() {
            String::new()
        } else {
            format!(" Its known values are {:?}.", knob.choices)
        };
        let prompt = format!(
            "A workflow's setting `{}` is at its limit: its value is {now}.{known} \
             Propose one new value beyond it that is worth trying. Answer with only \
             the value, {kind}.\n",
            knob.name
        );
        let answer = self.ask("knob", &prompt)?;
        let value = answer.trim_matches(|c| c == '"' || c == '`' || c == '\'');
        match knob.ty {
            KnobType::Int => value.parse().map(Literal::Int).ok().or_else(|| {
                self.decline(format!("`{answer}` is not an integer"));
                None
            }),
            _ => Some(Literal::Str(value.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_answer_is_unwrapped() {
        assert_eq!(strip_fences("```\n7\n```"), "7");
        assert_eq!(strip_fences("```text\nDo it well.\n```"), "Do it well.");
        assert_eq!(strip_fences("plain"), "plain");
    }
}
