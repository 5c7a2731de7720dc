//! Running a subprocess with a hard timeout.
//!
//! Every command factory runs on a user's behalf (eval dimensions, hard constraints, the
//! project's `eval/score.py`, `gh`) goes through one engine: the child gets its own process
//! group so that a timeout kills it *and* everything it started (a test runner's workers, a
//! shell's children), and its output is read on threads so a chatty child never blocks on
//! a full pipe. [`run_shell`] and [`run_program`] return everything; [`run_bounded`] is the
//! stdout-only view state detection uses.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{LazyLock, mpsc};
use std::time::{Duration, Instant};

use regex::Regex;

/// Output kept per stream; test runners can print megabytes and we only need the summary.
const MAX_CAPTURE: usize = 1 << 20;
/// How long to wait for output pipes after a timeout kill before giving up on them.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What a finished (or killed) command produced.
#[derive(Debug, Clone)]
pub struct Output {
    pub status: ExitStatus,
    /// Exit code; `None` when killed by a signal (including our timeout).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Output {
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }

    /// How it ended, in words: `exit code 1`, `killed by a signal`.
    pub fn exit_text(&self) -> String {
        exit_text(self.code)
    }

    /// The last `n` lines of stderr (or stdout when stderr is empty), for error details.
    pub fn tail(&self, n: usize) -> String {
        output_tail(&self.stdout, &self.stderr, n)
    }
}

/// How a process ended, in words (`None`: killed by a signal, our timeout included).
pub fn exit_text(code: Option<i32>) -> String {
    code.map_or_else(|| "killed by a signal".into(), |c| format!("exit code {c}"))
}

/// The last `n` lines of stderr, or of stdout when stderr is empty.
pub fn output_tail(stdout: &str, stderr: &str, n: usize) -> String {
    last_lines(
        if stderr.trim().is_empty() {
            stdout
        } else {
            stderr
        },
        n,
    )
}

/// The last `n` lines of `text`.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ProcessError {
    #[error("could not start `{command}` in {dir}: {source}")]
    #[diagnostic(help(
        "install the program or fix the command; it must be runnable from the project directory"
    ))]
    Spawn {
        command: String,
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("lost track of `{command}` while waiting for it: {source}")]
    #[diagnostic(help("this is an operating-system error; retry the command"))]
    Wait {
        command: String,
        source: std::io::Error,
    },
}

/// Runs `script` with `sh -c` in `dir`, killing its whole process group after `timeout`.
pub fn run_shell(script: &str, dir: &Path, timeout: Duration) -> Result<Output, ProcessError> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    run_command(cmd, script, dir, timeout)
}

/// Runs `program args..` (no shell) in `dir` with the same timeout rules as [`run_shell`].
pub fn run_program(
    program: &str,
    args: &[&str],
    dir: &Path,
    timeout: Duration,
) -> Result<Output, ProcessError> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let label = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    run_command(cmd, &label, dir, timeout)
}

/// Build-cache locations shared across checkouts. Tools such as cargo decide freshness
/// by modification times, so two checkouts of the same package written moments apart
/// and built into one shared directory can reuse each other's outputs.
const SHARED_BUILD_CACHES: [&str; 2] = ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"];

thread_local! {
    static ISOLATED_BUILDS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While alive, commands started on this thread do not inherit [`SHARED_BUILD_CACHES`]:
/// each checkout builds into its own directory (the gate's scratch checkouts).
#[must_use = "isolation ends when the guard is dropped"]
pub struct IsolatedBuilds(bool);

impl IsolatedBuilds {
    pub fn enter() -> Self {
        Self(ISOLATED_BUILDS.replace(true))
    }
}

impl Drop for IsolatedBuilds {
    fn drop(&mut self) {
        ISOLATED_BUILDS.set(self.0);
    }
}

/// Variables set (`Some`) or removed (`None`) for commands started on this thread.
type EnvOverrides = Vec<(std::ffi::OsString, Option<std::ffi::OsString>)>;

thread_local! {
    static SCOPED_ENV: std::cell::RefCell<EnvOverrides> = const { std::cell::RefCell::new(Vec::new()) };
}

/// While alive, commands started on this thread get these variables set or removed on
/// top of factory's own environment: one side's checkout gets its own environment (its
/// `.venv` first on `PATH`, no inherited `NODE_PATH`; `worktrees::setup`). Entering a
/// new scope replaces the previous one until it ends.
#[must_use = "the environment applies only while the guard is alive"]
pub struct ScopedEnv(EnvOverrides);

impl ScopedEnv {
    pub fn enter(vars: EnvOverrides) -> Self {
        Self(SCOPED_ENV.replace(vars))
    }
}

impl Drop for ScopedEnv {
    fn drop(&mut self) {
        SCOPED_ENV.set(std::mem::take(&mut self.0));
    }
}

/// Commands factory runs itself (evals, guards, test runs) must leave the tree they run
/// in as they found it: Python writes no bytecode there (what it must write, e.g.
/// `compileall`, goes under a prefix in the temp directory).
fn leave_no_caches(cmd: &mut Command) {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1").env(
        "PYTHONPYCACHEPREFIX",
        std::env::temp_dir().join("factory-pycache"),
    );
}

/// Runs a prepared `cmd` (its arguments and environment set; `label` names it in
/// errors) in `dir` with the same rules as [`run_shell`]: its own process group, killed
/// whole at `timeout`, stdin closed, output captured.
pub fn run_command(
    mut cmd: Command,
    label: &str,
    dir: &Path,
    timeout: Duration,
) -> Result<Output, ProcessError> {
    leave_no_caches(&mut cmd);
    SCOPED_ENV.with_borrow(|vars| {
        for (key, value) in vars {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
    });
    if ISOLATED_BUILDS.get() {
        for var in SHARED_BUILD_CACHES {
            cmd.env_remove(var);
        }
    }
    let mut cmd = super::placer::place(cmd, dir);
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Own process group: killpg reaches grandchildren too.
        .process_group(0);
    let start = Instant::now();
    let mut child = spawn_retrying_busy(&mut cmd).map_err(|source| ProcessError::Spawn {
        command: label.to_string(),
        dir: dir.to_path_buf(),
        source,
    })?;
    let pgid = child.id() as libc::pid_t;
    // Stood down when this function returns; kills the group if factory dies first.
    let _watch = super::death_watch::DeathWatch::start(pgid);
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());

    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                timed_out = true;
                kill_group(pgid);
                match child.wait() {
                    Ok(status) => break status,
                    Err(source) => {
                        return Err(ProcessError::Wait {
                            command: label.to_string(),
                            source,
                        });
                    }
                }
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(source) => {
                kill_group(pgid);
                return Err(ProcessError::Wait {
                    command: label.to_string(),
                    source,
                });
            }
        }
    };

    // A descendant outside the group (setsid) may still hold the pipes open: the wait
    // for them is bounded by the same deadline, and running past it is a timeout.
    let deadline = start + timeout;
    let mut collect = |rx: mpsc::Receiver<String>| {
        let left = if timed_out {
            PIPE_GRACE
        } else {
            // A little slack so output already written at the deadline is not lost.
            deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(50))
        };
        match rx.recv_timeout(left) {
            Ok(text) => text,
            Err(_) => {
                kill_group(pgid);
                timed_out = true;
                String::new()
            }
        }
    };
    let stdout = collect(stdout);
    let stderr = collect(stderr);
    Ok(Output {
        status,
        code: status.code(),
        stdout,
        stderr,
        timed_out,
        elapsed: start.elapsed(),
    })
}

/// How a bounded run ended (the stdout-only view of [`run_program`]).
#[derive(Debug)]
pub enum Bounded {
    /// The program exited in time.
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// Everything it wrote to stdout.
        stdout: String,
    },
    /// The deadline passed; the process group was killed.
    TimedOut,
}

/// Runs `program args...` in `cwd` with stdin closed, waiting at most `timeout`.
/// A program that cannot be started (missing from PATH) is an error.
pub fn run_bounded(
    program: &str,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> std::io::Result<Bounded> {
    match run_program(program, args, cwd, timeout) {
        Ok(out) if out.timed_out => Ok(Bounded::TimedOut),
        Ok(out) => Ok(Bounded::Exited {
            status: out.status,
            stdout: out.stdout,
        }),
        Err(ProcessError::Spawn { source, .. } | ProcessError::Wait { source, .. }) => Err(source),
    }
}

/// Spawns `cmd`, retrying briefly on ETXTBSY: a script written a moment ago can be
/// "busy" while another thread's fork still holds its write handle.
fn spawn_retrying_busy(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut attempts = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 20 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            other => return other,
        }
    }
}

fn reader<R: Read + Send + 'static>(stream: Option<R>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut s) = stream {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = s.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if buf.len() < MAX_CAPTURE {
                    buf.extend_from_slice(&chunk[..n]);
                }
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

fn kill_group(pgid: libc::pid_t) {
    // SAFETY: killpg only sends a signal; a stale or missing group yields ESRCH, ignored.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// Finds an executable named `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// Colour and charset escapes (`ESC[32m`, `ESC(B`) a tool prints even into a pipe.
static ANSI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z])")
        .unwrap_or_else(|e| panic!("invalid built-in regex: {e}"))
});

static USEFUL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(\berr(or)?\b|err!|\bfatal\b|\bfailed\b|\bcannot\b|can't|could not|not found|no such|no module named|\bdenied\b|\brefused\b|\bunable\b|exception|^diff in |would reformat|would be reformatted)",
    )
    .unwrap_or_else(|e| panic!("invalid built-in regex: {e}"))
});

/// The first lines of a command's output that say what went wrong (an `error`, `ERR!`,
/// `not found`, `No module named` …), at most `n`, in the order printed; the last `n`
/// lines when none does. Stderr is read before stdout; terminal colours are removed.
pub fn useful_lines(out: &Output, n: usize) -> String {
    let text = ANSI
        .replace_all(&format!("{}\n{}", out.stderr, out.stdout), "")
        .into_owned();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut picked: Vec<&str> = Vec::new();
    for l in &lines {
        if USEFUL.is_match(l) && !l.starts_with("Traceback (") && !picked.contains(l) {
            picked.push(l);
            if picked.len() == n {
                break;
            }
        }
    }
    if picked.is_empty() {
        picked = lines[lines.len().saturating_sub(n)..].to_vec();
    }
    if picked.is_empty() {
        return "(no output)".into();
    }
    picked
        .iter()
        .map(|l| {
            if l.chars().count() > 240 {
                format!("{}…", l.chars().take(240).collect::<String>())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_shell(
            "echo hi; echo err >&2; exit 3",
            dir.path(),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout.trim(), "hi");
        assert_eq!(out.stderr.trim(), "err");
        assert!(!out.timed_out);
    }

    #[test]
    fn a_scoped_environment_applies_to_this_thread_s_commands_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let echo = || {
            run_shell(
                "echo \"${FACTORY_SCOPED_TEST-unset}\"",
                dir.path(),
                Duration::from_secs(10),
            )
            .unwrap()
            .stdout
            .trim()
            .to_string()
        };
        {
            let _env = ScopedEnv::enter(vec![("FACTORY_SCOPED_TEST".into(), Some("set".into()))]);
            assert_eq!(echo(), "set");
            let inner = ScopedEnv::enter(vec![("FACTORY_SCOPED_TEST".into(), None)]);
            assert_eq!(echo(), "unset", "a new scope replaces the outer one");
            drop(inner);
            assert_eq!(echo(), "set", "and the outer one is back");
        }
        assert_eq!(echo(), "unset");
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survivor");
        // The grandchild would write the marker after 2 s if it survived the kill.
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let out = run_shell(&script, dir.path(), Duration::from_millis(300)).unwrap();
        assert!(out.timed_out);
        assert!(
            out.elapsed < Duration::from_secs(5),
            "took {:?}",
            out.elapsed
        );
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "grandchild survived the timeout");
    }

    #[test]
    fn bounded_run_reports_stdout_or_timeout() {
        match run_bounded(
            "sh",
            &["-c", "echo hi"],
            Path::new("."),
            Duration::from_secs(5),
        )
        .unwrap()
        {
            Bounded::Exited { status, stdout } => {
                assert!(status.success());
                assert_eq!(stdout, "hi\n");
            }
            Bounded::TimedOut => panic!("timed out"),
        }
        let r = run_bounded(
            "sh",
            &["-c", "sleep 30"],
            Path::new("."),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(matches!(r, Bounded::TimedOut));
        assert!(
            run_bounded(
                "definitely-not-a-program-xyz",
                &[],
                Path::new("."),
                Duration::from_secs(1)
            )
            .is_err()
        );
    }

    #[test]
    fn a_background_child_holding_the_pipe_cannot_outlast_the_deadline() {
        let start = Instant::now();
        // setsid puts the sleeper outside our process group, so only the deadline
        // on reading stdout can stop the wait.
        let r = run_bounded(
            "sh",
            &["-c", "setsid sleep 5 & echo early"],
            Path::new("."),
            Duration::from_millis(500),
        )
        .unwrap();
        assert!(matches!(r, Bounded::TimedOut), "{r:?}");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "took {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = run_program(
            "definitely-not-a-program-xyz",
            &[],
            dir.path(),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(matches!(err, ProcessError::Spawn { .. }));
    }
}
