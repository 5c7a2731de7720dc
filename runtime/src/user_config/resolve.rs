//! Which value a setting takes, and from where: the command-line flag, then the
//! environment, then the project's factory.md, then `~/.factory/config.toml`, then the
//! built-in default (docs/configuration.md has the table). A mode's own node attribute
//! (a node's `model:` or `timeout:`) is explicit for that node and sits just below the
//! environment.

use std::fmt;
use std::path::Path;

use super::{UserConfig, UserConfigError};
use crate::project::config::FactoryConfig;

/// A node's time limit when neither it nor the configuration sets one.
pub const DEFAULT_NODE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

/// The model to pass to a runner: one asked for explicitly (flag, environment, the
/// node) always goes, so a runner that cannot select models fails naming the
/// capability; a configured default (factory.md, config.toml) goes only to runners
/// that select models.
pub fn model_for_runner(model: Option<Setting<String>>, selects_models: bool) -> Option<String> {
    model
        .filter(|m| selects_models || m.is_explicit())
        .map(|m| m.value)
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env(&'static str),
    Node,
    Project,
    User,
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => f.write_str("command line"),
            Source::Env(name) => write!(f, "environment ({name})"),
            Source::Node => f.write_str("the node's attribute"),
            Source::Project => f.write_str("factory.md"),
            // The file actually read: `$FACTORY_HOME/config.toml` when it is set.
            Source::User => match crate::project::registry::user_home() {
                Some(home) => write!(f, "{}", home.join(super::FILE_NAME).display()),
                None => f.write_str("~/.factory/config.toml"),
            },
            Source::Default => f.write_str("built-in default"),
        }
    }
}

/// A resolved value and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Setting<T> {
    /// Asked for by this invocation or the mode, not a configured default.
    pub fn is_explicit(&self) -> bool {
        matches!(self.source, Source::Flag | Source::Env(_) | Source::Node)
    }
}

/// The layers below the command line: the user's config and the project's factory.md.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    pub user: UserConfig,
    /// factory.md's agent settings, when the project has a readable factory.md.
    pub project: Option<ProjectAgents>,
}

/// The agent settings factory.md may hold (`## Runner`, `## Models`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectAgents {
    pub runner: Option<String>,
    /// `role: model` lines; `default: model` applies to every role.
    pub models: Vec<(String, String)>,
}

impl ProjectAgents {
    pub fn from_config(cfg: &FactoryConfig) -> Self {
        Self {
            runner: Some(cfg.runner.trim().to_string()).filter(|r| !r.is_empty()),
            models: cfg
                .models
                .iter()
                .filter_map(|l| {
                    let (role, model) = l.split_once(':')?;
                    Some((role.trim().to_string(), model.trim().to_string()))
                })
                .filter(|(r, m)| !r.is_empty() && !m.is_empty())
                .collect(),
        }
    }

    fn model_for(&self, role: &str) -> Option<&str> {
        let find = |r: &str| {
            self.models
                .iter()
                .find(|(k, _)| k == r)
                .map(|(_, m)| m.as_str())
        };
        find(role).or_else(|| find("default"))
    }
}

impl Layers {
    /// The user's config, and factory.md of `project` (the file, not the config.json
    /// cache) when it parses; its errors are reported by the commands that need it.
    pub fn load(project: Option<&Path>) -> Result<Self, UserConfigError> {
        let user = super::load()?;
        let project = project
            .filter(|p| p.join("factory.md").is_file())
            .and_then(|p| crate::project::config::read_factory_md(p).ok())
            .map(|c| ProjectAgents::from_config(&c));
        Ok(Self { user, project })
    }

    /// The runner: flag, `FACTORY_RUNNER`, factory.md, config.toml. `None` when no layer
    /// names one (the caller then takes the first agent CLI on PATH).
    pub fn runner(&self, flag: Option<&str>) -> Option<Setting<String>> {
        pick(
            flag,
            "FACTORY_RUNNER",
            None,
            self.project.as_ref().and_then(|p| p.runner.as_deref()),
            self.user.runner.as_deref(),
        )
    }

    /// The model for `role`: flag, `FACTORY_MODEL`, the node's own, factory.md (the
    /// role's, then its `default`), config.toml (`[models]` for the role, then
    /// `defaults.model`). `None`: the runner's own default model.
    pub fn model(
        &self,
        role: &str,
        flag: Option<&str>,
        node: Option<&str>,
    ) -> Option<Setting<String>> {
        let user = self
            .user
            .models
            .get(role)
            .or(self.user.model.as_ref())
            .map(String::as_str);
        pick(
            flag,
            "FACTORY_MODEL",
            node,
            self.project.as_ref().and_then(|p| p.model_for(role)),
            user,
        )
    }

    /// An agent's timeout in seconds: flag, `FACTORY_AGENT_TIMEOUT`, the node's own,
    /// config.toml, then `default`.
    pub fn agent_timeout(
        &self,
        flag: Option<u64>,
        node: Option<u64>,
        default: u64,
    ) -> Setting<u64> {
        let env = std::env::var("FACTORY_AGENT_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|n| *n > 0);
        let (value, source) = if let Some(v) = flag {
            (v, Source::Flag)
        } else if let Some(v) = env {
            (v, Source::Env("FACTORY_AGENT_TIMEOUT"))
        } else if let Some(v) = node {
            (v, Source::Node)
        } else if let Some(v) = self.user.agent_timeout {
            (v, Source::User)
        } else {
            (default, Source::Default)
        };
        Setting { value, source }
    }
}

fn pick(
    flag: Option<&str>,
    env: &'static str,
    node: Option<&str>,
    project: Option<&str>,
    user: Option<&str>,
) -> Option<Setting<String>> {
    let nonempty = |s: Option<&str>| {
        s.map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let env_value = std::env::var(env).ok();
    [
        (nonempty(flag), Source::Flag),
        (nonempty(env_value.as_deref()), Source::Env(env)),
        (nonempty(node), Source::Node),
        (nonempty(project), Source::Project),
        (nonempty(user), Source::User),
    ]
    .into_iter()
    .find_map(|(v, source)| v.map(|value| Setting { value, source }))
}
