//! The command notifier: `sh -c COMMAND` with the message on stdin.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Notification, Notifier};

pub(super) struct CommandNotifier {
    pub command: String,
    pub timeout: Duration,
    pub name: String,
}

impl Notifier for CommandNotifier {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn send(&self, n: &Notification) -> Result<(), String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .current_dir(&n.project)
            .env("FACTORY_NOTIFY_EVENT", n.event.as_str())
            .env("FACTORY_NOTIFICATION", n.to_json().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group, so the timeout kills what it started too.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start it: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its stdin is not a failure.
            let _ = writeln!(stdin, "{}", n.text);
        }
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    let mut err = String::new();
                    if let Some(mut e) = child.stderr.take() {
                        let _ = std::io::Read::read_to_string(&mut e, &mut err);
                    }
                    let tail = crate::sys::process::last_lines(&err, 3);
                    return Err(format!(
                        "it exited with {}{}",
                        crate::sys::process::exit_text(status.code()),
                        if tail.trim().is_empty() {
                            String::new()
                        } else {
                            format!(": {}", tail.trim())
                        }
                    ));
                }
                Ok(None) if start.elapsed() >= self.timeout => {
                    // SAFETY: killpg on the group we created; a stale id fails harmlessly.
                    unsafe {
                        libc::killpg(child.id() as i32, libc::SIGKILL);
                    }
                    let _ = child.wait();
                    return Err(format!(
                        "it did not finish within {}s and was killed",
                        self.timeout.as_secs()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("cannot wait for it: {e}")),
            }
        }
    }
}
