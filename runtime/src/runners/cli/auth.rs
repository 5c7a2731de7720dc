//! Whether a CLI runner has a credential: an environment variable or the CLI's login
//! file. Only the shape is ever shown (the variable's name, the file's path).

use std::path::PathBuf;

use super::{CliDef, EnvView};

/// Whether a runner has a credential — the shape of it only, never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthState {
    /// This variable is set.
    Env(&'static str),
    /// This login file exists.
    LoginFile(PathBuf),
    /// None of the variables is set and no login file exists.
    Missing,
}

impl AuthState {
    pub fn is_ready(&self) -> bool {
        !matches!(self, Self::Missing)
    }
}

impl std::fmt::Display for AuthState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Env(k) => write!(f, "{k} set"),
            Self::LoginFile(p) => write!(f, "login file found ({})", p.display()),
            Self::Missing => f.write_str("not set"),
        }
    }
}

/// The credential `def` would use, given the environment.
pub fn auth_state(def: &dyn CliDef, env: &EnvView<'_>) -> AuthState {
    if let Some(k) = def.auth_env().iter().find(|k| env.get(k).is_some()) {
        return AuthState::Env(k);
    }
    match def.login_files(env).into_iter().find(|p| p.is_file()) {
        Some(p) => AuthState::LoginFile(p),
        None => AuthState::Missing,
    }
}

/// What `needs` says when no credential is found.
pub(super) fn auth_needs(def: &dyn CliDef, env: &EnvView<'_>) -> String {
    let files: Vec<String> = def
        .login_files(env)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut s = format!("none of {} is set", def.auth_env().join(", "));
    if !files.is_empty() {
        s.push_str(&format!(
            " and there is no login file ({})",
            files.join(", ")
        ));
    }
    s
}
