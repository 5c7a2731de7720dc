//! Each experiment keeps its own evidence. Nodes write their reports and verdicts to
//! fixed paths (`.factory/reviews/builder-latest.md`), which the next run overwrites;
//! so as each node of an experiment finishes, the files it declared are copied into
//! `experiments/NNN/evidence/<sha256>` (content-addressed: a file that did not change
//! is stored once) and listed in `experiments/NNN/evidence.jsonl`, one line per file
//! per visit. The `node.finished` event carries the same path → SHA-256 pairs, so the
//! chained log binds what the experiment's pages show.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::events::EvidenceRef;
use crate::events::chain::sha256_hex;
use crate::project::layout::FactoryPaths;
use crate::sys::files::{FileLock, append, atomic_write};

/// A declared output larger than this is listed but not copied: evidence is reports
/// and verdicts, not build products.
pub const MAX_COPIED: u64 = 4 << 20;

/// One declared output of one node visit, as it was when the node finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceFile {
    /// The node that wrote it.
    pub node: String,
    /// Which visit of the node.
    pub visit: u32,
    /// Where the node wrote it, as declared (relative to the project).
    pub path: String,
    /// SHA-256 of its bytes; the copy is `evidence/<sha256>`.
    pub sha256: String,
    pub bytes: u64,
    /// Listed without a copy: larger than [`MAX_COPIED`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_copied: bool,
    /// When the node finished (ISO-8601, UTC).
    pub at: String,
}

impl From<&EvidenceFile> for EvidenceRef {
    fn from(f: &EvidenceFile) -> Self {
        Self {
            path: f.path.clone(),
            sha256: f.sha256.clone(),
        }
    }
}

fn index(project: &Path, id: u32) -> PathBuf {
    FactoryPaths::new(project)
        .experiment_dir(id)
        .join("evidence.jsonl")
}

fn blob(project: &Path, id: u32, sha256: &str) -> PathBuf {
    FactoryPaths::new(project)
        .experiment_dir(id)
        .join("evidence")
        .join(sha256)
}

/// Copies each of `files` (`(declared path, where it is on disk)`) that exists into
/// experiment `id`'s evidence and lists it. Missing files are skipped: a node that
/// failed before writing has nothing to keep.
pub fn record(
    project: &Path,
    id: u32,
    node: &str,
    visit: u32,
    files: &[(String, PathBuf)],
) -> io::Result<Vec<EvidenceFile>> {
    let at = crate::sys::clock::now_iso8601();
    let mut kept = Vec::new();
    for (declared, on_disk) in files {
        let Ok(meta) = fs::metadata(on_disk) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let (sha256, bytes, not_copied) = if meta.len() > MAX_COPIED {
            (hash_file(on_disk)?, meta.len(), true)
        } else {
            let bytes = fs::read(on_disk)?;
            let sha = sha256_hex(&bytes);
            let copy = blob(project, id, &sha);
            if !copy.exists() {
                if let Some(dir) = copy.parent() {
                    fs::create_dir_all(dir)?;
                }
                atomic_write(&copy, &bytes)?;
            }
            (sha, bytes.len() as u64, false)
        };
        kept.push(EvidenceFile {
            node: node.to_string(),
            visit,
            path: declared.clone(),
            sha256,
            bytes,
            not_copied,
            at: at.clone(),
        });
    }
    if kept.is_empty() {
        return Ok(kept);
    }
    let mut lines = String::new();
    for f in &kept {
        lines.push_str(&serde_json::to_string(f).map_err(io::Error::other)?);
        lines.push('\n');
    }
    let path = index(project, id);
    // Parallel reviews of one experiment finish at the same time.
    let _lock = FileLock::acquire(&path.with_extension("lock"))?;
    append(&path, lines.as_bytes())?;
    Ok(kept)
}

fn hash_file(path: &Path) -> io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Every file experiment `id` kept, in the order they were recorded. Lines that do not
/// parse (a cut tail) are skipped; no index means no evidence yet.
pub fn list(project: &Path, id: u32) -> io::Result<Vec<EvidenceFile>> {
    match fs::read_to_string(index(project, id)) {
        Ok(text) => Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The last version of each path experiment `id` kept, in the order the paths first
/// appeared: what its pages show.
pub fn latest(project: &Path, id: u32) -> io::Result<Vec<EvidenceFile>> {
    let mut out: Vec<EvidenceFile> = Vec::new();
    for f in list(project, id)? {
        match out.iter_mut().find(|o| o.path == f.path) {
            Some(slot) => *slot = f,
            None => out.push(f),
        }
    }
    Ok(out)
}

/// What reading a kept copy found.
#[derive(Debug, PartialEq, Eq)]
pub enum Copy {
    /// The bytes as the node left them.
    Intact(Vec<u8>),
    /// Listed without a copy (too large).
    NotCopied,
    /// The copy is gone.
    Missing,
    /// The copy's bytes no longer hash to its name: edited after it was kept.
    Changed,
}

/// The kept copy of `file`, checked against its SHA-256.
pub fn read(project: &Path, id: u32, file: &EvidenceFile) -> Copy {
    if file.not_copied {
        return Copy::NotCopied;
    }
    match fs::read(blob(project, id, &file.sha256)) {
        Ok(bytes) if sha256_hex(&bytes) == file.sha256 => Copy::Intact(bytes),
        Ok(_) => Copy::Changed,
        Err(_) => Copy::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_visit_keeps_its_own_version_and_identical_bytes_are_stored_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let report = p.join(".factory/reviews/builder-latest.md");
        fs::create_dir_all(report.parent().unwrap()).unwrap();
        let declared = ".factory/reviews/builder-latest.md".to_string();
        let files = [(declared.clone(), report.clone())];
        fs::write(&report, "first").unwrap();
        record(p, 1, "builder", 1, &files).unwrap();
        fs::write(&report, "second").unwrap();
        record(p, 1, "builder", 2, &files).unwrap();
        // Another experiment's run overwrites the fixed path: this one keeps its own.
        fs::write(&report, "first").unwrap();
        record(p, 2, "builder", 1, &files).unwrap();
        fs::write(&report, "later run").unwrap();

        let all = list(p, 1).unwrap();
        assert_eq!(all.iter().map(|f| f.visit).collect::<Vec<_>>(), [1, 2]);
        let last = latest(p, 1).unwrap();
        assert_eq!(last.len(), 1);
        assert_eq!(read(p, 1, &last[0]), Copy::Intact(b"second".to_vec()));
        assert_eq!(read(p, 1, &all[0]), Copy::Intact(b"first".to_vec()));
        assert_eq!(
            read(p, 2, &latest(p, 2).unwrap()[0]),
            Copy::Intact(b"first".to_vec())
        );
        // A missing declared file is skipped, not an error.
        let none = record(p, 1, "qa", 1, &[("x.md".into(), p.join("x.md"))]).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn an_edited_copy_is_reported_as_changed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let f = p.join("r.md");
        fs::write(&f, "the report").unwrap();
        let kept = record(p, 3, "review", 1, &[("r.md".into(), f)]).unwrap();
        fs::write(blob(p, 3, &kept[0].sha256), "rewritten").unwrap();
        assert_eq!(read(p, 3, &kept[0]), Copy::Changed);
        fs::remove_file(blob(p, 3, &kept[0].sha256)).unwrap();
        assert_eq!(read(p, 3, &kept[0]), Copy::Missing);
    }
}
