//! Every example in docs/cli.md runs as documented. Each ```sh block carries a marker
//! comment on the line above it (the convention is described at the top of the page):
//! `<!-- docs-test: exit=N -->`, optionally with `setup: SHELL` run first, or
//! `<!-- docs-test: skip: REASON -->`. A block without a marker fails this test, so a new
//! example is either run or explicitly excused.
//!
//! The commands of one `## ` section run in order in one sandbox: a fresh git copy of
//! examples/demo, with the built `factory` first on PATH and FACTORY_HOME, TMPDIR and
//! CARGO_TARGET_DIR in temp dirs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// One fenced ```sh block and what its marker asks.
#[derive(Debug)]
struct Example {
    section: String,
    line: usize,
    marker: Marker,
    commands: Vec<String>,
}

#[derive(Debug)]
enum Marker {
    Run { exit: i32, setup: Option<String> },
    Skip,
    Missing,
    Bad(String),
}

fn parse_marker(line: &str) -> Marker {
    let Some(body) = line
        .trim()
        .strip_prefix("<!-- docs-test:")
        .and_then(|r| r.strip_suffix("-->"))
    else {
        return Marker::Missing;
    };
    let body = body.trim();
    if let Some(reason) = body.strip_prefix("skip:") {
        return if reason.trim().is_empty() {
            Marker::Bad("a skip needs a reason".into())
        } else {
            Marker::Skip
        };
    }
    let (head, setup) = match body.split_once("setup:") {
        Some((h, s)) => (h.trim(), Some(s.trim().to_string())),
        None => (body, None),
    };
    match head.strip_prefix("exit=").map(str::parse::<i32>) {
        Some(Ok(exit)) => Marker::Run { exit, setup },
        _ => Marker::Bad(format!(
            "expected `exit=N [setup: ...]` or `skip: REASON`, got `{body}`"
        )),
    }
}

/// The commands of a block: `$ `-prefixed lines when there are any (the rest is
/// output), else every line that is not blank or a comment; `\` continues a line.
fn commands(body: &[&str]) -> Vec<String> {
    let prompted = body.iter().any(|l| l.starts_with("$ "));
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in body {
        if let Some(mut cmd) = pending.take() {
            cmd.push('\n');
            cmd.push_str(line);
            if line.ends_with('\\') {
                pending = Some(cmd);
            } else {
                out.push(cmd);
            }
            continue;
        }
        let cmd = if prompted {
            match line.strip_prefix("$ ") {
                Some(c) => c,
                None => continue,
            }
        } else if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        } else {
            line
        };
        if cmd.ends_with('\\') {
            pending = Some(cmd.to_string());
        } else {
            out.push(cmd.to_string());
        }
    }
    out
}

fn examples(doc: &str) -> Vec<Example> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut section = String::from("(top)");
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(h) = line.strip_prefix("## ") {
            section = h.to_string();
        }
        if line.trim() == "```sh" {
            let marker = if i > 0 {
                parse_marker(lines[i - 1])
            } else {
                Marker::Missing
            };
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && lines[end].trim() != "```" {
                end += 1;
            }
            out.push(Example {
                section: section.clone(),
                line: i + 1,
                marker,
                commands: commands(&lines[start..end]),
            });
            i = end;
        }
        i += 1;
    }
    out
}

/// A fresh git repository holding examples/demo, and the dirs its commands use.
struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        copy_dir(&Path::new(REPO).join("examples/demo"), &project);
        for dir in ["home", "tmp", "target"] {
            fs::create_dir(root.path().join(dir)).unwrap();
        }
        let s = Sandbox { root };
        for git in ["git init -q -b main", "git add -A", "git commit -q -m demo"] {
            let (code, out) = s.sh(git);
            assert_eq!(code, 0, "{git}: {out}");
        }
        s
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// Runs `script` with bash (pipefail) in the project; the exit code and all output.
    fn sh(&self, script: &str) -> (i32, String) {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_factory"));
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", script])
            .current_dir(self.project())
            .env("PATH", path)
            .env("REPO", REPO)
            .env("FACTORY_HOME", self.root.path().join("home"))
            .env("TMPDIR", self.root.path().join("tmp"))
            .env("CARGO_TARGET_DIR", self.root.path().join("target"))
            .env("GIT_AUTHOR_NAME", "docs")
            .env("GIT_AUTHOR_EMAIL", "docs@example.invalid")
            .env("GIT_COMMITTER_NAME", "docs")
            .env("GIT_COMMITTER_EMAIL", "docs@example.invalid")
            .env_remove("FACTORY_RUNNER")
            .env_remove("FACTORY_AGENT_CMD")
            .env_remove("FACTORY_REPLAY_SCRIPT")
            .env_remove("FACTORY_PROFILE")
            .output()
            .expect("bash runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

#[test]
fn every_example_in_cli_md_is_marked() {
    let doc = fs::read_to_string(Path::new(REPO).join("docs/cli.md")).unwrap();
    let all = examples(&doc);
    assert!(all.len() > 20, "found only {} examples", all.len());
    let problems: Vec<String> = all
        .iter()
        .filter_map(|e| match &e.marker {
            Marker::Missing => Some(format!(
                "docs/cli.md:{}: a ```sh block without a `<!-- docs-test: ... -->` line above it",
                e.line
            )),
            Marker::Bad(why) => Some(format!("docs/cli.md:{}: {why}", e.line)),
            Marker::Run { .. } if e.commands.is_empty() => Some(format!(
                "docs/cli.md:{}: a tested block with no command",
                e.line
            )),
            _ => None,
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_runnable_example_in_cli_md_exits_as_documented() {
    let doc = fs::read_to_string(Path::new(REPO).join("docs/cli.md")).unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut sandbox: Option<(String, Sandbox)> = None;
    for e in examples(&doc) {
        let Marker::Run { exit, setup } = &e.marker else {
            continue;
        };
        if sandbox.as_ref().is_none_or(|(s, _)| *s != e.section) {
            sandbox = Some((e.section.clone(), Sandbox::new()));
        }
        let Some((_, sb)) = &sandbox else {
            unreachable!("set above")
        };
        if let Some(setup) = setup {
            let (code, out) = sb.sh(setup);
            if code != 0 {
                failures.push(format!(
                    "docs/cli.md:{} setup `{setup}` exited {code}:\n{out}",
                    e.line
                ));
                continue;
            }
        }
        for cmd in &e.commands {
            ran += 1;
            let (code, out) = sb.sh(cmd);
            if code != *exit {
                failures.push(format!(
                    "docs/cli.md:{} ({}): `{cmd}` exited {code}, documented {exit}:\n{out}",
                    e.line, e.section
                ));
            }
        }
    }
    assert!(ran > 20, "ran only {ran} example commands");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_marker_and_command_parsers_read_the_convention() {
    assert!(matches!(
        parse_marker("<!-- docs-test: exit=2 setup: mkdir x -->"),
        Marker::Run { exit: 2, setup: Some(s) } if s == "mkdir x"
    ));
    assert!(matches!(
        parse_marker("<!-- docs-test: skip: needs an agent -->"),
        Marker::Skip
    ));
    assert!(matches!(
        parse_marker("<!-- docs-test: skip: -->"),
        Marker::Bad(_)
    ));
    assert!(matches!(
        parse_marker("<!-- docs-test: exit=x -->"),
        Marker::Bad(_)
    ));
    assert!(matches!(parse_marker("text"), Marker::Missing));
    assert_eq!(
        commands(&["$ factory a \\", "    --b", "output", "$ factory c"]),
        ["factory a \\\n    --b", "factory c"]
    );
    assert_eq!(
        commands(&["# comment", "factory x   # note", "", "factory y"]),
        ["factory x   # note", "factory y"]
    );
}
