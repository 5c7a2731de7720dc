//! The user's own configuration, `~/.factory/config.toml` (`$FACTORY_HOME/config.toml`;
//! spec §8.12): defaults (runner, model, model per role, agent timeout, profile) and
//! `[credentials.<name>]` profiles. How a setting is chosen among the command line,
//! the environment, factory.md, this file and the built-in default is [`resolve`];
//! how a profile reaches agents is [`profile`].
//!
//! ```toml
//! [defaults]
//! runner = "claude"
//! model = "sonnet"
//! agent_timeout = 1800
//! profile = "work"
//!
//! [models]            # model per role
//! builder = "opus"
//!
//! [credentials.work]
//! ANTHROPIC_API_KEY = "sk-ant-..."
//! [credentials.work.unset]
//! vars = ["OPENAI_API_KEY"]
//!
//! [[notify]]          # see [`notify`]
//! webhook = "https://hooks.slack.com/services/..."
//! format = "slack"
//! ```

pub mod notify;
pub mod profile;
pub mod resolve;
pub mod show;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// The file name under the factory home.
pub const FILE_NAME: &str = "config.toml";

/// `[defaults]` keys.
pub const DEFAULT_KEYS: &[&str] = &["runner", "model", "agent_timeout", "profile"];
/// Top-level tables.
pub const TOP_KEYS: &[&str] = &["defaults", "models", "credentials", "notify", "runners"];

/// `~/.factory/config.toml`, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserConfig {
    /// Where it was read from (also when it does not exist).
    pub path: PathBuf,
    pub runner: Option<String>,
    pub model: Option<String>,
    /// Model per role (`[models]`).
    pub models: BTreeMap<String, String>,
    pub agent_timeout: Option<u64>,
    /// `[runners.exec] command`: the exec runner's command template.
    pub exec_command: Option<String>,
    /// `[runners.replay] script`: the replay runner's script.
    pub replay_script: Option<PathBuf>,
    /// The profile used when neither `--profile` nor `FACTORY_PROFILE` names one.
    pub profile: Option<String>,
    pub credentials: BTreeMap<String, Profile>,
    /// `[[notify]]` tables: where run ends and verdicts are reported.
    pub notifiers: Vec<notify::NotifierConfig>,
    /// Keys no setting knows, with the closest known one: warnings, not errors.
    pub unknown: Vec<UnknownKey>,
}

/// A `[credentials.<name>]` section.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Variables the profile sets, in file order.
    pub set: Vec<(String, String)>,
    /// `[credentials.<name>.unset] vars`: removed before the sets apply.
    pub unset: Vec<String>,
}

/// A key in config.toml that no setting reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// Dotted path, e.g. `defaults.modle`.
    pub key: String,
    pub line: usize,
    pub suggestion: Option<String>,
}

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: unknown key `{}`", self.line, self.key)?;
        match &self.suggestion {
            Some(s) => write!(f, " (did you mean `{s}`?)"),
            None => Ok(()),
        }
    }
}

/// Why config.toml could not be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum UserConfigError {
    #[error("cannot read {path}: {source}")]
    #[diagnostic(
        code(factory::user_config::io),
        help("check the file's permissions, or move it away to use the defaults")
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{path}:{line}: {message}")]
    #[diagnostic(
        code(factory::user_config::invalid),
        help(
            "fix that line (the format is in docs/configuration.md); `factory config validate` \
             checks the whole file"
        )
    )]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("no profile `{name}` in {path}{known}")]
    #[diagnostic(
        code(factory::user_config::no_profile),
        help("add a `[credentials.{name}]` section, or pick one of the profiles listed")
    )]
    NoProfile {
        name: String,
        path: PathBuf,
        /// `"; profiles: a, b"` or `"; it defines no profiles"`.
        known: String,
    },
}

/// Loads the user's config.toml; a missing file (or no home) is the empty config.
pub fn load() -> Result<UserConfig, UserConfigError> {
    match crate::project::registry::user_home() {
        Some(home) => load_from(&home.join(FILE_NAME)),
        None => Ok(UserConfig::default()),
    }
}

/// Loads `path`; a missing file is the empty config.
pub fn load_from(path: &Path) -> Result<UserConfig, UserConfigError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| UserConfigError::Invalid {
            path: path.to_path_buf(),
            line: 1,
            message: format!(
                "not UTF-8 text (byte {} is invalid)",
                e.utf8_error().valid_up_to()
            ),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(UserConfig {
                path: path.to_path_buf(),
                ..UserConfig::default()
            });
        }
        Err(source) => {
            return Err(UserConfigError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse(path, &text)
}

/// Parses config.toml's text (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<UserConfig, UserConfigError> {
    let lines = LineFinder(text);
    let invalid = |line: usize, message: String| UserConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map_or(1, |s| lines.line_of(s.start));
        invalid(line, e.message().to_string())
    })?;
    let mut cfg = UserConfig {
        path: path.to_path_buf(),
        ..UserConfig::default()
    };
    for (key, value) in &table {
        match key.as_str() {
            "defaults" => {
                let t = as_table(value)
                    .ok_or_else(|| invalid(lines.key(key), "`defaults` must be a table".into()))?;
                for (k, v) in t {
                    let line = lines.key(k);
                    match k.as_str() {
                        "runner" => {
                            cfg.runner = Some(string(v, "defaults.runner", line, &invalid)?)
                        }
                        "model" => cfg.model = Some(string(v, "defaults.model", line, &invalid)?),
                        "profile" => {
                            cfg.profile = Some(string(v, "defaults.profile", line, &invalid)?)
                        }
                        "agent_timeout" => {
                            let n = v.as_integer().filter(|n| *n > 0).ok_or_else(|| {
                                invalid(
                                    line,
                                    "`defaults.agent_timeout` must be a positive number of seconds"
                                        .into(),
                                )
                            })?;
                            cfg.agent_timeout = Some(n as u64);
                        }
                        other => cfg.unknown.push(unknown(
                            format!("defaults.{other}"),
                            line,
                            other,
                            DEFAULT_KEYS,
                        )),
                    }
                }
            }
            "models" => {
                let t = as_table(value).ok_or_else(|| {
                    invalid(
                        lines.key(key),
                        "`models` must be a table of role = \"model\"".into(),
                    )
                })?;
                for (role, v) in t {
                    let line = lines.key(role);
                    let model = string(v, &format!("models.{role}"), line, &invalid)?;
                    cfg.models.insert(role.clone(), model);
                }
            }
            "credentials" => {
                let t = as_table(value).ok_or_else(|| {
                    invalid(
                        lines.key(key),
                        "`credentials` must hold `[credentials.<name>]` tables".into(),
                    )
                })?;
                for (name, section) in t {
                    let p = profile::parse_profile(name, section, &lines)
                        .map_err(|(line, message)| invalid(line, message))?;
                    cfg.credentials.insert(name.clone(), p);
                }
            }
            "notify" => {
                cfg.notifiers = notify::parse_notify(value, text)
                    .map_err(|(line, message)| invalid(line, message))?;
            }
            "runners" => {
                let t = as_table(value).ok_or_else(|| {
                    invalid(
                        lines.key(key),
                        "`runners` must hold `[runners.exec]` or `[runners.replay]` tables".into(),
                    )
                })?;
                for (name, section) in t {
                    let line = lines.key(name);
                    let fields = as_table(section).ok_or_else(|| {
                        invalid(line, format!("`runners.{name}` must be a table"))
                    })?;
                    for (k, v) in fields {
                        let line = lines.key(k);
                        match (name.as_str(), k.as_str()) {
                            ("exec", "command") => {
                                cfg.exec_command =
                                    Some(string(v, "runners.exec.command", line, &invalid)?)
                            }
                            ("replay", "script") => {
                                cfg.replay_script = Some(PathBuf::from(string(
                                    v,
                                    "runners.replay.script",
                                    line,
                                    &invalid,
                                )?))
                            }
                            _ => cfg.unknown.push(unknown(
                                format!("runners.{name}.{k}"),
                                line,
                                k,
                                &["command", "script"],
                            )),
                        }
                    }
                }
            }
            other => cfg.unknown.push(unknown(
                other.to_string(),
                lines.key(other),
                other,
                TOP_KEYS,
            )),
        }
    }
    Ok(cfg)
}

fn as_table(v: &Value) -> Option<&Table> {
    v.as_table()
}

fn string(
    v: &Value,
    what: &str,
    line: usize,
    invalid: &dyn Fn(usize, String) -> UserConfigError,
) -> Result<String, UserConfigError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| invalid(line, format!("`{what}` must be a string")))
}

fn unknown(key: String, line: usize, leaf: &str, known: &[&str]) -> UnknownKey {
    UnknownKey {
        key,
        line,
        suggestion: closest(leaf, known).map(str::to_string),
    }
}

/// The known name closest to `word`, when it is close enough to be a typo. Unlike the
/// compiler's edit distance, Jaro-Winkler forgives a swapped pair (`modle`), the usual
/// slip in a hand-edited key.
pub fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(word, k), *k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// Finds the line of a key in the text (toml's tables carry no spans).
pub(crate) struct LineFinder<'a>(&'a str);

impl LineFinder<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.0[..offset.min(self.0.len())]
            .bytes()
            .filter(|b| *b == b'\n')
            .count()
            + 1
    }

    /// The first line that assigns `key` or opens a table named by it; 1 if none.
    pub(crate) fn key(&self, key: &str) -> usize {
        self.0
            .lines()
            .position(|l| {
                let l = l.trim_start();
                let l = l.trim_start_matches('[').trim_start();
                l.strip_prefix(key).is_some_and(|rest| {
                    let rest = rest.trim_start();
                    rest.starts_with('=') || rest.starts_with(']') || rest.starts_with('.')
                }) || l
                    .split('.')
                    .any(|part| part.trim_end_matches(']').trim() == key)
            })
            .map_or(1, |i| i + 1)
    }
}

#[cfg(test)]
mod tests;
