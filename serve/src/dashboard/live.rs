//! Following a run as it happens: [`Hub`] watches each project's `.factory/` with
//! `notify` and wakes the streams of that project when a file changes; a [`Follower`]
//! reads only the bytes appended to `events.jsonl` since its last read and folds the
//! run's events into its progress (the runtime's one fold), producing one
//! [`Update`] per event of the run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use factory_compiler::ir::Ir;
use factory_runtime::events::tail::Tail;
use factory_runtime::exec::progress::RunProgress;
use notify::{RecursiveMode, Watcher};
use serde_json::{Value, json};
use tokio::sync::watch;

/// One file watcher per project, shared by every stream of it.
#[derive(Default)]
pub struct Hub {
    watches: Mutex<HashMap<PathBuf, Watch>>,
}

struct Watch {
    _watcher: notify::RecommendedWatcher,
    changes: watch::Receiver<u64>,
}

impl Hub {
    /// A receiver that changes whenever something in `dir` changes.
    pub fn subscribe(&self, dir: &Path) -> Result<watch::Receiver<u64>, String> {
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = watches.get(dir) {
            return Ok(w.changes.clone());
        }
        let (tx, rx) = watch::channel(0u64);
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            // Only the event log matters (locks, checkpoints and reviews change too);
            // an event without paths (a rescan) may be anything.
            let relevant = res.is_ok_and(|e| {
                e.paths.is_empty()
                    || e.paths
                        .iter()
                        .any(|p| p.file_name().is_some_and(|n| n == "events.jsonl"))
            });
            if relevant {
                tx.send_modify(|n| *n = n.wrapping_add(1));
            }
        })
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        watches.insert(
            dir.to_path_buf(),
            Watch {
                _watcher: watcher,
                changes: rx.clone(),
            },
        );
        Ok(rx)
    }
}

/// One event of the run, as the page applies it.
#[derive(Debug, Clone)]
pub struct Update {
    /// The byte offset just past the event's line: the stream's event id.
    pub offset: u64,
    pub data: Value,
}

/// The fold of `run_id`'s events, knowing its graph when it is readable.
fn progress_of(run_id: &str, ir: Option<&Ir>) -> RunProgress {
    match ir {
        Some(ir) => RunProgress::with_ir(run_id, ir),
        None => RunProgress::new(run_id),
    }
}

/// Reads a run's events as they are appended.
pub struct Follower {
    tail: Tail,
    pub progress: RunProgress,
    ir: Option<Ir>,
    /// Lines skipped as unreadable so far.
    pub corrupt_lines: usize,
    /// The log shrank under us since the last read.
    pub restarted: bool,
}

impl Follower {
    /// A follower of `run_id` in the log at `events`, from its start.
    pub fn new(events: &Path, run_id: &str, ir: Option<Ir>) -> Self {
        Self {
            tail: Tail::new(events, 0),
            progress: progress_of(run_id, ir.as_ref()),
            ir,
            corrupt_lines: 0,
            restarted: false,
        }
    }

    /// The offset read up to.
    pub fn offset(&self) -> u64 {
        self.tail.offset()
    }

    /// Whether the run has ended (nothing more will come for it).
    pub fn is_over(&self) -> bool {
        !matches!(self.progress.status.as_str(), "running" | "unknown")
    }

    /// Reads what was appended and applies this run's events; one update per event.
    pub fn catch_up(&mut self) -> std::io::Result<Vec<Update>> {
        let run_id = self.progress.run_id.clone();
        let read = self.tail.read_new(Some(&run_id))?;
        self.corrupt_lines += read.corrupt_lines;
        if read.restarted {
            self.restarted = true;
            self.progress = progress_of(&run_id, self.ir.as_ref());
        }
        let mut out = Vec::new();
        for (offset, event) in read.events {
            let Some(changed) = self.progress.apply(&event) else {
                continue;
            };
            let nodes: Vec<Value> = changed
                .iter()
                .filter_map(|id| serde_json::to_value(self.progress.node(id)).ok())
                .collect();
            out.push(Update {
                offset,
                data: json!({
                    "kind": event.kind(),
                    "timestamp": event.timestamp,
                    "run": {
                        "status": self.progress.status,
                        "started_at": self.progress.started_at,
                        "ended_at": self.progress.ended_at,
                    },
                    "nodes": nodes,
                    "gate": self.gate(),
                }),
            });
        }
        Ok(out)
    }

    /// The current gate: its question (from the IR) and latest verdict.
    pub fn gate(&self) -> Option<Value> {
        let id = self.progress.current_gate.as_deref()?;
        let question = self
            .ir
            .as_ref()
            .and_then(|ir| ir.node(id))
            .and_then(|n| n.attrs.question.clone());
        let p = self.progress.node(id);
        Some(json!({
            "node": id,
            "question": question,
            "verdict": p.verdict,
            "state": p.state.as_str(),
            "reloops": p.reloops,
        }))
    }
}
