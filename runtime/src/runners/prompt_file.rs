//! The prompt as a private temporary file, for `{prompt_file}` and
//! `FACTORY_PROMPT_FILE` (every runner gives its agent one).

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::RunnerError;

/// The prompt written to a private temp file, removed when the run ends.
pub(crate) struct PromptFile {
    pub(crate) path: PathBuf,
}

impl PromptFile {
    pub(crate) fn write(role: &str, prompt: &str) -> Result<Self, RunnerError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let safe: String = role
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = std::env::temp_dir().join(format!(
            "factory-prompt-{safe}-{}-{}.md",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let io = |source| RunnerError::Io {
            path: path.clone(),
            source,
        };
        // create_new + 0600: never follow a planted symlink, never readable by others.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        let written = std::io::Write::write_all(&mut file, prompt.as_bytes()).map_err(io);
        // Created: from here on the guard removes it, also when the write failed.
        let file = Self { path: path.clone() };
        written?;
        Ok(file)
    }
}

impl Drop for PromptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
