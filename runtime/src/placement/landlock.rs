//! The sandbox where bubblewrap cannot run (inside a default Docker container, say):
//! landlock alone, which the kernel enforces on a process and everything it starts.
//! factory re-executes itself as a small launcher (`factory __confine`) that restricts
//! itself and then becomes the command, so composition stays an argv ([`args`]) that
//! the dry run prints and the live path runs.
//!
//! Weaker than bubblewrap, and said so wherever it is used: writes are confined to the
//! policy's writable paths, `/dev` and a temp directory of the command's own; hidden
//! paths are unreadable; a command without network cannot open or accept TCP
//! connections. There are no pid, ipc or mount namespaces: a process it starts can
//! outlive its node (its process group is still killed), and it runs as the user.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};

use super::policy::{Network, Policy};

/// The hidden subcommand of the factory binary that [`launch`]es a command.
pub const LAUNCHER: &str = "__confine";

/// The highest landlock ABI factory asks for; older kernels enforce what they can.
const ABI_WANTED: ABI = ABI::V5;

/// `program args` confined by `policy` through the launcher `exe`, working in `cwd`.
pub fn args(
    exe: &Path,
    policy: &Policy,
    cwd: &Path,
    program: &str,
    rest: &[String],
) -> (String, Vec<String>) {
    let mut a = vec![LAUNCHER.to_string()];
    for w in &policy.writable {
        a.push("--write".into());
        a.push(w.display().to_string());
    }
    for h in &policy.hidden {
        a.push("--hide".into());
        a.push(h.display().to_string());
    }
    if policy.network == Network::None {
        a.push("--no-network".into());
    }
    a.push("--chdir".into());
    a.push(cwd.display().to_string());
    a.push("--".into());
    a.push(program.to_string());
    a.extend(rest.iter().cloned());
    (exe.display().to_string(), a)
}

/// What the launcher was told (its command line, parsed by the CLI).
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub write: Vec<PathBuf>,
    pub hide: Vec<PathBuf>,
    pub no_network: bool,
    pub chdir: PathBuf,
    pub command: Vec<String>,
}

/// Restricts this process as `l` says and runs its command to the end: its exit code
/// (128 + the signal that killed it), or why nothing ran. The launcher stays the
/// command's parent so that the command's temp directory goes when it ends.
pub fn launch(l: &Launch) -> Result<i32, String> {
    use std::os::unix::process::ExitStatusExt;
    let Some((program, rest)) = l.command.split_first() else {
        return Err("no command after `--`".into());
    };
    let temp = private_temp()?;
    let mut writable = l.write.clone();
    writable.push(temp.path().to_path_buf());
    restrict(&writable, &l.hide, l.no_network)?;
    let status = std::process::Command::new(program)
        .args(rest)
        .current_dir(&l.chdir)
        .env("TMPDIR", temp.path())
        .env(super::PLACEMENT_ENV, "sandbox")
        .env("IS_SANDBOX", "1")
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}

/// A temp directory of the command's own, removed when it ends: landlock has no
/// private `/tmp`, and the shared one holds other commands' files (the gate's other
/// side).
fn private_temp() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("factory-confined-")
        .tempdir()
        .map_err(|e| format!("cannot make a temp directory: {e}"))
}

fn restrict(writable: &[PathBuf], hidden: &[PathBuf], no_network: bool) -> Result<(), String> {
    let fail = |e: landlock::RulesetError| format!("landlock: {e}");
    let read = AccessFs::from_read(ABI_WANTED);
    let all = AccessFs::from_all(ABI_WANTED);
    let mut ruleset = Ruleset::default().handle_access(all).map_err(fail)?;
    if no_network {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(fail)?;
    }
    let mut created = ruleset.create().map_err(fail)?;
    for root in readable_roots(Path::new("/"), hidden) {
        if let Ok(fd) = PathFd::new(&root) {
            created = created.add_rule(PathBeneath::new(fd, read)).map_err(fail)?;
        }
    }
    let dev = PathBuf::from("/dev");
    for w in writable.iter().chain(std::iter::once(&dev)) {
        if let Ok(fd) = PathFd::new(w) {
            created = created.add_rule(PathBeneath::new(fd, all)).map_err(fail)?;
        }
    }
    let status = created.restrict_self().map_err(fail)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("landlock is not enforced by this kernel".into());
    }
    Ok(())
}

/// What to grant read on so that everything under `dir` is readable except `hidden`:
/// `dir` itself when nothing hidden lies under it, else its entries, each covered the
/// same way. A symlink that leads into a hidden path is left out.
pub fn readable_roots(dir: &Path, hidden: &[PathBuf]) -> Vec<PathBuf> {
    if hidden.iter().any(|h| dir.starts_with(h)) {
        return Vec::new();
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        return vec![dir.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_link {
            let target = path.canonicalize().unwrap_or_else(|_| path.clone());
            if hidden.iter().any(|h| target.starts_with(h)) {
                continue;
            }
        }
        out.extend(readable_roots(&path, hidden));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_is_readable_but_the_hidden_paths_and_links_into_them() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join(".config/gh")).unwrap();
        std::fs::create_dir_all(home.join(".config/nvim")).unwrap();
        std::fs::write(home.join(".npmrc"), "token").unwrap();
        std::fs::write(home.join("notes.txt"), "x").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        let hidden = vec![
            home.join(".ssh"),
            home.join(".config/gh"),
            home.join(".npmrc"),
        ];
        let mut roots: Vec<String> = readable_roots(home, &hidden)
            .iter()
            .map(|p| p.strip_prefix(home).unwrap().display().to_string())
            .collect();
        roots.sort();
        assert_eq!(roots, [".config/nvim", "notes.txt"]);
        assert_eq!(
            readable_roots(Path::new("/usr"), &hidden),
            [PathBuf::from("/usr")]
        );
    }

    #[test]
    fn the_launcher_argv_carries_the_policy() {
        let policy = Policy {
            readable: vec!["/p".into()],
            writable: vec!["/p/.factory/worktrees/exp-001".into()],
            hidden: vec!["/home/me/.ssh".into()],
            network: Network::None,
        };
        let (program, argv) = args(
            Path::new("/usr/bin/factory"),
            &policy,
            Path::new("/p"),
            "cargo",
            &["test".into()],
        );
        insta::assert_snapshot!(format!("{program} {}", argv.join(" ")), @"/usr/bin/factory __confine --write /p/.factory/worktrees/exp-001 --hide /home/me/.ssh --no-network --chdir /p -- cargo test");
    }
}
