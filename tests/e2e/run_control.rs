//! Controlling a run: node timeouts, user gates, consecutive agent failures, `--json`,
//! Ctrl-C, stale checkpoints and the respawn cap. Plain-command workflows on the demo.

use std::fs;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::Project;
use serde_json::Value;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn workflow(p: &Project, name: &str, body: &str) -> String {
    let path = p.path().join(format!("{name}.fwf"));
    fs::write(&path, format!("workflow {name} {{\n{body}\n}}\n")).unwrap();
    path.to_str().unwrap().to_string()
}

fn spawn_run(p: &Project, wf: &str) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(p.path())
        .env("FACTORY_HOME", p.path().join(".home"))
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUNNER")
        .args(["run", wf])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_node_timeout_kills_its_whole_process_group() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let marker = p.path().join("survivor");
    // The background child records its pid first, so the test can watch it die.
    let pid_file = p.path().join("bgpid");
    let wf = workflow(
        &p,
        "slow",
        &format!(
            "    fn slow \"(sleep 3; touch {m}) & echo $! > {pid}; sleep 30\" {{\n        timeout: 1\n    }}\n    flow {{\n        start -> slow -> end\n    }}",
            m = marker.display(),
            pid = pid_file.display()
        ),
    );
    let began = Instant::now();
    let out = p.factory(&["run", &wf]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("timed out after 1s"), "{}", text(&out));
    assert!(began.elapsed() < Duration::from_secs(20));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    // SAFETY: signal 0 only asks whether the process exists.
    while unsafe { libc::kill(pid, 0) } == 0 {
        assert!(
            Instant::now() < deadline,
            "the background child of the timed-out node outlived it"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !marker.exists(),
        "the background child of the timed-out node wrote before it was killed"
    );
}

#[test]
fn a_user_gate_needs_a_terminal_or_auto_approve() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let wf = workflow(
        &p,
        "ask",
        "    gate ok by user \"Ship it?\" {\n        outcomes: proceed, halt\n    }\n    fn done \"touch .factory/done\"\n    flow {\n        start -> ok\n        ok.proceed -> done -> end\n        ok.halt -> end\n    }",
    );
    let out = p.factory(&["run", &wf]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("Ship it?") && text(&out).contains("--auto-approve"),
        "{}",
        text(&out)
    );
    assert!(!p.path().join(".factory/done").exists());
    let out = p.factory(&["run", &wf, "--auto-approve"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(p.path().join(".factory/done").exists());
}

#[test]
fn two_agent_failures_in_a_row_stop_the_run() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let wf = workflow(
        &p,
        "crashy",
        "    agent first {\n        role: researcher\n    }\n    agent second {\n        role: strategist\n    }\n    agent third {\n        role: builder\n    }\n    flow {\n        start -> first -> end\n        first.fail -> second -> end\n        second.fail -> third -> end\n    }",
    );
    let out = p.factory(&["run", &wf, "--runner", "exec", "--agent-cmd", "false"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("two consecutive agent invocations failed"),
        "{}",
        text(&out)
    );
    let log = fs::read_to_string(p.path().join(".factory/events.jsonl")).unwrap();
    assert!(
        !log.contains("\"role\":\"builder\""),
        "the third agent never started"
    );
}

#[test]
fn json_streams_the_events_on_stdout() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let wf = workflow(
        &p,
        "two",
        "    fn a \"true\"\n    fn b \"true\"\n    flow {\n        start -> a -> b -> end\n    }",
    );
    let out = p.factory(&["run", &wf, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let kinds: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "node.started",
            "node.finished",
            "node.started",
            "node.finished",
            "run.finished"
        ]
    );
}

#[test]
fn ctrl_c_stops_cleanly_and_resume_finishes() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let wf = workflow(
        &p,
        "long",
        // Re-run by resume, `a` finds its marker and is done at once.
        "    fn a \"test -e .factory/a-ran || { touch .factory/a-ran && sleep 30; }\"\n    fn b \"touch .factory/b-ran\"\n    flow {\n        start -> a -> b -> end\n    }",
    );
    let mut child = spawn_run(&p, &wf);
    wait_for(&p.path().join(".factory/a-ran"));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let summary = fs::read_to_string(p.path().join(".factory/state/run.json")).unwrap();
    assert!(
        summary.contains("\"running\""),
        "the checkpoint still names the running node"
    );
    let out = p.factory(&["resume"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(p.path().join(".factory/b-ran").exists());
}

#[test]
fn a_stale_checkpoint_needs_force_and_respawns_are_capped() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let wf = workflow(
        &p,
        "nap",
        "    fn a \"touch .factory/a-ran && sleep 1\"\n    flow {\n        start -> a -> end\n    }",
    );
    let mut child = spawn_run(&p, &wf);
    wait_for(&p.path().join(".factory/a-ran"));
    child.kill().unwrap();
    child.wait().unwrap();
    let cp_path = p.path().join(".factory/state/run.json");
    let mut cp: Value = serde_json::from_str(&fs::read_to_string(&cp_path).unwrap()).unwrap();
    cp["saved_at"] = Value::from("2020-01-01T00:00:00.000Z");
    fs::write(&cp_path, serde_json::to_string(&cp).unwrap()).unwrap();

    let out = p.factory(&["resume"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("hours old") && text(&out).contains("--force"),
        "{}",
        text(&out)
    );

    let out = p
        .command(&["resume", "--force"])
        .env("FACTORY_MAX_RESPAWNS", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("resumed 0 times already"),
        "{}",
        text(&out)
    );

    let out = p.factory(&["resume", "--force"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = p.factory(&["resume"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("already finished"), "{}", text(&out));
}
