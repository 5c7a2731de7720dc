//! Scoring a candidate on one bench project by really running it: the project is
//! copied to a scratch directory, made a git repository with its config, and the
//! candidate's IR runs there through `factory run` with the project's scripted agents,
//! in a factory home of its own. The cycle is then read back from `.factory/` alone
//! ([`super::cycle`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::sys::process::run_command;

use serde::{Deserialize, Serialize};

use super::bench::BenchProject;
use super::cycle::{self, CycleRecord};

/// One run's longest wall time before it counts as failed.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(900);

/// A candidate's result on one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectResult {
    pub project: String,
    /// The improvement its kept experiment made; 0 for a revert, an error or a failure.
    pub gain: f64,
    /// The last experiment's verdict, if any.
    pub verdict: Option<String>,
    /// How the run ended, or why it could not run.
    pub outcome: String,
    pub seconds: f64,
    pub cycle: CycleRecord,
}

/// Runs `ir_text` on `project` with the `factory` binary at `factory`, in a scratch
/// directory under `scratch` that is removed afterwards.
pub fn evaluate(
    ir_text: &str,
    project: &BenchProject,
    factory: &Path,
    scratch: &Path,
) -> ProjectResult {
    let start = Instant::now();
    let failed = |why: String| ProjectResult {
        project: project.name.clone(),
        gain: 0.0,
        verdict: None,
        outcome: why,
        seconds: start.elapsed().as_secs_f64(),
        cycle: CycleRecord::default(),
    };
    let dir = match tempfile::Builder::new()
        .prefix("evolve-")
        .tempdir_in(scratch)
    {
        Ok(d) => d,
        Err(e) => return failed(format!("no scratch directory: {e}")),
    };
    let work = dir.path().join("project");
    let home = dir.path().join("home");
    if let Err(e) = prepare(project, &work) {
        return failed(format!("cannot prepare {}: {e}", project.name));
    }
    let ir_file = dir.path().join("candidate.fwir");
    if let Err(e) = std::fs::write(&ir_file, ir_text) {
        return failed(format!("cannot write the candidate: {e}"));
    }
    let factory_cmd = |args: &[&str]| {
        let mut c = Command::new(factory);
        // Nothing of the calling run leaks in (its project, run id, runner, node): an
        // evaluation started by a workflow node must run exactly as one started by hand.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("FACTORY_") {
                c.env_remove(key);
            }
        }
        c.current_dir(&work).env("FACTORY_HOME", &home).args(args);
        c
    };
    match factory_cmd(&["init"]).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            return failed(format!(
                "factory init failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Err(e) => return failed(format!("cannot run {}: {e}", factory.display())),
    }
    let script = project.script.display().to_string();
    let ir = ir_file.display().to_string();
    let run = factory_cmd(&["run", &ir, "--runner", "replay", "--script", &script]);
    // Its own process group, killed whole at the timeout: a run starts commands of its own.
    let outcome = match run_command(run, "factory run", &work, RUN_TIMEOUT) {
        Ok(out) if out.timed_out => {
            return failed(format!("timed out after {}s", RUN_TIMEOUT.as_secs()));
        }
        Ok(out) if out.success() => "completed".to_string(),
        Ok(out) => format!("{}: {}", out.exit_text(), out.tail(3)),
        Err(e) => return failed(e.to_string()),
    };
    let cycle = match cycle::analyze(&work) {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot read the cycle: {e}")),
    };
    ProjectResult {
        project: project.name.clone(),
        gain: round(cycle.gain()),
        verdict: cycle.verdict().map(str::to_string),
        outcome: cycle.outcome.clone().unwrap_or(outcome),
        seconds: start.elapsed().as_secs_f64(),
        cycle,
    }
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Copies the project's files to `to` and commits them on `main`.
fn prepare(project: &BenchProject, to: &Path) -> Result<(), String> {
    copy_tree(&project.files, to).map_err(|e| e.to_string())?;
    let ignore = to.join("gitignore");
    if ignore.exists() {
        std::fs::rename(&ignore, to.join(".gitignore")).map_err(|e| e.to_string())?;
    }
    crate::worktrees::init_committed(to, "factory evolve", "bench project")
        .map_err(|e| e.message().to_string())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let dest: PathBuf = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}
