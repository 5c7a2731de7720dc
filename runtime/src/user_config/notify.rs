//! `[[notify]]` tables: where factory reports run ends and verdicts (spec §8.17).
//!
//! ```toml
//! [[notify]]
//! webhook = "https://hooks.slack.com/services/T000/B000/XXXX"
//! format = "slack"          # json (default), slack or discord
//! on = ["keep", "halt", "error"]   # default: every event
//! timeout = 5               # seconds (default 5)
//!
//! [[notify]]
//! command = "notify-send factory"  # the message on stdin
//! ```
//!
//! The senders are [`crate::notify`]; this module only reads the configuration.

use std::time::Duration;

use toml::Value;

/// When a notification is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyEvent {
    /// A run finished (completed; a halted or failed run is `halt` or `error`).
    RunEnd,
    /// An experiment was kept.
    Keep,
    /// An experiment was reverted.
    Revert,
    /// A run halted at a gate.
    Halt,
    /// A run failed, or an experiment was recorded as `error`.
    Error,
}

impl NotifyEvent {
    pub const ALL: [NotifyEvent; 5] = [
        NotifyEvent::RunEnd,
        NotifyEvent::Keep,
        NotifyEvent::Revert,
        NotifyEvent::Halt,
        NotifyEvent::Error,
    ];
    const NAMES: [&'static str; 5] = ["run_end", "keep", "revert", "halt", "error"];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }
}

/// The body a webhook is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookFormat {
    /// factory's own JSON object (event, project, run, experiment, text, details).
    Json,
    /// `{"text": ...}`: Slack incoming webhooks (and Mattermost, Rocket.Chat).
    Slack,
    /// `{"content": ..., "username": "factory"}`: Discord webhooks.
    Discord,
}

/// Where one notifier delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyTarget {
    /// A JSON POST to this URL.
    Webhook { url: String, format: WebhookFormat },
    /// `sh -c COMMAND` with the message on stdin.
    Command(String),
}

/// One `[[notify]]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifierConfig {
    pub target: NotifyTarget,
    /// The events it is sent; all of them when the table has no `on`.
    pub on: Vec<NotifyEvent>,
    pub timeout: Duration,
    /// The line of its `[[notify]]` header, to name it in messages.
    pub line: usize,
}

impl NotifierConfig {
    pub fn wants(&self, event: NotifyEvent) -> bool {
        self.on.contains(&event)
    }

    /// How it is named in a failure message: `webhook http://… (config.toml line 4)`.
    pub fn describe(&self) -> String {
        let what = match &self.target {
            NotifyTarget::Webhook { url, .. } => format!("webhook {}", redact_url(url)),
            NotifyTarget::Command(cmd) => format!("command `{cmd}`"),
        };
        format!("{what} (config.toml line {})", self.line)
    }
}

/// A webhook URL without its path: Slack's and Discord's paths are the secret.
fn redact_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split('/').next().unwrap_or(rest);
            if rest.len() > host.len() {
                format!("{scheme}://{host}/…")
            } else {
                url.to_string()
            }
        }
        None => url.to_string(),
    }
}

/// Keys of a `[[notify]]` table.
pub const NOTIFY_KEYS: &[&str] = &["webhook", "command", "format", "on", "timeout"];

const DEFAULT_TIMEOUT_SECS: i64 = 5;

/// Parses the value of the top-level `notify` key. Errors are `(line, message)`.
pub(super) fn parse_notify(
    value: &Value,
    text: &str,
) -> Result<Vec<NotifierConfig>, (usize, String)> {
    let headers = header_lines(text);
    let tables = value.as_array().ok_or_else(|| {
        (
            headers.first().copied().unwrap_or(1),
            "`notify` must be a list of tables: write each notifier as `[[notify]]`".to_string(),
        )
    })?;
    tables
        .iter()
        .enumerate()
        .map(|(i, v)| parse_one(v, headers.get(i).copied().unwrap_or(1), text))
        .collect()
}

fn parse_one(value: &Value, line: usize, text: &str) -> Result<NotifierConfig, (usize, String)> {
    let table = value
        .as_table()
        .ok_or_else(|| (line, "each `notify` entry must be a table".to_string()))?;
    // The line of a key inside this table: the first line at or after its header.
    let key_line = |key: &str| {
        text.lines()
            .enumerate()
            .skip(line)
            .find(|(_, l)| {
                l.trim_start()
                    .strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
            .map_or(line, |(i, _)| i + 1)
    };
    let string = |key: &str| -> Result<Option<String>, (usize, String)> {
        match table.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
            Some(_) => Err((
                key_line(key),
                format!("`notify.{key}` must be a non-empty string"),
            )),
        }
    };
    if let Some(unknown) = table.keys().find(|k| !NOTIFY_KEYS.contains(&k.as_str())) {
        let hint = super::closest(unknown, NOTIFY_KEYS)
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        return Err((
            key_line(unknown),
            format!(
                "unknown key `notify.{unknown}`{hint}; a notifier has {}",
                NOTIFY_KEYS.join(", ")
            ),
        ));
    }
    let format = match string("format")?.as_deref() {
        None | Some("json") => WebhookFormat::Json,
        Some("slack") => WebhookFormat::Slack,
        Some("discord") => WebhookFormat::Discord,
        Some(other) => {
            return Err((
                key_line("format"),
                format!("`notify.format` is `{other}`; use json, slack or discord"),
            ));
        }
    };
    let target = match (string("webhook")?, string("command")?) {
        (Some(url), None) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err((
                    key_line("webhook"),
                    format!("`notify.webhook` must be an http:// or https:// URL, not `{url}`"),
                ));
            }
            NotifyTarget::Webhook { url, format }
        }
        (None, Some(cmd)) => {
            if table.contains_key("format") {
                return Err((
                    key_line("format"),
                    "`notify.format` applies to webhooks; a command gets the message as text on stdin"
                        .to_string(),
                ));
            }
            NotifyTarget::Command(cmd)
        }
        (Some(_), Some(_)) => {
            return Err((
                line,
                "a `[[notify]]` table has either `webhook` or `command`, not both: write two tables"
                    .to_string(),
            ));
        }
        (None, None) => {
            return Err((
                line,
                "a `[[notify]]` table needs `webhook = \"https://…\"` or `command = \"…\"`"
                    .to_string(),
            ));
        }
    };
    let on = match table.get("on") {
        None => NotifyEvent::ALL.to_vec(),
        Some(Value::Array(items)) => {
            let mut on = Vec::new();
            for item in items {
                let name = item.as_str().unwrap_or_default();
                let event = NotifyEvent::parse(name).ok_or_else(|| {
                    (
                        key_line("on"),
                        format!(
                            "`notify.on` lists `{}`; the events are {}",
                            item,
                            NotifyEvent::NAMES.join(", ")
                        ),
                    )
                })?;
                on.push(event);
            }
            on
        }
        Some(_) => {
            return Err((
                key_line("on"),
                format!(
                    "`notify.on` must be a list, e.g. [\"keep\", \"error\"] (events: {})",
                    NotifyEvent::NAMES.join(", ")
                ),
            ));
        }
    };
    let timeout = match table.get("timeout") {
        None => DEFAULT_TIMEOUT_SECS,
        Some(v) => v
            .as_integer()
            .filter(|n| (1..=300).contains(n))
            .ok_or_else(|| {
                (
                    key_line("timeout"),
                    "`notify.timeout` must be a whole number of seconds from 1 to 300".to_string(),
                )
            })?,
    };
    Ok(NotifierConfig {
        target,
        on,
        timeout: Duration::from_secs(timeout as u64),
        line,
    })
}

/// The lines (1-based) of the `[[notify]]` headers, in order.
fn header_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
            l.starts_with("[[notify]]")
        })
        .map(|(i, _)| i + 1)
        .collect()
}
