//! A bound on how many processes a run's confined commands may have at once: a pids
//! cgroup of the run's own, whose `pids.max` makes a fork bomb fail at its fork instead
//! of taking the machine. bubblewrap's pid namespace kills what is left when a node
//! ends; this bounds what a node can start before then.
//!
//! The cgroup is made under cgroup v1's pids hierarchy (`/sys/fs/cgroup/pids`) or, on
//! cgroup v2, under factory's own cgroup when its pids controller is delegated there.
//! Each confined command joins it before it becomes bubblewrap ([`PidsLimit::wrap`]),
//! so the dry run and the live path show the same argv. Where no such cgroup can be
//! made (no pids controller, not delegated, not writable), there is no limit and the
//! probe says so; the cgroup is kernel state, not a file of the user's, and is removed
//! when the run ends.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The default bound: room for a parallel build, far below what hurts a machine.
pub const DEFAULT_MAX: u32 = 4096;

/// Overrides [`DEFAULT_MAX`] (a whole number of processes).
pub const MAX_ENV: &str = "FACTORY_SANDBOX_PIDS_MAX";

/// The run's pids cgroup, removed (and anything left in it killed) on drop.
#[derive(Debug, PartialEq, Eq)]
pub struct PidsLimit {
    dir: PathBuf,
    pub max: u32,
}

impl PidsLimit {
    /// Makes the cgroup and proves a process can join it; `Err` says why there is no
    /// limit here.
    pub fn create() -> Result<PidsLimit, String> {
        let max = match std::env::var(MAX_ENV) {
            Ok(v) => v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{MAX_ENV}=`{v}` is not a whole number above 0"))?,
            Err(_) => DEFAULT_MAX,
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let parent = hierarchy()?;
        remove_stale(&parent);
        let dir = parent.join(format!(
            "factory-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let limit = PidsLimit { dir, max };
        fs::write(limit.dir.join("pids.max"), max.to_string())
            .map_err(|e| format!("cannot set {}/pids.max: {e}", limit.dir.display()))?;
        limit.prove()?;
        Ok(limit)
    }

    /// `program args` run inside the cgroup: a shell puts itself there, then becomes the
    /// program. If it cannot join, nothing runs.
    pub fn wrap(&self, program: String, args: Vec<String>) -> (String, Vec<String>) {
        let mut argv = vec![
            "-c".to_string(),
            r#"echo $$ > "$0" && exec "$@""#.to_string(),
            self.procs().display().to_string(),
            program,
        ];
        argv.extend(args);
        ("/bin/sh".to_string(), argv)
    }

    fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// A process that joins and exits: what every confined command will do.
    fn prove(&self) -> Result<(), String> {
        let (program, args) = self.wrap("true".into(), Vec::new());
        let status = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("cannot run /bin/sh: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "a process cannot join {} (not delegated to this user?)",
                self.dir.display()
            ))
        }
    }
}

impl Drop for PidsLimit {
    fn drop(&mut self) {
        // A process still in it (nothing should be: each node's pid namespace has
        // ended) goes first, or the directory cannot be removed.
        for _ in 0..20 {
            let left: Vec<i32> = fs::read_to_string(self.procs())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            for pid in &left {
                // SAFETY: kill(2) with a pid read from our own cgroup; no memory involved.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }
}

/// Empty cgroups a killed factory left (its pid gone): removed, as its drop would have.
fn remove_stale(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("factory-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill(2) with signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            // Fails, harmlessly, while anything is still in it.
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// Where the run's cgroup goes: cgroup v1's pids hierarchy, else (v2) factory's own
/// cgroup when it delegates the pids controller.
fn hierarchy() -> Result<PathBuf, String> {
    let v1 = Path::new("/sys/fs/cgroup/pids");
    if v1.join("cgroup.procs").exists() {
        return own_cgroup(v1, "pids").map(|own| v1.join(own));
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let controllers = fs::read_to_string(v2.join("cgroup.controllers"))
        .map_err(|_| "no pids cgroup controller on this machine".to_string())?;
    if !controllers.split_whitespace().any(|c| c == "pids") {
        return Err("cgroup v2 without its pids controller".into());
    }
    let own = v2.join(own_cgroup(v2, "")?);
    let delegated = fs::read_to_string(own.join("cgroup.subtree_control")).unwrap_or_default();
    if !delegated.split_whitespace().any(|c| c == "pids") {
        return Err(format!(
            "the pids controller is not delegated to {} (cgroup v2)",
            own.display()
        ));
    }
    Ok(own)
}

/// This process's cgroup in the hierarchy of `controller` (`""`: the v2 one), relative.
fn own_cgroup(_root: &Path, controller: &str) -> Result<PathBuf, String> {
    let text = fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
            let matches = if controller.is_empty() {
                names.is_empty()
            } else {
                names.split(',').any(|n| n == controller)
            };
            matches.then(|| PathBuf::from(path.trim_start_matches('/')))
        })
        .next()
        .ok_or_else(|| format!("this process is in no `{controller}` cgroup"))
}
