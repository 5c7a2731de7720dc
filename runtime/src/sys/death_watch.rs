//! Children die with factory: a sentinel per child process group kills the group when
//! factory goes away, however it goes (`kill -9` included).
//!
//! `PR_SET_PDEATHSIG` is not enough: it fires when the *thread* that forked exits, and
//! only for the direct child, while an agent CLI runs under `sh -c` and starts its own
//! tools. So each group gets a tiny `sh` that blocks reading a pipe only factory holds
//! the write end of. The kernel closes that end when factory dies; the read then sees
//! end-of-file and the sentinel kills the whole group. When factory finishes with the
//! group normally it writes a line first, and the sentinel exits without a signal.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// `read` succeeds on the line factory writes when done, and fails on end-of-file,
/// which only factory's death (or a dropped watch) produces.
/// (`kill -s KILL --` is the spelling dash, the usual `/bin/sh`, accepts for a group.)
const SENTINEL: &str = r#"read _ || kill -s KILL -- "-$1""#;

/// A live sentinel for one process group; [`DeathWatch::release`] (or drop) stands it
/// down without a signal.
#[derive(Debug)]
pub struct DeathWatch {
    pipe: Option<std::io::PipeWriter>,
    sentinel: Option<Child>,
}

impl DeathWatch {
    /// Watches process group `pgid`. `None` when no sentinel could start (a process
    /// limit, say): the child still runs, only without this guarantee, and says so.
    pub fn start(pgid: libc::pid_t) -> Option<Self> {
        match spawn(pgid) {
            Ok(watch) => Some(watch),
            Err(e) => {
                tracing::warn!(
                    "could not start the watcher that stops process group {pgid} if factory dies: {e}"
                );
                None
            }
        }
    }

    /// Stands the sentinel down: the group is finished with (or already killed).
    pub fn release(mut self) {
        self.stand_down();
    }

    fn stand_down(&mut self) {
        if let Some(mut pipe) = self.pipe.take() {
            // A sentinel that is already gone has nothing left to do.
            let _ = pipe.write_all(b"done\n");
        }
        if let Some(mut sentinel) = self.sentinel.take() {
            // It exits as soon as it reads the line; reap it off the caller's thread.
            std::thread::spawn(move || {
                let _ = sentinel.wait();
            });
        }
    }
}

impl Drop for DeathWatch {
    fn drop(&mut self) {
        self.stand_down();
    }
}

fn spawn(pgid: libc::pid_t) -> std::io::Result<DeathWatch> {
    // std creates both ends close-on-exec, so no other child inherits the write end
    // and keeps the sentinel from seeing factory's death.
    let (read, write) = std::io::pipe()?;
    let sentinel = Command::new("/bin/sh")
        .args(["-c", SENTINEL, "factory-death-watch", &pgid.to_string()])
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Outside the watched group, and outside factory's own, so a Ctrl-C in the
        // terminal reaches factory and the sentinel then does the rest.
        .process_group(0)
        .spawn()?;
    Ok(DeathWatch {
        pipe: Some(write),
        sentinel: Some(sentinel),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    fn group_of_sleepers() -> Child {
        Command::new("/bin/sh")
            .args(["-c", "sleep 30 & sleep 30; wait"])
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn wait_until(mut what: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if what() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn losing_the_write_end_kills_the_whole_group() {
        let mut group = group_of_sleepers();
        let pgid = group.id() as libc::pid_t;
        let mut watch = DeathWatch::start(pgid).unwrap();
        // What the kernel does when factory dies: the write end closes unwritten.
        drop(watch.pipe.take());
        let _ = watch.sentinel.take().unwrap().wait();
        assert!(wait_until(|| matches!(group.try_wait(), Ok(Some(_)))));
        // SAFETY: signal 0 to the group only checks whether any member is left.
        assert!(wait_until(|| unsafe { libc::killpg(pgid, 0) } != 0));
    }

    #[test]
    fn a_released_watch_leaves_the_group_alone() {
        let mut group = group_of_sleepers();
        let pgid = group.id() as libc::pid_t;
        let mut watch = DeathWatch::start(pgid).unwrap();
        let mut sentinel = watch.sentinel.take().unwrap();
        watch.release();
        let _ = sentinel.wait();
        assert!(
            alive(pgid),
            "the released sentinel must not signal the group"
        );
        // SAFETY: cleaning up the group this test made.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
        let _ = group.wait();
    }
}
