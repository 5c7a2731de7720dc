//! The append-only event log `.factory/events.jsonl` (spec §9.3, §8.17).
//!
//! One JSON object per line, each with a `type` and an ISO-8601 `timestamp`; any other
//! fields ride along. Appends hold `.factory/.events.lock`, so lines written by
//! concurrent processes never interleave. Readers skip lines that are not valid JSON
//! objects (a crash mid-write, a hand edit) and keep unknown event types: nothing is
//! fatal to a reader.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::project::layout::FactoryPaths;
use crate::sys::files::{self, FileLock};

/// Event types the runtime writes itself. Other producers may use any string.
pub mod kinds {
    /// `factory begin` allocated (or re-used) an experiment; carries `exp_id`, `hypothesis`.
    pub const EXPERIMENT_BEGIN: &str = "experiment.begin";
    /// `factory finalize` recorded a verdict; carries `exp_id`, `verdict`, `delta`.
    pub const EXPERIMENT_FINALIZE: &str = "experiment.finalize";
    /// `factory precheck --exp N` recorded its result; carries `exp_id`, `passed`,
    /// `commit`, `score_before`, `score_after`.
    pub const PRECHECK_COMPLETED: &str = "precheck.completed";
    /// An agent invocation started; must be paired with exactly one terminal event.
    pub const AGENT_STARTED: &str = "agent.started";
    /// Terminal: the agent finished.
    pub const AGENT_COMPLETED: &str = "agent.completed";
    /// Terminal: the agent failed.
    pub const AGENT_FAILED: &str = "agent.failed";
    /// Terminal: the agent ran out of time.
    pub const AGENT_TIMEOUT: &str = "agent.timeout";
}

/// One line of `events.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// What happened, e.g. `experiment.begin`. Readers must tolerate unknown values.
    #[serde(rename = "type")]
    pub kind: String,
    /// When, as an RFC 3339 / ISO-8601 UTC timestamp (`2026-11-29T10:03:27.123Z`).
    pub timestamp: String,
    /// Every other field of the object, in the order written.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl Event {
    /// A new event of type `kind`, stamped with the current time.
    pub fn new(kind: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            timestamp: now_iso8601(),
            fields: Map::new(),
        }
    }

    /// Adds (or replaces) the field `key`. `type` and `timestamp` are reserved and
    /// ignored here so a payload can never forge them.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        if key != "type" && key != "timestamp" {
            self.fields.insert(key, value.into());
        }
        self
    }

    /// The field `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The event's timestamp parsed, when it is a valid ISO-8601 instant. Ordering
    /// across concurrent writers is only meaningful by this value (spec §9.3).
    pub fn instant(&self) -> Option<jiff::Timestamp> {
        self.timestamp.parse().ok()
    }
}

/// The current UTC time as ISO-8601 with millisecond precision.
pub fn now_iso8601() -> String {
    let now = jiff::Timestamp::now();
    // Round to milliseconds: precise enough to order events, short enough to read.
    let ms = jiff::Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now);
    ms.to_string()
}

/// Appends `event` as one line to the project's `events.jsonl`, under its lock.
/// `.factory/` is created when missing (the project directory itself never is).
pub fn append(paths: &FactoryPaths, event: &Event) -> Result<(), EventsError> {
    append_with(paths, event, files::append)
}

/// [`append`] without waiting for the disk: for the executor's per-node journal, where
/// an entry lost to a power failure only means its node runs again on resume (nodes
/// are re-runnable: a kill between a node's work and its entry has the same effect).
pub fn append_unsynced(paths: &FactoryPaths, event: &Event) -> Result<(), EventsError> {
    append_with(paths, event, files::append_unsynced)
}

fn append_with(
    paths: &FactoryPaths,
    event: &Event,
    write: fn(&Path, &[u8]) -> io::Result<()>,
) -> Result<(), EventsError> {
    if !paths.dir().is_dir() {
        crate::project::layout::ensure_factory_dir(paths.project())?;
    }
    let path = paths.events_jsonl();
    let mut line = serde_json::to_string(event).map_err(|e| EventsError::Io {
        path: path.clone(),
        source: io::Error::other(e),
    })?;
    line.push('\n');
    let io_err = |source| EventsError::Io {
        path: path.clone(),
        source,
    };
    let _lock = FileLock::acquire(&paths.events_lock()).map_err(io_err)?;
    write(&path, line.as_bytes()).map_err(io_err)
}

/// What [`read`] found in `events.jsonl`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventLog {
    /// Every well-formed event, in file order.
    pub events: Vec<Event>,
    /// 1-based line numbers that were not a JSON object with `type` and `timestamp`.
    pub corrupt_lines: Vec<usize>,
}

impl EventLog {
    /// Events of one type, in file order.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Event> + 'a {
        self.events.iter().filter(move |e| e.kind == kind)
    }
}

/// Reads the project's event log. A missing file is an empty log; corrupt lines are
/// skipped and reported in [`EventLog::corrupt_lines`], never an error.
pub fn read(paths: &FactoryPaths) -> Result<EventLog, EventsError> {
    let path = paths.events_jsonl();
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(EventLog::default()),
        Err(source) => return Err(EventsError::Io { path, source }),
    };
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

/// Reads only the events of type `kind`. Lines that cannot mention `kind` are
/// skipped before JSON parsing, so this stays cheap on a long log full of agent
/// events. Corrupt lines are skipped as in [`read`].
pub fn read_kind(paths: &FactoryPaths, kind: &str) -> Result<Vec<Event>, EventsError> {
    let path = paths.events_jsonl();
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(EventsError::Io { path, source }),
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter(|l| l.contains(kind))
        .filter_map(|l| serde_json::from_str::<Event>(l).ok())
        .filter(|e| e.kind == kind)
        .collect())
}

/// Parses the text of an event log (see [`read`]).
pub fn parse(text: &str) -> EventLog {
    let mut log = EventLog::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(event) => log.events.push(event),
            Err(_) => log.corrupt_lines.push(i + 1),
        }
    }
    log
}

/// Why the event log could not be read or appended to.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum EventsError {
    /// `.factory/` could not be prepared.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Layout(#[from] crate::project::layout::LayoutError),
    /// The file system refused an operation.
    #[error("cannot access the event log {path}: {source}")]
    #[diagnostic(
        code(factory::events::io),
        help("check that .factory/ exists and is writable (run `factory init`)")
    )]
    Io {
        /// `events.jsonl` or its lock.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Convenience for callers holding only the project root.
pub fn append_to(project: &Path, event: &Event) -> Result<(), EventsError> {
    append(&FactoryPaths::new(project), event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::layout::ensure_factory_dir;

    #[test]
    fn appends_one_object_per_line_with_type_and_timestamp() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = ensure_factory_dir(tmp.path()).unwrap();
        append(&paths, &Event::new("a").with("exp_id", 3)).unwrap();
        append(&paths, &Event::new("b").with("type", "forged")).unwrap();
        let text = fs::read_to_string(paths.events_jsonl()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let first: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(first["type"], "a");
        assert_eq!(first["exp_id"], 3);
        let ts = first["timestamp"].as_str().unwrap();
        assert!(ts.parse::<jiff::Timestamp>().is_ok(), "not ISO-8601: {ts}");
        assert!(ts.ends_with('Z'));
        let log = read(&paths).unwrap();
        assert_eq!(log.events[1].kind, "b", "payload must not override type");
        let only_a = read_kind(&paths, "a").unwrap();
        assert_eq!(only_a.len(), 1);
        assert_eq!(only_a[0].get("exp_id"), Some(&Value::from(3)));
    }

    #[test]
    fn readers_skip_corrupt_lines_and_keep_unknown_types() {
        let log = parse(
            "{\"type\":\"x.unknown\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"n\":1}\n\
             {\"type\":\"half\n\
             [1,2]\n\
             \n\
             {\"type\":\"agent.started\",\"timestamp\":\"2026-01-01T00:00:01Z\"}\n",
        );
        assert_eq!(log.events.len(), 2);
        assert_eq!(log.events[0].kind, "x.unknown");
        assert_eq!(log.events[0].get("n"), Some(&Value::from(1)));
        assert_eq!(log.corrupt_lines, vec![2, 3]);
        assert_eq!(log.of_kind(kinds::AGENT_STARTED).count(), 1);
    }

    #[test]
    fn append_creates_factory_dir_but_never_the_project() {
        let tmp = tempfile::tempdir().unwrap();
        append(&FactoryPaths::new(tmp.path()), &Event::new("x")).unwrap();
        assert_eq!(
            read(&FactoryPaths::new(tmp.path())).unwrap().events.len(),
            1
        );
        let missing = tmp.path().join("typo");
        let err = append(&FactoryPaths::new(&missing), &Event::new("x")).unwrap_err();
        assert!(matches!(err, EventsError::Layout(_)));
        assert!(!missing.exists());
    }

    #[test]
    fn missing_log_reads_as_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let log = read(&FactoryPaths::new(tmp.path())).unwrap();
        assert!(log.events.is_empty() && log.corrupt_lines.is_empty());
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = ensure_factory_dir(tmp.path()).unwrap();
        let big = "x".repeat(8192);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (paths, big) = (&paths, &big);
                s.spawn(move || {
                    for i in 0..25 {
                        append(
                            paths,
                            &Event::new("t")
                                .with("i", t * 100 + i)
                                .with("pad", big.as_str()),
                        )
                        .unwrap();
                    }
                });
            }
        });
        let log = read(&paths).unwrap();
        assert_eq!(log.events.len(), 100);
        assert!(log.corrupt_lines.is_empty());
    }
}
