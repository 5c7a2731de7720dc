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
        // The runtime's own unit tests never touch the real ~/.factory.
        #[cfg(test)]
        if std::env::var_os(crate::project::registry::FACTORY_HOME_ENV).is_none() {
            return Self::in_home(&std::env::temp_dir().join("factory-unit-test-home"), paths);
        }
        let home = crate::project::registry::user_home().ok_or_else(|| EventsError::Key {
            path: PathBuf::from("~/.factory/keys"),
            source: io::Error::other("neither FACTORY_HOME nor a home directory is known"),
        })?;
        Self::in_home(&home, paths)
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

/// SHA-256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

/// The bytes to append for `event`: its chained line (with a leading newline when the
/// file's last line was left unterminated). Called under the events lock.
pub(super) fn chained_line(
    key: &ChainKey,
    events: &Path,
    event: &Event,
) -> Result<Vec<u8>, io::Error> {
    let content = serde_json::to_string(event).map_err(io::Error::other)?;
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
    Ok(out)
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
            Self::Events(_) => None,
        }
    }
}

/// Verifies the project's `events.jsonl` under its lock (a missing log is empty).
pub fn verify(paths: &FactoryPaths) -> Result<VerifiedLog, ChainError> {
    let path = paths.events_jsonl();
    if !path.exists() {
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
    let path = paths.events_jsonl();
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ChainError::Events(EventsError::Io { path, source })
    };
    let (log, extra) = {
        let _lock = FileLock::acquire(&paths.events_lock()).map_err(io_err(&path))?;
        let read = |p: &Path| match fs::read(p) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(p)(e)),
        };
        (read(&path)?, read(sealed)?)
    };
    let log = match log {
        Some(bytes) => verify_bytes(&key, &path, &bytes)?,
        None => VerifiedLog::default(),
    };
    Ok((log, extra))
}

/// [`verify`] under a given key (see [`ChainKey::in_home`]).
pub fn verify_with(paths: &FactoryPaths, key: &ChainKey) -> Result<VerifiedLog, ChainError> {
    let path = paths.events_jsonl();
    if !path.exists() {
        return Ok(VerifiedLog::default());
    }
    let io_err = |source| {
        ChainError::Events(EventsError::Io {
            path: path.clone(),
            source,
        })
    };
    let bytes = {
        let _lock = FileLock::acquire(&paths.events_lock()).map_err(io_err)?;
        fs::read(&path).map_err(io_err)?
    };
    verify_bytes(key, &path, &bytes)
}

/// Verifies the text of an event log under `key` (see [`verify`]).
pub fn verify_bytes(key: &ChainKey, path: &Path, bytes: &[u8]) -> Result<VerifiedLog, ChainError> {
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
    }
    if let Some(first) = pending.first() {
        return Err(broken(
            first.line,
            "factory did not write this line (it has no chain), and no line factory wrote \
             follows it"
                .into(),
        ));
    }
    Ok(log)
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
