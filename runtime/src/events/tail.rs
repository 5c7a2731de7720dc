//! Reading what was appended to `events.jsonl` since the last read: for a live
//! reader (the dashboard) that follows a log while a run writes it.
//!
//! The log is a best-effort input here: a line that is not an event (a crash
//! mid-write, a hand edit, a binary file in its place) is counted and skipped, a line
//! longer than [`MAX_LINE`] is skipped without being held in memory, and a file that
//! shrank (rotated, truncated) is read again from its start, which the caller is told.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::Event;

/// Longer lines are skipped as corrupt: no event the runtime writes comes near it,
/// and a reader must not buffer a 50 MB line of garbage.
pub const MAX_LINE: usize = 1 << 20;

/// How much is read from the file at a time.
const CHUNK: usize = 256 * 1024;

/// A reader positioned at a byte offset of an event log.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    /// Offset of the first byte not yet consumed (the start of `partial`).
    offset: u64,
    /// The start of a line whose newline has not been written yet.
    partial: Vec<u8>,
    /// The current line passed [`MAX_LINE`]: drop bytes up to its newline.
    skipping: bool,
}

/// What one [`Tail::read_new`] found.
#[derive(Debug, Default)]
pub struct Appended {
    /// The events, each with the offset just past its line (a resume point).
    pub events: Vec<(u64, Event)>,
    /// Complete lines that were not events (or were too long).
    pub corrupt_lines: usize,
    /// The file was shorter than the offset: it was read again from the start.
    pub restarted: bool,
}

impl Tail {
    /// A reader of the log at `path` that starts at byte `offset` (0: the whole log).
    pub fn new(path: impl Into<PathBuf>, offset: u64) -> Self {
        Self {
            path: path.into(),
            offset,
            partial: Vec::new(),
            skipping: false,
        }
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The offset just past the last complete line read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads every complete line appended since the last call. Only lines containing
    /// `filter` (when given) are parsed, so following one run in a long log stays
    /// cheap. A missing file reads as nothing appended.
    pub fn read_new(&mut self, filter: Option<&str>) -> io::Result<Appended> {
        let mut out = Appended::default();
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        let mut pos = self.offset + self.partial.len() as u64;
        if len < pos {
            *self = Self::new(self.path.clone(), 0);
            pos = 0;
            out.restarted = true;
        }
        file.seek(SeekFrom::Start(pos))?;
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            self.consume(&buf[..n], filter, &mut out);
        }
        Ok(out)
    }

    fn consume(&mut self, mut bytes: &[u8], filter: Option<&str>, out: &mut Appended) {
        while let Some(nl) = bytes.iter().position(|b| *b == b'\n') {
            let (line, rest) = bytes.split_at(nl);
            let end = self.offset + self.partial.len() as u64 + line.len() as u64 + 1;
            if self.skipping {
                self.skipping = false;
                out.corrupt_lines += 1;
            } else if self.partial.is_empty() {
                parse_line(line, end, filter, out);
            } else {
                self.partial.extend_from_slice(line);
                let whole = std::mem::take(&mut self.partial);
                parse_line(&whole, end, filter, out);
            }
            self.offset = end;
            self.partial.clear();
            bytes = &rest[1..];
        }
        if self.skipping {
            // Still inside an over-long line: account for the bytes, keep none.
            self.offset += bytes.len() as u64;
            return;
        }
        self.partial.extend_from_slice(bytes);
        if self.partial.len() > MAX_LINE {
            self.offset += self.partial.len() as u64;
            self.partial = Vec::new();
            self.skipping = true;
        }
    }
}

fn parse_line(line: &[u8], end: u64, filter: Option<&str>, out: &mut Appended) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    if line.len() > MAX_LINE {
        out.corrupt_lines += 1;
        return;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        out.corrupt_lines += 1;
        return;
    };
    // Not even the shape of a JSON object: counted even when filtered out.
    let trimmed = text.trim();
    if !trimmed.starts_with('{') || !trimmed.ends_with('}') {
        out.corrupt_lines += 1;
        return;
    }
    if let Some(f) = filter
        && !text.contains(f)
    {
        return;
    }
    match serde_json::from_str::<Event>(text) {
        Ok(event) => out.events.push((end, event)),
        Err(_) => out.corrupt_lines += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(node: &str) -> String {
        format!(
            "{{\"type\":\"node.started\",\"timestamp\":\"2026-12-01T10:00:00.000Z\",\"run_id\":\"r1\",\"node\":\"{node}\",\"visit\":1,\"kind\":\"fn\"}}\n"
        )
    }

    #[test]
    fn reads_only_what_was_appended_and_waits_for_a_line_to_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut tail = Tail::new(&path, 0);
        assert!(
            tail.read_new(None).unwrap().events.is_empty(),
            "missing file"
        );
        let mut f = File::create(&path).unwrap();
        let a = line("a");
        let b = line("b");
        f.write_all(a.as_bytes()).unwrap();
        f.write_all(&b.as_bytes()[..10]).unwrap();
        let got = tail.read_new(None).unwrap();
        assert_eq!(got.events.len(), 1);
        assert_eq!(got.events[0].0, a.len() as u64);
        assert_eq!(tail.offset(), a.len() as u64);
        f.write_all(&b.as_bytes()[10..]).unwrap();
        let got = tail.read_new(None).unwrap();
        assert_eq!(got.events.len(), 1);
        assert_eq!(got.events[0].1.get("node"), Some("b".into()));
        assert_eq!(tail.offset(), (a.len() + b.len()) as u64);
        assert!(tail.read_new(None).unwrap().events.is_empty());
    }

    #[test]
    fn garbage_long_lines_and_truncation_are_survived() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut text = Vec::new();
        text.extend_from_slice(b"{\"type\":\"x\"\n");
        text.extend_from_slice(&[0xff, 0xfe, 0x00, b'\n']);
        text.extend(std::iter::repeat_n(b'z', 3 * MAX_LINE));
        text.push(b'\n');
        text.extend_from_slice(line("c").as_bytes());
        std::fs::write(&path, &text).unwrap();
        let mut tail = Tail::new(&path, 0);
        let got = tail.read_new(None).unwrap();
        assert_eq!(got.events.len(), 1);
        assert_eq!(got.corrupt_lines, 3);
        assert_eq!(tail.offset(), text.len() as u64);
        assert_eq!(
            tail.read_new(Some("zzz")).unwrap().events.len(),
            0,
            "nothing new"
        );
        std::fs::write(&path, line("d")).unwrap();
        let got = tail.read_new(None).unwrap();
        assert!(got.restarted);
        assert_eq!(got.events[0].1.get("node"), Some("d".into()));
    }

    #[test]
    fn a_filter_skips_other_lines_before_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(
            &path,
            format!("{}{}", line("a"), line("b")).replace("r1\",\"node\":\"b", "r2\",\"node\":\"b"),
        )
        .unwrap();
        let got = Tail::new(&path, 0).read_new(Some("\"r2\"")).unwrap();
        assert_eq!(got.events.len(), 1);
        assert_eq!(got.events[0].1.get("node"), Some("b".into()));
    }
}
