//! The append-only event log `.factory/events.jsonl` (spec §9.3, §8.17).
//!
//! One JSON object per line, each with a `type` and an ISO-8601 `timestamp`. Every
//! event the runtime writes is a variant of [`EventData`] (one typed enum shared by
//! the executor, the agents, the store, precheck and every reader; the kind names live
//! in [`kinds`]); anything else is kept as [`EventData::Other`] with all its fields.
//! Appends hold `.factory/.events.lock`, so lines written by concurrent processes
//! never interleave. Readers skip lines that are not JSON objects with a string `type`
//! and `timestamp` (a crash mid-write, a hand edit) and keep unknown event types:
//! nothing is fatal to a reader.
//!
//! Every line factory writes is chained with an HMAC under a per-project key kept in
//! the user's factory home ([`chain`]); evidence (QA proof, the keep rule) is read
//! only through [`verify`], which names the first line that breaks the chain, and
//! checks that the log reaches the head record every append anchors next to the key
//! (lines deleted from the end are named too).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::project::layout::FactoryPaths;
use crate::sys::files::{self, FileLock};

pub mod chain;
mod data;
pub mod tail;

pub use chain::{ChainError, ChainKey, ForeignLine, Head, VerifiedEvent, VerifiedLog, verify};
pub use data::{AgentEnded, AgentStarted, EventData, EvidenceRef, ExpRef, Usage, kinds};

/// One line of `events.jsonl`: when, and what happened. On disk it is one object,
/// `{"type": ..., "timestamp": ..., <the data's fields>}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// When, as an RFC 3339 / ISO-8601 UTC timestamp (`2026-11-29T10:03:27.123Z`).
    pub timestamp: String,
    /// What happened.
    pub data: EventData,
}

impl From<EventData> for Event {
    fn from(data: EventData) -> Self {
        Self::new(data)
    }
}

impl Event {
    /// `data`, stamped with the current time.
    pub fn new(data: EventData) -> Self {
        Self {
            timestamp: crate::sys::clock::now_iso8601(),
            data,
        }
    }

    /// An event of type `kind` with no fields yet, stamped now: for events the runtime
    /// does not write itself (a foreign producer's, a legacy one in a test). Add
    /// fields with [`Event::with`].
    pub fn raw(kind: impl Into<String>) -> Self {
        Self::new(EventData::from_parts(kind.into(), Map::new()))
    }

    /// Adds (or replaces) the field `key`, re-reading the event as it would be read
    /// from disk (typed when the fields fit its kind). `type` and `timestamp` are
    /// reserved and ignored here so a payload can never forge them.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        if key == "type" || key == "timestamp" || key == chain::CHAIN_FIELD {
            return self;
        }
        let kind = self.kind().to_string();
        let mut fields = match self.data {
            EventData::Other { fields, .. } => fields,
            known => known.fields(),
        };
        fields.insert(key, value.into());
        self.data = EventData::from_parts(kind, fields);
        self
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.data.kind()
    }

    /// Every field but `type` and `timestamp`, as written to disk.
    pub fn fields(&self) -> Map<String, Value> {
        self.data.fields()
    }

    /// The field `key` as written to disk, whatever the variant (for generic readers;
    /// typed readers match on [`Event::data`]).
    pub fn get(&self, key: &str) -> Option<Value> {
        match &self.data {
            EventData::Other { fields, .. } => fields.get(key).cloned(),
            known => known.fields().remove(key),
        }
    }

    /// The event's timestamp parsed, when it is a valid ISO-8601 instant. Ordering
    /// across concurrent writers is only meaningful by this value (spec §9.3).
    pub fn instant(&self) -> Option<jiff::Timestamp> {
        self.timestamp.parse().ok()
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let fields = self.data.fields();
        let mut map = s.serialize_map(Some(fields.len() + 2))?;
        map.serialize_entry("type", self.kind())?;
        map.serialize_entry("timestamp", &self.timestamp)?;
        for (k, v) in &fields {
            if k != "type" && k != "timestamp" && k != chain::CHAIN_FIELD {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Event {
    /// Any JSON object with a string `type` and a string `timestamp`; see
    /// [`EventData::from_parts`] for which variant it becomes.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut fields = Map::<String, Value>::deserialize(d)?;
        // The chain is the line's seal, not the event's data (see [`chain`]).
        fields.remove(chain::CHAIN_FIELD);
        let Some(Value::String(kind)) = fields.remove("type") else {
            return Err(D::Error::custom("an event needs a string `type`"));
        };
        let Some(Value::String(timestamp)) = fields.remove("timestamp") else {
            return Err(D::Error::custom("an event needs a string `timestamp`"));
        };
        Ok(Self {
            timestamp,
            data: EventData::from_parts(kind, fields),
        })
    }
}

/// Appends `event` as one chained line to the project's `events.jsonl`, under its
/// lock. `.factory/` is created when missing (the project directory itself never is).
pub fn append(paths: &FactoryPaths, event: &Event) -> Result<(), EventsError> {
    append_with(paths, None, event, files::append)
}

/// Runs `before` (say, writing the record an event seals) and then appends `event`,
/// both under the events lock: no other append, and no other `append_after`'s
/// `before`, comes between them.
pub fn append_after(
    paths: &FactoryPaths,
    event: &Event,
    before: impl FnOnce() -> io::Result<()>,
) -> Result<(), AfterError> {
    if !paths.dir().is_dir() {
        crate::project::layout::ensure_factory_dir(paths.project()).map_err(EventsError::from)?;
    }
    let key = ChainKey::for_project(paths)?;
    let path = paths.events_jsonl();
    let io_err = |source| EventsError::Io {
        path: path.clone(),
        source,
    };
    let _lock = FileLock::acquire(&paths.events_lock()).map_err(io_err)?;
    before().map_err(AfterError::Before)?;
    let line = chain::chained_line(&key, &path, event).map_err(io_err)?;
    files::append(&path, &line.bytes).map_err(io_err)?;
    line.anchor(&key).map_err(head_err(&key))?;
    Ok(())
}

/// Why [`append_after`] failed.
#[derive(Debug)]
pub enum AfterError {
    /// `before` failed; nothing was appended.
    Before(io::Error),
    /// The append failed.
    Events(EventsError),
}

impl From<EventsError> for AfterError {
    fn from(e: EventsError) -> Self {
        Self::Events(e)
    }
}

/// [`append`] with the key kept under the factory home `home` rather than
/// `$FACTORY_HOME` (else `~/.factory`): for a process that writes on behalf of
/// another factory home (tests driving the binary with its own `FACTORY_HOME`).
pub fn append_in_home(paths: &FactoryPaths, home: &Path, event: &Event) -> Result<(), EventsError> {
    append_with(paths, Some(home), event, files::append)
}

/// [`append`] without waiting for the disk: for the executor's per-node journal, where
/// an entry lost to a power failure only means its node runs again on resume (nodes
/// are re-runnable: a kill between a node's work and its entry has the same effect).
pub fn append_unsynced(paths: &FactoryPaths, event: &Event) -> Result<(), EventsError> {
    append_with(paths, None, event, files::append_unsynced)
}

fn append_with(
    paths: &FactoryPaths,
    home: Option<&Path>,
    event: &Event,
    write: fn(&Path, &[u8]) -> io::Result<()>,
) -> Result<(), EventsError> {
    if !paths.dir().is_dir() {
        crate::project::layout::ensure_factory_dir(paths.project())?;
    }
    let key = match home {
        Some(home) => ChainKey::in_home(home, paths)?,
        None => ChainKey::for_project(paths)?,
    };
    let path = paths.events_jsonl();
    let io_err = |source| EventsError::Io {
        path: path.clone(),
        source,
    };
    let _lock = FileLock::acquire(&paths.events_lock()).map_err(io_err)?;
    // The previous chained value is read under the lock: no other append between.
    let line = chain::chained_line(&key, &path, event).map_err(io_err)?;
    write(&path, &line.bytes).map_err(io_err)?;
    // Then the head record (see [`chain`]): a crash between the two leaves the log one
    // line ahead of its head, which verification accepts and the next append repairs.
    line.anchor(&key).map_err(head_err(&key))
}

fn head_err(key: &ChainKey) -> impl FnOnce(io::Error) -> EventsError {
    let path = key.head_path();
    move |source| EventsError::Io { path, source }
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
        self.events.iter().filter(move |e| e.kind() == kind)
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
        .filter(|e| e.kind() == kind)
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
    /// The project's chain key could not be read or created.
    #[error("cannot use the event log's chain key {path}: {source}")]
    #[diagnostic(
        code(factory::events::key),
        help(
            "factory keeps one key per project in $FACTORY_HOME/keys (else ~/.factory/keys); \
             check that the directory is writable and the key file holds 64 hex digits"
        )
    )]
    Key {
        /// The key file (or the project, when its path could not be resolved).
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
mod tests;
