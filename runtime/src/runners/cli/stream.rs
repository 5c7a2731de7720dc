//! Reading an agent CLI's JSON event stream: the [`Transcript`] each line adds to,
//! and the helpers the four parsers share.

use serde_json::Value;

use super::CliDef;
use crate::runners::Usage;

/// What a CLI's event stream said, read line by line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The final text the CLI reported as its result (claude's `result` event).
    pub result: Option<String>,
    /// The last complete assistant message.
    pub last_message: Option<String>,
    /// Text still streaming in (gemini's deltas), not yet a complete message.
    pub pending: String,
    /// Summed over the stream's usage reports.
    pub usage: Option<Usage>,
    pub session: Option<String>,
    pub model: Option<String>,
    /// Errors the CLI reported.
    pub errors: Vec<String>,
}

impl Transcript {
    /// The agent's final message: the reported result, else the last message.
    pub fn final_text(&self) -> Option<String> {
        self.result
            .clone()
            .or_else(|| self.last_message.clone())
            .or_else(|| (!self.pending.is_empty()).then(|| self.pending.clone()))
    }

    pub fn add_usage(&mut self, u: Usage) {
        self.usage.get_or_insert_with(Usage::default).add(&u);
    }

    /// Records a complete assistant message and returns its lines for progress.
    pub fn message(&mut self, text: &str) -> Vec<String> {
        let text = text.trim_end();
        if text.trim().is_empty() {
            return Vec::new();
        }
        self.last_message = Some(text.to_string());
        text.lines().map(str::to_string).collect()
    }

    /// Ends a streamed message (if any) and returns its lines.
    pub fn flush(&mut self) -> Vec<String> {
        let text = std::mem::take(&mut self.pending);
        self.message(&text)
    }

    /// Records an error and returns its progress line.
    pub fn error(&mut self, text: &str) -> Vec<String> {
        self.errors.push(text.to_string());
        vec![format!("[error] {}", one_line(text, 300))]
    }
}

/// Parses a whole captured stream: the transcript and every progress line.
pub fn parse_stream(def: &dyn CliDef, stdout: &str) -> (Transcript, Vec<String>) {
    let mut t = Transcript::default();
    let mut lines = Vec::new();
    for line in stdout.lines() {
        lines.extend(def.parse_line(line, &mut t));
    }
    (t, lines)
}

/// The line as JSON, if it is a JSON object; anything else a CLI prints (a warning)
/// is shown as it is.
pub fn json_line(line: &str) -> Result<Value, Vec<String>> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Err(Vec::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(v) if v.is_object() => Ok(v),
        _ => Err(vec![trimmed.to_string()]),
    }
}

/// `v[key]` as a number (0 when absent).
pub fn num(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// `v[key]` as text.
pub fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// `[tool] NAME: what` — the most telling field of a tool's input.
pub fn tool_line(name: &str, input: Option<&Value>) -> Vec<String> {
    let detail = input.map(tool_detail).unwrap_or_default();
    if detail.is_empty() {
        vec![format!("[tool] {name}")]
    } else {
        vec![format!("[tool] {name}: {}", one_line(&detail, 160))]
    }
}

fn tool_detail(input: &Value) -> String {
    const KEYS: &[&str] = &[
        "command",
        "file_path",
        "filePath",
        "path",
        "absolute_path",
        "pattern",
        "query",
        "url",
        "description",
    ];
    if let Some(s) = input.as_str() {
        return s.to_string();
    }
    for k in KEYS {
        match input.get(*k) {
            Some(Value::String(s)) => return s.clone(),
            // codex gives a command as an argv array.
            Some(Value::Array(a)) => {
                return a
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ");
            }
            _ => {}
        }
    }
    match input {
        Value::Object(m) if m.is_empty() => String::new(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `text` on one line, cut at `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    truncate(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

pub(super) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
