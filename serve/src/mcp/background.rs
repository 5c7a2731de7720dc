//! Runs started in the background: `start_run` spawns `factory run` detached (its
//! own process group, output to `.factory/runs/<id>/output.log`) under a run id
//! reserved beforehand, so the id can be returned at once; `run_status` and
//! `run_events` read what the run writes, the same files `factory runs` reads.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use factory_compiler::driver;
use factory_runtime::events;
use factory_runtime::exec;
use factory_runtime::exec::checkpoint::{self, RunSettings};
use factory_runtime::project::layout::{FactoryPaths, ensure_factory_dir};
use factory_runtime::store::load_history;
use factory_runtime::sys::process::last_lines;
use serde_json::{Value, json};

use super::params::{EventsArgs, RunArgs, StartRunArgs};
use super::tools::{ToolResult, compile_error, report};

/// The runs this server started, by id: kept to reap them and read their exit status.
#[derive(Clone, Default)]
pub struct Started(Arc<Mutex<BTreeMap<String, Child>>>);

/// What became of a process this server started.
enum Process {
    Running(u32),
    Exited {
        pid: u32,
        code: Option<i32>,
    },
    /// Started by someone else (or before this server): only its files tell.
    Unknown,
}

impl Started {
    fn process(&self, run_id: &str) -> Process {
        let Ok(mut runs) = self.0.lock() else {
            return Process::Unknown;
        };
        match runs.get_mut(run_id) {
            Some(child) => match child.try_wait() {
                Ok(Some(status)) => Process::Exited {
                    pid: child.id(),
                    code: status.code(),
                },
                _ => Process::Running(child.id()),
            },
            None => Process::Unknown,
        }
    }
}

/// The log a background run writes its output to.
fn output_log(paths: &FactoryPaths, run_id: &str) -> std::path::PathBuf {
    checkpoint::run_dir(paths, run_id).join("output.log")
}

pub fn start_run(project: &Path, args: StartRunArgs, started: &Started) -> ToolResult {
    // Checked here first, as `factory run` will check them, so a bad mode, project or
    // runner is an error now, not a run that dies unseen in the background.
    let compiled = driver::compile(&args.mode, project, None).map_err(compile_error)?;
    let script = args.script.as_ref().map(|s| project.join(s));
    let settings = RunSettings {
        runner: args.runner.clone(),
        agent_cmd: args.agent_cmd.clone(),
        script: script.clone(),
        auto_approve: args.auto_approve,
        goal: args.goal.clone(),
        placement: None,
    };
    exec::startable(&compiled.ir, project, &settings)
        .map_err(|e| format!("the run cannot start: {}", report(&e)))?;
    let paths = ensure_factory_dir(project).map_err(|e| report(&e))?;
    let run_id = checkpoint::reserve_run_id(&paths).map_err(|e| {
        format!(
            "cannot reserve a run id under {}: {e}",
            paths.dir().display()
        )
    })?;
    let log_path = output_log(&paths, &run_id);
    let log = File::create(&log_path)
        .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let err_log = log
        .try_clone()
        .map_err(|e| format!("cannot share {}: {e}", log_path.display()))?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the factory executable to run: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("run")
        .arg(&args.mode)
        .arg("--project")
        .arg(project)
        .arg("--run-id")
        .arg(&run_id);
    let flags = [
        ("--runner", &args.runner),
        ("--agent-cmd", &args.agent_cmd),
        ("--goal", &args.goal),
    ];
    for (flag, value) in flags {
        if let Some(v) = value {
            cmd.arg(flag).arg(v);
        }
    }
    if let Some(script) = &script {
        cmd.arg("--script").arg(script);
    }
    if args.auto_approve {
        cmd.arg("--auto-approve");
    }
    cmd.current_dir(project)
        // A run of its own, not a node of some run this server was started by.
        .env_remove(factory_runtime::project::child::RUN_ID)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log)
        // Its own process group: the client closing the server (or Ctrl-C in the
        // server's terminal) does not stop the run.
        .process_group(0);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `factory run`: {e}"))?;
    let pid = child.id();
    if let Ok(mut runs) = started.0.lock() {
        runs.insert(run_id.clone(), child);
    }
    Ok(json!({
        "run_id": run_id,
        "pid": pid,
        "project": project.display().to_string(),
        "output_log": log_path.display().to_string(),
        "next": "call run_status with this run_id until status is no longer `running`; run_events shows its progress",
    }))
}

/// The run a call names, else the project's latest.
fn run_id_of(project: &Path, given: Option<String>) -> Result<String, String> {
    if let Some(id) = given.filter(|s| !s.trim().is_empty()) {
        if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!("`{id}` is not a run id (start_run returns one)"));
        }
        return Ok(id);
    }
    checkpoint::list_runs(project)
        .pop()
        .map(|r| r.run_id)
        .ok_or_else(|| {
            format!(
                "{} has no runs yet; start one with start_run",
                project.display()
            )
        })
}

pub fn run_status(project: &Path, args: RunArgs, started: &Started) -> ToolResult {
    let run_id = run_id_of(project, args.run_id)?;
    let paths = FactoryPaths::new(project);
    let dir = checkpoint::run_dir(&paths, &run_id);
    if !dir.is_dir() {
        return Err(format!(
            "no run `{run_id}` in {}; list_runs is `factory runs`, or call project_state for the latest",
            project.display()
        ));
    }
    let summary: Option<checkpoint::RunSummary> = std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let process = started.process(&run_id);
    let log_tail = std::fs::read_to_string(output_log(&paths, &run_id))
        .map(|t| last_lines(&t, 15))
        .ok();
    let recorded = summary.as_ref().map(|s| s.status.clone());
    // A summary still saying "running" from a process that is gone means it died
    // (killed, or it failed before writing its end).
    let status = match (&recorded, &process) {
        (Some(s), Process::Exited { .. }) if s == "running" => "exited".to_string(),
        (Some(s), _) => s.clone(),
        (None, Process::Exited { .. }) => "exited".to_string(),
        (None, _) => "starting".to_string(),
    };
    let exp_id = summary
        .as_ref()
        .and_then(|s| s.exp_id.as_deref())
        .and_then(|e| e.parse::<u32>().ok());
    let experiment = exp_id.and_then(|id| {
        load_history(project)
            .ok()?
            .records
            .into_iter()
            .find(|r| r.id == id)
    });
    let process = match process {
        Process::Running(pid) => json!({"pid": pid, "running": true}),
        Process::Exited { pid, code } => json!({"pid": pid, "running": false, "exit_code": code}),
        Process::Unknown => Value::Null,
    };
    Ok(json!({
        "run_id": run_id,
        "status": status,
        "finished": !matches!(status.as_str(), "running" | "starting"),
        "workflow": summary.as_ref().map(|s| s.workflow.clone()),
        "outcome": summary.as_ref().and_then(|s| s.outcome.clone()),
        "started_at": summary.as_ref().map(|s| s.started_at.clone()),
        "ended_at": summary.as_ref().and_then(|s| s.ended_at.clone()),
        "nodes_run": summary.as_ref().map(|s| s.nodes_run),
        "exp_id": exp_id,
        "verdict": experiment.as_ref().map(|r| r.verdict.to_string()),
        "experiment": experiment,
        "process": process,
        "output_tail": log_tail,
    }))
}

const DEFAULT_EVENTS: usize = 200;

/// The run's events from `events.jsonl`, oldest first; `after` skips those already
/// read and `next` is the value to pass to read on.
pub fn run_events(project: &Path, args: EventsArgs) -> ToolResult {
    let run_id = run_id_of(project, args.run_id)?;
    let all = run_event_values(project, &run_id)?;
    let limit = args.limit.unwrap_or(DEFAULT_EVENTS).max(1);
    let page: Vec<Value> = all.iter().skip(args.after).take(limit).cloned().collect();
    let next = args.after.min(all.len()) + page.len();
    Ok(json!({
        "run_id": run_id,
        "events": page,
        "next": next,
        "more": next < all.len(),
    }))
}

/// Every event of `run_id` as written to `events.jsonl` (lines that do not parse are
/// skipped by the reader, as everywhere).
pub fn run_event_values(project: &Path, run_id: &str) -> Result<Vec<Value>, String> {
    let log = events::read(&FactoryPaths::new(project)).map_err(|e| report(&e))?;
    Ok(log
        .events
        .iter()
        .filter(|e| {
            e.get("run_id")
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref()
                == Some(run_id)
        })
        .filter_map(|e| serde_json::to_value(e).ok())
        .collect())
}
