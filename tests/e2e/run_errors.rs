//! `factory run` on bad input: a clear error naming the fix, and nothing lost.

use std::fs;

use crate::support::{Project, WORKFLOW, output as text, script};

#[test]
fn not_a_git_repository_names_git_init() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("factory.md"), "# x\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("factory")
        .unwrap()
        .current_dir(dir.path())
        .args(["run", WORKFLOW, "--runner", "replay", "--script", "x.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("is not a git repository"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("git init"), "{}", text(&out));
    assert!(!dir.path().join(".factory").exists(), "nothing was written");
}

#[test]
fn no_factory_md_names_factory_init() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    fs::remove_file(p.path().join("factory.md")).unwrap();
    let out = p.run(&script(&[]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("has no factory.md"), "{}", text(&out));
    assert!(text(&out).contains("factory init"), "{}", text(&out));
}

#[test]
fn an_unreviewed_eval_profile_is_refused() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    fs::write(
        p.path().join(".factory/eval_profile.json"),
        r#"{"human_reviewed": false}"#,
    )
    .unwrap();
    let out = p.run(&script(&[]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("has not been reviewed"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("--approve"), "{}", text(&out));
    assert!(p.results().is_empty());
}

#[test]
fn an_unknown_runner_lists_the_known_ones() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let out = p.factory(&["run", WORKFLOW, "--runner", "robot"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("exec"), "{}", text(&out));
    assert!(text(&out).contains("replay"), "{}", text(&out));
}

#[test]
fn a_workflow_with_agents_and_no_runner_is_refused_before_it_starts() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    // No agent CLI on PATH to default to.
    let no_clis = tempfile::tempdir().unwrap();
    let out = p
        .command(&["run", WORKFLOW])
        .env("PATH", no_clis.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--runner exec"), "{}", text(&out));
    assert!(
        !p.path().join(".factory/state/run.json").exists(),
        "no run was started"
    );
}

#[test]
fn a_missing_agent_binary_is_named() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let out = p.factory(&[
        "run",
        WORKFLOW,
        "--runner",
        "exec",
        "--agent-cmd",
        "no-such-agent-cli {prompt_file}",
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("no-such-agent-cli"), "{}", text(&out));
}

#[test]
fn a_garbage_verdict_fails_the_gate_and_names_the_file() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let garbage = "    - write:\n        .factory/reviews/ceo-verdict-plan.md: \"## Verdict\\nLooks great to me!\\n\"\n";
    let out = p.run(&script(&[("plan.approve", garbage)]));
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(t.contains("FAILED at plan.approve"), "{t}");
    assert!(t.contains("ceo-verdict-plan.md"), "{t}");
    assert!(t.contains("PROCEED, RELOOP or HALT"), "{t}");
}

#[test]
fn a_broken_workflow_is_refused_with_its_diagnostics() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    fs::write(p.path().join("broken.fwf"), "workflow broken {\n    fn a \"true\"\n    flow {\n        start -> a -> nowhere\n    }\n}\n").unwrap();
    let out = p.factory(&["run", "broken.fwf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("FWF"),
        "the diagnostic code is shown: {}",
        text(&out)
    );
    assert!(
        text(&out).contains("nothing was compiled, run or written"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_unwritable_store_stops_the_run_and_keeps_what_was_there() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let results_before = fs::read_to_string(p.path().join(".factory/config.json")).unwrap();
    // events.jsonl as a directory: every append fails, as on a full or read-only disk.
    fs::create_dir_all(p.path().join(".factory/events.jsonl")).unwrap();
    let out = p.run(&script(&[]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("events.jsonl"), "{}", text(&out));
    assert_eq!(
        fs::read_to_string(p.path().join(".factory/config.json")).unwrap(),
        results_before
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_changes_nothing() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let before = snapshot(p.path());
    let out = p.factory(&[
        "run",
        "parallel-improve",
        "--dry-run",
        "--runner",
        "exec",
        "--agent-cmd",
        "cat {prompt_file}",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    // The whole plan, pinned: every step, its command, what it writes and where each
    // verdict leads (the project's and the temp dir's paths stand in as names).
    let project = p.path().display().to_string();
    let tmp = std::env::temp_dir().display().to_string();
    let plan = crate::support::text(&out.stdout)
        .replace(&project, "[project]")
        .replace(tmp.trim_end_matches('/'), "[tmp]");
    insta::assert_snapshot!(plan);
    assert_eq!(snapshot(p.path()), before, "the dry run wrote nothing");
}

/// Every built-in mode's `--dry-run` plan on the demo, pinned: what each step runs,
/// writes and leads to is what a user reads before trusting a mode.
#[test]
fn every_modes_dry_run_plan_is_pinned() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let modes = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/workflows"))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            Some(name.strip_suffix(".fwf")?.to_string())
        })
        .collect::<std::collections::BTreeSet<_>>();
    assert!(modes.len() >= 10, "{modes:?}");
    let project = p.path().display().to_string();
    let tmp = std::env::temp_dir().display().to_string();
    for mode in &modes {
        let out = p.factory(&[
            "run",
            mode,
            "--dry-run",
            "--runner",
            "exec",
            "--agent-cmd",
            "cat {prompt_file}",
        ]);
        assert!(out.status.success(), "{mode}: {}", text(&out));
        let plan = crate::support::text(&out.stdout)
            .replace(&project, "[project]")
            .replace(tmp.trim_end_matches('/'), "[tmp]");
        insta::assert_snapshot!(format!("dry_run_{mode}"), plan);
    }
}

/// Every file under `dir` with its length and modification time.
fn snapshot(dir: &std::path::Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.push((
                    e.path().display().to_string(),
                    m.len(),
                    m.modified().unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}
