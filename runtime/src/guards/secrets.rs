//! Sacred Rule 3 (spec §16.1): no committed secrets. A changed file may not gain a
//! credential-shaped string it did not have at the base commit. Only the kind and line
//! are reported, never the secret itself.

use std::collections::BTreeSet;
use std::io::{self, Read};
use std::path::Path;
use std::sync::LazyLock;

use git2::{ObjectType, Oid, Repository};
use regex::Regex;

use super::changes::{Change, ChangeKind};

static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        (
            "private key",
            r"-----BEGIN (?:RSA |DSA |EC |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY-----",
        ),
        ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        (
            "GitHub token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        ),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("API secret key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("Stripe live key", r"\b[sr]k_live_[0-9a-zA-Z]{24,}"),
    ]
    .into_iter()
    .map(|(kind, p)| {
        (
            kind,
            Regex::new(p).unwrap_or_else(|e| panic!("invalid built-in regex {p}: {e}")),
        )
    })
    .collect()
});

/// Decoded text is scanned in pieces of this many bytes.
const CHUNK: usize = 1 << 20;
/// A line longer than twice this is scanned as it comes; this much of its tail is kept
/// for the next piece, so a credential split across pieces is still seen whole. Longer
/// than any credential the patterns match.
const OVERLAP: usize = 4096;
/// How much of a file's start decides whether it may be UTF-16 without a BOM.
const SNIFF: usize = 8192;

/// `(kind, 1-based line)` for every credential-shaped string in `text`, one entry per
/// kind per line, in line order.
pub fn find_secrets(text: &str) -> Vec<(&'static str, usize)> {
    let mut scanner = LineScanner::default();
    scanner.feed(text);
    scanner.finish().entries()
}

/// The lines each kind of credential was found on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretCounts {
    /// `(line, pattern index)`.
    found: BTreeSet<(usize, usize)>,
}

impl SecretCounts {
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// `(kind, line)` in line order.
    pub fn entries(&self) -> Vec<(&'static str, usize)> {
        self.found
            .iter()
            .map(|(line, k)| (PATTERNS[*k].0, *line))
            .collect()
    }

    /// Each kind found, with its lines, in pattern order.
    pub fn by_kind(&self) -> Vec<(&'static str, Vec<usize>)> {
        PATTERNS
            .iter()
            .enumerate()
            .filter_map(|(i, (kind, _))| {
                let lines: Vec<usize> = self
                    .found
                    .iter()
                    .filter(|(_, k)| *k == i)
                    .map(|(l, _)| *l)
                    .collect();
                (!lines.is_empty()).then_some((*kind, lines))
            })
            .collect()
    }

    /// On how many lines `kind` was found.
    pub fn count(&self, kind: &str) -> usize {
        self.found
            .iter()
            .filter(|(_, k)| PATTERNS[*k].0 == kind)
            .count()
    }

    fn merge(&mut self, other: SecretCounts) {
        self.found.extend(other.found);
    }
}

/// Scans decoded text fed in pieces of any size, line by line, without holding more than
/// one piece plus an overlap.
#[derive(Debug, Default)]
struct LineScanner {
    /// 0-based number of the line `carry` belongs to.
    line: usize,
    /// The unfinished last line (or the tail of a very long one).
    carry: String,
    found: SecretCounts,
}

impl LineScanner {
    fn scan(&mut self, line: &str) {
        for (i, (_, re)) in PATTERNS.iter().enumerate() {
            if re.is_match(line) {
                self.found.found.insert((self.line + 1, i));
            }
        }
    }

    fn feed(&mut self, text: &str) {
        let mut buf = std::mem::take(&mut self.carry);
        buf.push_str(text);
        let mut rest = buf.as_str();
        while let Some(nl) = rest.find('\n') {
            self.scan(&rest[..nl]);
            self.line += 1;
            rest = &rest[nl + 1..];
        }
        if rest.len() > 2 * OVERLAP {
            self.scan(rest);
            let mut cut = rest.len() - OVERLAP;
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            rest = &rest[cut..];
        }
        self.carry = rest.to_string();
    }

    fn finish(mut self) -> SecretCounts {
        let last = std::mem::take(&mut self.carry);
        if !last.is_empty() {
            self.scan(&last);
        }
        self.found
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    /// UTF-8, with anything invalid (Latin-1, Windows-1252, binary) replaced: credentials
    /// are ASCII, so they survive the replacement.
    Utf8Lossy,
    Utf16Le,
    Utf16Be,
}

/// A streaming decoder for one encoding.
struct Decoder {
    encoding: Encoding,
    pending: Vec<u8>,
}

impl Decoder {
    fn new(encoding: Encoding) -> Self {
        Self {
            encoding,
            pending: Vec::new(),
        }
    }

    /// Decodes `bytes` (after what is pending); keeps an incomplete character for later.
    fn decode(&mut self, bytes: &[u8], last: bool) -> String {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(bytes);
        match self.encoding {
            Encoding::Utf8Lossy => {
                let mut out = String::with_capacity(buf.len());
                let mut rest = buf.as_slice();
                loop {
                    match std::str::from_utf8(rest) {
                        Ok(s) => {
                            out.push_str(s);
                            break;
                        }
                        Err(e) => {
                            let (valid, after) = rest.split_at(e.valid_up_to());
                            out.push_str(&String::from_utf8_lossy(valid));
                            match e.error_len() {
                                Some(n) => {
                                    out.push(char::REPLACEMENT_CHARACTER);
                                    rest = after.get(n..).unwrap_or_default();
                                }
                                None if !last => {
                                    self.pending = after.to_vec();
                                    break;
                                }
                                None => {
                                    out.push(char::REPLACEMENT_CHARACTER);
                                    break;
                                }
                            }
                        }
                    }
                }
                out
            }
            Encoding::Utf16Le | Encoding::Utf16Be => {
                let le = self.encoding == Encoding::Utf16Le;
                let whole = buf.len() / 2 * 2;
                let mut units: Vec<u16> = buf[..whole]
                    .chunks_exact(2)
                    .map(|p| {
                        if le {
                            u16::from_le_bytes([p[0], p[1]])
                        } else {
                            u16::from_be_bytes([p[0], p[1]])
                        }
                    })
                    .collect();
                let mut keep = buf[whole..].to_vec();
                // A high surrogate whose pair is in the next piece waits for it.
                if !last && units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
                    units.pop();
                    let mut tail = buf[whole - 2..whole].to_vec();
                    tail.extend_from_slice(&keep);
                    keep = tail;
                }
                if !last {
                    self.pending = keep;
                }
                char::decode_utf16(units)
                    .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect()
            }
        }
    }
}

/// Which encodings to read `start` (a file's first bytes) in, and how many BOM bytes to
/// skip. A BOM decides; otherwise text is read as UTF-8 (lossy), and also as UTF-16 LE
/// or BE when NUL bytes sit in the odd or even positions that ASCII in UTF-16 leaves.
fn sniff(start: &[u8]) -> (Vec<Encoding>, usize) {
    if start.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return (vec![Encoding::Utf8Lossy], 3);
    }
    if start.starts_with(&[0xFF, 0xFE]) {
        return (vec![Encoding::Utf16Le], 2);
    }
    if start.starts_with(&[0xFE, 0xFF]) {
        return (vec![Encoding::Utf16Be], 2);
    }
    let sample = &start[..start.len().min(SNIFF)];
    let nul_at = |parity: usize| {
        sample
            .iter()
            .enumerate()
            .filter(|(i, b)| i % 2 == parity && **b == 0)
            .count()
    };
    let pairs = sample.len() / 2;
    let mut encodings = vec![Encoding::Utf8Lossy];
    if pairs > 0 && nul_at(1) * 4 >= pairs {
        encodings.push(Encoding::Utf16Le);
    }
    if pairs > 0 && nul_at(0) * 4 >= pairs {
        encodings.push(Encoding::Utf16Be);
    }
    (encodings, 0)
}

/// Every credential in what `reader` yields, read in chunks: no size limit, and memory
/// bounded by the chunk size per encoding.
pub fn scan_reader(mut reader: impl Read) -> io::Result<SecretCounts> {
    let mut chunk = vec![0u8; CHUNK];
    let mut first = Vec::new();
    // Fill the sniffing window (a reader may return short reads).
    let mut eof = false;
    while first.len() < SNIFF {
        let n = read_some(&mut reader, &mut chunk[..SNIFF - first.len()])?;
        if n == 0 {
            eof = true;
            break;
        }
        first.extend_from_slice(&chunk[..n]);
    }
    let (encodings, skip) = sniff(&first);
    let mut lanes: Vec<(Decoder, LineScanner)> = encodings
        .into_iter()
        .map(|e| (Decoder::new(e), LineScanner::default()))
        .collect();
    let mut feed = |bytes: &[u8], last: bool| {
        for (decoder, scanner) in lanes.iter_mut() {
            let text = decoder.decode(bytes, last);
            scanner.feed(&text);
        }
    };
    feed(first.get(skip..).unwrap_or_default(), eof);
    while !eof {
        let n = read_some(&mut reader, &mut chunk)?;
        eof = n == 0;
        feed(&chunk[..n], eof);
    }
    let mut all = SecretCounts::default();
    for (_, scanner) in lanes {
        all.merge(scanner.finish());
    }
    Ok(all)
}

fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Scans a blob, streamed from the object database when it can be (loose objects),
/// else read whole (packed objects).
pub fn scan_blob(repo: &Repository, id: Oid) -> Result<SecretCounts, String> {
    if let Ok(odb) = repo.odb()
        && let Ok((reader, _, ObjectType::Blob)) = odb.reader(id)
    {
        return scan_reader(reader).map_err(|e| e.to_string());
    }
    let blob = repo.find_blob(id).map_err(|e| e.message().to_string())?;
    scan_reader(blob.content()).map_err(|e| e.to_string())
}

/// Scans an uncommitted file, streamed; a symlink's target is scanned, never followed.
pub fn scan_file(path: &Path) -> Result<SecretCounts, String> {
    let meta = path.symlink_metadata().map_err(|e| e.to_string())?;
    if meta.file_type().is_symlink() {
        use std::os::unix::ffi::OsStrExt;
        let target = std::fs::read_link(path).map_err(|e| e.to_string())?;
        return scan_reader(target.as_os_str().as_bytes()).map_err(|e| e.to_string());
    }
    if !meta.is_file() {
        return Ok(SecretCounts::default());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    scan_reader(file).map_err(|e| e.to_string())
}

/// One message per secret a change introduced (working-tree view: what differs from the
/// base commit, read from disk). The commit-by-commit scan is [`super::history::check_secrets`].
pub fn introduced_secrets(repo: &Repository, root: &Path, changes: &[Change]) -> Vec<String> {
    let mut out = Vec::new();
    for change in changes.iter().filter(|c| c.kind != ChangeKind::Deleted) {
        let Ok(now) = scan_file(&root.join(&change.path)) else {
            continue;
        };
        if now.is_empty() {
            continue;
        }
        let before = change
            .old_blob
            .and_then(|id| scan_blob(repo, id).ok())
            .unwrap_or_default();
        for (kind, lines) in now.by_kind() {
            if lines.len() > before.count(kind) {
                let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                out.push(format!(
                    "{}: {kind} added (line {})",
                    change.path,
                    lines.join(", ")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_common_credentials_and_ignores_prose() {
        let text = "key = \"AKIAABCDEFGHIJKLMNOP\"\n-----BEGIN OPENSSH PRIVATE KEY-----\ntoken: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n";
        let kinds = find_secrets(text);
        assert_eq!(
            kinds,
            vec![
                ("AWS access key id", 1),
                ("private key", 2),
                ("GitHub token", 3)
            ]
        );
        assert!(find_secrets("the AKIA prefix marks AWS keys; sk-short is fine").is_empty());
    }
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    /// A reader that hands out `step` bytes at a time.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    const KEY: &str = "AKIAABCDEFGHIJKLMNOP";

    fn utf16(text: &str, le: bool, bom: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if bom {
            out.extend_from_slice(if le { &[0xFF, 0xFE] } else { &[0xFE, 0xFF] });
        }
        for u in text.encode_utf16() {
            out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        out
    }

    #[test]
    fn a_credential_at_the_end_of_a_large_file_is_found() {
        let mut data = "x = 1\n".repeat(1_000_000).into_bytes();
        data.extend_from_slice(format!("key = \"{KEY}\"\n").as_bytes());
        let found = scan_reader(data.as_slice()).unwrap();
        assert_eq!(found.entries(), vec![("AWS access key id", 1_000_001)]);
    }

    #[test]
    fn a_credential_across_chunk_boundaries_and_in_a_huge_line_is_found() {
        // One line longer than a chunk, the key straddling the first chunk's end.
        let mut line = "a".repeat(CHUNK - 10);
        line.push(' ');
        line.push_str(KEY);
        line.push(' ');
        line.push_str(&"b".repeat(CHUNK));
        let found = scan_reader(line.as_bytes()).unwrap();
        assert_eq!(found.entries(), vec![("AWS access key id", 1)]);
        // Tiny reads change nothing.
        let text = format!("one\ntwo {KEY}\nthree\n");
        let trickle = Trickle {
            data: text.as_bytes(),
            step: 3,
        };
        assert_eq!(
            scan_reader(trickle).unwrap().entries(),
            vec![("AWS access key id", 2)]
        );
    }

    #[test]
    fn utf16_with_or_without_bom_and_latin1_are_decoded() {
        let text = format!("caf\u{e9}\nk = {KEY}\n");
        for (le, bom) in [(true, true), (false, true), (true, false), (false, false)] {
            let bytes = utf16(&text, le, bom);
            assert_eq!(
                scan_reader(bytes.as_slice()).unwrap().entries(),
                vec![("AWS access key id", 2)],
                "le={le} bom={bom}"
            );
            // Odd read sizes split code units across pieces.
            let trickle = Trickle {
                data: &bytes,
                step: 5,
            };
            assert_eq!(scan_reader(trickle).unwrap().entries().len(), 1);
        }
        let mut latin1 = b"caf\xe9 \xff\xfe\n".to_vec();
        latin1.extend_from_slice(format!("{KEY}\n").as_bytes());
        assert_eq!(
            scan_reader(latin1.as_slice()).unwrap().entries(),
            vec![("AWS access key id", 2)]
        );
    }
}
