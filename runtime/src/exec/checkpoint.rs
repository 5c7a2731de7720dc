//! The run's durable record. A checkpoint is the machine's state (`.factory/state/run.json`)
//! plus the inputs journaled after it (`node.finished` events in `events.jsonl`, each
//! with the run id and its sequence number): resume loads the one and replays the other.
//! Each run also keeps its IR and a summary under `.factory/runs/<run_id>/`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::machine::{Input, MachineState, NodeResult, RunOutcome};
use crate::events::{self, Event, EventData, kinds};
use crate::project::layout::FactoryPaths;
use crate::sys::files::{atomic_write, atomic_write_unsynced};

/// How a run was asked to execute; kept so resume runs it the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSettings {
    pub runner: Option<String>,
    pub agent_cmd: Option<String>,
    pub script: Option<PathBuf>,
    pub auto_approve: bool,
    pub goal: Option<String>,
    /// `--placement`: where agent nodes run (`None`: on the host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::Placement>,
}

/// `.factory/state/run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    pub run_id: String,
    pub workflow: String,
    /// Content hash of the IR, so a changed graph is never resumed with an old state.
    pub ir_hash: String,
    pub settings: RunSettings,
    pub started_at: String,
    pub saved_at: String,
    /// How many times this run was resumed.
    pub respawns: u32,
    /// The run that started this one (a node running `factory run`): a nested run
    /// keeps its checkpoint in its own run directory, so the parent's stays intact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run: Option<String>,
    /// Set for a parallel branch: the experiment whose directory keeps its checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_exp: Option<u32>,
    pub state: MachineState,
}

impl Checkpoint {
    /// `.factory/state/run.json`: the checkpoint of the project's current top-level run.
    pub fn path(paths: &FactoryPaths) -> PathBuf {
        paths.state_dir().join("run.json")
    }

    /// Where this checkpoint is saved.
    pub fn own_path(&self, paths: &FactoryPaths) -> PathBuf {
        match (self.branch_exp, &self.parent_run) {
            (Some(exp), _) => Self::branch_path(paths, exp),
            (None, Some(_)) => run_dir(paths, &self.run_id).join("checkpoint.json"),
            (None, None) => Self::path(paths),
        }
    }

    /// `.factory/experiments/NNN/state/run.json`: a parallel branch's checkpoint.
    pub fn branch_path(paths: &FactoryPaths, exp: u32) -> PathBuf {
        paths.experiment_dir(exp).join("state").join("run.json")
    }

    /// Saves the snapshot (temp file + rename). It is flushed to disk only when the
    /// run stops (finished or interrupted); between nodes the journal backs it.
    pub fn save(&mut self, paths: &FactoryPaths) -> std::io::Result<()> {
        self.saved_at = crate::sys::clock::now_iso8601();
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        let path = self.own_path(paths);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if self.state.finished || self.state.outcome.is_some() {
            atomic_write(&path, &json)
        } else {
            atomic_write_unsynced(&path, &json)
        }
    }

    /// The saved checkpoint; `Ok(None)` when there is none.
    pub fn load(paths: &FactoryPaths) -> Result<Option<Checkpoint>, String> {
        Self::load_from(&Self::path(paths))
    }

    /// The checkpoint saved at `path`; `Ok(None)` when there is none.
    pub fn load_from(path: &Path) -> Result<Option<Checkpoint>, String> {
        use crate::sys::files::{JsonFileError, read_json};
        read_json(path).map_err(|e| match e {
            JsonFileError::Io(e) => format!("cannot read {}: {e}", path.display()),
            JsonFileError::Invalid(e) => {
                format!("{} is not a valid checkpoint: {e}", path.display())
            }
        })
    }
}

/// The directory of one run: its IR, summary and node logs.
pub fn run_dir(paths: &FactoryPaths, run_id: &str) -> PathBuf {
    paths.dir().join("runs").join(run_id)
}

/// Reserves a fresh run id by creating its run directory (creation is atomic, so two
/// starters never get the same id). A run started in the background with
/// `factory run --run-id ID` takes it over with [`claim_reserved`].
pub fn reserve_run_id(paths: &FactoryPaths) -> std::io::Result<String> {
    let runs = paths.dir().join("runs");
    std::fs::create_dir_all(&runs)?;
    let base = super::new_run_id();
    for n in 1..1000 {
        let id = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        match std::fs::create_dir(runs.join(&id)) {
            Ok(()) => return Ok(id),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "no free run id under {}",
        runs.display()
    )))
}

/// Takes over a run id reserved by [`reserve_run_id`]: it must be one (a plain name
/// whose run directory exists) and no run may have used it yet.
pub fn claim_reserved(paths: &FactoryPaths, id: &str) -> Result<String, super::RunError> {
    let plain = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain {
        return Err(super::RunError::RunId(format!(
            "run id `{id}` may hold only letters, digits, `-` and `_`"
        )));
    }
    let dir = run_dir(paths, id);
    if !dir.is_dir() {
        return Err(super::RunError::RunId(format!(
            "run id `{id}` was not reserved ({} does not exist)",
            dir.display()
        )));
    }
    if dir.join("summary.json").exists() {
        return Err(super::RunError::RunId(format!(
            "run id `{id}` was already used by a run"
        )));
    }
    Ok(id.to_string())
}

/// `.factory/runs/<id>/summary.json`: what `factory runs` lists.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: String,
    pub workflow: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RunOutcome>,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Why the experiment was not kept: the first line of its notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default)]
    pub nodes_run: u64,
    /// The agents' tokens and cost, summed (absent when none reported any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<events::Usage>,
    /// The process running it, while it runs: a `running` summary whose process is gone
    /// was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The node whose agent's failure ended the run, while `factory resume` can run it
    /// again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
}

impl RunSummary {
    /// A `running` summary whose process is gone: killed (SIGKILL, a crash, a reboot)
    /// before it could say so; `factory resume` continues it.
    pub fn was_killed(&self) -> bool {
        self.status == "running"
            && self.pid.is_some_and(|pid| {
                // SAFETY: signal 0 only asks whether the process exists.
                let gone = unsafe { libc::kill(pid as libc::pid_t, 0) } != 0;
                gone && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
            })
    }
}

/// How many nodes run `run_id` has finished, from its journal (what a killed run's
/// summary never got to record).
pub fn journaled_nodes(paths: &FactoryPaths, run_id: &str) -> u64 {
    journal_after(paths, run_id, 0)
        .map(|inputs| {
            inputs
                .iter()
                .filter(|(_, i)| matches!(i, Input::Finished { .. }))
                .count() as u64
        })
        .unwrap_or(0)
}

impl RunSummary {
    /// The summary of `run_id`, when it has a readable one.
    pub fn load(paths: &FactoryPaths, run_id: &str) -> Option<RunSummary> {
        let bytes = std::fs::read(run_dir(paths, run_id).join("summary.json")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub fn save(&self, paths: &FactoryPaths) -> std::io::Result<()> {
        let dir = run_dir(paths, &self.run_id);
        std::fs::create_dir_all(&dir)?;
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        atomic_write(&dir.join("summary.json"), &json)
    }
}

/// The usage every agent invocation of `run_id` reported (on its terminal event),
/// summed; `None` when none reported any. Unreadable logs count as none.
pub fn run_usage(paths: &FactoryPaths, run_id: &str) -> Option<events::Usage> {
    let mut total: Option<events::Usage> = None;
    for kind in [
        kinds::AGENT_COMPLETED,
        kinds::AGENT_FAILED,
        kinds::AGENT_TIMEOUT,
    ] {
        for e in events::read_kind(paths, kind).unwrap_or_default() {
            let Some(ended) = e.data.agent_ended() else {
                continue;
            };
            if let (Some(u), Some(true)) =
                (&ended.usage, ended.run_id.as_deref().map(|r| r == run_id))
            {
                total.get_or_insert_with(events::Usage::default).add(u);
            }
        }
    }
    total
}

/// Every run's summary, oldest first; unreadable ones are skipped.
pub fn list_runs(project: &Path) -> Vec<RunSummary> {
    let paths = FactoryPaths::new(project);
    let Ok(entries) = std::fs::read_dir(paths.dir().join("runs")) else {
        return Vec::new();
    };
    let mut runs: Vec<RunSummary> = entries
        .flatten()
        .filter_map(|e| RunSummary::load(&paths, e.file_name().to_str()?))
        .collect();
    runs.sort_by(|a, b| {
        a.started_at
            .cmp(&b.started_at)
            .then(a.run_id.cmp(&b.run_id))
    });
    runs
}

/// The journal entry for one applied input.
pub fn journal_event(run_id: &str, seq: u64, input: &Input, visit: u32) -> Event {
    Event::new(match input {
        Input::Start => EventData::RunStarted {
            run_id: run_id.to_string(),
            seq,
            workflow: None,
        },
        Input::Retry => EventData::RunResumed {
            run_id: run_id.to_string(),
            respawns: 0,
            retry_seq: Some(seq),
        },
        Input::Finished { node, result, vars } => EventData::NodeFinished {
            run_id: run_id.to_string(),
            seq,
            node: node.clone(),
            visit,
            result: serde_json::to_value(result).unwrap_or_default(),
            vars: (!vars.is_empty()).then(|| vars.clone()),
            duration_ms: None,
            evidence: None,
        },
    })
}

/// The inputs of `run_id` journaled after `seq`, in order. An entry whose result
/// does not parse (a foreign or damaged line) is skipped.
pub fn journal_after(
    paths: &FactoryPaths,
    run_id: &str,
    seq: u64,
) -> Result<Vec<(u64, Input)>, events::EventsError> {
    let mut out = Vec::new();
    for kind in [kinds::RUN_STARTED, kinds::NODE_FINISHED, kinds::RUN_RESUMED] {
        for e in events::read_kind(paths, kind)? {
            let (id, s, input) = match e.data {
                EventData::RunStarted { run_id, seq, .. } => (run_id, seq, Input::Start),
                EventData::RunResumed {
                    run_id,
                    retry_seq: Some(seq),
                    ..
                } => (run_id, seq, Input::Retry),
                EventData::NodeFinished {
                    run_id,
                    seq,
                    node,
                    result,
                    vars,
                    ..
                } => {
                    let Ok(result) = serde_json::from_value::<NodeResult>(result) else {
                        continue;
                    };
                    let vars = vars.unwrap_or_default();
                    (run_id, seq, Input::Finished { node, result, vars })
                }
                _ => continue,
            };
            if id == run_id && s > seq {
                out.push((s, input));
            }
        }
    }
    out.sort_by_key(|(s, _)| *s);
    out.dedup_by_key(|(s, _)| *s);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_run_ids_are_distinct_and_claimed_once() {
        let dir = tempfile::tempdir().unwrap();
        let paths = FactoryPaths::new(dir.path());
        let a = reserve_run_id(&paths).unwrap();
        let b = reserve_run_id(&paths).unwrap();
        assert_ne!(a, b, "two reservations in the same second differ");
        assert_eq!(claim_reserved(&paths, &a).unwrap(), a);
        let summary = RunSummary {
            run_id: a.clone(),
            ..Default::default()
        };
        summary.save(&paths).unwrap();
        let used = claim_reserved(&paths, &a).unwrap_err().to_string();
        assert!(used.contains("already used"), "{used}");
        let never = claim_reserved(&paths, "20990101T000000-00001")
            .unwrap_err()
            .to_string();
        assert!(never.contains("was not reserved"), "{never}");
        let odd = claim_reserved(&paths, "../x").unwrap_err().to_string();
        assert!(odd.contains("only letters"), "{odd}");
    }
}
