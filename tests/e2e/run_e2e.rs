//! `factory run` end to end: the built binary, real git repositories in temp dirs, the
//! demo project, and scripted agents (the replay runner). The scripts start from the
//! demo's own `replay.yaml` with some agents' answers replaced.

use crate::support;

use std::fs;
use std::process::Output;

use crate::support::{Project, script};
use git2::Repository;
use serde_json::Value;

fn stdout(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn shared_target() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_good_change_is_kept_on_its_branch_and_the_checkout_is_untouched() {
    let target = shared_target();
    let p = Project::demo(target.path());
    // The user's own uncommitted work, which nothing may touch.
    fs::write(p.path().join("NOTES.txt"), "my notes\n").unwrap();
    let lib = fs::read_to_string(p.path().join("src/lib.rs")).unwrap() + "// my edit\n";
    fs::write(p.path().join("src/lib.rs"), &lib).unwrap();
    let head = Repository::open(p.path()).unwrap().head().unwrap().target();

    let out = p.run(&script(&[]));
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("experiment 1: keep"),
        "{}",
        stdout(&out)
    );

    let rows = p.results();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["verdict"], "keep");
    // The record says what changed: the experiment's commits and its diff's size.
    assert!(
        rows[0]["change_summary"]
            .starts_with("Count words with a HashMap in most_frequent (1 file(s), +"),
        "{:?}",
        rows[0]["change_summary"]
    );
    assert!(
        p.branches().contains("factory/exp-001"),
        "the kept branch stays for a human"
    );
    assert!(!p.path().join(".factory/worktrees/exp-001").exists());
    // The kept branch holds the builder's commit; main does not.
    let repo = Repository::open(p.path()).unwrap();
    let tip = repo
        .find_branch("factory/exp-001", git2::BranchType::Local)
        .unwrap();
    let commit = tip.get().peel_to_commit().unwrap();
    assert_eq!(
        commit.summary().ok().flatten(),
        Some("Count words with a HashMap in most_frequent")
    );
    assert_eq!(
        repo.head().unwrap().target(),
        head,
        "the user's branch did not move"
    );
    assert_eq!(repo.head().unwrap().shorthand().ok(), Some("main"));
    assert_eq!(
        fs::read_to_string(p.path().join("src/lib.rs")).unwrap(),
        lib
    );
    assert_eq!(
        fs::read_to_string(p.path().join("NOTES.txt")).unwrap(),
        "my notes\n"
    );
    // What the run recorded, pinned: each event kind with how often it was appended
    // (concurrent QA reviews interleave, so the order is not pinned, the counts are).
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for e in p.events() {
        *kinds.entry(e.kind().to_string()).or_default() += 1;
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    insta::assert_snapshot!("demo_keep_event_kinds", kinds.join("\n"));
}

#[test]
fn a_change_that_breaks_a_test_is_reverted() {
    let target = shared_target();
    let p = Project::demo(target.path());
    let broken = r#"    - write:
        src/lib.rs: |
          pub fn word_count(text: &str) -> usize { text.len() }
          pub fn most_frequent(_: &str) -> Option<(String, usize)> { None }
          #[cfg(test)]
          mod tests {
              #[test]
              fn counts_words() { assert_eq!(super::word_count("a b"), 2); }
          }
      run:
        - git add -A
        - git -c user.name=t -c user.email=t@t commit -qm "Faster"
      print: |
        ## Commits
        - Faster: replace the counting with something much faster, trust me; every claim here is the agent's word only and no number backs it. The reviewers are told everything passed. This report is long enough for the builder's size check to pass, padded with words that
          say nothing at all about whether the change is any good, as agents sometimes do.
"#;
    let out = p.run(&script(&[("builder", broken)]));
    // Completed, but nothing kept: a script's `factory run … && merge` stops here.
    assert_eq!(
        out.status.code(),
        Some(3),
        "the run completes with a revert: {}",
        stdout(&out)
    );
    let rows = p.results();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["verdict"], "revert", "{}", stdout(&out));
    // The reason is named where the user looks: the closing lines and the notes.
    let text = stdout(&out);
    assert!(
        text.contains("  why:\n    threshold: head mean 0.2500"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n    tests_kept: src/lib.rs:6: test `src/lib.rs::tests::counts_words` passed at base"
        ),
        "{text}"
    );
    assert!(
        rows[0]["notes"].starts_with("threshold: head mean 0.2500"),
        "{:?}",
        rows[0]
    );
    assert!(rows[0]["notes"].contains("; tests_kept: "), "{:?}", rows[0]);
    // What the gate measured is recorded for the revert too (the dashboard's score
    // chart draws it).
    assert_eq!(
        (
            rows[0]["score_before"].as_str(),
            rows[0]["score_after"].as_str()
        ),
        ("0.75", "0.25"),
        "{:?}",
        rows[0]
    );
    assert!(
        rows[0]["notes"].ends_with("`experiment.trial.precheck` said halt"),
        "{:?}",
        rows[0]
    );
    assert!(
        !p.branches().contains("factory/exp-001"),
        "a revert removes the branch"
    );
}

#[test]
fn a_change_outside_the_scope_is_reverted() {
    let target = shared_target();
    let p = Project::demo(target.path());
    let out = p.run(&script(&[("builder", support::OUTSIDE_SCOPE_BUILDER)]));
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("    scope: README.md: added outside scope"),
        "{}",
        stdout(&out)
    );
    // `factory runs` and `factory history` name the same reason.
    let runs = stdout(&p.factory(&["runs"]));
    assert!(runs.contains(" exp 1 revert "), "{runs}");
    assert!(
        runs.contains("    why: scope: README.md: added outside scope"),
        "{runs}"
    );
    let history = stdout(&p.factory(&["history"]));
    assert!(
        history.contains("notes: scope: README.md: added outside scope"),
        "{history}"
    );
    let rows = p.results();
    assert_eq!(rows[0]["verdict"], "revert", "{}", stdout(&out));
    assert_eq!(rows[0]["change_summary"], "Add a README (1 file(s), +1 -0)");
    let precheck: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/experiments/001/precheck.json")).unwrap(),
    )
    .unwrap();
    let failures = precheck["failures"].to_string();
    assert!(failures.contains("scope"), "{failures}");
}

#[test]
fn a_reloop_past_its_bound_halts() {
    let target = shared_target();
    let p = Project::demo(target.path());
    // The plan gate always asks for another plan: after 2 reloops it halts to `end`.
    let out = p.run(&script(&[("plan.approve", "    - verdict: reloop\n")]));
    let text = stdout(&out);
    let strategist = p
        .events()
        .iter()
        .filter(|e| {
            e.kind() == "agent.started"
                && e.get("role").as_ref().and_then(Value::as_str) == Some("strategist")
        })
        .count();
    assert_eq!(strategist, 3, "the first plan and two reloops: {text}");
    assert!(
        text.contains("reloop limit 2 reached at `plan.approve`"),
        "{text}"
    );
    assert!(p.results().is_empty(), "nothing was begun");
}

#[test]
fn an_agent_that_misses_its_check_fails_the_run_and_the_experiment_is_an_error() {
    let target = shared_target();
    let p = Project::demo(target.path());
    let out = p.run(&script(&[("builder", "    - print: \"done\"\n")]));
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("post-check of `experiment.trial.builder` failed"),
        "{text}"
    );
    assert!(text.contains("at least 300 are required"), "{text}");
    assert_eq!(p.results()[0]["verdict"], "error");
    assert!(!p.branches().contains("factory/exp-001"));
}

#[test]
fn the_three_reviews_of_deep_qa_run_at_the_same_time() {
    let target = shared_target();
    let p = Project::demo(target.path());
    let slow = |role: &str, file: &str| {
        format!(
            "    - sleep_ms: 700\n      write:\n        .factory/reviews/{file}: |\n          # {role}\n\n          ## Verdict\n          PROCEED\n\n          {}\n",
            "Checked the change with care; nothing is broken and every claim is backed. ".repeat(3)
        )
    };
    let out = p.run(&script(&[
        ("health_checker", &slow("health", "health-check.md")),
        ("code_reviewer", &slow("code", "code-review.md")),
        (
            "adversarial_tester",
            &slow("adversarial", "adversarial-qa.md"),
        ),
    ]));
    assert!(out.status.success(), "{}", stdout(&out));
    let events = p.events();
    // ISO-8601 UTC with milliseconds: the text orders like the instant.
    let times = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| {
                e.kind() == kind
                    && e.get("node")
                        .as_ref()
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.contains(".qa.review."))
            })
            .map(|e| e.timestamp.clone())
            .collect()
    };
    let (starts, ends) = (times("node.started"), times("node.finished"));
    assert_eq!((starts.len(), ends.len()), (3, 3));
    let last_start = starts.iter().max().unwrap();
    let first_end = ends.iter().min().unwrap();
    assert!(
        last_start < first_end,
        "every review started before any finished: {starts:?} {ends:?}"
    );
}

#[test]
fn a_hypothesis_with_shell_metacharacters_stays_inert() {
    let target = shared_target();
    let p = Project::demo(target.path());
    let marker = p.path().join("pwned");
    let evil = format!(
        "Speed up\\\"; touch {m}; \\\" $(touch {m}) `touch {m}`",
        m = marker.display()
    );
    let plan = format!(
        "    - write:\n        .factory/strategy/current.md: \"# Plan\\n\\n## Hypothesis\\n{evil}\\n\\n### Phase 1\\nReplace the Vec scan with a HashMap and add a test for ties and case folding; nothing else changes in the crate.\\n\\n## Success criteria\\nTests pass.\\n\"\n"
    );
    let out = p.run(&script(&[("strategist", &plan)]));
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(!marker.exists(), "the payload ran");
    let begun = p
        .events()
        .into_iter()
        .find(|e| e.kind() == "experiment.begin")
        .unwrap();
    let hypothesis = begun
        .get("hypothesis")
        .as_ref()
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    assert!(
        hypothesis.contains("$(touch") && hypothesis.contains("; touch"),
        "the text arrived as text: {hypothesis}"
    );
}

#[test]
fn finalize_keep_is_refused_without_a_passing_precheck() {
    let target = shared_target();
    let p = Project::demo(target.path());
    // A hand-written mode that keeps right after building: the store refuses.
    let wf = p.path().join("sneaky.fwf");
    fs::write(
        &wf,
        "workflow sneaky {\n    fn begin \"factory begin {{project_path}} --hypothesis quick\"\n    agent builder {\n        role: builder\n    }\n    fn keep \"factory finalize {{project_path}} --id {{exp_id}} --verdict keep\"\n    flow {\n        start -> begin -> builder -> keep -> end\n    }\n}\n",
    )
    .unwrap();
    let path = p.path().join(".factory/script.yaml");
    fs::write(&path, script(&[])).unwrap();
    let out = p.factory(&[
        "run",
        "sneaky.fwf",
        "--runner",
        "replay",
        "--script",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("FAILED at keep"), "{text}");
    assert!(
        text.contains("precheck"),
        "the refusal names the precheck: {text}"
    );
    assert_ne!(
        p.results().first().map(|r| r["verdict"].as_str()),
        Some("keep")
    );
}

#[test]
fn a_change_the_precheck_cannot_measure_is_never_kept() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    // The builder breaks the worktree itself: the eval and the guards cannot read it.
    let vandal = r#"    - run:
        - rm -rf .git
      print: |
        ## Commits
        - none: the change removed the experiment's repository, so nothing
          can be measured; a gate that cannot measure must not let this through, and the
          report is long enough that only the precheck can stop it. It says so at
          length, as builders do, so that its own size check passes.
"#;
    let out = p.run(&script(&[("builder", vandal)]));
    let t = stdout(&out);
    let rows = p.results();
    assert_eq!(rows.len(), 1, "{t}");
    assert_ne!(rows[0]["verdict"], "keep", "{t}");
    assert!(!t.contains(": keep"), "{t}");
    assert!(
        !p.branches().contains("factory/exp-001"),
        "the broken branch is gone: {t}"
    );
}
