//! `factory agent` as a user runs it: replay and exec runners, review capture, events,
//! exit codes and setup errors.

use crate::support;

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn factory(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("binary");
    cmd.current_dir(dir)
        .env("FACTORY_HOME", dir.join("home"))
        .env_remove("FACTORY_RUNNER")
        .env_remove("FACTORY_AGENT_CMD")
        .env_remove("FACTORY_REPLAY_SCRIPT");
    cmd
}

fn events(dir: &Path) -> Vec<Value> {
    fs::read_to_string(dir.join(".factory/events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kinds(dir: &Path) -> Vec<String> {
    events(dir)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

const SCRIPT: &str = r###"
agents:
  builder:
    - write: {notes.md: "built\n"}
      run: ["test -f notes.md"]
      print: "## Commits\n- abc faster\n"
  strategist:
    - print: "no plan"
      exit: 3
"###;

#[test]
fn replay_runs_a_role_captures_its_review_and_logs_the_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("replay.yaml"), SCRIPT).unwrap();
    factory(dir)
        .args(["agent", "builder", "--task", "go", "--runner", "replay"])
        .args(["--script", "replay.yaml", "--review-tag", "exp-1"])
        .assert()
        .code(0)
        .stdout("## Commits\n- abc faster\n")
        .stderr(predicate::str::contains("builder-exp-1-latest.md"));
    assert_eq!(fs::read_to_string(dir.join("notes.md")).unwrap(), "built\n");
    assert_eq!(
        fs::read_to_string(dir.join(".factory/reviews/builder-exp-1-latest.md")).unwrap(),
        "## Commits\n- abc faster\n"
    );
    assert_eq!(kinds(dir), ["agent.started", "agent.completed"]);
    let ev = events(dir);
    assert_eq!(ev[0]["invocation_id"], ev[1]["invocation_id"]);
    assert_eq!(ev[0]["role"], "builder");

    // A failing agent: exit 1, the pair closed with agent.failed.
    factory(dir)
        .args(["agent", "strategist", "--runner", "replay", "--script"])
        .arg(dir.join("replay.yaml"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "strategist agent failed (exit code 3)",
        ));
    assert_eq!(kinds(dir)[2..], ["agent.started", "agent.failed"]);

    // A role the script does not cover: named with the script.
    factory(dir)
        .args([
            "agent",
            "ceo",
            "--runner",
            "replay",
            "--script",
            "replay.yaml",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("replay.yaml").and(predicate::str::contains("`ceo`")));
}

#[test]
fn exec_gets_the_resolved_prompt_and_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    factory(dir)
        .args([
            "agent",
            "researcher",
            "--task",
            "find $(touch pwned) caches",
        ])
        .args(["--runner", "exec", "--agent-cmd"])
        .arg("cat > stdin.md; cp {prompt_file} file.md; echo \"role=$FACTORY_ROLE\"")
        .assert()
        .code(0)
        .stdout("role=researcher\n");
    let prompt = fs::read_to_string(dir.join("stdin.md")).unwrap();
    assert_eq!(prompt, fs::read_to_string(dir.join("file.md")).unwrap());
    assert!(
        prompt.contains("## Playbook: researcher"),
        "playbook appended"
    );
    assert!(prompt.contains("## Task\n\nfind $(touch pwned) caches\n"));
    assert!(!dir.join("pwned").exists());
    assert_eq!(
        fs::read_to_string(dir.join(".factory/reviews/researcher-latest.md")).unwrap(),
        "role=researcher\n"
    );
}

#[test]
fn exec_timeout_fails_with_an_agent_timeout_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    factory(dir)
        .args(["agent", "builder", "--timeout", "1", "--runner", "exec"])
        .args(["--agent-cmd", "sleep 30"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ran out of time"));
    assert_eq!(kinds(dir), ["agent.started", "agent.timeout"]);
}

#[test]
fn setup_problems_are_usage_errors_that_name_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // No runner named and no agent CLI on PATH to default to.
    let no_clis = tempfile::tempdir().unwrap();
    factory(dir)
        .env("PATH", no_clis.path())
        .args(["agent", "builder"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--runner exec --agent-cmd"));
    factory(dir)
        .args(["agent", "builder", "--runner", "exec", "--agent-cmd"])
        .arg("no-such-agent-cli-xyz --go {prompt_file}")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("`no-such-agent-cli-xyz`")
                .and(predicate::str::contains("not on PATH"))
                .and(predicate::str::contains("--runner replay --script")),
        );
    // An agent CLI runner whose binary is missing names it.
    factory(dir)
        .env("PATH", no_clis.path())
        .args(["agent", "builder", "--runner", "claude"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the claude runner needs `claude`, which is not on PATH",
        ));
    factory(dir)
        .args(["agent", "nobody", "--runner", "exec", "--agent-cmd", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("known roles: adversarial_tester"));
    factory(dir)
        .args([
            "agent",
            "builder",
            "--runner",
            "exec",
            "--agent-cmd",
            "true",
        ])
        .args(["--model", "big"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not support model selection"));
    factory(dir)
        .args([
            "agent",
            "builder",
            "--runner",
            "replay",
            "--script",
            "missing.yaml",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.yaml"));
    // FACTORY_RUNNER picks the runner when --runner is absent. `echo` never reads the
    // prompt on its stdin: the CLI (SIGPIPE at its default) must survive that.
    factory(dir)
        .env("FACTORY_RUNNER", "exec")
        .env("FACTORY_AGENT_CMD", "echo from-env")
        .args(["agent", "builder"])
        .assert()
        .code(0)
        .stdout("from-env\n");
}

/// `kill -9` of factory takes its agent with it: the agent's shell, the tools it
/// started in the background, everything in its process group.
#[test]
fn an_agent_dies_with_a_killed_factory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut factory = std::process::Command::new(assert_cmd::cargo::cargo_bin("factory"));
    factory
        .current_dir(dir)
        .env("FACTORY_HOME", dir.join("home"))
        .env_remove("FACTORY_RUNNER")
        .env_remove("FACTORY_AGENT_CMD")
        .args(["agent", "builder", "--runner", "exec", "--agent-cmd"])
        // A background tool that would write after factory is gone, and a foreground
        // one that keeps the agent busy; `started` names the agent's shell (its group)
        // and the background tool, written whole once both run.
        .arg("(sleep 2; touch late.txt) & echo \"$$ $!\" > started.tmp && mv started.tmp started; sleep 30")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = factory.spawn().unwrap();
    let started = dir.join("started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pids: Vec<i32> = fs::read_to_string(&started)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let (agent, background) = (pids[0], pids[1]);
    child.kill().unwrap(); // SIGKILL: no destructor, no handler runs in factory
    child.wait().unwrap();
    // SAFETY: signal 0 only asks whether the group, or the process, still exists.
    let gone = || unsafe { libc::killpg(agent, 0) != 0 && libc::kill(background, 0) != 0 };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !gone() {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent's process group outlived factory"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The background tool is dead well before its `touch`: nothing can write it now.
    assert!(
        !dir.join("late.txt").exists(),
        "the agent's background tool wrote after factory died"
    );
}

/// One rule for where a role's prompt is: what `factory check` accepts, `factory agent`
/// runs — a project `prompts/` file, and one in `$FACTORY_HOME/agents/prompts/`.
#[test]
fn check_and_agent_find_the_same_role_prompts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::create_dir_all(dir.join("prompts")).unwrap();
    fs::write(dir.join("prompts/poet.md"), "# Poet\n\nYou write verse.\n").unwrap();
    fs::create_dir_all(dir.join("home/agents/prompts")).unwrap();
    fs::write(
        dir.join("home/agents/prompts/sage.md"),
        "# Sage\n\nYou advise.\n",
    )
    .unwrap();
    fs::write(
        dir.join("w.fwf"),
        "workflow w {\n    agent a { role: poet }\n    agent b { role: sage }\n    flow {\n        start -> a -> b -> end\n    }\n}\n",
    )
    .unwrap();
    factory(dir).args(["check", "w.fwf"]).assert().code(0);
    for role in ["poet", "sage"] {
        factory(dir)
            .args(["agent", role, "--runner", "exec", "--agent-cmd"])
            .arg("cat {prompt_file} > seen.md")
            .assert()
            .code(0);
        let seen = fs::read_to_string(dir.join("seen.md")).unwrap();
        assert!(
            seen.contains("You write verse.") || seen.contains("You advise."),
            "{seen}"
        );
    }
    // A role neither knows is refused by both, with the same places named.
    fs::write(
        dir.join("w.fwf"),
        "workflow w {\n    agent a { role: bard }\n    flow {\n        start -> a -> end\n    }\n}\n",
    )
    .unwrap();
    factory(dir)
        .args(["check", "w.fwf"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("$FACTORY_HOME/agents/prompts/bard.md")
                .or(predicate::str::contains("agents/prompts/bard.md")),
        );
    factory(dir)
        .args(["agent", "bard", "--runner", "exec", "--agent-cmd", "true"])
        .assert()
        .code(2);
}

/// A step run by hand (as an exported SKILL.md runs it) gets what the executor gives a
/// node: the files to read in its task, the files to write in its prompt, resolved as
/// the executor resolves them (`.factory/` in the project, the rest in the
/// experiment's worktree); what it wrote is kept in the experiment's evidence under the
/// node, and a file it left unwritten exits 1, naming it.
#[test]
fn a_step_run_by_hand_reads_and_writes_what_its_node_declares() {
    let target = tempfile::tempdir().unwrap();
    let p = support::Project::committed(target.path());
    assert!(
        p.factory(&["begin", "--hypothesis", "notes"])
            .status
            .success()
    );
    let worktree = p.path().join(".factory/worktrees/exp-001");
    assert!(worktree.is_dir());
    let prompt_copy = target.path().join("prompt.md");
    let agent = format!(
        "cp {{prompt_file}} {}; echo 'the notes' > notes.md; echo '## Commits'",
        prompt_copy.display()
    );
    let step = |extra: &[&str]| {
        let mut args = vec![
            "agent",
            "builder",
            "--exp",
            "1",
            "--node",
            "experiment.trial.builder",
            "--reads",
            ".factory/strategy/current.md",
            "--writes",
            ".factory/reviews/builder-latest.md",
            "--writes",
            "notes.md",
            "--task",
            "Implement the plan.",
            "--runner",
            "exec",
            "--agent-cmd",
            &agent,
        ];
        args.extend_from_slice(extra);
        p.factory(&args)
    };
    let out = step(&[]);
    assert!(out.status.success(), "{}", support::output(&out));
    let prompt = fs::read_to_string(&prompt_copy).unwrap();
    let read = p.path().join(".factory/strategy/current.md");
    assert!(
        prompt.contains(&format!("Read:\n- {}\n", read.display())),
        "{prompt}"
    );
    assert!(prompt.contains("## Write these files"), "{prompt}");
    for written in [
        p.path().join(".factory/reviews/builder-latest.md"),
        worktree.join("notes.md"),
    ] {
        assert!(
            prompt.contains(&format!("- {}\n", written.display())),
            "{prompt}"
        );
    }
    assert!(
        prompt.contains("- Node: `experiment.trial.builder`, visit 1"),
        "{prompt}"
    );
    let evidence =
        fs::read_to_string(p.path().join(".factory/experiments/001/evidence.jsonl")).unwrap();
    let kept: Vec<Value> = evidence
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let paths: Vec<&str> = kept.iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [".factory/reviews/builder-latest.md", "notes.md"]);
    assert!(
        kept.iter()
            .all(|e| e["node"] == "experiment.trial.builder" && e["visit"] == 1)
    );

    // Run again, with a file it does not write: exit 1, naming it; its next visit.
    let out = step(&["--writes", "missing.md"]);
    assert_eq!(out.status.code(), Some(1), "{}", support::output(&out));
    let said = support::output(&out);
    assert!(
        said.contains("without writing") && said.contains("missing.md"),
        "{said}"
    );
    let evidence =
        fs::read_to_string(p.path().join(".factory/experiments/001/evidence.jsonl")).unwrap();
    assert!(evidence.contains("\"visit\":2"), "{evidence}");

    // A checkpoint by hand: its verdict file is the project's, in full, as a gate's
    // agent is told it; one written relative to the worktree is not it, and the error
    // says where it was expected.
    let verdict = p.path().join(".factory/reviews/ceo-verdict-build.md");
    let gate = |cmd: &str| {
        p.factory(&[
            "agent",
            "ceo",
            "--exp",
            "1",
            "--node",
            "experiment.trial.review",
            "--verdict",
            ".factory/reviews/ceo-verdict-build.md",
            "--task",
            "Review checkpoint experiment.trial.review: Is it good?",
            "--runner",
            "exec",
            "--agent-cmd",
            cmd,
        ])
    };
    let misplaced = gate(
        "mkdir -p .factory/reviews && printf '## Verdict\\nPROCEED\\n' > .factory/reviews/ceo-verdict-build.md",
    );
    assert_eq!(
        misplaced.status.code(),
        Some(1),
        "{}",
        support::output(&misplaced)
    );
    let said = support::output(&misplaced).replace('\n', " ");
    assert!(said.contains("without writing"), "{said}");
    assert!(!verdict.exists());
    let placed = gate(&format!(
        "cp {{prompt_file}} {}; printf '## Verdict\\nPROCEED\\n' > \"$FACTORY_VERDICT_FILE\"",
        prompt_copy.display()
    ));
    assert!(placed.status.success(), "{}", support::output(&placed));
    assert!(fs::read_to_string(&verdict).unwrap().contains("PROCEED"));
    let prompt = fs::read_to_string(&prompt_copy).unwrap();
    assert!(
        prompt.contains("## Verdict file") && prompt.contains(&verdict.display().to_string()),
        "{prompt}"
    );
    let evidence =
        fs::read_to_string(p.path().join(".factory/experiments/001/evidence.jsonl")).unwrap();
    assert!(
        evidence.contains("\"node\":\"experiment.trial.review\"")
            && evidence.contains("ceo-verdict-build.md"),
        "{evidence}"
    );
}
