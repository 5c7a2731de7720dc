//! Prompt tiers, the event pair under concurrency and cancellation, review capture,
//! missing outputs, dangling invocations and the consecutive-failure counter.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::*;
use crate::events::{self, kinds};
use crate::project::layout::FactoryPaths;
use crate::runners::Runner;
use crate::runners::replay::ReplayRunner;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

const SCRIPT: &str = "
agents:
  good:
    - write: {out.txt: written}
      print: \"## Report\\nall good\\n\"
  bad:
    - print: half
      exit: 2
      run: [\"echo oops >&2\"]
  writer:
    - write: {.factory/reviews/writer-latest.md: \"# The full report\\n\"}
      print: \"Done; the report is written.\\n\"
  slow:
    - sleep_ms: 3000
  hang:
    - sleep_ms: 10000
";

fn replay() -> Arc<dyn Runner> {
    Arc::new(ReplayRunner::parse(SCRIPT, "/s/replay.yaml".into()).unwrap())
}

fn request(project: &Path, role: &str) -> AgentRequest {
    AgentRequest {
        role: role.into(),
        prompt: "p".into(),
        cwd: project.to_path_buf(),
        project: project.to_path_buf(),
        visit: 1,
        env: vec![
            ("FACTORY_RUN_ID".into(), "run-1".into()),
            ("FACTORY_EXP_ID".into(), "4".into()),
        ],
        ..AgentRequest::default()
    }
}

fn id(e: &crate::events::Event) -> String {
    e.get("invocation_id")
        .as_ref()
        .and_then(Value::as_str)
        .unwrap()
        .to_string()
}

/// Every `agent.started` has exactly one terminal event with its id; returns the
/// terminal kinds (and reasons) by count.
fn check_pairing(project: &Path) -> HashMap<String, usize> {
    let log = events::read(&FactoryPaths::new(project)).unwrap();
    assert!(log.corrupt_lines.is_empty());
    let mut terminals: HashMap<String, Vec<String>> = HashMap::new();
    for e in log.events.iter().filter(|e| invoke::is_terminal(e.kind())) {
        let reason = e.get("reason");
        let reason = reason.as_ref().and_then(Value::as_str).unwrap_or("");
        terminals.entry(id(e)).or_default().push(format!(
            "{}{}{reason}",
            e.kind(),
            if reason.is_empty() { "" } else { ":" }
        ));
    }
    let started: Vec<String> = log.of_kind(kinds::AGENT_STARTED).map(id).collect();
    assert_eq!(
        started.len(),
        terminals.len(),
        "a terminal without a start, or none"
    );
    let mut counts = HashMap::new();
    for s in &started {
        let t = terminals
            .get(s)
            .unwrap_or_else(|| panic!("{s} has no terminal"));
        assert_eq!(t.len(), 1, "{s} has {t:?}");
        *counts.entry(t[0].clone()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn twenty_concurrent_invocations_each_get_exactly_one_terminal_event() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().to_path_buf();
    let runner = replay();
    rt().block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for i in 0..20 {
            let role = match i {
                0..=11 => "good",
                12..=15 => "bad",
                16..=18 => "slow",
                _ => "hang",
            };
            let mut req = request(&project, role);
            req.timeout = Some(Duration::from_millis(if role == "slow" {
                100
            } else {
                20_000
            }));
            let (project, runner) = (project.clone(), runner.clone());
            set.spawn(async move {
                let tag = format!("t{i}");
                let fut = invoke(&project, &req, runner.as_ref(), Some(&tag));
                if role == "hang" {
                    // Cancelled by dropping its future mid-run.
                    assert!(
                        tokio::time::timeout(Duration::from_millis(300), fut)
                            .await
                            .is_err()
                    );
                    return None;
                }
                Some((role, fut.await))
            });
        }
        while let Some(joined) = set.join_next().await {
            match joined.unwrap() {
                Some(("good", r)) => assert!(r.unwrap().missing_outputs.is_empty()),
                Some(("bad", r)) => assert!(matches!(
                    r.unwrap_err(),
                    AgentError::Failed {
                        exit_code: Some(2),
                        ..
                    }
                )),
                Some(("slow", r)) => {
                    assert!(matches!(r.unwrap_err(), AgentError::TimedOut { .. }))
                }
                Some((role, r)) => panic!("{role}: {r:?}"),
                None => {}
            }
        }
    });
    let counts = check_pairing(&project);
    assert_eq!(counts.get("agent.completed"), Some(&12), "{counts:?}");
    assert_eq!(counts.get("agent.failed:exit"), Some(&4), "{counts:?}");
    assert_eq!(counts.get("agent.timeout"), Some(&3), "{counts:?}");
    assert_eq!(counts.get("agent.failed:cancelled"), Some(&1), "{counts:?}");
    // Ids are unique and events carry the run and experiment.
    let log = events::read(&FactoryPaths::new(&project)).unwrap();
    let first = log.of_kind(kinds::AGENT_STARTED).next().unwrap();
    assert_eq!(first.get("run_id"), Some(Value::from("run-1")));
    assert_eq!(first.get("exp_id"), Some(Value::from(4)));
    assert_eq!(first.get("runner"), Some(Value::from("replay")));
}

#[test]
fn stdout_becomes_the_review_and_unwritten_outputs_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path();
    fs::write(project.join("stale.md"), "from before").unwrap();
    let mut req = request(project, "good");
    req.outputs = vec![
        project.join("out.txt"),
        project.join("never.md"),
        project.join("stale.md"),
        review_path(project, "good", Some("exp-3")),
    ];
    let runner = replay();
    let result = rt()
        .block_on(invoke(project, &req, runner.as_ref(), Some("exp-3")))
        .unwrap();
    assert_eq!(
        result.review_path,
        project.join(".factory/reviews/good-exp-3-latest.md")
    );
    assert_eq!(
        fs::read_to_string(&result.review_path).unwrap(),
        "## Report\nall good\n"
    );
    assert_eq!(
        result.missing_outputs,
        vec![project.join("never.md"), project.join("stale.md")]
    );
    let log = events::read(&FactoryPaths::new(project)).unwrap();
    let done = log.of_kind(kinds::AGENT_COMPLETED).next().unwrap();
    assert_eq!(
        done.get("review"),
        Some(Value::from(".factory/reviews/good-exp-3-latest.md"))
    );
    assert_eq!(done.get("exit_code"), Some(Value::from(0)));
    assert_eq!(
        done.get("missing_outputs")
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_report_the_agent_wrote_is_never_overwritten_by_its_captured_message() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path();
    let review = review_path(project, "writer", None);
    fs::create_dir_all(review.parent().unwrap()).unwrap();
    fs::write(&review, "an earlier run's report\n").unwrap();
    let mut req = request(project, "writer");
    req.outputs = vec![review.clone()];
    let runner = replay();
    let result = rt()
        .block_on(invoke(project, &req, runner.as_ref(), None))
        .unwrap();
    assert_eq!(result.review_path, review);
    assert_eq!(fs::read_to_string(&review).unwrap(), "# The full report\n");
    assert_eq!(
        fs::read_to_string(review.with_file_name("writer-latest.stdout.md")).unwrap(),
        "Done; the report is written.\n"
    );
    assert!(result.missing_outputs.is_empty());
}

#[test]
fn a_failure_names_the_role_exit_code_and_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let runner = replay();
    let err = rt()
        .block_on(invoke(
            tmp.path(),
            &request(tmp.path(), "bad"),
            runner.as_ref(),
            None,
        ))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("bad agent failed (exit code 2)") && text.contains("oops"),
        "{text}"
    );
    // The partial output is still captured.
    assert_eq!(
        fs::read_to_string(tmp.path().join(".factory/reviews/bad-latest.md")).unwrap(),
        "half"
    );
    let err = rt()
        .block_on(invoke(
            tmp.path(),
            &request(tmp.path(), "good"),
            runner.as_ref(),
            Some("../x"),
        ))
        .unwrap_err();
    assert!(matches!(err, AgentError::BadTag { .. }));
}

#[test]
fn a_runner_error_is_a_failed_invocation() {
    let tmp = tempfile::tempdir().unwrap();
    let runner = replay();
    let err = rt()
        .block_on(invoke(
            tmp.path(),
            &request(tmp.path(), "nobody"),
            runner.as_ref(),
            None,
        ))
        .unwrap_err();
    assert!(err.is_agent_failure());
    assert!(err.to_string().contains("/s/replay.yaml"), "{err}");
    assert_eq!(
        check_pairing(tmp.path()).get("agent.failed:spawn"),
        Some(&1)
    );
}

#[test]
fn close_dangling_closes_only_that_runs_open_invocations() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = FactoryPaths::new(tmp.path());
    let started = |id: &str, run: &str| {
        events::append(
            &paths,
            &events::Event::new(events::EventData::AgentStarted(events::AgentStarted {
                invocation_id: id.into(),
                role: "builder".into(),
                run_id: Some(run.into()),
                runner: "exec".into(),
                ..Default::default()
            })),
        )
        .unwrap()
    };
    started("a", "r1");
    started("b", "r1");
    started("c", "r2");
    events::append(
        &paths,
        &events::Event::raw(kinds::AGENT_COMPLETED).with("invocation_id", "a"),
    )
    .unwrap();
    assert_eq!(close_dangling(tmp.path(), "r1").unwrap(), 1);
    assert_eq!(close_dangling(tmp.path(), "r1").unwrap(), 0);
    let log = events::read(&paths).unwrap();
    let closed: Vec<_> = log.of_kind(kinds::AGENT_FAILED).collect();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].get("invocation_id"), Some(Value::from("b")));
    assert_eq!(closed[0].get("reason"), Some(Value::from("interrupted")));
    assert_eq!(closed[0].get("role"), Some(Value::from("builder")));
}

#[test]
fn two_failures_in_a_row_abort_naming_the_roles() {
    let fail = || -> Result<(), AgentError> {
        Err(AgentError::Failed {
            role: "x".into(),
            exit_code: Some(1),
            invocation_id: "i".into(),
            stderr_tail: String::new(),
        })
    };
    let mut f = SpawnFailures::default();
    assert!(f.record("builder", &fail()).is_ok());
    assert!(f.record("builder", &Ok::<(), AgentError>(())).is_ok());
    assert_eq!(f.count(), 0);
    assert!(f.record("builder", &fail()).is_ok());
    // Not the agent's fault: does not count, does not reset.
    let bad_tag: Result<(), AgentError> = Err(AgentError::BadTag { tag: "/".into() });
    assert!(f.record("ceo", &bad_tag).is_ok());
    let err = f.record("ceo", &fail()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "2 agent invocations failed in a row (builder, ceo); stopping the run"
    );
}

#[test]
fn prompt_tiers_project_over_user_over_builtin_with_the_playbook_at_every_tier() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    let home = tmp.path().join("home");
    fs::create_dir_all(&project).unwrap();

    let builtin = resolve_prompt_in(&project, Some(&home), "builder").unwrap();
    assert_eq!(
        builtin.source,
        PromptSource::BuiltIn("prompts/builder.md".into())
    );
    assert_eq!(
        builtin.playbook,
        Some(PromptSource::BuiltIn("prompts/playbooks/builder.md".into()))
    );
    assert!(builtin.text.contains("## Playbook: builder"));

    fs::create_dir_all(home.join("agents/prompts")).unwrap();
    fs::write(home.join("agents/prompts/builder.md"), "USER PROMPT").unwrap();
    let user = resolve_prompt_in(&project, Some(&home), "builder").unwrap();
    assert!(matches!(user.source, PromptSource::User(_)));
    assert!(
        user.text.starts_with("USER PROMPT\n\n---\nrole: builder"),
        "{}",
        user.text
    );

    fs::create_dir_all(project.join(".factory/agents")).unwrap();
    fs::write(
        project.join(".factory/agents/builder.md"),
        "PROJECT PROMPT\n",
    )
    .unwrap();
    let proj = resolve_prompt_in(&project, Some(&home), "builder").unwrap();
    assert!(matches!(proj.source, PromptSource::Project(_)));
    assert!(proj.text.starts_with("PROJECT PROMPT\n\n"));
    assert!(
        proj.text.contains("## Playbook: builder"),
        "an override keeps its playbook"
    );

    // The project's playbook replaces the default; the user's evolved playbook is
    // appended over whichever default applies, and a broken one is an error.
    fs::create_dir_all(project.join(".factory/playbooks")).unwrap();
    fs::write(
        project.join(".factory/playbooks/builder.md"),
        "PROJECT PLAYBOOK",
    )
    .unwrap();
    let p = resolve_prompt_in(&project, Some(&home), "builder").unwrap();
    assert_eq!(p.text, "PROJECT PROMPT\n\nPROJECT PLAYBOOK\n");
    assert!(matches!(p.playbook, Some(PromptSource::Project(_))));
    assert_eq!(p.evolved, None);
    fs::create_dir_all(home.join("playbooks")).unwrap();
    fs::write(
        home.join("playbooks/builder.md"),
        "## Playbook: builder\n\n### DON'T\n- [builder-00011] helpful=2 harmful=0 :: Don't touch README.md.\n",
    )
    .unwrap();
    let p = resolve_prompt_in(&project, Some(&home), "builder").unwrap();
    assert!(
        p.text
            .starts_with("PROJECT PROMPT\n\nPROJECT PLAYBOOK\n\n## Learned playbook: builder\n"),
        "{}",
        p.text
    );
    assert!(
        p.text.ends_with(
            "### DON'T\n- [builder-00011] helpful=2 harmful=0 :: Don't touch README.md.\n"
        )
    );
    assert!(matches!(p.evolved, Some(PromptSource::User(_))));
    fs::remove_file(project.join(".factory/playbooks/builder.md")).unwrap();
    let p = resolve_prompt_in(&project, Some(&home), "builder").unwrap();
    let default = p.text.find("## Playbook: builder").unwrap();
    let learned = p.text.find("## Learned playbook: builder").unwrap();
    assert!(
        default < learned,
        "the evolved bullets come over the default"
    );
    fs::write(home.join("playbooks/builder.md"), "USER PLAYBOOK").unwrap();
    let err = resolve_prompt_in(&project, Some(&home), "builder").unwrap_err();
    assert!(err.to_string().contains("playbooks/builder.md:1:"), "{err}");
    fs::remove_file(home.join("playbooks/builder.md")).unwrap();

    // A project-only role exists; unknown ones are listed; paths are never roles.
    fs::write(project.join(".factory/agents/translator.md"), "T").unwrap();
    let t = resolve_prompt_in(&project, Some(&home), "translator").unwrap();
    assert_eq!((t.text.as_str(), t.playbook), ("T", None));
    for role in ["nope", "../agents/builder", ""] {
        let err = resolve_prompt_in(&project, Some(&home), role).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("known roles:") && text.contains("builder, ceo"),
            "{text}"
        );
        assert!(text.contains("translator"), "{text}");
    }
}

#[test]
fn composed_prompt_carries_task_outputs_and_verdict_file() {
    let tmp = tempfile::tempdir().unwrap();
    let r = resolve_prompt_in(tmp.path(), None, "ceo").unwrap();
    let text = compose_prompt(
        &r,
        "review the plan",
        &[tmp.path().join("a.md")],
        Some(&tmp.path().join("v.md")),
    );
    assert!(text.starts_with(&r.text.trim_end().to_string()));
    assert!(text.contains("## Task\n\nreview the plan\n"));
    assert!(text.contains(&format!("- {}\n", tmp.path().join("a.md").display())));
    assert!(text.contains(&format!("to {}\n", tmp.path().join("v.md").display())));
}
