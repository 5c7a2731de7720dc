//! Running a subprocess asynchronously (tokio), for agents and the executor.
//!
//! The same rules as [`super::process`]: the child gets its own process group, so a
//! timeout — or dropping the future that waits for it — kills it *and* everything it
//! started with SIGKILL. Stdout is read line by line and handed to a callback as it
//! arrives (a live view of an agent), while both streams are also captured. If factory
//! dies first, even by SIGKILL, the group dies with it ([`super::death_watch`]).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::process::ProcessError;

/// Stdout kept in memory; an agent's final message is far smaller.
const MAX_STDOUT: usize = 8 << 20;
/// Stderr kept: only its tail is ever shown.
const MAX_STDERR: usize = 64 << 10;
/// How long to wait for the output pipes once the child has exited (or was killed):
/// a descendant that left the group can hold them open forever.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct ProcessSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Added to the inherited environment.
    pub env: Vec<(String, String)>,
    /// Written to the child's stdin, which is then closed; `None` gives it no stdin.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Option<Duration>,
}

impl ProcessSpec {
    /// `sh -c script` in `cwd`.
    pub fn shell(script: &str, cwd: impl Into<PathBuf>) -> Self {
        Self {
            // An absolute path lets std use posix_spawn even when PATH is changed
            // for the child (a PATH lookup forces fork + exec, much slower).
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: cwd.into(),
            ..Self::default()
        }
    }

    fn label(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What a finished (or killed) process produced.
#[derive(Debug, Clone)]
pub struct AsyncOutput {
    /// Exit code; `None` when killed by a signal (including our timeout).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl AsyncOutput {
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }

    /// How it ended, in words: `exit code 1`, `killed by a signal`.
    pub fn exit_text(&self) -> String {
        super::process::exit_text(self.code)
    }

    /// The last `n` lines of stderr (or stdout when stderr is empty), for error details.
    pub fn tail(&self, n: usize) -> String {
        super::process::output_tail(&self.stdout, &self.stderr, n)
    }
}

/// Kills the process group when dropped unless disarmed: a cancelled future must not
/// leave an agent running.
struct GroupGuard {
    pgid: Option<libc::pid_t>,
    /// Kills the group if factory itself dies first; stood down when the guard drops.
    _watch: Option<super::death_watch::DeathWatch>,
}

impl GroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg only sends a signal; a missing group yields ESRCH, ignored.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `spec`, calling `on_line` with each stdout line (without its newline).
pub async fn run(
    spec: &ProcessSpec,
    on_line: &(dyn Fn(&str) + Send + Sync),
) -> Result<AsyncOutput, ProcessError> {
    let spawn_err = |source| ProcessError::Spawn {
        command: spec.label(),
        dir: spec.cwd.clone(),
        source,
    };
    // Our own pipe for stdin, so it can be written from a thread that ignores SIGPIPE.
    let (stdin_read, stdin_write) = match &spec.stdin {
        Some(_) => {
            let (r, w) = std::io::pipe().map_err(spawn_err)?;
            (Some(r), Some(w))
        }
        None => (None, None),
    };
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(match &stdin_read {
            Some(r) => Stdio::from(r.try_clone().map_err(spawn_err)?),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Own process group: killpg reaches grandchildren too.
        .process_group(0);
    let start = Instant::now();
    let mut child = spawn_retrying_busy(&mut cmd).await.map_err(spawn_err)?;
    // Only the child may hold the read end, or a child that exits early would leave
    // our writer blocked on a pipe nobody reads.
    drop(cmd);
    drop(stdin_read);
    let pgid = child.id().map(|id| id as libc::pid_t);
    let mut guard = GroupGuard {
        pgid,
        _watch: pgid.and_then(super::death_watch::DeathWatch::start),
    };

    let feed = feed_stdin(stdin_write, spec.stdin.clone().unwrap_or_default());
    let out = read_lines(child.stdout.take(), MAX_STDOUT, Some(on_line));
    let err = read_lines(child.stderr.take(), MAX_STDERR, None);
    let wait = child.wait();
    let far = Duration::from_secs(60 * 60 * 24 * 365);
    let sleep = tokio::time::sleep(spec.timeout.unwrap_or(far));
    tokio::pin!(feed, out, err, wait, sleep);

    let (mut fed, mut stdout, mut stderr, mut status) = (false, None, None, None);
    let mut timed_out = false;
    // Once the child is gone the remaining wait is only for its pipes.
    let mut grace = false;
    while status.is_none() || stdout.is_none() || stderr.is_none() {
        tokio::select! {
            _ = &mut feed, if !fed => fed = true,
            o = &mut out, if stdout.is_none() => stdout = Some(o),
            e = &mut err, if stderr.is_none() => stderr = Some(e),
            s = &mut wait, if status.is_none() => {
                let s = s.map_err(|source| ProcessError::Wait { command: spec.label(), source })?;
                status = Some(s);
                if !grace {
                    grace = true;
                    sleep.as_mut().reset(tokio::time::Instant::now() + PIPE_GRACE);
                }
            }
            _ = &mut sleep => {
                guard.kill();
                if grace {
                    // Pipes still held (or the child survived SIGKILL): stop waiting.
                    break;
                }
                timed_out = true;
                grace = true;
                sleep.as_mut().reset(tokio::time::Instant::now() + PIPE_GRACE);
            }
        }
    }
    if status.is_some() && !timed_out {
        // The child is reaped; clean up any straggler still in its group, then forget
        // the id so the guard never signals a recycled one.
        guard.kill();
    }
    guard.pgid = None;
    Ok(AsyncOutput {
        code: status.and_then(|s| s.code()),
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
        timed_out,
        elapsed: start.elapsed(),
    })
}

/// Writes `bytes` to the child's stdin on a thread of its own with SIGPIPE blocked: a
/// child that exits without reading its stdin must not kill a binary that restored
/// SIGPIPE's default (the `factory` CLI does). The pending signal dies with the thread.
async fn feed_stdin(pipe: Option<std::io::PipeWriter>, bytes: Vec<u8>) {
    let Some(mut pipe) = pipe else { return };
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        // SAFETY: the set is initialised by sigemptyset before use, and the mask
        // changes only this thread, which does nothing but this write.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        // A child that never reads its stdin closes the pipe; that is its business.
        let _ = std::io::Write::write_all(&mut pipe, &bytes);
        drop(pipe);
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// Reads a stream to its end, keeping at most `cap` bytes (the tail for stderr, the
/// head otherwise) and reporting each line to `on_line`.
async fn read_lines<R: AsyncRead + Unpin>(
    stream: Option<R>,
    cap: usize,
    on_line: Option<&(dyn Fn(&str) + Send + Sync)>,
) -> String {
    let Some(stream) = stream else {
        return String::new();
    };
    let mut reader = BufReader::new(stream);
    let mut all = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if let Some(f) = on_line {
                    let text = String::from_utf8_lossy(&line);
                    f(text.trim_end_matches(['\n', '\r']));
                    if all.len() < cap {
                        all.extend_from_slice(&line);
                    }
                } else {
                    all.extend_from_slice(&line);
                    if all.len() > cap {
                        all.drain(..all.len() - cap);
                    }
                }
            }
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

/// Spawns `cmd`, retrying briefly on ETXTBSY: a script written a moment ago can be
/// "busy" while another thread's fork still holds its write handle.
async fn spawn_retrying_busy(
    cmd: &mut tokio::process::Command,
) -> std::io::Result<tokio::process::Child> {
    let mut attempts = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 20 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn streams_lines_captures_both_streams_and_feeds_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let lines = Mutex::new(Vec::new());
        let mut spec = ProcessSpec::shell("cat; echo two; echo err >&2; exit 4", dir.path());
        spec.stdin = Some(b"one\n".to_vec());
        let out = rt()
            .block_on(run(&spec, &|l| lines.lock().unwrap().push(l.to_string())))
            .unwrap();
        assert_eq!(out.code, Some(4));
        assert_eq!(out.stdout, "one\ntwo\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(*lines.lock().unwrap(), ["one", "two"]);
    }

    #[test]
    fn timeout_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survivor");
        let script = format!("(sleep 1; touch '{}') & sleep 30", marker.display());
        let mut spec = ProcessSpec::shell(&script, dir.path());
        spec.timeout = Some(Duration::from_millis(300));
        let out = rt().block_on(run(&spec, &|_| {})).unwrap();
        assert!(out.timed_out);
        assert!(out.elapsed < Duration::from_secs(3), "{:?}", out.elapsed);
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "grandchild survived the timeout");
    }

    #[test]
    fn dropping_the_future_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survivor");
        let script = format!("sleep 1; touch '{}'", marker.display());
        let spec = ProcessSpec::shell(&script, dir.path());
        rt().block_on(async {
            let r = tokio::time::timeout(Duration::from_millis(200), run(&spec, &|_| {})).await;
            assert!(r.is_err(), "should still be running");
        });
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "child survived its cancelled future");
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ProcessSpec {
            program: "definitely-not-a-program-xyz".into(),
            cwd: dir.path().into(),
            ..ProcessSpec::default()
        };
        let err = rt().block_on(run(&spec, &|_| {})).unwrap_err();
        assert!(matches!(err, ProcessError::Spawn { .. }));
    }
}
