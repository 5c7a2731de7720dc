//! The bubblewrap arguments that enforce a [`Policy`]. Composition only: nothing here
//! runs a process, so a dry run and the live path print and run the same argv.
//!
//! Order matters to bubblewrap (later mounts cover earlier ones): the system read-only,
//! a private `/tmp`, the project readable again (it may live under `/tmp`), secrets
//! hidden, then the writable paths, then the files the runner made for this run.

use std::path::{Path, PathBuf};

use super::policy::{Network, Policy};

/// The uid and gid a confined process runs as: not root, so nothing it does is done
/// with root's rights inside its namespace.
pub const SANDBOX_UID: &str = "1000";

/// bubblewrap's arguments for `policy`, working in `cwd`, up to (not including) `--`.
pub fn args(policy: &Policy, cwd: &Path, readable: &[PathBuf]) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut push = |flag: &str, paths: &[&Path]| {
        a.push(flag.into());
        a.extend(paths.iter().map(|p| p.display().to_string()));
    };
    push("--ro-bind", &[Path::new("/"), Path::new("/")]);
    push("--dev", &[Path::new("/dev")]);
    push("--proc", &[Path::new("/proc")]);
    push("--tmpfs", &[Path::new("/tmp")]);
    for p in &policy.readable {
        push("--ro-bind", &[p, p]);
    }
    for p in &policy.hidden {
        if p.is_dir() {
            push("--tmpfs", &[p]);
        } else {
            push("--ro-bind", &[Path::new("/dev/null"), p]);
        }
    }
    for p in &policy.writable {
        push("--bind", &[p, p]);
    }
    for p in readable {
        push("--ro-bind", &[p, p]);
    }
    a.push("--unshare-all".into());
    if policy.network == Network::Agent {
        a.push("--share-net".into());
    }
    for flag in [
        "--unshare-user",
        "--uid",
        SANDBOX_UID,
        "--gid",
        SANDBOX_UID,
        // Nothing it starts outlives it: its processes die with factory's child, and
        // the pid namespace ends with its first process.
        "--die-with-parent",
        // No terminal to push keystrokes into.
        "--new-session",
        "--setenv",
        "TMPDIR",
        "/tmp",
        "--setenv",
        super::PLACEMENT_ENV,
        "sandbox",
        // Claude Code skips its own sandbox when told it is in one.
        "--setenv",
        "IS_SANDBOX",
        "1",
    ] {
        a.push(flag.into());
    }
    a.push("--chdir".into());
    a.push(cwd.display().to_string());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_argv_follows_the_policy_in_bubblewraps_order() {
        let policy = Policy {
            readable: vec!["/work/p".into()],
            writable: vec!["/work/p/.factory/worktrees/exp-001".into()],
            hidden: vec!["/nonexistent-file".into()],
            network: Network::None,
        };
        let argv = args(&policy, Path::new("/work/p"), &["/tmp/prompt.md".into()]);
        insta::assert_snapshot!(argv.join(" "), @"--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind /work/p /work/p --ro-bind /dev/null /nonexistent-file --bind /work/p/.factory/worktrees/exp-001 /work/p/.factory/worktrees/exp-001 --ro-bind /tmp/prompt.md /tmp/prompt.md --unshare-all --unshare-user --uid 1000 --gid 1000 --die-with-parent --new-session --setenv TMPDIR /tmp --setenv FACTORY_PLACEMENT sandbox --setenv IS_SANDBOX 1 --chdir /work/p");
        let agent = Policy {
            network: Network::Agent,
            ..policy
        };
        assert!(args(&agent, Path::new("/"), &[]).contains(&"--share-net".to_string()));
    }
}
