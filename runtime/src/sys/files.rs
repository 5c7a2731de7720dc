//! Small file-system primitives every store module shares: atomic writes (temp file +
//! rename, so a crash never leaves half a file) and exclusive advisory file locks.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

// fs4 1.1 mirrors std's lock API (`lock`/`try_lock`/`unlock`); calls are written
// `FileExt::lock(&file)` so they never resolve to std's inherent methods instead.
use fs4::FileExt;

/// Why a JSON file factory wrote could not be used.
#[derive(Debug)]
pub enum JsonFileError {
    Io(io::Error),
    Invalid(serde_json::Error),
}

impl std::fmt::Display for JsonFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonFileError::Io(e) => e.fmt(f),
            JsonFileError::Invalid(e) => e.fmt(f),
        }
    }
}

/// The JSON value stored at `path`: `Ok(None)` when there is no file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, JsonFileError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(JsonFileError::Io(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(JsonFileError::Invalid)
}

/// Writes `contents` to `path` atomically: the bytes go to a temporary sibling first,
/// are flushed to disk, and then renamed over `path`. Readers see the old file or the
/// new one, never a mix. Parent directories are created when missing.
pub fn atomic_write(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_then_rename(path, contents, true)
}

/// [`atomic_write`] without flushing to disk first: still all-or-nothing for readers
/// and across a killed process, for files whose loss on power failure costs only a
/// little repeated work (the executor's snapshots, which its journal backs).
pub fn atomic_write_unsynced(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_then_rename(path, contents, false)
}

fn write_then_rename(path: &Path, contents: &[u8], sync: bool) -> io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    // pid + a per-process counter keeps concurrent writers (threads or processes)
    // from sharing a temp file.
    let tmp = parent.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        next_counter()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(contents)?;
        if sync {
            file.sync_all()?;
        }
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn next_counter() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// An exclusive lock on a lock file, released when dropped.
///
/// The lock is advisory (flock/LockFileEx via fs4): every writer of a shared file must
/// take it. The lock file itself is never removed, so two processes always lock the
/// same inode.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Blocks until the exclusive lock on `path` is held, creating the file if needed.
    pub fn acquire(path: &Path) -> io::Result<Self> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        FileExt::lock(&file)?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

/// Appends `bytes` to `path` with a single `write_all` on a file opened in append mode.
/// Callers hold the file's lock so lines from concurrent writers never interleave.
pub fn append(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_data()
}

/// [`append`] without flushing to disk: a killed process loses nothing (the bytes are
/// in the kernel), a power failure may lose the tail.
pub fn append_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(bytes)
}

/// Renames a corrupt file to `<name>.corrupt-<unix millis>` beside it, so it is kept
/// for inspection while the caller starts fresh. Returns the new path.
pub fn keep_aside(path: &Path) -> io::Result<PathBuf> {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let base = path.file_name().unwrap_or_default().to_os_string();
    // Never overwrite an earlier set-aside copy from the same millisecond.
    for n in 0u32.. {
        let mut name = base.clone();
        name.push(format!(".corrupt-{millis}"));
        if n > 0 {
            name.push(format!("-{n}"));
        }
        let aside = path.with_file_name(name);
        if !aside.exists() {
            fs::rename(path, &aside)?;
            return Ok(aside);
        }
    }
    Err(io::Error::other(
        "no free name to set the corrupt file aside",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_contents_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/a.json");
        atomic_write(&path, b"one").unwrap();
        atomic_write(&path, b"two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "left behind: {names:?}");
    }

    #[test]
    fn lock_is_exclusive_between_handles() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = FileLock::acquire(&path).unwrap();
        let other = OpenOptions::new().write(true).open(&path).unwrap();
        assert!(FileExt::try_lock(&other).is_err());
        drop(held);
        assert!(FileExt::try_lock(&other).is_ok());
    }
}
