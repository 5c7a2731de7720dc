//! The replay format (docs/runners.md), pinned.

use std::fs;
use std::path::Path;
use std::time::Duration;

use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn runner(yaml: &str) -> ReplayRunner {
    ReplayRunner::parse(yaml, PathBuf::from("/s/replay.yaml")).unwrap()
}

fn request(dir: &Path, role: &str, node: Option<&str>, visit: u32) -> AgentRequest {
    let project = dir.join("project");
    let cwd = dir.join("work");
    fs::create_dir_all(&project).unwrap();
    fs::create_dir_all(&cwd).unwrap();
    AgentRequest {
        role: role.into(),
        cwd,
        project,
        node: node.map(str::to_string),
        visit,
        ..AgentRequest::default()
    }
}

fn play(r: &ReplayRunner, req: &AgentRequest) -> AgentOutput {
    rt().block_on(r.run(req, &|_| {})).unwrap()
}

const QA: &str = "
agents:
  ceo:
    - print: role
  qa.verdict:
    - verdict: reloop
      rationale: tests fail
    - verdict: proceed
  experiment.qa.verdict:
    - print: exact
";

#[test]
fn visits_pick_entries_and_the_last_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(QA);
    let key = |node: &str, visit| {
        let req = request(tmp.path(), "ceo", Some(node), visit);
        r.step_for(&req).unwrap().0.to_string()
    };
    // A dotted suffix matches; the longest (most specific) key wins; a node key wins
    // over the role key.
    assert_eq!(key("build.qa.verdict", 1), "qa.verdict");
    assert_eq!(key("experiment.qa.verdict", 1), "experiment.qa.verdict");
    assert_eq!(key("plan.gate", 1), "ceo");
    // `a.verdict` is not a dotted suffix of `xqa.verdict`.
    assert_eq!(key("xqa.verdict", 1), "ceo");

    let mut req = request(tmp.path(), "ceo", Some("build.qa.verdict"), 1);
    req.verdict_file = Some(tmp.path().join("v.md"));
    for (visit, want) in [(1, "RELOOP"), (2, "PROCEED"), (3, "PROCEED"), (0, "RELOOP")] {
        req.visit = visit;
        assert!(play(&r, &req).success());
        let text = fs::read_to_string(tmp.path().join("v.md")).unwrap();
        assert!(
            text.starts_with(&format!("## Verdict\n{want}\n\n## Rationale\n")),
            "{text}"
        );
        assert!(text.contains("## Issues found\n- none\n"));
    }
    req.visit = 1;
    play(&r, &req);
    assert!(
        fs::read_to_string(tmp.path().join("v.md"))
            .unwrap()
            .contains("tests fail")
    );
}

#[test]
fn write_run_print_and_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(
        r###"
agents:
  researcher:
    - write:
        .factory/strategy/research-local.md: "## Candidates\n- a\n"
        notes/plan.txt: plan
      run: ["test -f notes/plan.txt", "echo \"$FACTORY_ROLE $FACTORY_VISIT\" > ran.txt"]
      print: "## Commits\nabc\n"
    - run: ["echo first", "exit 4", "touch never"]
    - exit: 3
      print: partial
"###,
    );
    let mut req = request(tmp.path(), "researcher", None, 1);
    let out = play(&r, &req);
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "## Commits\nabc\n");
    assert_eq!(
        fs::read_to_string(req.project.join(".factory/strategy/research-local.md")).unwrap(),
        "## Candidates\n- a\n"
    );
    assert_eq!(
        fs::read_to_string(req.cwd.join("notes/plan.txt")).unwrap(),
        "plan"
    );
    assert_eq!(
        fs::read_to_string(req.cwd.join("ran.txt")).unwrap(),
        "researcher 1\n"
    );

    req.visit = 2;
    let out = play(&r, &req);
    assert_eq!(out.exit_code, Some(4));
    assert!(out.stderr_tail.contains("`exit 4`") && out.stderr_tail.contains("replay.yaml"));
    assert!(
        !req.cwd.join("never").exists(),
        "commands after a failure must not run"
    );

    req.visit = 3;
    let out = play(&r, &req);
    assert_eq!((out.exit_code, out.stdout.as_str()), (Some(3), "partial"));
}

#[test]
fn sleep_counts_against_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner("agents:\n  builder:\n    - sleep_ms: 5000\n      print: late\n");
    let mut req = request(tmp.path(), "builder", None, 1);
    req.timeout = Some(Duration::from_millis(100));
    let out = play(&r, &req);
    assert!(out.timed_out && out.exit_code.is_none());
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_entry_names_the_script_the_node_and_the_role() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(QA);
    let req = request(tmp.path(), "builder", Some("experiment.trial.builder"), 1);
    let err = rt().block_on(r.run(&req, &|_| {})).unwrap_err();
    let text = err.to_string();
    for part in [
        "/s/replay.yaml",
        "`experiment.trial.builder`",
        "`builder`",
        "ceo, experiment.qa.verdict",
    ] {
        assert!(text.contains(part), "{part} missing from: {text}");
    }
}

#[test]
fn a_verdict_needs_somewhere_to_go() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner("agents:\n  ceo:\n    - verdict: halt\n");
    let mut req = request(tmp.path(), "ceo", None, 1);
    assert!(rt().block_on(r.run(&req, &|_| {})).is_err());
    // Without a verdict file the first output takes it.
    req.outputs = vec![tmp.path().join("out.md")];
    assert!(play(&r, &req).success());
    assert!(
        fs::read_to_string(tmp.path().join("out.md"))
            .unwrap()
            .contains("HALT")
    );
}

#[test]
fn bad_scripts_are_refused_up_front_naming_the_file_and_the_fault() {
    let bad = |yaml: &str, want: &str| {
        let err = ReplayRunner::parse(yaml, PathBuf::from("/s/bad.yaml")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/s/bad.yaml") && text.contains(want),
            "{want}: {text}"
        );
    };
    bad("agents:\n  ceo:\n    - verdict: maybe\n", "verdict `maybe`");
    bad("agents:\n  ceo:\n    - prnt: x\n", "prnt");
    bad("agent:\n  ceo: []\n", "agent");
    bad("agents:\n  ceo: []\n", "`ceo` has no steps");
    bad("agents:\n  ceo:\n    - write: {../x: y}\n", "`../x`");
    bad("agents:\n  ceo:\n    - write: {/etc/x: y}\n", "`/etc/x`");
    bad("agents:\n  ceo:\n    - exit: nope\n", "exit");
    let err = ReplayRunner::load(Path::new("/nonexistent/replay.yaml")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/replay.yaml"));
}

#[test]
fn replay_is_not_interactive_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(QA);
    let err = r
        .run_interactive(&request(tmp.path(), "ceo", None, 1))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the replay runner does not support interactive run"
    );
}

#[test]
fn in_a_parallel_branch_a_key_for_its_hypothesis_comes_first() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(
        "
agents:
  builder:
    - print: any
  builder#2:
    - print: second
  trial.review#3:
    - print: third review
",
    );
    let key = |role: &str, node: &str, branch: Option<&str>| {
        let mut req = request(tmp.path(), role, Some(node), 1);
        if let Some(i) = branch {
            req.env.push((HYPOTHESIS_INDEX_ENV.into(), i.into()));
        }
        r.step_for(&req)
            .map(|(k, _)| k.to_string())
            .unwrap_or_default()
    };
    assert_eq!(key("builder", "b.trial.builder", Some("2")), "builder#2");
    assert_eq!(key("builder", "b.trial.builder", Some("1")), "builder");
    assert_eq!(key("builder", "b.trial.builder", None), "builder");
    assert_eq!(key("ceo", "b.trial.review", Some("3")), "trial.review#3");
    // A key for another hypothesis, or any qualified key outside a branch, never applies.
    assert_eq!(key("ceo", "b.trial.review", Some("2")), "");
    assert_eq!(key("ceo", "b.trial.review", None), "");
}

#[test]
fn a_factory_file_the_node_asked_for_lands_where_it_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(
        "
agents:
  health_checker:
    - write:
        .factory/reviews/health-check.md: mine
        .factory/notes.md: shared
",
    );
    let mut req = request(tmp.path(), "health_checker", None, 1);
    let own = tmp
        .path()
        .join("project/.factory/experiments/002/reviews/health-check.md");
    fs::create_dir_all(own.parent().unwrap()).unwrap();
    req.outputs = vec![own.clone()];
    play(&r, &req);
    assert_eq!(fs::read_to_string(&own).unwrap(), "mine");
    assert!(
        !tmp.path()
            .join("project/.factory/reviews/health-check.md")
            .exists()
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("project/.factory/notes.md")).unwrap(),
        "shared"
    );
}
