//! Probe before trusting: a sandbox that cannot be made fails in known ways (bubblewrap
//! inside a default Docker container cannot create a user namespace, and one agent CLI
//! then runs nothing and exits 0). The probe runs a canary under the policy a node
//! would get and trusts the sandbox only if the canary's output came back and its
//! write outside failed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::bwrap;
use super::policy::{Network, Policy};

/// What the canary prints; anything else means it did not run as asked.
const CANARY: &str = "factory-sandbox-canary";

/// Why the sandbox cannot be trusted here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeFailure {
    #[error(
        "bubblewrap (`bwrap`) is not on PATH; install it (Debian/Ubuntu: `apt-get install bubblewrap`)"
    )]
    Missing,
    #[error("`{bwrap} … true` did not run: {why}")]
    DidNotRun { bwrap: PathBuf, why: String },
    #[error(
        "the canary under `{bwrap}` printed {got:?}, not {CANARY:?}: the sandbox runs nothing it is given"
    )]
    NoCanary { bwrap: PathBuf, got: String },
    #[error("a write outside the sandbox succeeded under `{bwrap}`: it does not confine")]
    Escaped { bwrap: PathBuf },
    #[error("{bubblewrap}; and landlock alone cannot be used either: {landlock}")]
    Neither {
        bubblewrap: Box<ProbeFailure>,
        landlock: String,
    },
}

/// The canary's script: it prints [`CANARY`], then tries to write into `/` (read-only
/// in every policy) and says whether that worked.
const CANARY_SCRIPT: &str = "echo factory-sandbox-canary; if touch /.factory-sandbox-probe 2>/dev/null; then rm -f /.factory-sandbox-probe; echo escaped; fi";

/// Probes landlock alone through this executable's launcher: `Ok` with the launcher
/// when its canary came back and could not write `/`.
pub fn landlock() -> Result<PathBuf, String> {
    if std::env::var(super::LANDLOCK_ENV).is_ok_and(|v| v.trim() == "0") {
        return Err(format!("turned off ({}=0)", super::LANDLOCK_ENV));
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find factory's executable: {e}"))?;
    let policy = Policy {
        readable: Vec::new(),
        writable: Vec::new(),
        hidden: Vec::new(),
        network: Network::None,
    };
    let rest = ["-c".to_string(), CANARY_SCRIPT.to_string()];
    let (program, args) = super::landlock::args(&exe, &policy, Path::new("/"), "/bin/sh", &rest);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out =
        crate::sys::process::run_program(&program, &args, Path::new("/"), Duration::from_secs(20))
            .map_err(|e| format!("the launcher did not run: {e}"))?;
    let lines: Vec<&str> = out.stdout.lines().collect();
    if lines.contains(&"escaped") {
        return Err("a write into / succeeded: landlock does not confine here".into());
    }
    if !out.success() || lines != [CANARY] {
        return Err(format!(
            "the canary did not come back ({}): {}",
            out.exit_text(),
            out.tail(2)
        ));
    }
    Ok(exe)
}

/// Runs the canary under `bwrap`: it prints [`CANARY`], then tries to write into `/`
/// (read-only in every policy) and reports whether that worked.
pub fn probe(bwrap: &Path) -> Result<(), ProbeFailure> {
    let policy = Policy {
        readable: Vec::new(),
        writable: Vec::new(),
        hidden: Vec::new(),
        network: Network::None,
    };
    let mut args = bwrap::args(&policy, Path::new("/"), &[]);
    args.push("--".into());
    args.extend(["/bin/sh", "-c", CANARY_SCRIPT].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let shown = bwrap.to_path_buf();
    let program = bwrap.display().to_string();
    let out =
        crate::sys::process::run_program(&program, &args, Path::new("/"), Duration::from_secs(20))
            .map_err(|e| ProbeFailure::DidNotRun {
                bwrap: shown.clone(),
                why: e.to_string(),
            })?;
    if !out.success() {
        return Err(ProbeFailure::DidNotRun {
            bwrap: shown,
            why: format!("{}: {}", out.exit_text(), out.tail(3)),
        });
    }
    let lines: Vec<&str> = out.stdout.lines().collect();
    if lines.contains(&"escaped") {
        return Err(ProbeFailure::Escaped { bwrap: shown });
    }
    if lines != [CANARY] {
        return Err(ProbeFailure::NoCanary {
            bwrap: shown,
            got: out.stdout.trim().to_string(),
        });
    }
    Ok(())
}
