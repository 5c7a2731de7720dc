//! Running a helper program with a deadline. The child gets its own process group so
//! a timeout kills everything it started (a shell script's `sleep`, say), not just
//! the direct child.

use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a bounded run ended.
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

/// Runs `program args...` in `cwd` with stdin closed and stderr discarded, waiting at
/// most `timeout`. A program that cannot be started (missing from PATH) is an error.
pub fn run_bounded(
    program: &str,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> io::Result<Bounded> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = spawn_retrying_busy(&mut cmd)?;
    let mut stdout = child.stdout.take();
    // Read on a thread so a chatty child never blocks on a full pipe. The result
    // comes back over a channel, never a join: a grandchild that escaped the process
    // group could hold the pipe open forever, and the deadline must still hold.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut out);
        }
        let _ = tx.send(out);
    });
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            let left = deadline.saturating_duration_since(Instant::now());
            return Ok(match rx.recv_timeout(left) {
                Ok(stdout) => Bounded::Exited { status, stdout },
                Err(_) => {
                    kill_group(&mut child);
                    Bounded::TimedOut
                }
            });
        }
        if Instant::now() >= deadline {
            kill_group(&mut child);
            let _ = child.wait();
            return Ok(Bounded::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Spawns `cmd`, retrying briefly on ETXTBSY: a script written a moment ago can be
/// "busy" while another thread's fork still holds its write handle.
fn spawn_retrying_busy(cmd: &mut Command) -> io::Result<std::process::Child> {
    let mut attempts = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 20 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            other => return other,
        }
    }
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group we created
            // for this child (process_group(0) makes its pgid equal its pid); it
            // touches no memory.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_stdout_of_a_quick_program() {
        let r = run_bounded(
            "sh",
            &["-c", "echo hi"],
            Path::new("."),
            Duration::from_secs(5),
        )
        .unwrap();
        match r {
            Bounded::Exited { status, stdout } => {
                assert!(status.success());
                assert_eq!(stdout, "hi\n");
            }
            Bounded::TimedOut => panic!("timed out"),
        }
    }

    #[test]
    fn kills_the_whole_group_on_timeout() {
        let start = Instant::now();
        let r = run_bounded(
            "sh",
            &["-c", "sleep 30; echo late"],
            Path::new("."),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(matches!(r, Bounded::TimedOut));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "took {:?}",
            start.elapsed()
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
    fn a_missing_program_is_an_error() {
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
}
