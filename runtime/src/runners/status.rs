//! `factory runners`: each agent-CLI runner with its binary, version and auth state
//! (the shape of the credential only, never its value).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::cli::{self, AuthState, CliDef, EnvView};

/// How long `NAME --version` may take (gemini's takes seconds).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(15);

/// One runner as found on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct RunnerStatus {
    pub name: &'static str,
    pub binary: &'static str,
    /// Where `binary` is on `PATH`; `None`: not found.
    pub path: Option<PathBuf>,
    /// The first line `--version` printed, when it answered in time.
    pub version: Option<String>,
    /// `ANTHROPIC_API_KEY set`, `login file found (...)`, `not set`.
    pub auth: String,
    pub authenticated: bool,
    /// Whether it is the runner used when none is named.
    pub default: bool,
    pub capabilities: Vec<String>,
    pub install: &'static str,
}

/// Every agent-CLI runner, in default order; versions are asked for in parallel.
pub fn survey() -> Vec<RunnerStatus> {
    let default = super::default_runner_on_path();
    std::thread::scope(|s| {
        let handles: Vec<_> = super::CLI_DEFS
            .iter()
            .map(|def| s.spawn(move || status_of(*def, default)))
            .collect();
        handles
            .into_iter()
            .zip(super::CLI_DEFS)
            .map(|(h, def)| h.join().unwrap_or_else(|_| status_of_unversioned(*def)))
            .collect()
    })
}

fn status_of(def: &dyn CliDef, default: Option<&str>) -> RunnerStatus {
    let mut st = status_of_unversioned(def);
    st.default = default == Some(def.name());
    st.version = st.path.as_deref().and_then(version);
    st
}

fn status_of_unversioned(def: &dyn CliDef) -> RunnerStatus {
    let env = EnvView::new(&[]);
    let auth: AuthState = cli::auth_state(def, &env);
    let caps = def.capabilities();
    RunnerStatus {
        name: def.name(),
        binary: def.binary(),
        path: crate::sys::process::which(def.binary()),
        version: None,
        auth: match &auth {
            AuthState::Missing if !def.needs_credentials() => {
                "not set (its free models only)".to_string()
            }
            AuthState::Missing => format!("not set ({} or a login)", def.auth_env()[0]),
            other => other.to_string(),
        },
        authenticated: auth.is_ready(),
        default: false,
        capabilities: [
            (caps.session_resume, "session resume"),
            (caps.json_events, "json events"),
            (caps.cost_reporting, "cost reporting"),
            (caps.model_selection, "model selection"),
            (caps.sandbox_control, "sandbox control"),
            (caps.interactive, "interactive"),
        ]
        .into_iter()
        .filter(|(has, _)| *has)
        .map(|(_, name)| name.to_string())
        .collect(),
        install: def.install(),
    }
}

/// The first nonempty line `program --version` prints.
fn version(program: &Path) -> Option<String> {
    let dir = std::env::temp_dir();
    let out = crate::sys::process::run_program(
        &program.display().to_string(),
        &["--version"],
        &dir,
        VERSION_TIMEOUT,
    )
    .ok()?;
    if !out.success() {
        return None;
    }
    out.stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| cli::one_line(l, 80))
}
