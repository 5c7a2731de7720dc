//! Runs a node's shell command: `sh -c` in its own process group, output captured to
//! the node's log, and the whole group killed on timeout or when the run is stopped
//! (the task's future is dropped), so no grandchild outlives its node.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;

/// What a finished command left behind.
#[derive(Debug, Clone)]
pub struct ShellOutput {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

impl ShellOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// The last `n` lines of stderr (else stdout), for error messages.
    pub fn tail(&self, n: usize) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text.trim_end().lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

/// Kills the process group when dropped, unless disarmed.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // SAFETY: killpg with a pgid we created; a stale group is harmless (ESRCH).
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

pub struct ShellSpec<'a> {
    pub script: &'a str,
    pub dir: &'a Path,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
    /// Where stdout and stderr are copied, for `factory runs` and post-mortems.
    pub log: Option<PathBuf>,
}

pub async fn run(spec: ShellSpec<'_>) -> std::io::Result<ShellOutput> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(spec.script)
        .current_dir(spec.dir)
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let mut guard = GroupGuard(child.id().map(|p| p as i32));
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let read_out = async {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut buf).await;
        }
        buf
    };
    let read_err = async {
        let mut buf = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut buf).await;
        }
        buf
    };
    let waited = tokio::time::timeout(spec.timeout, async {
        let (o, e, status) = tokio::join!(read_out, read_err, child.wait());
        (o, e, status)
    })
    .await;
    let result = match waited {
        Ok((o, e, status)) => {
            let status = status?;
            // The shell is done; anything it left running in its group goes with it.
            ShellOutput {
                code: status.code(),
                stdout: String::from_utf8_lossy(&o).into_owned(),
                stderr: String::from_utf8_lossy(&e).into_owned(),
                timed_out: false,
            }
        }
        Err(_) => {
            drop(guard);
            guard = GroupGuard(None);
            let _ = child.wait().await;
            ShellOutput {
                code: None,
                stdout: String::new(),
                stderr: format!(
                    "timed out after {}s; the process group was killed",
                    spec.timeout.as_secs()
                ),
                timed_out: true,
            }
        }
    };
    drop(guard);
    if let Some(log) = spec.log {
        let text = format!("$ {}\n{}{}", spec.script, result.stdout, result.stderr);
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(log, text);
    }
    Ok(result)
}
