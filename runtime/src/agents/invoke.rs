//! One agent invocation with its telemetry and review capture (spec §8.4, §9.2, §9.3).
//!
//! `agent.started` is appended before the runner starts, and exactly one of
//! `agent.completed`, `agent.failed` or `agent.timeout` after — also when the future
//! is dropped mid-run (a drop guard writes `agent.failed {reason: "cancelled"}`) and,
//! via [`close_dangling`], after the whole process was killed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use serde_json::Value;

use super::{AgentError, AgentResult};
use crate::events::{self, Event, kinds};
use crate::project::layout::FactoryPaths;
use crate::runners::{AgentRequest, Runner};
use crate::sys::files::atomic_write;

/// A new invocation id: unique across processes and within one.
pub fn new_invocation_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}-{}",
        jiff::Timestamp::now().as_millisecond(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// `.factory/reviews/<role>[-TAG]-latest.md`.
pub fn review_path(project: &Path, role: &str, tag: Option<&str>) -> PathBuf {
    let name = match tag {
        Some(t) => format!("{role}-{t}-latest.md"),
        None => format!("{role}-latest.md"),
    };
    FactoryPaths::new(project).reviews_dir().join(name)
}

/// Runs `req` on `runner` (see [`invoke_with_progress`]), discarding live output.
pub async fn invoke(
    project: &Path,
    req: &AgentRequest,
    runner: &dyn Runner,
    review_tag: Option<&str>,
) -> Result<AgentResult, AgentError> {
    invoke_with_progress(project, req, runner, review_tag, &|_| {}).await
}

/// Runs `req` on `runner`: logs the event pair, captures stdout to the review file and
/// reports which of `req.outputs` the agent did not write.
pub async fn invoke_with_progress(
    project: &Path,
    req: &AgentRequest,
    runner: &dyn Runner,
    review_tag: Option<&str>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<AgentResult, AgentError> {
    if let Some(tag) = review_tag
        && !is_tag(tag)
    {
        return Err(AgentError::BadTag { tag: tag.into() });
    }
    let paths = FactoryPaths::new(project);
    let review = review_path(project, &req.role, review_tag);
    let before: Vec<Option<Stamp>> = req.outputs.iter().map(|p| stamp(p)).collect();
    let mut guard = Terminal::start(&paths, req, runner.meta().name, review_tag)?;
    let start = Instant::now();

    let output = match runner.run(req, progress).await {
        Ok(output) => output,
        Err(err) => {
            guard.finish(kinds::AGENT_FAILED, |e| {
                e.with("reason", "spawn")
                    .with("error", err.to_string())
                    .with("duration_ms", ms(start))
            })?;
            return Err(AgentError::runner(&req.role, err));
        }
    };
    // The review is the agent's output even when it failed: it is what there is to read.
    let written =
        atomic_write(&review, output.stdout.as_bytes()).map_err(|source| AgentError::Io {
            path: review.clone(),
            source,
        });
    let rel_review = review
        .strip_prefix(project)
        .unwrap_or(&review)
        .display()
        .to_string();
    let duration_ms = output.duration.as_millis() as u64;
    let common = |e: Event| {
        e.with(
            "exit_code",
            output.exit_code.map_or(Value::Null, Value::from),
        )
        .with("duration_ms", duration_ms)
        .with("review", rel_review.clone())
    };
    if let Err(err) = written {
        guard.finish(kinds::AGENT_FAILED, |e| {
            common(e)
                .with("reason", "review")
                .with("error", err.to_string())
        })?;
        return Err(err);
    }
    if output.timed_out {
        guard.finish(kinds::AGENT_TIMEOUT, common)?;
        return Err(AgentError::TimedOut {
            role: req.role.clone(),
            timeout: req.timeout.unwrap_or(output.duration),
            invocation_id: guard.id.clone(),
            stderr_tail: output.stderr_tail,
        });
    }
    if output.exit_code != Some(0) {
        guard.finish(kinds::AGENT_FAILED, |e| common(e).with("reason", "exit"))?;
        return Err(AgentError::Failed {
            role: req.role.clone(),
            exit_code: output.exit_code,
            invocation_id: guard.id.clone(),
            stderr_tail: output.stderr_tail,
        });
    }
    let missing_outputs: Vec<PathBuf> = req
        .outputs
        .iter()
        .zip(&before)
        .filter(|(p, was)| **p != review && stamp(p).is_none_or(|now| Some(now) == **was))
        .map(|(p, _)| p.clone())
        .collect();
    guard.finish(kinds::AGENT_COMPLETED, |e| {
        let e = common(e);
        if missing_outputs.is_empty() {
            e
        } else {
            e.with(
                "missing_outputs",
                missing_outputs
                    .iter()
                    .map(|p| Value::from(p.display().to_string()))
                    .collect::<Vec<_>>(),
            )
        }
    })?;
    Ok(AgentResult {
        invocation_id: guard.id.clone(),
        role: req.role.clone(),
        review_path: review,
        missing_outputs,
        output,
    })
}

/// A file's identity at one moment: a rewrite changes it even with the same content.
type Stamp = (u64, SystemTime);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

fn ms(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

fn is_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !tag.contains("..")
}

/// Owes the log one terminal event for an invocation; pays it on drop if nobody did.
struct Terminal {
    paths: FactoryPaths,
    id: String,
    /// Fields every event of this invocation carries (role, node, run_id, ...).
    base: Vec<(&'static str, Value)>,
    done: bool,
}

impl Terminal {
    fn start(
        paths: &FactoryPaths,
        req: &AgentRequest,
        runner: &str,
        tag: Option<&str>,
    ) -> Result<Self, AgentError> {
        let id = new_invocation_id();
        let opt = |v: Option<&str>| v.map_or(Value::Null, Value::from);
        let base = vec![
            ("invocation_id", Value::from(id.clone())),
            ("role", Value::from(req.role.clone())),
            ("node", opt(req.node.as_deref())),
            ("run_id", opt(req.env_value("FACTORY_RUN_ID"))),
            // A number, as in `experiment.begin`, when it is one.
            (
                "exp_id",
                match req.env_value("FACTORY_EXP_ID") {
                    Some(v) => v.trim().parse::<u64>().map_or(Value::from(v), Value::from),
                    None => Value::Null,
                },
            ),
        ];
        let started = base
            .iter()
            .fold(Event::new(kinds::AGENT_STARTED), |e, (k, v)| {
                e.with(*k, v.clone())
            })
            .with("runner", runner)
            .with("visit", req.visit.max(1))
            .with("review_tag", opt(tag));
        events::append(paths, &started)?;
        Ok(Self {
            paths: paths.clone(),
            id,
            base,
            done: false,
        })
    }

    fn event(&self, kind: &str) -> Event {
        self.base
            .iter()
            .fold(Event::new(kind), |e, (k, v)| e.with(*k, v.clone()))
    }

    fn finish(
        &mut self,
        kind: &str,
        fields: impl FnOnce(Event) -> Event,
    ) -> Result<(), AgentError> {
        // Marked first: a failed append must not be followed by a second, wrong terminal.
        self.done = true;
        events::append(&self.paths, &fields(self.event(kind)))?;
        Ok(())
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if !self.done {
            let event = self.event(kinds::AGENT_FAILED).with("reason", "cancelled");
            let _ = events::append(&self.paths, &event);
        }
    }
}

/// Appends `agent.failed {reason: "interrupted"}` for every `agent.started` of `run_id`
/// that has no terminal event (the process was killed). Returns how many it closed.
pub fn close_dangling(project: &Path, run_id: &str) -> Result<usize, AgentError> {
    let paths = FactoryPaths::new(project);
    let log = events::read(&paths)?;
    let id_of = |e: &Event| {
        e.get("invocation_id")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let finished: HashSet<String> = log
        .events
        .iter()
        .filter(|e| is_terminal(&e.kind))
        .filter_map(id_of)
        .collect();
    let mut closed = 0;
    for started in log.of_kind(kinds::AGENT_STARTED) {
        if started.get("run_id").and_then(Value::as_str) != Some(run_id) {
            continue;
        }
        let Some(id) = id_of(started) else { continue };
        if finished.contains(&id) {
            continue;
        }
        let mut event = Event::new(kinds::AGENT_FAILED).with("reason", "interrupted");
        for key in ["invocation_id", "role", "node", "run_id", "exp_id"] {
            if let Some(v) = started.get(key) {
                event = event.with(key, v.clone());
            }
        }
        events::append(&paths, &event)?;
        closed += 1;
    }
    Ok(closed)
}

/// Whether `kind` ends an invocation.
pub fn is_terminal(kind: &str) -> bool {
    [
        kinds::AGENT_COMPLETED,
        kinds::AGENT_FAILED,
        kinds::AGENT_TIMEOUT,
    ]
    .contains(&kind)
}
