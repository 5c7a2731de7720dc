//! The agent-CLI runners as a user meets them: `factory runners`, the default runner,
//! a missing binary, a dry run, a (fake) CLI's event stream turned into the review and
//! the usage in `events.jsonl`, and usage summed per run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{Project, text};
use assert_cmd::Command;
use serde_json::Value;

/// Credentials the runners look for: removed so each test decides.
const SECRETS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CONFIG_DIR",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "CODEX_HOME",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "XDG_DATA_HOME",
    "FACTORY_RUNNER",
    "FACTORY_AGENT_CMD",
    "FACTORY_REPLAY_SCRIPT",
    "FACTORY_RUN_ID",
];

const STREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/runtime/tests/fixtures/runners/claude-success.jsonl"
);

/// A directory to be the whole `PATH`, holding the given fake CLIs (name, script body).
fn bin_dir(fakes: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in fakes {
        let path = dir.path().join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// `factory` in `dir` with `path` as the whole PATH and a private HOME.
fn factory(dir: &Path, path: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").unwrap();
    cmd.current_dir(dir)
        .env("FACTORY_HOME", dir.join(".home"))
        .env("HOME", dir.join(".home"))
        .env("PATH", path);
    for k in SECRETS {
        cmd.env_remove(k);
    }
    cmd
}

fn events(dir: &Path) -> Vec<Value> {
    fs::read_to_string(dir.join(".factory/events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Both streams, with miette's line wrapping undone (words joined by one space).
fn out_text(o: &std::process::Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
        .split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn factory_runners_lists_found_version_and_auth_shape_only() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = bin_dir(&[(
        "claude",
        "[ \"$1\" = --version ] && echo '9.9.9 (Claude Code)'",
    )]);
    let out = factory(tmp.path(), bin.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-api03-TOPSECRETVALUE")
        .arg("runners")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", out_text(&out));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("claude    found"), "{stdout}");
    assert!(lines[0].contains("9.9.9 (Claude Code)"), "{stdout}");
    assert!(lines[0].contains("auth: ANTHROPIC_API_KEY set"), "{stdout}");
    assert!(lines[0].contains("(default)"), "{stdout}");
    assert!(lines[1].starts_with("codex     not found"), "{stdout}");
    assert!(
        lines[1].contains("auth: not set (OPENAI_API_KEY or a login)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("TOPSECRET") && !stdout.contains("sk-ant"),
        "{stdout}"
    );

    // A login file counts, shown by its path.
    let home = tmp.path().join(".home");
    fs::create_dir_all(home.join(".gemini")).unwrap();
    fs::write(
        home.join(".gemini/oauth_creds.json"),
        "{\"token\":\"TOPSECRET\"}",
    )
    .unwrap();
    let out = factory(tmp.path(), bin.path())
        .args(["runners", "--json"])
        .output()
        .unwrap();
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gemini = &all.as_array().unwrap()[3];
    assert_eq!(gemini["name"], "gemini");
    assert_eq!(gemini["path"], Value::Null);
    assert_eq!(gemini["authenticated"], true);
    assert!(
        gemini["auth"]
            .as_str()
            .unwrap()
            .starts_with("login file found ("),
        "{gemini}"
    );
    assert!(!text(&out.stdout).contains("TOPSECRET"));
}

#[test]
fn a_missing_runner_binary_names_it_and_the_runners_found() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let with_claude = bin_dir(&[("claude", "exit 0")]);
    let out = p
        .command(&["run", "improve", "--runner", "codex"])
        .env("PATH", with_claude.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", out_text(&out));
    let t = out_text(&out);
    assert!(
        t.contains("the codex runner needs `codex`, which is not on PATH"),
        "{t}"
    );
    assert!(t.contains("runners found on PATH: claude"), "{t}");
    assert!(t.contains("--runner claude"), "{t}");

    let empty = bin_dir(&[]);
    let out = p
        .command(&["run", "improve", "--runner", "codex"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let t = out_text(&out);
    assert!(t.contains("no agent CLI is on PATH"), "{t}");
    assert!(t.contains("npm install -g @openai/codex"), "{t}");
    assert!(t.contains("--runner replay --script FILE"), "{t}");
    assert!(
        !p.path().join(".factory/state/run.json").exists(),
        "no run was started"
    );

    // No runner named and none on PATH: how to install or pick one.
    let out = factory(p.path(), empty.path())
        .args(["agent", "builder"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let t = out_text(&out);
    assert!(
        t.contains("none of claude, codex, opencode, gemini is on PATH"),
        "{t}"
    );
    assert!(
        t.contains("npm install -g @anthropic-ai/claude-code"),
        "{t}"
    );
    assert!(t.contains("--runner exec"), "{t}");
}

#[test]
fn a_dry_run_spawns_nothing_and_logs_zero_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = bin_dir(&[]);
    let out = factory(tmp.path(), empty.path())
        .env("FACTORY_GEMINI_DRY_RUN", "1")
        .args([
            "agent",
            "builder",
            "--runner",
            "gemini",
            "--model",
            "gemini-2.5-pro",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", out_text(&out));
    assert!(
        text(&out.stdout).starts_with(
            "[dry run] gemini would run: gemini --output-format stream-json --approval-mode yolo --skip-trust -m gemini-2.5-pro '--prompt="
        ),
        "{}",
        text(&out.stdout)
    );
    let ev = events(tmp.path());
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0]["runner"], "gemini");
    assert_eq!(ev[1]["type"], "agent.completed");
    assert_eq!(
        ev[1]["usage"],
        serde_json::json!({"input_tokens": 0, "output_tokens": 0})
    );
    let review = fs::read_to_string(tmp.path().join(".factory/reviews/builder-latest.md")).unwrap();
    assert!(review.contains("FACTORY_GEMINI_DRY_RUN=1"), "{review}");
}

#[test]
fn the_default_runner_is_the_first_cli_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = bin_dir(&[("gemini", "exit 0"), ("codex", "exit 0")]);
    let out = factory(tmp.path(), bin.path())
        .env("FACTORY_CODEX_DRY_RUN", "1")
        .args(["agent", "builder"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", out_text(&out));
    assert_eq!(events(tmp.path())[0]["runner"], "codex");
}

#[test]
fn a_cli_stream_becomes_progress_review_and_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let argv_file = tmp.path().join("argv.txt");
    let bin = bin_dir(&[(
        "claude",
        &format!(
            "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{}'\nprintf 'IS_SANDBOX=%s\\n' \"$IS_SANDBOX\" >> '{}'\nexec /bin/cat '{STREAM}'",
            argv_file.display(),
            argv_file.display()
        ),
    )]);
    let out = factory(tmp.path(), bin.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args([
            "agent",
            "builder",
            "--runner",
            "claude",
            "--task=-speed up lookups",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", out_text(&out));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("[tool] Bash: cargo bench --bench lookup\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[tool] Edit: /work/project/src/lib.rs\n"),
        "{stdout}"
    );

    let argv = fs::read_to_string(&argv_file).unwrap();
    let args: Vec<&str> = argv.lines().collect();
    assert_eq!(
        &args[..7],
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
            "--"
        ]
    );
    assert!(argv.contains("## Task\n\n-speed up lookups"), "{argv}");
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        assert!(argv.ends_with("IS_SANDBOX=1\n"), "{argv}");
    }

    let review = fs::read_to_string(tmp.path().join(".factory/reviews/builder-latest.md")).unwrap();
    assert_eq!(
        review,
        "## Commits\n- 1a2b3c4 use a HashMap for lookups (1.20 ms -> 0.31 ms)"
    );
    let ev = events(tmp.path());
    assert_eq!(ev[1]["type"], "agent.completed");
    assert_eq!(
        ev[1]["usage"],
        serde_json::json!({
            "input_tokens": 5228, "output_tokens": 812,
            "cache_read_tokens": 30120, "cost_usd": 0.0421
        })
    );
}

#[test]
fn without_credentials_a_cli_runner_refuses_before_starting() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("started");
    let bin = bin_dir(&[("codex", &format!("touch '{}'", marker.display()))]);
    let out = factory(tmp.path(), bin.path())
        .args(["agent", "builder", "--runner", "codex"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", out_text(&out));
    let t = out_text(&out);
    assert!(t.contains("the codex runner has no credentials"), "{t}");
    assert!(t.contains("codex login"), "{t}");
    assert!(!marker.exists(), "the CLI was not started");
    assert!(events(tmp.path()).is_empty());
}

#[test]
fn usage_is_summed_per_run() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let wf = p.path().join("two.fwf");
    fs::write(
        &wf,
        "workflow two {\n    agent first {\n        role: researcher\n    }\n    agent second {\n        role: strategist\n    }\n    flow {\n        start -> first -> second -> end\n    }\n}\n",
    )
    .unwrap();
    let script = p.path().join(".factory/usage.yaml");
    fs::write(
        &script,
        "agents:\n  researcher:\n    - print: found\n      usage: {input_tokens: 100, output_tokens: 10, cost_usd: 0.01}\n  strategist:\n    - print: planned\n      usage: {input_tokens: 200, output_tokens: 20, cache_read_tokens: 5, cost_usd: 0.02}\n",
    )
    .unwrap();
    let out = p.factory(&[
        "run",
        wf.to_str().unwrap(),
        "--runner",
        "replay",
        "--script",
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", out_text(&out));
    assert!(
        text(&out.stdout).contains("  agents used 305 in / 30 out tokens, $0.0300"),
        "{}",
        text(&out.stdout)
    );
    let finished: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e.kind() == "run.finished")
        .collect();
    let json = serde_json::to_value(&finished[0]).unwrap();
    assert_eq!(json["usage"]["input_tokens"], 300);
    assert_eq!(json["usage"]["cache_read_tokens"], 5);
    let runs = p.factory(&["runs"]);
    assert!(
        text(&runs.stdout).contains("305 in / 30 out tokens, $0.0300"),
        "{}",
        text(&runs.stdout)
    );
}

#[test]
fn interactive_hands_the_cli_the_prompt_and_logs_the_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let argv_file = tmp.path().join("argv.txt");
    let bin = bin_dir(&[(
        "gemini",
        &format!(
            "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{}'",
            argv_file.display()
        ),
    )]);
    // No credentials: the person can log in at the terminal.
    let out = factory(tmp.path(), bin.path())
        .args(["agent", "builder", "--runner", "gemini", "--interactive"])
        .args(["--model", "gemini-2.5-pro", "--task", "tidy up"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", out_text(&out));
    let argv = fs::read_to_string(&argv_file).unwrap();
    assert!(
        argv.starts_with("-m\ngemini-2.5-pro\n--prompt-interactive="),
        "{argv}"
    );
    assert!(argv.contains("## Task\n\ntidy up"), "{argv}");
    let ev = events(tmp.path());
    assert_eq!(ev[0]["interactive"], true);
    assert_eq!(ev[1]["type"], "agent.completed");
}
