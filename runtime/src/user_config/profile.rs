//! Credential profiles: `[credentials.<name>]` sets environment variables for agents,
//! `[credentials.<name>.unset] vars` removes some first. A profile is chosen by
//! `--profile NAME`, else `FACTORY_PROFILE`, else `defaults.profile`; it overrides the
//! shell's value for each key it sets (an explicit choice is authoritative) and that
//! override is reported by key name only, never by value.

use toml::Value;

use super::{LineFinder, UserConfig, UserConfigError};

/// Variables no profile may set or unset: shell fundamentals, code-execution vectors,
/// language search paths, git's own location, and the runners' control variables.
pub const PROTECTED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "TMPDIR",
    "TERM",
    "LANG",
    "IFS",
    "ENV",
    "BASH_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "CLASSPATH",
    "JAVA_TOOL_OPTIONS",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_EXEC_PATH",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTC_WRAPPER",
    "IS_SANDBOX",
];

/// Prefixes of protected variables: the dynamic loader's and factory's own (its
/// internals and the runners' `FACTORY_<RUNNER>_DRY_RUN` switches).
pub const PROTECTED_PREFIXES: &[&str] = &["LD_", "DYLD_", "FACTORY_"];

/// Whether a profile may touch `name`.
pub fn is_protected(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    PROTECTED.contains(&upper.as_str()) || PROTECTED_PREFIXES.iter().any(|p| upper.starts_with(p))
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses `[credentials.<name>]`; an error is `(line, message)`.
pub(crate) fn parse_profile(
    name: &str,
    section: &Value,
    lines: &LineFinder,
) -> Result<super::Profile, (usize, String)> {
    let here = lines.key(name);
    let table = section
        .as_table()
        .ok_or_else(|| (here, format!("`credentials.{name}` must be a table")))?;
    let mut profile = super::Profile::default();
    for (key, value) in table {
        let line = lines.key(key);
        if key == "unset" {
            let vars = value
                .as_table()
                .and_then(|t| t.get("vars"))
                .ok_or_else(|| {
                    (
                        line,
                        format!("`credentials.{name}.unset` must be a table with `vars = [\"NAME\", ...]`"),
                    )
                })?;
            let list = vars.as_array().ok_or_else(|| {
                (
                    line,
                    format!("`credentials.{name}.unset.vars` must be a list of names, e.g. [\"OPENAI_API_KEY\"]"),
                )
            })?;
            for v in list {
                let var = v.as_str().ok_or_else(|| {
                    (
                        line,
                        format!("`credentials.{name}.unset.vars` must hold only strings"),
                    )
                })?;
                check_name(name, var, line, "unset")?;
                profile.unset.push(var.to_string());
            }
            continue;
        }
        check_name(name, key, line, "set")?;
        let value = value.as_str().ok_or_else(|| {
            (
                line,
                format!("`credentials.{name}.{key}` must be a string (the variable's value)"),
            )
        })?;
        profile.set.push((key.clone(), value.to_string()));
    }
    Ok(profile)
}

fn check_name(profile: &str, var: &str, line: usize, verb: &str) -> Result<(), (usize, String)> {
    if !is_env_name(var) {
        return Err((
            line,
            format!("profile `{profile}`: `{var}` is not an environment variable name"),
        ));
    }
    if is_protected(var) {
        return Err((
            line,
            format!(
                "profile `{profile}` may not {verb} `{var}`: it is protected (shell, loader, \
                 language paths, git and factory's own variables cannot come from a profile)"
            ),
        ));
    }
    Ok(())
}

/// What applying a profile does to the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvOverlay {
    pub profile: String,
    pub unset: Vec<String>,
    pub set: Vec<(String, String)>,
    /// Keys whose existing, different value the profile replaces (names only).
    pub overridden: Vec<String>,
}

/// The profile to use: `flag`, else `FACTORY_PROFILE`, else `defaults.profile`.
pub fn selected(flag: Option<&str>, cfg: &UserConfig) -> Option<String> {
    flag.map(str::to_string)
        .or_else(|| {
            std::env::var("FACTORY_PROFILE")
                .ok()
                .filter(|p| !p.trim().is_empty())
        })
        .or_else(|| cfg.profile.clone())
}

/// The overlay the named profile makes on the current environment.
pub fn overlay(name: &str, cfg: &UserConfig) -> Result<EnvOverlay, UserConfigError> {
    let profile = cfg
        .credentials
        .get(name)
        .ok_or_else(|| UserConfigError::NoProfile {
            name: name.to_string(),
            path: cfg.path.clone(),
            known: if cfg.credentials.is_empty() {
                "; it defines no profiles".into()
            } else {
                format!(
                    "; profiles: {}",
                    cfg.credentials
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
        })?;
    let overridden = profile
        .set
        .iter()
        .filter(|(k, v)| std::env::var(k).is_ok_and(|old| !old.is_empty() && &old != v))
        .map(|(k, _)| k.clone())
        .collect();
    Ok(EnvOverlay {
        profile: name.to_string(),
        unset: profile.unset.clone(),
        set: profile.set.clone(),
        overridden,
    })
}

/// One line per overridden key, naming it and the profile, never the value.
pub fn override_notices(overlay: &EnvOverlay) -> Vec<String> {
    overlay
        .overridden
        .iter()
        .map(|k| {
            format!(
                "factory: profile `{}` overrides {k} from the environment",
                overlay.profile
            )
        })
        .collect()
}

/// The overlay to apply when factory starts: the selected profile's, if any. A broken
/// config.toml is an error only when a profile was asked for by flag or environment;
/// otherwise the commands that read the config report it themselves.
pub fn startup_overlay(flag: Option<&str>) -> Result<Option<EnvOverlay>, UserConfigError> {
    let asked =
        flag.is_some() || std::env::var("FACTORY_PROFILE").is_ok_and(|p| !p.trim().is_empty());
    let cfg = match super::load() {
        Ok(cfg) => cfg,
        Err(e) if asked => return Err(e),
        Err(_) => return Ok(None),
    };
    match selected(flag, &cfg) {
        Some(name) => overlay(&name, &cfg).map(Some),
        None => Ok(None),
    }
}
