//! The experiment core as a new user meets it (issue: "every project scores
//! truthfully"): a plain Python project with no manifest and no ignores, driven by hand
//! — init, eval, begin, a change, QA through `factory agent --exp`, precheck — scores its
//! real tests, stays clean, and keeps an honest improvement.

use std::fs;

use crate::support::{GateProject as Project, commit_all, text};
use git2::Repository;
use serde_json::Value;

/// What only these tests need of the gate's project.
impl Project {
    /// `git status` of the user's checkout, ignored files included.
    fn status(&self) -> Vec<String> {
        let repo = Repository::open(self.path()).unwrap();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .include_ignored(true)
            .recurse_untracked_dirs(true);
        repo.statuses(Some(&mut opts))
            .unwrap()
            .iter()
            .filter_map(|s| s.path().ok().map(str::to_string))
            .collect()
    }
}

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n";

/// calc.py, test_calc.py and a committed factory.md: no pyproject.toml, no .gitignore.
fn plain_python() -> Project {
    Project::init(&[
        ("calc.py", CALC),
        ("test_calc.py", TESTS),
        (
            "factory.md",
            "# Calc\n\n## Goal\nmore tested code\n\n## Scope\n- *.py\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.3\n\n## Constraints\n- none\n",
        ),
    ])
}

#[test]
fn a_python_project_without_a_manifest_scores_its_real_tests_and_stays_clean() {
    let p = plain_python();
    let o = p.factory(&["init"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(
        said.contains("commit it") && said.contains("git add .gitignore"),
        "init says what to commit: {said}"
    );
    let o = p.factory(&["eval", "--json"]);
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    assert_eq!(report["language"], "python", "{report:#}");
    // What runs is said while it runs, on stderr (stdout stays JSON).
    let progress = text(&o.stderr);
    assert!(
        progress.contains("eval: tests: `python3") && progress.contains("eval: tests: done in"),
        "{progress}"
    );
    assert_eq!(report["test_count"], 1, "{report:#}");
    let tests = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "tests")
        .unwrap_or_else(|| panic!("no tests dimension: {report:#}"));
    assert_eq!(tests["passed"], true, "{report:#}");
    assert!(report["total"].as_f64().unwrap() > 0.0, "{report:#}");
    // The eval wrote nothing into the user's tree: no __pycache__, no .pytest_cache.
    let left: Vec<String> = p
        .status()
        .into_iter()
        .filter(|f| !f.starts_with(".factory/") && f != ".gitignore")
        .collect();
    assert!(left.is_empty(), "the eval left files behind: {left:?}");
    // The human summary speaks English, not Rust.
    let o = p.factory(&["eval", "--record-baseline"]);
    let err = text(&o.stderr);
    assert!(!err.contains("Some(") && !err.contains("None"), "{err}");
}

#[test]
fn an_honest_change_driven_by_hand_with_qa_run_through_factory_passes_precheck() {
    let p = plain_python();
    assert!(p.factory(&["init"]).status.success());
    // Left uncommitted on purpose: the user has not committed init's .gitignore yet.
    let o = p.factory(&["begin", "--hypothesis", "cover negatives"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = text(&o.stdout).trim().to_string();
    let wt = p.path().join(format!(
        ".factory/worktrees/exp-{:03}",
        id.parse::<u32>().unwrap()
    ));
    fs::write(
        wt.join("test_calc.py"),
        format!(
            "{TESTS}\n    def test_negative(self):\n        self.assertEqual(add(-1, -2), -3)\n"
        ),
    )
    .unwrap();
    commit_all(&Repository::open(&wt).unwrap(), "cover negatives");

    // Before QA: the refusal says what the rule is and how to satisfy it.
    let o = p.factory(&["precheck", "--exp", &id, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let qa = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "qa_execution")
        .unwrap()["details"]
        .to_string();
    assert!(
        qa.contains("docs/sacred-rules.md") && qa.contains(&format!("--exp {id}")),
        "{qa}"
    );

    for role in ["health_checker", "code_reviewer", "adversarial_tester"] {
        let o = p.factory(&[
            "agent",
            role,
            "--exp",
            &id,
            "--runner",
            "exec",
            "--agent-cmd",
            "echo reviewed in $(basename $PWD)",
        ]);
        assert!(o.status.success(), "{role}: {}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains(&format!("exp-{:03}", id.parse::<u32>().unwrap())),
            "the agent worked in the experiment's worktree: {}",
            text(&o.stdout)
        );
    }
    let o = p.factory(&["precheck", "--exp", &id, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    assert_eq!(v["passed"], true, "{v:#}");
    let progress = text(&o.stderr);
    assert!(
        // The first precheck (refused for want of QA) measured the base; this one
        // reuses that measurement.
        progress.contains("measured before under the same configuration, set-up and toolchain")
            && progress.contains("precheck: measuring the head commit")
            && progress.contains("precheck: guards:"),
        "{progress}"
    );
    let o = p.factory(&["finalize", "--id", &id, "--verdict", "keep"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The user's checkout: only init's .gitignore and factory's own directory.
    let left: Vec<String> = p
        .status()
        .into_iter()
        .filter(|f| !f.starts_with(".factory/"))
        .collect();
    assert_eq!(left, vec![".gitignore".to_string()]);
}

#[test]
fn factory_agent_for_an_unknown_experiment_names_begin() {
    let p = plain_python();
    assert!(p.factory(&["init"]).status.success());
    let o = p.factory(&[
        "agent",
        "health_checker",
        "--exp",
        "7",
        "--runner",
        "exec",
        "--agent-cmd",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("experiment 7 has no worktree") && err.contains("factory begin"),
        "{err}"
    );
}

#[test]
fn the_reviewed_eval_profile_is_what_eval_runs_and_stays_approved_until_it_changes() {
    let p = plain_python();
    assert!(p.factory(&["init"]).status.success());
    assert!(p.factory(&["discover"]).status.success());
    let o = p.factory(&["discover", "--approve"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let state = |p: &Project| text(&p.factory(&["detect"]).stdout).trim().to_string();
    assert_eq!(state(&p), "has_factory");

    // Looking again keeps the approval.
    let o = p.factory(&["discover"]);
    assert!(text(&o.stdout).contains("reviewed"), "{}", text(&o.stdout));
    assert_eq!(state(&p), "has_factory");

    // Editing the approved profile changes what eval runs, and puts it back in review.
    let path = p.path().join(".factory/eval_profile.json");
    let mut profile: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    for d in profile["dimensions"].as_array_mut().unwrap() {
        if d["name"] == "tests" {
            d["command"] = Value::from("echo '1 failed' >&2; exit 1");
        }
    }
    fs::write(&path, serde_json::to_string_pretty(&profile).unwrap()).unwrap();
    assert_eq!(state(&p), "evals_pending_review");
    let o = p.factory(&["eval", "--json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["profile"], "pending", "{report:#}");
    let tests = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "tests")
        .unwrap();
    assert_eq!(tests["passed"], false, "the edited command ran: {report:#}");
    let o = p.factory(&["eval"]);
    assert!(
        text(&o.stdout).contains("eval profile: pending review"),
        "{}",
        text(&o.stdout)
    );

    // Precheck names the pending profile and refuses it.
    let o = p.factory(&["begin", "--hypothesis", "anything"]);
    let id = text(&o.stdout).trim().to_string();
    let o = p.factory(&["precheck", "--exp", &id, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["failures"].to_string().contains("eval_profile"), "{v:#}");

    // Approving the edit makes it the profile in force.
    assert!(p.factory(&["discover", "--approve"]).status.success());
    assert_eq!(state(&p), "has_factory");
    let o = p.factory(&["eval", "--json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["profile"], "approved", "{report:#}");
}

#[test]
fn a_non_utf8_row_in_results_tsv_is_skipped_with_a_warning_and_nothing_else_breaks() {
    let p = plain_python();
    assert!(p.factory(&["init"]).status.success());
    let o = p.factory(&["begin", "--hypothesis", "one"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = p.factory(&["finalize", "--id", "1", "--verdict", "revert"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tsv = p.path().join(".factory/results.tsv");
    let mut bytes = fs::read(&tsv).unwrap();
    bytes.extend_from_slice(b"9\tbroken \xff row\n");
    fs::write(&tsv, &bytes).unwrap();

    let o = p.factory(&["history"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("one"), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("results.tsv:3: unreadable row skipped"),
        "{}",
        text(&o.stderr)
    );
    let o = p.factory(&["begin", "--hypothesis", "two"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = text(&o.stdout).trim().to_string();
    let o = p.factory(&["precheck", "--exp", &id, "--json"]);
    assert!(
        serde_json::from_slice::<Value>(&o.stdout).is_ok(),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let o = p.factory(&["finalize", "--id", &id, "--verdict", "revert"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The unreadable row is still there: factory never rewrites what it cannot read.
    assert!(fs::read(&tsv).unwrap().windows(3).any(|w| w == b"\xff r"));
}

#[test]
fn factory_md_mistakes_are_reported_with_their_line() {
    let base = "# X\n\n## Goal\nfaster\n\n## Scope\n- *.py\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.5\n\n## Constraints\n- none\n";
    for (md, needle) in [
        (
            base.replace("## Eval threshold\n0.5", "## Eval threshold\n7"),
            "factory.md:15: section `Eval threshold` (eval_threshold): 7 is outside 0..1",
        ),
        (
            base.replace("## Scope\n- *.py\n", "## Scope\n"),
            "factory.md:6: section `Scope` (scope): lists no files",
        ),
        (
            format!("{base}\n## Goal\nsmaller\n"),
            "factory.md:20: section `Goal` appears twice (lines 3 and 20)",
        ),
    ] {
        let p = plain_python();
        fs::write(p.path().join("factory.md"), &md).unwrap();
        let o = p.factory(&["init"]);
        assert_eq!(o.status.code(), Some(1), "{md}");
        let err = text(&o.stderr).replace('│', " ");
        let err = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}

#[test]
fn a_parallel_count_outside_one_to_eight_is_rejected_at_config_time() {
    let base = "# X\n\n## Goal\nfaster\n\n## Scope\n- *.py\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.5\n\n## Constraints\n- none\n\n## Parallel\n- selection_strategy: best_score\n";
    for bad in ["0", "-1", "9"] {
        let p = plain_python();
        let md = format!("{base}- parallel_hypotheses: {bad}\n");
        fs::write(p.path().join("factory.md"), &md).unwrap();
        let needle = format!(
            "factory.md:22: section `Parallel`: `parallel_hypotheses` is {bad}; write a whole number from 1 to 8"
        );
        // `init` and every command that reads factory.md refuse it the same way.
        for args in [&["init"][..], &["eval"]] {
            let o = p.factory(args);
            assert_eq!(o.status.code(), Some(1), "{args:?} with {bad}");
            let err = text(&o.stderr).replace('│', " ");
            let err = err.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(err.contains(&needle), "{needle:?} not in {err}");
            assert!(err.contains("factory init --reparse"), "{err}");
        }
        assert!(!p.path().join(".factory/config.json").exists());
    }
    // In range, it is accepted and kept in config.json.
    let p = plain_python();
    fs::write(
        p.path().join("factory.md"),
        format!("{base}- parallel_hypotheses: 8\n"),
    )
    .unwrap();
    let o = p.factory(&["init"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let config: Value =
        serde_json::from_str(&fs::read_to_string(p.path().join(".factory/config.json")).unwrap())
            .unwrap();
    assert_eq!(config["parallel"]["parallel_hypotheses"], 8);
    assert_eq!(config["parallel"]["selection_strategy"], "best_score");
}

#[test]
fn doctor_names_each_set_up_problem_with_its_fix_until_the_project_is_ready() {
    let p = plain_python();
    let o = p.factory(&["doctor", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let findings: Value = serde_json::from_slice(&o.stdout).unwrap();
    let failing: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["ok"] == false)
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(failing.contains(&"ignores"), "{findings:#}");
    // No eval profile is what a run accepts (it measures what introspection finds).
    assert!(!failing.contains(&"eval profile"), "{findings:#}");
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["ok"] == true || f["fix"].is_string()),
        "every problem has a fix: {findings:#}"
    );

    assert!(p.factory(&["init"]).status.success());
    commit_all(
        &Repository::open(p.path()).unwrap(),
        "ignore factory's state",
    );
    assert!(p.factory(&["discover", "--approve"]).status.success());
    // `exec` with no command: doctor fails it, as `factory run` refuses it.
    fs::write(
        p.home.path().join("config.toml"),
        "[defaults]\nrunner = \"exec\"\n",
    )
    .unwrap();
    let o = p.factory(&["doctor"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("the exec runner needs a command"), "{out}");
    assert!(out.contains("[runners.exec]"), "{out}");
    let run = p.factory(&["run", "improve"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        text(&run.stderr).contains("the exec runner needs a command"),
        "{}",
        text(&run.stderr)
    );
    // The flags a run will be given are what doctor checks when given them too.
    let o = p.factory(&[
        "doctor",
        "--runner",
        "exec",
        "--agent-cmd",
        "cat {prompt_file} > /dev/null",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("`exec` (from command line)"), "{out}");
    // With its command in config.toml, both agree it is ready; the source named is the
    // file actually read, in $FACTORY_HOME.
    let config = p.home.path().join("config.toml");
    fs::write(
        &config,
        "[defaults]\nrunner = \"exec\"\n\n[runners.exec]\ncommand = \"cat {prompt_file} > /dev/null\"\n",
    )
    .unwrap();
    let o = p.factory(&["doctor"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("ready: factory can run here"), "{out}");
    assert!(
        out.contains(&format!("`exec` (from {})", config.display())),
        "{out}"
    );
    let plan = p.factory(&["run", "improve", "--dry-run"]);
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    assert!(
        text(&plan.stdout).contains("cat "),
        "the plan shows the configured command: {}",
        text(&plan.stdout)
    );

    // A damaged config.json: doctor names it, a dry run refuses it as the run does, and
    // init says so and leaves the file as it is.
    let cfg = p.path().join(".factory/config.json");
    let good = fs::read(&cfg).unwrap();
    fs::write(&cfg, "{broken").unwrap();
    let o = p.factory(&["doctor"]);
    assert!(
        text(&o.stdout).contains("FAIL  config.json"),
        "{}",
        text(&o.stdout)
    );
    assert!(
        text(&o.stdout).contains("factory init --reparse"),
        "{}",
        text(&o.stdout)
    );
    let dry = p.factory(&["run", "improve", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(2));
    assert!(
        text(&dry.stderr).contains("config.json is invalid"),
        "{}",
        text(&dry.stderr)
    );
    let init = p.factory(&["init"]);
    assert_eq!(init.status.code(), Some(1));
    assert!(
        text(&init.stderr).contains("config.json is invalid"),
        "{}",
        text(&init.stderr)
    );
    assert_eq!(fs::read(&cfg).unwrap(), b"{broken");
    fs::write(&cfg, good).unwrap();

    // An event log that does not verify: doctor names the key and home it verified with
    // and how to set the log aside.
    fs::write(p.path().join(".factory/events.jsonl"), "{\"type\":\"x\"}\n").unwrap();
    let o = p.factory(&["doctor"]);
    let out = text(&o.stdout);
    assert!(out.contains("FAIL  event log"), "{out}");
    assert!(
        out.contains(&format!("FACTORY_HOME={}", p.home.path().display())),
        "{out}"
    );
    assert!(out.contains("factory doctor --set-aside-log"), "{out}");
}
