//! A run killed with SIGKILL at any point and finished by `factory resume` ends with the
//! same verdict as an uninterrupted run, and leaves no duplicate experiment ids, results
//! rows, journal entries or agent event pairs.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::process::Stdio;
use std::time::Instant;

use crate::support::{Project, WORKFLOW, script};
use serde_json::Value;

/// Kill points of the kill/resume test: 8 in the default suite, 20 with
/// `FACTORY_TEST_FULL=1` (the full form, for a change to the executor or the store).
fn kills() -> usize {
    if std::env::var_os("FACTORY_TEST_FULL").is_some_and(|v| v == "1") {
        20
    } else {
        8
    }
}
const THREADS: usize = 4;

fn start(p: &Project, script_path: &str) -> std::process::Child {
    start_workflow(p, WORKFLOW, script_path)
}

/// `factory run WORKFLOW` on a replay script, in the background, its output dropped.
fn start_workflow(p: &Project, workflow: &str, script_path: &str) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(p.path())
        // The same home as `p.factory(["resume"])`: the event log's key lives there.
        .env("FACTORY_HOME", p.home())
        .env("CARGO_TARGET_DIR", p.target())
        .env_remove("FACTORY_RUN_ID")
        .args([
            "run",
            workflow,
            "--runner",
            "replay",
            "--script",
            script_path,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn write_script(p: &Project) -> String {
    let path = p.path().join(".factory/script.yaml");
    fs::write(&path, script(&[])).unwrap();
    path.to_str().unwrap().to_string()
}

/// Everything that must hold once the run is done, whatever killed it on the way.
fn assert_consistent(p: &Project, label: &str) {
    let rows = p.results();
    assert_eq!(rows.len(), 1, "{label}: one results row: {rows:?}");
    assert_eq!(rows[0]["verdict"], "keep", "{label}");
    assert_eq!(rows[0]["id"], "1", "{label}: one experiment id");
    let dirs: Vec<String> = fs::read_dir(p.path().join(".factory/experiments"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(dirs, ["001"], "{label}: no second experiment was begun");
    let events = p.events();
    let mut pairs: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for e in &events {
        let Some(id) = e
            .get("invocation")
            .or_else(|| e.get("invocation_id"))
            .and_then(|v| v.as_str().map(str::to_string))
        else {
            continue;
        };
        let entry = pairs.entry(id).or_default();
        if e.kind() == "agent.started" {
            entry.0 += 1;
        } else if e.kind().starts_with("agent.") {
            entry.1 += 1;
        }
    }
    assert!(
        !pairs.is_empty(),
        "{label}: agent events carry an invocation id"
    );
    for (id, (started, terminal)) in &pairs {
        assert_eq!((*started, *terminal), (1, 1), "{label}: invocation {id}");
    }
    let mut seqs: Vec<u64> = events
        .iter()
        .filter(|e| e.kind() == "node.finished" || e.kind() == "run.started")
        .filter_map(|e| e.get("seq").as_ref().and_then(Value::as_u64))
        .collect();
    let n = seqs.len();
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), n, "{label}: no journal entry was written twice");
    assert_eq!(
        events.iter().filter(|e| e.kind() == "run.finished").count(),
        1,
        "{label}"
    );
}

#[test]
fn a_run_killed_anywhere_is_finished_by_resume_with_the_same_verdict() {
    // The reference: one uninterrupted run, timed.
    let target = tempfile::tempdir().unwrap();
    let reference = Project::demo(target.path());
    let path = write_script(&reference);
    let began = Instant::now();
    let status = start(&reference, &path).wait().unwrap();
    let full = began.elapsed();
    assert!(status.success());
    assert_consistent(&reference, "uninterrupted");

    // Kill points spread over the whole run, a few trials per thread.
    let resumed = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let resumed = resumed.clone();
            std::thread::spawn(move || {
                let target = tempfile::tempdir().unwrap();
                for k in (t..kills()).step_by(THREADS) {
                    let p = Project::demo(target.path());
                    let path = write_script(&p);
                    let at = full.mul_f64((k as f64 + 0.5) / kills() as f64);
                    let mut child = start(&p, &path);
                    std::thread::sleep(at);
                    let _ = child.kill(); // SIGKILL
                    let _ = child.wait();
                    let label = format!("killed at {at:?} of {full:?}");
                    let finished =
                        std::fs::read_to_string(p.path().join(".factory/state/run.json"))
                            .map(|t| t.contains("\"finished\": true"))
                            .unwrap_or(false);
                    let checkpointed = p.path().join(".factory/state/run.json").exists();
                    if !checkpointed {
                        // Killed before the run's first checkpoint: nothing had started.
                        let out = p.factory(&["resume"]);
                        assert!(String::from_utf8_lossy(&out.stderr).contains("no run to resume"));
                        assert!(start(&p, &path).wait().unwrap().success(), "{label}");
                    } else if !finished {
                        resumed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let out = p.factory(&["resume"]);
                        assert!(
                            out.status.success(),
                            "{label}: resume failed:\n{}\n{}",
                            String::from_utf8_lossy(&out.stdout),
                            String::from_utf8_lossy(&out.stderr)
                        );
                    }
                    assert_consistent(&p, &label);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Most kills must land mid-run, or this test would prove little.
    let resumed = resumed.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        resumed >= kills() / 2,
        "only {resumed} of {} kills left a run to resume",
        kills()
    );
}

/// After SIGKILL, `factory runs` says the run was killed, how far its journal got, and
/// how to continue; the mode is named as the user named it.
#[test]
fn factory_runs_names_a_killed_run_and_how_far_it_got() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let path = p.path().join(".factory/script.yaml");
    // The builder takes its time, so the kill lands while it works.
    let slow = script(&[]).replacen(
        "  builder:\n    - ",
        "  builder:\n    - sleep_ms: 3000\n      ",
        1,
    );
    fs::write(&path, slow).unwrap();
    let mut child = start_workflow(&p, "improve", path.to_str().unwrap());
    let started = Instant::now();
    while !fs::read_to_string(p.path().join(".factory/events.jsonl"))
        .unwrap_or_default()
        .contains("\"agent.started\",\"timestamp\"")
        || !fs::read_to_string(p.path().join(".factory/events.jsonl"))
            .unwrap_or_default()
            .contains("experiment.trial.builder")
    {
        assert!(
            started.elapsed().as_secs() < 60,
            "the builder never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let runs = support::text(&p.factory(&["runs"]).stdout);
    let line = runs.lines().next().unwrap_or_default().to_string();
    assert!(line.contains(" improve "), "the mode as named: {runs}");
    assert!(line.contains(" killed "), "{runs}");
    assert!(
        !line.contains("   0 nodes"),
        "the journal's nodes are counted: {runs}"
    );
    assert!(runs.contains("`factory resume` continues it"), "{runs}");
    let resumed = p.factory(&["resume"]);
    assert!(
        resumed.status.success(),
        "{}",
        support::text(&resumed.stdout)
    );
    let runs = support::text(&p.factory(&["runs"]).stdout);
    assert!(runs.contains(" completed "), "{runs}");
    assert!(!runs.contains("killed"), "{runs}");
}

/// The demo's script with its builder failing on the first visit, as an agent CLI does
/// when its API is briefly unavailable.
fn builder_fails_once() -> String {
    script(&[]).replacen(
        "  builder:\n    - ",
        "  builder:\n    - exit: 1\n      print: \"API overloaded, try again later\"\n    - ",
        1,
    )
}

/// An agent that fails (its CLI exits non-zero) leaves nothing judged: the run fails,
/// its experiment stays open with its worktree, and `factory resume` runs that agent
/// again and carries the run to its verdict.
#[test]
fn a_run_its_agent_failure_ended_is_finished_by_resume() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let out = p.run_workflow("improve", &builder_fails_once());
    let text = support::output(&out);
    assert_eq!(out.status.code(), Some(1), "the run failed:\n{text}");
    assert!(
        text.contains("FAILED at experiment.trial.builder"),
        "{text}"
    );
    assert!(
        text.contains("experiment 1 stays open")
            && text.contains("`factory resume --project")
            && text.contains("runs it again"),
        "{text}"
    );
    assert!(
        p.results().is_empty(),
        "no verdict was recorded: {:?}",
        p.results()
    );
    assert!(
        p.branches().contains("factory/exp-001"),
        "the experiment's branch is kept: {:?}",
        p.branches()
    );
    // The journal records the failure as data: its kind, its text, that it may be retried.
    let failed: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e.kind() == "node.finished")
        .filter_map(|e| e.get("result"))
        .filter(|r| r["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["failure"]["kind"], "agent_run", "{:?}", failed[0]);
    assert_eq!(failed[0]["retryable"], true, "{:?}", failed[0]);
    assert!(
        failed[0]["reason"]
            .as_str()
            .is_some_and(|r| r == failed[0]["failure"]["message"]),
        "{:?}",
        failed[0]
    );
    let runs = support::text(&p.factory(&["runs"]).stdout);
    assert!(
        runs.contains("`factory resume` runs it again"),
        "factory runs offers the resume: {runs}"
    );

    let out = p.factory(&["resume"]);
    let text = support::output(&out);
    assert!(out.status.success(), "resume carried it to a keep:\n{text}");
    assert!(text.contains("experiment 1: keep"), "{text}");
    let rows = p.results();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["id"].as_str(), rows[0]["verdict"].as_str()),
        ("1", "keep")
    );
    // The retry is journaled, so a later resume replays it rather than losing it.
    let retried: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e.kind() == "run.resumed" && e.get("retry_seq").is_some())
        .collect();
    assert_eq!(retried.len(), 1, "one journaled retry");
    let builders = p
        .events()
        .into_iter()
        .filter(|e| {
            e.kind() == "node.started"
                && e.get("node")
                    .and_then(|v| v.as_str().map(str::to_string))
                    .as_deref()
                    == Some("experiment.trial.builder")
        })
        .count();
    assert_eq!(
        builders, 2,
        "the builder ran twice: the failed visit and the retry"
    );
    assert!(
        !support::text(&p.factory(&["runs"]).stdout).contains("runs it again"),
        "once resumed, no resume is offered"
    );
}

/// A run its agent's failure ended that is not resumed does not hold its experiment
/// forever: the next run records it as `error`, saying why, and a resume of the old
/// run is no longer offered. One closed by hand is not resumed either.
#[test]
fn an_unresumed_failed_run_is_closed_by_the_next_run() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    assert_eq!(
        p.run_workflow("improve", &builder_fails_once())
            .status
            .code(),
        Some(1)
    );
    let out = p.run_workflow("improve", &script(&[]));
    let text = support::output(&out);
    assert!(out.status.success(), "{text}");
    let rows = p.results();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (rows[0]["id"].as_str(), rows[0]["verdict"].as_str()),
        ("1", "error")
    );
    assert!(
        rows[0]["notes"].contains("stopped at experiment.trial.builder")
            && rows[0]["notes"].contains("not resumed; run "),
        "{:?}",
        rows[0]["notes"]
    );
    assert_eq!(
        (rows[1]["id"].as_str(), rows[1]["verdict"].as_str()),
        ("2", "keep")
    );
    let runs = support::text(&p.factory(&["runs"]).stdout);
    assert!(!runs.contains("runs it again"), "{runs}");

    // Closed by hand: resume refuses rather than reopening a judged experiment.
    let q = Project::demo(target.path());
    assert_eq!(
        q.run_workflow("improve", &builder_fails_once())
            .status
            .code(),
        Some(1)
    );
    let closed = q.factory(&["finalize", "--id", "1", "--verdict", "error"]);
    assert!(closed.status.success(), "{}", support::output(&closed));
    let out = q.factory(&["resume"]);
    let text = support::output(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("already"), "{text}");
}

/// Only the project's own run is resumed: a run a node starts (`factory run` inside a
/// mode) whose agent fails settles its experiment as `error` at once instead of leaving
/// it open for a resume that cannot come, and says nothing about resuming.
#[test]
fn a_nested_run_its_agent_failure_ended_settles_its_experiment() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    fs::write(
        p.path().join("inner.fwf"),
        "workflow inner {\n    fn begin \"factory begin {{project_path}} --hypothesis nested\"\n    agent build {\n        role: builder\n    }\n    flow {\n        start -> begin -> build -> end\n    }\n}\n",
    )
    .unwrap();
    fs::write(
        p.path().join("failing.yaml"),
        "agents:\n  builder:\n    - exit: 1\n      print: \"API overloaded\"\n",
    )
    .unwrap();
    fs::write(
        p.path().join("outer.fwf"),
        "workflow outer {\n    fn inner \"factory run inner.fwf --runner replay --script failing.yaml\"\n    flow {\n        start -> inner -> end\n    }\n}\n",
    )
    .unwrap();
    let out = p.factory(&["run", "outer.fwf"]);
    let text = support::output(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let rows = p.results();
    assert_eq!(
        rows.len(),
        1,
        "the inner experiment has its verdict: {rows:?}"
    );
    assert_eq!(rows[0]["verdict"], "error", "{rows:?}");
    let runs = support::text(&p.factory(&["runs"]).stdout);
    assert!(!runs.contains("runs it again"), "{runs}");
}
