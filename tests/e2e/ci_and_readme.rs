//! The README's set-up and "Try the compiler" lines work as written and leave the
//! repository alone; `.ci/run` stops before its first step, saying why, when a tool it
//! needs is missing and cannot be installed, and never hides a failed `rustup`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn readme() -> String {
    fs::read_to_string(Path::new(REPO).join("README.md")).unwrap()
}

/// The lines of the first ```sh block after `heading_text`.
fn sh_block_after(text: &str, heading_text: &str) -> Vec<String> {
    let start = text.find(heading_text).expect("the README has the section");
    text[start..]
        .lines()
        .skip_while(|l| l.trim() != "```sh")
        .skip(1)
        .take_while(|l| l.trim() != "```")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_says_how_to_put_factory_on_path() {
    let text = readme();
    let setup = sh_block_after(&text, "# factory");
    assert!(
        setup
            .iter()
            // `--locked`: the dependency versions CI tested, not the newest ones.
            .any(|l| l.starts_with("cargo install --locked --path .")),
        "{setup:?}"
    );
    // Every command after the install uses the installed binary: `cargo run` (a debug
    // build of its own) appears in no example.
    assert!(
        !text.contains("cargo run"),
        "the README still uses `cargo run`"
    );
}

#[test]
fn the_try_the_compiler_lines_run_and_write_nothing_into_the_repository() {
    let lines = sh_block_after(&readme(), "Try the compiler");
    assert_eq!(lines.len(), 4, "{lines:?}");
    let tmp = tempfile::tempdir().unwrap();
    let stray = Path::new(REPO).join("improve.fwir");
    let existed = stray.exists();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_factory"));
    let out = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", &lines.join("\n")])
        .current_dir(REPO)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("TMPDIR", tmp.path())
        .env("FACTORY_HOME", tmp.path().join("home"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("flowchart TD"), "{text}");
    assert!(text.ends_with("the same text, byte for byte\n"), "{text}");
    assert!(tmp.path().join("improve.fwir").is_file());
    assert_eq!(
        stray.exists(),
        existed,
        "improve.fwir left in the repository root"
    );
}

/// A directory to be the whole PATH of `.ci/run`: bash and dirname, plus `fakes`
/// (name, shell body) as executables. A fake that is asked to run a real step (not a
/// `--version` probe) leaves the file `step-ran` behind.
fn path_with(fakes: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for tool in ["bash", "dirname"] {
        let real = which(tool);
        std::os::unix::fs::symlink(real, dir.path().join(tool)).unwrap();
    }
    for (name, body) in fakes {
        let path = dir.path().join(name);
        fs::write(
            &path,
            format!(
                "#!/bin/sh\nmark='{}/step-ran'\n{body}\n",
                dir.path().display()
            ),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

fn which(tool: &str) -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn ci_run(path: &Path) -> Output {
    Command::new(path.join("bash"))
        .arg(Path::new(REPO).join(".ci/run"))
        .env_clear()
        .env("PATH", path)
        .output()
        .unwrap()
}

/// cargo with fmt and clippy present; any other use is a step.
const CARGO_OK: &str =
    r#"case "$1 $2" in "fmt --version"|"clippy --version") exit 0;; esac; : > "$mark""#;

#[test]
fn ci_run_stops_before_any_step_when_node_is_missing_and_apt_get_is_too() {
    let path = path_with(&[("cargo", CARGO_OK), ("go", "exit 0"), ("python3", "exit 0")]);
    let out = ci_run(path.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(".ci/run: node not found; installing nodejs with apt-get"),
        "{err}"
    );
    assert!(
        err.contains(".ci/run: apt-get is not available to install nodejs; install it yourself"),
        "{err}"
    );
    assert!(!path.path().join("step-ran").exists(), "a step ran first");
}

#[test]
fn ci_run_shows_a_failed_rustup_component_add_and_stops() {
    let path = path_with(&[
        (
            "cargo",
            r#"case "$1" in fmt|clippy) exit 1;; esac; : > "$mark""#,
        ),
        (
            "rustup",
            "echo 'error: could not download component rustfmt: network unreachable' >&2; exit 1",
        ),
    ]);
    let out = ci_run(path.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: could not download component rustfmt: network unreachable"),
        "{err}"
    );
    assert!(
        err.contains(".ci/run: rustup could not add rustfmt and clippy"),
        "{err}"
    );
    assert!(!path.path().join("step-ran").exists(), "a step ran first");
}
