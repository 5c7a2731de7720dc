//! Where candidates go: one file, or a directory of `cand-001.fwir`, `cand-002.fwir`, …

use std::path::{Path, PathBuf};

use factory_compiler::ir::to_text;

use super::generate::Candidate;
use crate::sys::files::atomic_write;

/// Why candidates could not be written, in words that say what to do.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum OutputError {
    #[error("{} names a file, but {count} candidates need a directory", path.display())]
    #[diagnostic(help(
        "pass a directory to -o (it gets cand-001.fwir, cand-002.fwir, ...), or --count 1"
    ))]
    FileForMany { path: PathBuf, count: usize },
    #[error("{} is a directory, but one candidate is written to a file", path.display())]
    #[diagnostic(help(
        "pass a file name such as candidate.fwir to -o, or ask for --count 2 or more"
    ))]
    DirForOne { path: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    #[diagnostic(help("check that the directory is writable"))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Checks `out` before any work is done: a file when `count` is 1, a directory (existing
/// or not, and not named `*.fwir`) when it is more.
pub fn check_target(out: &Path, count: usize) -> Result<(), OutputError> {
    let named_as_file = out.extension().is_some_and(|e| e == "fwir") || out.is_file();
    if count > 1 && named_as_file {
        return Err(OutputError::FileForMany {
            path: out.to_path_buf(),
            count,
        });
    }
    if count == 1 && out.is_dir() {
        return Err(OutputError::DirForOne {
            path: out.to_path_buf(),
        });
    }
    Ok(())
}

/// The path of the `n`th candidate (from 1) when `count` were asked for.
pub fn candidate_path(out: &Path, count: usize, n: usize) -> PathBuf {
    if count == 1 {
        out.to_path_buf()
    } else {
        out.join(format!("cand-{n:03}.fwir"))
    }
}

/// Writes each candidate's canonical IR text (atomically; an existing file of the same
/// name is replaced) and returns the paths, in order.
pub fn write_candidates(
    out: &Path,
    count: usize,
    candidates: &[Candidate],
) -> Result<Vec<PathBuf>, OutputError> {
    check_target(out, count)?;
    let mut written = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let path = candidate_path(out, count, i + 1);
        atomic_write(&path, to_text(&c.ir).as_bytes()).map_err(|source| OutputError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
