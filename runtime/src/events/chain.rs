//! The HMAC chain that makes `events.jsonl` tamper-evident (docs/gate.md, "A
//! tamper-evident event log").
//!
//! Every line factory writes ends with `,"chain":"<64 hex>"}`: HMAC-SHA256, under a
//! per-project key kept in the user's factory home (never in the project, a worktree
//! or any child's environment), over the previous chained line's value, the bytes of
//! any lines written since by something else (see below), and this line's JSON up to
//! the chain field. [`verify`] walks the file and names the first line that breaks it.
//!
//! Lines without a chain (legacy lines from before chaining, a foreign producer's, a
//! line torn by a crash) are *witnessed* by the next line factory appends: their bytes
//! enter its MAC, so changing or removing them later breaks the chain, but they are
//! never events of a [`VerifiedLog`]. A line that nothing witnessed yet (an unchained
//! line at the end of the file) is an error until factory appends again. An
//! unterminated last line (a crash mid-write) is terminated by the next append, which
//! witnesses it.
//!
//! The chain proves each line's predecessor, not where the log ends: the *head record*
//! ([`Head`], `<factory home>/keys/<id>.head`, next to the key and MACed with it) does.
//! Every append rewrites it under the events lock with the line number and chain value
//! of the line it appended; [`verify`] requires the log to reach it. A crash between
//! the log append and the head update leaves the log exactly one chained line ahead:
//! verification accepts that, and the next append repairs the head. A log with no
//! head yet (written before heads existed) is accepted, and the next append anchors it.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::{Event, EventsError};
use crate::project::layout::FactoryPaths;
use crate::sys::files::FileLock;

type HmacSha256 = Hmac<Sha256>;

/// The field every chained line ends with.
pub const CHAIN_FIELD: &str = "chain";
/// `,"chain":"` + 64 hex digits + `"}`.
const SUFFIX_LEN: usize = 10 + 64 + 2;
const SUFFIX_HEAD: &[u8] = b",\"chain\":\"";

/// A project's chain key: 32 random bytes kept in `<factory home>/keys/<id>.key`.
#[derive(Clone)]
pub struct ChainKey {
    bytes: Arc<Vec<u8>>,
    path: PathBuf,
}

impl std::fmt::Debug for ChainKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key itself.
        f.debug_struct("ChainKey")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl ChainKey {
    /// The key of the project at `paths`, under `$FACTORY_HOME` (else `~/.factory`),
    /// created (mode 0600) on first use.
    pub fn for_project(paths: &FactoryPaths) -> Result<Self, EventsError> {
        Self::in_home(&Self::home()?, paths)
    }

    /// Whether the project at `paths` has a key yet (under the same home as
    /// [`ChainKey::for_project`]); an unknown home or project path counts as yes, so
    /// the caller goes on to report it.
    fn exists_for(paths: &FactoryPaths) -> bool {
        match Self::home().and_then(|home| key_path(&home, paths.project())) {
            Ok(path) => path.exists(),
            Err(_) => true,
        }
    }

    fn home() -> Result<PathBuf, EventsError> {
        // The runtime's own unit tests never touch the real ~/.factory.
        #[cfg(test)]
        if std::env::var_os(crate::project::registry::FACTORY_HOME_ENV).is_none() {
            return Ok(std::env::temp_dir().join("factory-unit-test-home"));
        }
        crate::project::registry::user_home().ok_or_else(|| EventsError::Key {
            path: PathBuf::from("~/.factory/keys"),
            source: io::Error::other("neither FACTORY_HOME nor a home directory is known"),
        })
    }

    /// The key of the project at `paths` under the factory home `home`.
    pub fn in_home(home: &Path, paths: &FactoryPaths) -> Result<Self, EventsError> {
        let path = key_path(home, paths.project())?;
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Vec<u8>>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(bytes) = cache.lock().ok().and_then(|c| c.get(&path).cloned()) {
            return Ok(Self { bytes, path });
        }
        let bytes = Arc::new(load_or_create(&path).map_err(|source| EventsError::Key {
            path: path.clone(),
            source,
        })?);
        if let Ok(mut c) = cache.lock() {
            c.insert(path.clone(), bytes.clone());
        }
        Ok(Self { bytes, path })
    }

    /// Where the key is kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The chain value of a line: HMAC over the previous value, the witnessed foreign
    /// bytes since it, and the line up to its chain field.
    fn mac(&self, prev: &str, foreign: &[u8], content: &[u8]) -> String {
        // HMAC takes a key of any length: this cannot fail.
        let Ok(mut mac) = HmacSha256::new_from_slice(&self.bytes) else {
            return String::new();
        };
        mac.update(&(prev.len() as u64).to_le_bytes());
        mac.update(prev.as_bytes());
        mac.update(&(foreign.len() as u64).to_le_bytes());
        mac.update(foreign);
        mac.update(content);
        hex(&mac.finalize().into_bytes())
    }
}

impl ChainKey {
    /// Where the head record of this key's log is kept: next to the key.
    pub fn head_path(&self) -> PathBuf {
        self.path.with_extension("head")
    }

    /// The MAC of a head record (domain-separated from the line chain).
    fn head_mac(&self, line: usize, chain: &str) -> String {
        let Ok(mut mac) = HmacSha256::new_from_slice(&self.bytes) else {
            return String::new();
        };
        mac.update(b"factory events head\0");
        mac.update(&(line as u64).to_le_bytes());
        mac.update(chain.as_bytes());
        hex(&mac.finalize().into_bytes())
    }
}

/// The anchored end of a log: the line number and chain value of the last line factory
/// appended, MACed with the key. Kept next to the key, never in the project.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Head {
    /// The 1-based line of the last chained line factory appended.
    pub line: usize,
    /// Its chain value.
    pub chain: String,
    /// HMAC of the two under the project's key.
    pub mac: String,
}

impl Head {
    fn new(key: &ChainKey, line: usize, chain: String) -> Self {
        let mac = key.head_mac(line, &chain);
        Self { line, chain, mac }
    }

    /// The head record of `key`'s log: `Ok(None)` when there is none yet, `Err` with
    /// what is wrong when it does not verify.
    fn read(key: &ChainKey) -> io::Result<Result<Option<Self>, String>> {
        let path = key.head_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Ok(None)),
            Err(e) => return Err(e),
        };
        let head = match serde_json::from_slice::<Self>(&bytes) {
            Ok(h) => h,
            Err(e) => return Ok(Err(format!("it is not a head record ({e})"))),
        };
        if key.head_mac(head.line, &head.chain) != head.mac {
            return Ok(Err(
                "its MAC does not verify under the project's key: it was edited or forged".into(),
            ));
        }
        Ok(Ok(Some(head)))
    }

    /// Writes the record next to the key (write + rename, not synced: a head lost to a
    /// power failure is one append behind, which verification tolerates).
    fn write(&self, key: &ChainKey) -> io::Result<()> {
        let json = serde_json::to_vec(self).map_err(io::Error::other)?;
        crate::sys::files::atomic_write_unsynced(&key.head_path(), &json)
    }
}

/// SHA-256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What to do about a log that does not verify, in words: which key and home this
/// process verifies with (a log written under another `FACTORY_HOME` was chained with
/// that home's key), and how to start a new log without losing the old one.
pub fn recovery(paths: &FactoryPaths) -> String {
    let log = paths.events_jsonl();
    let (key, head) = match ChainKey::home().and_then(|h| key_path(&h, paths.project())) {
        Ok(key) => (
            key.display().to_string(),
            key.with_extension("head").display().to_string(),
        ),
        Err(_) => ("(no factory home known)".into(), "(none)".into()),
    };
    let home = std::env::var(crate::project::registry::FACTORY_HOME_ENV)
        .map(|h| format!("FACTORY_HOME={h}"))
        .unwrap_or_else(|_| "FACTORY_HOME unset, so ~/.factory".into());
    format!(
        "this log is verified with the key {key} ({home}); if it was written by factory \
         run under another FACTORY_HOME, run again with that one. Otherwise set it aside \
         and start a new log: `factory doctor --set-aside-log` (it renames {log} and the \
         head record {head} to `….set-aside-<time>`; nothing is deleted; the next run \
         starts a fresh chain, and an experiment waiting for a keep needs a new precheck)",
        log = log.display()
    )
}

/// Sets a log that fails verification aside, with its head record, so the next
/// append starts a new chain: each is renamed `<name>.set-aside-<unix millis>` beside
/// where it was, nothing deleted. A log that verifies (or none) is left alone and
/// `Ok(vec![])` says so. Returns what was moved, `(from, to)`.
pub fn set_aside(paths: &FactoryPaths) -> Result<Vec<(PathBuf, PathBuf)>, EventsError> {
    let log = paths.events_jsonl();
    if !log.exists() {
        return Ok(Vec::new());
    }
    match verify(paths) {
        Ok(_) => return Ok(Vec::new()),
        Err(ChainError::Events(e)) => return Err(e),
        Err(_) => {}
    }
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let mut moved = Vec::new();
    let mut files = vec![log];
    if let Ok(key) = ChainKey::home().and_then(|h| key_path(&h, paths.project())) {
        files.push(key.with_extension("head"));
    }
    for from in files.into_iter().filter(|f| f.exists()) {
        let mut name = from.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".set-aside-{millis}"));
        let to = from.with_file_name(name);
        fs::rename(&from, &to).map_err(|source| EventsError::Key {
            path: from.clone(),
            source,
        })?;
        moved.push((from, to));
    }
    Ok(moved)
}

/// `<home>/keys/<first 32 hex of sha256(canonical project path)>.key`.
fn key_path(home: &Path, project: &Path) -> Result<PathBuf, EventsError> {
    let canonical = fs::canonicalize(project).map_err(|source| EventsError::Key {
        path: project.to_path_buf(),
        source,
    })?;
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let id = hex(&digest[..16]);
    Ok(home.join("keys").join(format!("{id}.key")))
}

fn load_or_create(path: &Path) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(bytes) = read_key(path)? {
        return Ok(bytes);
    }
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("a key path has a parent"))?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let mut random = [0u8; 32];
    File::open("/dev/urandom")?.read_exact(&mut random)?;
    // Written in full under a temporary name, then linked into place: a concurrent
    // first use either wins the link or reads the winner's complete key.
    let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), hex(&random[..4])));
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(hex(&random).as_bytes())?;
        f.sync_all()?;
    }
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    read_key(path)?.ok_or_else(|| io::Error::other("the key vanished after it was created"))
}

fn read_key(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read_to_string(path) {
        Ok(text) => {
            let text = text.trim();
            if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not a factory chain key (64 hex digits)",
                ));
            }
            Ok(Some(text.as_bytes().to_vec()))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Splits a chained line into its content (without the chain field, closed with `}`)
/// and its chain value; `None` when the line carries no well-formed chain field.
fn split_chained(line: &[u8]) -> Option<(Vec<u8>, &str)> {
    if line.len() < SUFFIX_LEN + 2 || !line.ends_with(b"\"}") {
        return None;
    }
    let at = line.len() - SUFFIX_LEN;
    let (body, suffix) = line.split_at(at);
    if !suffix.starts_with(SUFFIX_HEAD) {
        return None;
    }
    let value = std::str::from_utf8(&suffix[SUFFIX_HEAD.len()..SUFFIX_LEN - 2]).ok()?;
    if !value.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut content = body.to_vec();
    content.push(b'}');
    Some((content, value))
}

/// A chained line ready to append, and the head record to write once it is written.
pub(super) struct Append {
    /// The bytes to append.
    pub bytes: Vec<u8>,
    /// The head after the append; `None` when the log does not reach the current head
    /// (lines were cut from its end): the head is then left as it is, so verification
    /// keeps naming the cut instead of an append hiding it.
    head: Option<Head>,
}

impl Append {
    /// Writes the head record (after the line was appended, under the same lock).
    pub fn anchor(&self, key: &ChainKey) -> io::Result<()> {
        match &self.head {
            Some(head) => head.write(key),
            None => Ok(()),
        }
    }
}

/// The bytes to append for `event`: its chained line (with a leading newline when the
/// file's last line was left unterminated), and the head it makes. Called under the
/// events lock.
pub(super) fn chained_line(
    key: &ChainKey,
    events: &Path,
    event: &Event,
) -> Result<Append, io::Error> {
    let content = serde_json::to_string(event).map_err(io::Error::other)?;
    // No secret reaches the log (the MAC covers the redacted text, as written).
    let content = crate::sys::redact::redact(&content);
    let tail = read_tail(events)?;
    let mut out = Vec::with_capacity(content.len() + SUFFIX_LEN + 2);
    let mut foreign = tail.foreign;
    if tail.torn {
        foreign.push(b'\n');
        out.push(b'\n');
    }
    let value = key.mac(&tail.prev, &foreign, content.as_bytes());
    let body = content.strip_suffix('}').unwrap_or(&content);
    out.extend_from_slice(body.as_bytes());
    out.extend_from_slice(SUFFIX_HEAD);
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\"}\n");
    let line = match Head::read(key)? {
        // The usual case: the log ends where the head says (plus foreign lines).
        Ok(Some(head)) if !tail.prev.is_empty() && head.chain == tail.prev => {
            Some(head.line + count_newlines(&foreign) + 1)
        }
        // No head yet (a legacy log): anchor it now.
        Ok(None) => Some(count_lines(events)? + 1),
        // The head does not verify: leave it for verification to report.
        Err(_) => None,
        // No log at all (the project's `.factory/` was removed, or a new project took
        // its path): a new chain starts. Nothing is lost to it that could count: every
        // use of the log needs evidence present in it, never evidence absent from it.
        Ok(Some(_)) if !events.exists() => Some(1),
        // The head and the tail disagree: only the crash window (the last chained
        // line is the one after the head's) is repaired.
        Ok(Some(head)) => {
            let bytes = fs::read(events)?;
            let chained = chained_values(&bytes);
            let crash_window = chained.len() >= 2 && {
                let (line, value) = &chained[chained.len() - 2];
                *line == head.line && *value == head.chain
            };
            crash_window.then(|| lines_in(&bytes) + 1)
        }
    };
    Ok(Append {
        bytes: out,
        head: line.map(|line| Head::new(key, line, value)),
    })
}

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// The number of lines in `bytes` (an unterminated last line counts).
fn lines_in(bytes: &[u8]) -> usize {
    count_newlines(bytes) + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The number of lines in the file at `path` (0 when it does not exist).
fn count_lines(path: &Path) -> io::Result<usize> {
    match fs::read(path) {
        Ok(bytes) => Ok(lines_in(&bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// Every line of `bytes` that carries a chain field: its 1-based number and value.
fn chained_values(bytes: &[u8]) -> Vec<(usize, String)> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, line)| split_chained(line).map(|(_, v)| (i + 1, v.to_string())))
        .collect()
}

/// The end of the file: the last chained line's value and every byte after it.
struct Tail {
    prev: String,
    foreign: Vec<u8>,
    /// The file does not end with a newline.
    torn: bool,
}

/// Reads backwards from the end in blocks until a chained line is found (or the start
/// of the file): appends never read the whole log.
fn read_tail(path: &Path) -> io::Result<Tail> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Tail {
                prev: String::new(),
                foreign: Vec::new(),
                torn: false,
            });
        }
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    const BLOCK: u64 = 16 * 1024;
    let mut start = len;
    let mut buf: Vec<u8> = Vec::new();
    let torn = len > 0 && {
        file.seek(SeekFrom::Start(len - 1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        last[0] != b'\n'
    };
    loop {
        // Complete lines in `buf`: every line that starts after a newline in it, or
        // at offset 0 of the file.
        let mut end = buf.len();
        if torn && start + (buf.len() as u64) == len {
            // Skip the unterminated last line: it is foreign whatever it holds.
            end = buf.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        }
        let mut line_end = end;
        while line_end > 0 {
            // `line_end` is just past a newline (or `end`): find the line before it.
            let stop = line_end - 1;
            let begin = match buf[..stop].iter().rposition(|&b| b == b'\n') {
                Some(p) => p + 1,
                None if start == 0 => 0,
                None => break, // the line starts before `buf`: read more
            };
            if let Some((_, value)) = split_chained(&buf[begin..stop]) {
                return Ok(Tail {
                    prev: value.to_string(),
                    foreign: buf[line_end..].to_vec(),
                    torn,
                });
            }
            line_end = begin;
        }
        if start == 0 {
            return Ok(Tail {
                prev: String::new(),
                foreign: buf,
                torn,
            });
        }
        let next = start.saturating_sub(BLOCK);
        let mut block = vec![0u8; (start - next) as usize];
        file.seek(SeekFrom::Start(next))?;
        file.read_exact(&mut block)?;
        block.extend_from_slice(&buf);
        buf = block;
        start = next;
    }
}

/// One verified event and the line it is on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedEvent {
    /// Its line in `events.jsonl`.
    pub line: usize,
    /// The event.
    pub event: Event,
}

/// A line factory did not write (legacy, foreign or torn), witnessed by a later
/// chained line: it cannot be changed unnoticed, and it never counts as evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignLine {
    /// Its line in `events.jsonl`.
    pub line: usize,
    /// The line as written (lossily decoded).
    pub text: String,
}

/// What [`verify`] found: every event factory wrote, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifiedLog {
    /// The chained events, each verified.
    pub events: Vec<VerifiedEvent>,
    /// Unchained lines a later chained line witnessed: not evidence of anything.
    pub foreign: Vec<ForeignLine>,
}

impl VerifiedLog {
    /// Verified events of one type, in file order.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a VerifiedEvent> + 'a {
        self.events.iter().filter(move |e| e.event.kind() == kind)
    }
}

/// Why `events.jsonl` does not verify.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ChainError {
    /// A line breaks the chain.
    #[error("the event log {path} fails verification at line {line}: {what}")]
    #[diagnostic(
        code(factory::events::chain),
        help(
            "factory chains every event it writes with an HMAC; a line it did not write, \
             or one changed, moved, deleted or cut after it was written, breaks the chain. \
             Nothing recorded in this log counts as evidence until it verifies: restore \
             events.jsonl from a copy, or move it aside to start a new log"
        )
    )]
    Broken {
        /// `events.jsonl`.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong with it.
        what: String,
    },
    /// The log ends before the last line factory appended (per the head record).
    #[error("the event log {path} was cut: {what}")]
    #[diagnostic(
        code(factory::events::truncated),
        help(
            "factory records where the log ends (the head record, next to the project's \
             key in the factory home) on every append; lines deleted from the end of \
             events.jsonl are detected by it. Nothing recorded in this log counts as \
             evidence until it verifies: restore events.jsonl from a copy, or move it \
             aside together with the head record {} to start a new log",
            head.display()
        )
    )]
    Truncated {
        /// `events.jsonl`.
        path: PathBuf,
        /// The head record.
        head: PathBuf,
        /// The last line of the log now (0 when it is empty or missing).
        ends: usize,
        /// The line of the last verified append, per the head record.
        last: usize,
        /// What is wrong.
        what: String,
    },
    /// The head record does not verify.
    #[error("the head record {head} of the event log {path} does not verify: {what}")]
    #[diagnostic(
        code(factory::events::head),
        help(
            "the head record is written by factory only, MACed with the project's key; \
             one that does not verify was edited or forged, so where the log ends cannot \
             be trusted"
        )
    )]
    Head {
        /// `events.jsonl`.
        path: PathBuf,
        /// The head record.
        head: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// The log or the key could not be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] EventsError),
}

impl ChainError {
    /// The line that broke the chain, if one did.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Broken { line, .. } => Some(*line),
            Self::Truncated { ends, .. } => Some(ends + 1),
            Self::Head { .. } | Self::Events(_) => None,
        }
    }
}

/// Verifies the project's `events.jsonl` under its lock, and that it reaches the
/// head record (a missing log is empty, unless a head record says lines were written).
pub fn verify(paths: &FactoryPaths) -> Result<VerifiedLog, ChainError> {
    if !paths.events_jsonl().exists() && !ChainKey::exists_for(paths) {
        // No log and no key (so no head): nothing was ever written. No key is created.
        return Ok(VerifiedLog::default());
    }
    verify_with(paths, &ChainKey::for_project(paths)?)
}

/// [`verify`], also reading `sealed` (a file an event seals, written with
/// [`super::append_after`]) under the same lock: the two are one consistent snapshot.
/// `None` when `sealed` does not exist.
pub fn verify_reading(
    paths: &FactoryPaths,
    sealed: &Path,
) -> Result<(VerifiedLog, Option<Vec<u8>>), ChainError> {
    let key = ChainKey::for_project(paths)?;
    verify_locked(paths, &key, Some(sealed))
}

/// [`verify`] under a given key (see [`ChainKey::in_home`]).
pub fn verify_with(paths: &FactoryPaths, key: &ChainKey) -> Result<VerifiedLog, ChainError> {
    verify_locked(paths, key, None).map(|(log, _)| log)
}

/// Reads the log, its head record and `sealed` under the events lock, then verifies.
fn verify_locked(
    paths: &FactoryPaths,
    key: &ChainKey,
    sealed: Option<&Path>,
) -> Result<(VerifiedLog, Option<Vec<u8>>), ChainError> {
    let path = paths.events_jsonl();
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ChainError::Events(EventsError::Io { path, source })
    };
    let read = |p: &Path| match fs::read(p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(p)(e)),
    };
    let (log, head, extra) = {
        // No `.factory/` (so no lock to take) means no log: only the head can speak.
        let _lock = if paths.dir().is_dir() {
            Some(FileLock::acquire(&paths.events_lock()).map_err(io_err(&path))?)
        } else {
            None
        };
        let head = Head::read(key).map_err(io_err(&key.head_path()))?;
        let extra = match sealed {
            Some(p) => read(p)?,
            None => None,
        };
        (read(&path)?, head, extra)
    };
    let bytes = log.unwrap_or_default();
    let (log, chained) = walk(key, &path, &bytes)?;
    check_head(key, &path, &bytes, &chained, head)?;
    Ok((log, extra))
}

/// Checks that the verified log reaches the head record: its last chained line is the
/// head's, or the one after it (a crash between the log append and the head update).
fn check_head(
    key: &ChainKey,
    path: &Path,
    bytes: &[u8],
    chained: &[(usize, String)],
    head: Result<Option<Head>, String>,
) -> Result<(), ChainError> {
    let head = match head {
        Ok(Some(head)) => head,
        // A log from before head records: accepted; the next append anchors it.
        Ok(None) => return Ok(()),
        Err(what) => {
            return Err(ChainError::Head {
                path: path.to_path_buf(),
                head: key.head_path(),
                what,
            });
        }
    };
    let ends = lines_in(bytes);
    let at = chained
        .iter()
        .rposition(|(line, value)| *line == head.line && *value == head.chain);
    let what = match at {
        Some(i) if chained.len() - i <= 2 => return Ok(()),
        Some(i) => format!(
            "the head record names line {} as the last verified append, but {} lines \
             factory chained follow it: the head record is older than the log",
            head.line,
            chained.len() - i - 1
        ),
        None if ends < head.line => {
            let missing = if ends + 1 == head.line {
                format!("line {} was deleted", head.line)
            } else {
                format!("lines {}-{} were deleted", ends + 1, head.line)
            };
            format!(
                "the log ends at line {ends}; the last verified append was line {}: \
                 {missing} from its end",
                head.line
            )
        }
        None => format!(
            "line {} is not the last verified append (its chain differs from the head \
             record's): lines were deleted from the end of the log, and others written \
             after the cut",
            head.line
        ),
    };
    Err(ChainError::Truncated {
        path: path.to_path_buf(),
        head: key.head_path(),
        ends,
        last: head.line,
        what,
    })
}

/// Verifies the text of an event log under `key` (see [`verify`]): the chain only,
/// not where the log ends (that is the head record's, which [`verify`] also checks).
pub fn verify_bytes(key: &ChainKey, path: &Path, bytes: &[u8]) -> Result<VerifiedLog, ChainError> {
    walk(key, path, bytes).map(|(log, _)| log)
}

/// [`verify_bytes`], also returning every chained line's number and value.
#[allow(clippy::type_complexity)]
fn walk(
    key: &ChainKey,
    path: &Path,
    bytes: &[u8],
) -> Result<(VerifiedLog, Vec<(usize, String)>), ChainError> {
    let mut chained = Vec::new();
    let broken = |line: usize, what: String| ChainError::Broken {
        path: path.to_path_buf(),
        line,
        what,
    };
    let mut log = VerifiedLog::default();
    let mut prev = String::new();
    let mut foreign: Vec<u8> = Vec::new();
    let mut pending: Vec<ForeignLine> = Vec::new();
    let mut pos = 0usize;
    let mut number = 0usize;
    while pos < bytes.len() {
        number += 1;
        let Some(nl) = bytes[pos..].iter().position(|&b| b == b'\n') else {
            return Err(broken(
                number,
                "the last line is incomplete (no newline): cut, or torn by a crash mid-write; \
                 factory's next append terminates it and keeps it as an unverified line"
                    .into(),
            ));
        };
        let line = &bytes[pos..pos + nl];
        let whole = &bytes[pos..=pos + nl];
        pos += nl + 1;
        let Some((content, value)) = split_chained(line) else {
            foreign.extend_from_slice(whole);
            pending.push(ForeignLine {
                line: number,
                text: String::from_utf8_lossy(line).into_owned(),
            });
            continue;
        };
        if key.mac(&prev, &foreign, &content) != value {
            if let Some(first) = pending.first()
                && key.mac(&prev, &[], &content) == value
            {
                return Err(broken(
                    first.line,
                    "factory did not write this line (it has no chain): it was inserted \
                     between two chained lines"
                        .into(),
                ));
            }
            return Err(broken(
                number,
                "its chain does not follow from the line before it: this line was changed \
                 or forged, or a line before it was deleted, inserted or moved"
                    .into(),
            ));
        }
        let event = serde_json::from_slice::<Event>(&content)
            .map_err(|e| broken(number, format!("a chained line that is not an event ({e})")))?;
        log.events.push(VerifiedEvent {
            line: number,
            event,
        });
        log.foreign.append(&mut pending);
        foreign.clear();
        prev = value.to_string();
        chained.push((number, prev.clone()));
    }
    if let Some(first) = pending.first() {
        return Err(broken(
            first.line,
            "factory did not write this line (it has no chain), and no line factory wrote \
             follows it"
                .into(),
        ));
    }
    Ok((log, chained))
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
