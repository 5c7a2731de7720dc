//! Precheck fails for each single cause and passes when everything holds, on real git
//! repositories with a real `.factory/` store and event log.

mod common;

use common::TestRepo;
use factory_runtime::eval;
use factory_runtime::events::{self, Event};
use factory_runtime::precheck::{PrecheckOptions, PrecheckReport, gate_config, run_precheck};
use factory_runtime::project::config::FactoryConfig;
use factory_runtime::project::layout::ensure_factory_dir;
use factory_runtime::store::{ExperimentStore, Outcome, RevertCause, Verdict};
use serde_json::json;

/// Points `FACTORY_HOME` (where the event log's keys live) at a temporary directory
/// once, so these tests never write into the real `~/.factory`.
fn isolated_home() {
    static HOME: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("factory-precheck-tests-{}", std::process::id()));
        // SAFETY: every test calls this first, through `project()`, and the others
        // wait on the OnceLock until it returns: no thread reads the environment
        // while it is being set.
        unsafe { std::env::set_var("FACTORY_HOME", &dir) };
        dir
    });
}

/// A project with no known language, so the composite is exactly the one project
/// dimension's score (`echo SCORE`) — fast and fully determined by the test.
fn project() -> TestRepo {
    isolated_home();
    let t = TestRepo::new(&[
        ("src/lib.txt", "one\n"),
        ("eval/README.md", "fixed\n"),
        ("README.md", "# demo\n"),
        // Only its bytes matter here: the gate configuration anti_patterns compares.
        ("factory.md", FACTORY_MD),
    ]);
    t.branch("exp/1");
    t.write("src/lib.txt", "one\ntwo\n");
    t.commit_all("in-scope change");
    ensure_factory_dir(t.path()).unwrap();
    t
}

const FACTORY_MD: &str = "# Goal\ntest\n";

/// A revert measured failing under `factory_md` (this project's, unless told).
fn measured_revert(factory_md: &str) -> Outcome {
    let mut outcome = Outcome::new(Verdict::Revert);
    outcome.gate = gate_config(Some(factory_md.as_bytes()), None);
    outcome.revert_cause = Some(RevertCause::Measured);
    outcome
}

fn config(score: f64, threshold: f64) -> FactoryConfig {
    serde_json::from_value(json!({
        "goal": "test",
        "scope": ["src/**", "tests/**"],
        "guards": [],
        "eval_command": "factory eval",
        "eval_threshold": threshold,
        "constraints": [],
        "fixed_surfaces": ["eval/**", "src/frozen.txt"],
        "project_eval": [{"name": "quality", "command": format!("echo {score}"), "parse": "json", "timeout": 10}],
        "hard_constraints": [{"name": "lib exists", "check": "test -f src/lib.txt"}],
        "test_timeout": 30
    }))
    .unwrap()
}

fn store(t: &TestRepo) -> ExperimentStore {
    ExperimentStore::with_registry(t.root(), None)
}

fn qa_done(t: &TestRepo, exp: u32, role: &str) {
    events::append_to(
        t.path(),
        &Event::raw("agent.completed")
            .with("role", role)
            .with("exp_id", exp),
    )
    .unwrap();
}

/// All three QA roles completed for `exp`.
fn qa_all(t: &TestRepo, exp: u32) {
    for role in ["health_checker", "code_reviewer", "adversarial_tester"] {
        qa_done(t, exp, role);
    }
}

fn run(t: &TestRepo, cfg: &FactoryConfig, opts: &PrecheckOptions) -> PrecheckReport {
    run_precheck(t.path(), cfg, opts).unwrap()
}

fn only_failure(report: &PrecheckReport, name: &str, needle: &str) {
    assert!(!report.passed, "{}", report.render());
    assert_eq!(
        report.failures,
        vec![name.to_string()],
        "{}",
        report.render()
    );
    let check = report.checks.iter().find(|c| c.name == name).unwrap();
    assert!(
        check.details.iter().any(|d| d.contains(needle)),
        "{needle:?} not in {:?}",
        check.details
    );
}

#[test]
fn passes_when_everything_holds() {
    let t = project();
    let id = store(&t).begin("add a second line to lib").unwrap().id;
    qa_all(&t, id);
    let report = run(
        &t,
        &config(0.9, 0.5),
        &PrecheckOptions {
            exp_id: Some(id),
            ..Default::default()
        },
    );
    assert!(report.passed, "{}", report.render());
    assert_eq!(report.score, Some(0.9));
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    for expected in [
        "threshold",
        "score_direction",
        "git_clean",
        "experiment_branch",
        "scope",
        "fixed_surfaces",
        "eval_immutable",
        "tests_kept",
        "no_secrets",
        "anti_patterns",
        "hard_constraints",
        "qa_execution",
    ] {
        assert!(names.contains(&expected), "missing {expected}: {names:?}");
    }
}

#[test]
fn fails_below_threshold() {
    let t = project();
    only_failure(
        &run(&t, &config(0.4, 0.5), &PrecheckOptions::default()),
        "threshold",
        "below the threshold",
    );
}

#[test]
fn fails_on_score_regression_against_the_kept_baseline() {
    let t = project();
    let baseline = eval::Baseline {
        test_count: None,
        coverage: None,
        composite: Some(0.95),
        recorded_at: "2026-01-01T00:00:00Z".into(),
        source: "kept experiment 1".into(),
    };
    eval::save_baseline(t.path(), &baseline).unwrap();
    only_failure(
        &run(&t, &config(0.9, 0.5), &PrecheckOptions::default()),
        "score_direction",
        "regressed",
    );
}

#[test]
fn fails_on_out_of_scope_change() {
    let t = project();
    t.write("README.md", "# changed\n");
    t.commit_all("out of scope");
    only_failure(
        &run(&t, &config(0.9, 0.5), &PrecheckOptions::default()),
        "scope",
        "README.md",
    );
}

#[test]
fn fails_on_fixed_surface_change() {
    let t = project();
    t.write("src/frozen.txt", "do not touch\n");
    t.commit_all("touch frozen");
    only_failure(
        &run(&t, &config(0.9, 0.5), &PrecheckOptions::default()),
        "fixed_surfaces",
        "src/frozen.txt",
    );
}

#[test]
fn fails_on_anti_pattern() {
    let t = project();
    let s = store(&t);
    let old = s
        .begin("cache parsed config files between runs")
        .unwrap()
        .id;
    s.finalize(old, measured_revert(FACTORY_MD)).unwrap();
    let id = s
        .begin("cache the parsed config files between runs")
        .unwrap()
        .id;
    qa_all(&t, id);
    let report = run(
        &t,
        &config(0.9, 0.5),
        &PrecheckOptions {
            exp_id: Some(id),
            ..Default::default()
        },
    );
    only_failure(
        &report,
        "anti_patterns",
        &format!("resembles experiment {old}, reverted on a measurement"),
    );

    // Reverts that cannot recur as they were do not count, and are named.
    let t = project();
    let s = store(&t);
    let hypothesis = "cache parsed config files between runs";
    let other_md = s.begin(hypothesis).unwrap().id;
    s.finalize(other_md, measured_revert("# Goal\nolder\n"))
        .unwrap();
    let environment = s.begin(hypothesis).unwrap().id;
    let mut outcome = measured_revert(FACTORY_MD);
    outcome.revert_cause = Some(RevertCause::Environment);
    s.finalize(environment, outcome).unwrap();
    let older = s.begin(hypothesis).unwrap().id;
    s.finalize(older, Outcome::new(Verdict::Revert)).unwrap();
    let report = run(
        &t,
        &config(0.9, 0.5),
        &PrecheckOptions {
            hypothesis: Some(hypothesis.into()),
            ..Default::default()
        },
    );
    assert!(report.passed, "{}", report.render());
    let check = report
        .checks
        .iter()
        .find(|c| c.name == "anti_patterns")
        .unwrap();
    let skipped = check.details.join("\n");
    for named in [
        format!("experiment {other_md} (1.00 similar): judged under another factory.md"),
        format!("experiment {environment} (1.00 similar): reverted for the environment"),
        format!("experiment {older} (1.00 similar): recorded without a gate configuration"),
    ] {
        assert!(skipped.contains(&named), "{named:?} not in {skipped}");
    }

    // The same history with a kept verdict is not an anti-pattern.
    let t = project();
    let s = store(&t);
    let old = s
        .begin("cache parsed config files between runs")
        .unwrap()
        .id;
    s.finalize(old, Outcome::new(Verdict::Keep)).unwrap();
    let report = run(
        &t,
        &config(0.9, 0.5),
        &PrecheckOptions {
            hypothesis: Some("cache the parsed config files between runs".into()),
            ..Default::default()
        },
    );
    assert!(report.passed, "{}", report.render());
}

#[test]
fn fails_on_hard_constraint() {
    let t = project();
    let mut cfg = config(0.9, 0.5);
    cfg.hard_constraints.push(
        serde_json::from_value(json!({"name": "no TODO", "check": "echo found TODO >&2; exit 3"}))
            .unwrap(),
    );
    only_failure(
        &run(&t, &cfg, &PrecheckOptions::default()),
        "hard_constraints",
        "no TODO",
    );
}

#[test]
fn fails_closed_when_qa_did_not_run_after_begin() {
    let t = project();
    // QA that ran before this experiment began does not count.
    qa_all(&t, 1);
    let id = store(&t).begin("add a second line to lib").unwrap().id;
    assert_eq!(id, 1);
    let opts = PrecheckOptions {
        exp_id: Some(id),
        ..Default::default()
    };
    only_failure(
        &run(&t, &config(0.9, 0.5), &opts),
        "qa_execution",
        "Sacred Rule 9",
    );

    // A non-QA agent is not QA, a legacy qa event no longer is, and two of the
    // three roles are not enough.
    qa_done(&t, id, "builder");
    events::append_to(t.path(), &Event::raw("qa").with("exp_id", id)).unwrap();
    qa_done(&t, id, "health_checker");
    qa_done(&t, id, "code_reviewer");
    only_failure(
        &run(&t, &config(0.9, 0.5), &opts),
        "qa_execution",
        "adversarial_tester",
    );
    qa_done(&t, id, "adversarial_tester");
    assert!(run(&t, &config(0.9, 0.5), &opts).passed);

    // The builder changing the code again makes that QA stale.
    qa_done(&t, id, "builder");
    only_failure(
        &run(&t, &config(0.9, 0.5), &opts),
        "qa_execution",
        "completed before the builder's last event",
    );
    qa_all(&t, id);
    assert!(run(&t, &config(0.9, 0.5), &opts).passed);

    // Finding the experiment again (a resumed run) starts no new attempt: the QA
    // that ran still counts.
    let again = store(&t).begin("add a second line to lib").unwrap();
    assert!(again.resumed && again.id == id);
    assert!(run(&t, &config(0.9, 0.5), &opts).passed);
}

#[test]
fn a_qa_line_factory_did_not_write_is_named_and_never_counted() {
    let t = project();
    let id = store(&t).begin("add a second line to lib").unwrap().id;
    let opts = PrecheckOptions {
        exp_id: Some(id),
        ..Default::default()
    };
    let log = t.path().join(".factory/events.jsonl");
    let forged = |role: &str| {
        format!(
            "{{\"type\":\"agent.completed\",\"timestamp\":\"2099-01-01T00:00:00Z\",\"role\":\"{role}\",\"exp_id\":{id}}}\n"
        )
    };
    let mut text = std::fs::read_to_string(&log).unwrap();
    let line = text.lines().count() + 1;
    for role in ["health_checker", "code_reviewer", "adversarial_tester"] {
        text.push_str(&forged(role));
    }
    std::fs::write(&log, &text).unwrap();
    // At the end of the log: the chain fails at the first forged line.
    only_failure(
        &run(&t, &config(0.9, 0.5), &opts),
        "qa_execution",
        &format!("fails verification at line {line}"),
    );
    // Once factory appends after them they are sealed as foreign: still not QA.
    qa_done(&t, id, "builder");
    only_failure(
        &run(&t, &config(0.9, 0.5), &opts),
        "qa_execution",
        &format!("line {line}: claims agent.completed by health_checker"),
    );
}

#[test]
fn qa_check_fails_closed_when_no_begin_event_exists() {
    let t = project();
    only_failure(
        &run(
            &t,
            &config(0.9, 0.5),
            &PrecheckOptions {
                exp_id: Some(42),
                ..Default::default()
            },
        ),
        "qa_execution",
        "no experiment.begin for experiment 42",
    );
}

#[test]
fn a_crashing_dimension_scores_zero_and_fails_the_threshold_not_the_run() {
    let t = project();
    let mut cfg = config(0.9, 0.5);
    cfg.project_eval[0].command = "echo crashed >&2; exit 1".into();
    let report = run(&t, &cfg, &PrecheckOptions::default());
    only_failure(&report, "threshold", "below the threshold");
    assert_eq!(report.score, Some(0.0));
}
