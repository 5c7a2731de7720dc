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

use super::{AgentError, AgentResult};
use crate::events::{self, AgentEnded, AgentStarted, Event, EventData, ExpRef, kinds};
use crate::project::layout::FactoryPaths;
use crate::runners::{AgentRequest, Runner};
use crate::sys::files::atomic_write;
use crate::sys::redact::redact;

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
    let review = review_path(project, &req.role, review_tag);
    invoke_capturing(project, req, runner, review_tag, review, progress).await
}

/// [`invoke_with_progress`] with the captured stdout going to `review` (a parallel
/// branch keeps its reviews in its own directory; `review_tag` still marks its events).
pub async fn invoke_capturing(
    project: &Path,
    req: &AgentRequest,
    runner: &dyn Runner,
    review_tag: Option<&str>,
    review: PathBuf,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<AgentResult, AgentError> {
    let paths = FactoryPaths::new(project);
    if let Some(dir) = review.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let before: Vec<Option<Stamp>> = req.outputs.iter().map(|p| stamp(p)).collect();
    let mut guard = Terminal::start(&paths, req, runner.meta().name, review_tag)?;
    let start = Instant::now();

    let output = match runner.run(req, progress).await {
        Ok(output) => output,
        Err(err) => {
            guard.finish(EventData::AgentFailed, |e| AgentEnded {
                reason: Some("spawn".into()),
                error: Some(err.to_string()),
                duration_ms: Some(ms(start)),
                ..e
            })?;
            return Err(AgentError::runner(&req.role, err));
        }
    };
    // The review is the agent's output even when it failed: it is what there is to read.
    // An agent CLI's final message, not its event stream — unless the agent was told to
    // write that very file and did: then its report stands and the captured message
    // goes beside it (`<name>.stdout.md`), never over it.
    let agent_wrote_review = req
        .outputs
        .iter()
        .zip(&before)
        .any(|(p, was)| *p == review && stamp(p).is_some_and(|now| Some(now) != *was));
    let captured = if agent_wrote_review {
        let name = review
            .file_stem()
            .map(|s| format!("{}.stdout.md", s.to_string_lossy()))
            .unwrap_or_else(|| "stdout.md".into());
        review.with_file_name(name)
    } else {
        review.clone()
    };
    let written =
        atomic_write(&captured, redact(output.review_text()).as_bytes()).map_err(|source| {
            AgentError::Io {
                path: captured.clone(),
                source,
            }
        });
    let rel_review = review
        .strip_prefix(project)
        .unwrap_or(&review)
        .display()
        .to_string();
    let duration_ms = output.duration.as_millis() as u64;
    let common = |e: AgentEnded| AgentEnded {
        exit_code: output.exit_code,
        duration_ms: Some(duration_ms),
        review: Some(rel_review.clone()),
        usage: output.usage,
        ..e
    };
    if let Err(err) = written {
        guard.finish(EventData::AgentFailed, |e| AgentEnded {
            reason: Some("review".into()),
            error: Some(err.to_string()),
            ..common(e)
        })?;
        return Err(err);
    }
    if output.timed_out {
        guard.finish(EventData::AgentTimeout, common)?;
        return Err(AgentError::TimedOut {
            role: req.role.clone(),
            timeout: req.timeout.unwrap_or(output.duration),
            invocation_id: guard.id.clone(),
            stderr_tail: output.stderr_tail,
        });
    }
    if output.exit_code != Some(0) {
        guard.finish(EventData::AgentFailed, |e| AgentEnded {
            reason: Some("exit".into()),
            ..common(e)
        })?;
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
    // A QA role's answer about behaviour changes is sealed into its completion event.
    let confirmed = crate::precheck::QA_ROLES
        .contains(&req.role.as_str())
        .then(|| crate::guards::tests_kept::attribution::confirmed_changes(output.review_text()))
        .filter(|c| !c.is_empty());
    guard.finish(EventData::AgentCompleted, |e| AgentEnded {
        confirmed,
        missing_outputs: (!missing_outputs.is_empty()).then(|| {
            missing_outputs
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        }),
        ..common(e)
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
    /// Who the invocation is (role, node, run_id, ...): every event of it says so.
    started: AgentStarted,
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
        let started = AgentStarted {
            invocation_id: id.clone(),
            role: req.role.clone(),
            node: req.node.clone(),
            run_id: req
                .env_value(crate::project::child::RUN_ID)
                .map(str::to_string),
            // A number, as in `experiment.begin`, when it is one.
            exp_id: req
                .env_value(crate::project::child::EXP_ID)
                .map(ExpRef::parse),
            runner: runner.to_string(),
            visit: Some(req.visit.max(1)),
            interactive: None,
            review_tag: tag.map(str::to_string),
        };
        events::append(paths, &Event::new(EventData::AgentStarted(started.clone())))?;
        Ok(Self {
            paths: paths.clone(),
            id,
            started,
            done: false,
        })
    }

    fn finish(
        &mut self,
        kind: fn(AgentEnded) -> EventData,
        fields: impl FnOnce(AgentEnded) -> AgentEnded,
    ) -> Result<(), AgentError> {
        // Marked first: a failed append must not be followed by a second, wrong terminal.
        self.done = true;
        let ended = fields(AgentEnded::of(&self.started));
        events::append(&self.paths, &Event::new(kind(ended)))?;
        Ok(())
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if !self.done {
            let ended = AgentEnded {
                reason: Some("cancelled".into()),
                ..AgentEnded::of(&self.started)
            };
            let _ = events::append(&self.paths, &Event::new(EventData::AgentFailed(ended)));
        }
    }
}

/// Appends `agent.failed {reason: "interrupted"}` for every `agent.started` of `run_id`
/// that has no terminal event (the process was killed). Returns how many it closed.
pub fn close_dangling(project: &Path, run_id: &str) -> Result<usize, AgentError> {
    let paths = FactoryPaths::new(project);
    let log = events::read(&paths)?;
    // Any terminal line counts, also one whose fields no longer fit the typed shape.
    let finished: HashSet<String> = log
        .events
        .iter()
        .filter(|e| kinds::is_agent_terminal(e.kind()))
        .filter_map(|e| match e.data.agent_ended() {
            Some(a) => Some(a.invocation_id.clone()),
            None => e
                .get("invocation_id")
                .and_then(|v| v.as_str().map(str::to_string)),
        })
        .collect();
    let mut closed = 0;
    for e in &log.events {
        let EventData::AgentStarted(started) = &e.data else {
            continue;
        };
        if started.run_id.as_deref() != Some(run_id) || finished.contains(&started.invocation_id) {
            continue;
        }
        let ended = AgentEnded {
            reason: Some("interrupted".into()),
            ..AgentEnded::of(started)
        };
        events::append(&paths, &Event::new(EventData::AgentFailed(ended)))?;
        closed += 1;
    }
    Ok(closed)
}

/// Whether `kind` ends an invocation.
pub fn is_terminal(kind: &str) -> bool {
    kinds::is_agent_terminal(kind)
}
