//! The keep gate against a dishonest candidate (docs/gate.md, points 1–4): the built
//! binary, real git, temp dirs. Each attack is refused with a named reason; honest
//! improvements are kept; a noisy eval gives the same verdict every time.

use std::fs;

use crate::support::{GateProject as Project, commit_all, details, needs, text};
use git2::Repository;
use serde_json::Value;

fn factory_md(eval_command: &str, extra: &str) -> String {
    format!(
        "# Score\n\n## Goal\na higher score\n\n## Scope\n- src/**\n\n## Guards\n- test -f src/level.txt\n\n## Eval command\n{eval_command}\n\n## Eval threshold\n0.5\n\n## Constraints\n- none\n\n## Test timeout\n30\n{extra}"
    )
}

/// A project on `main` with no known language (no hygiene checks): the composite is
/// what `eval_command` prints. `src/level.txt` holds the level it reads.
fn project(eval_command: &str, level: &str, extra_md: &str) -> Project {
    let md = factory_md(eval_command, extra_md);
    let level = format!("{level}\n");
    Project::init(&[
        (".gitignore", ".factory/\nbonus.txt\n"),
        ("src/level.txt", &level),
        ("README.md", "# score\n"),
        ("factory.md", &md),
    ])
}

/// The score is `bonus.txt` when present (an ignored file), else `src/level.txt`.
const READS_BONUS: &str = "if [ -f bonus.txt ]; then cat bonus.txt; else cat src/level.txt; fi";

fn failures(v: &Value) -> String {
    v["failures"].to_string()
}

#[test]
fn rewritten_store_files_are_not_evidence() {
    let p = project("cat src/level.txt", "0.7", "");
    let id = p.begin("claim a better score");
    // No real change; the candidate forges the reference and the last eval instead,
    // in the project's store and in its own worktree.
    p.build(id, &[("src/notes.txt", "nothing\n")]);
    for root in [p.path().to_path_buf(), p.worktree(id)] {
        fs::create_dir_all(root.join(".factory")).unwrap();
        fs::write(
            root.join(".factory/eval_baseline.json"),
            r#"{"test_count": null, "coverage": null, "composite": 0.0, "recorded_at": "2020-01-01T00:00:00Z", "source": "manual"}"#,
        )
        .unwrap();
        fs::write(root.join(".factory/last_eval.json"), r#"{"total": 1.0}"#).unwrap();
    }
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(failures(&v).contains("score_direction"), "{v}");
    assert!(
        details(&v, "score_direction").contains("no measurable improvement"),
        "{v}"
    );
    assert_eq!(v["score_before"], 0.7);
    assert_eq!(v["comparison"]["runs"], 3);
    assert_eq!(v["comparison"]["base"]["spread"], 0.0);
    assert!(p.scratch_left().is_empty(), "{:?}", p.scratch_left());
}

/// A candidate with a worse score, a lower threshold and a wider scope, all in its
/// factory.md, through QA: the project and the experiment's id.
fn bar_lowered_in_factory_md() -> (Project, u32) {
    let p = project("cat src/level.txt", "0.7", "");
    let id = p.begin("lower the bar");
    let widened = factory_md("cat src/level.txt", "")
        .replace("- src/**", "- **")
        .replace("0.5\n", "0.0\n");
    p.build(
        id,
        &[
            ("src/level.txt", "0.4\n"),
            ("factory.md", &widened),
            ("README.md", "# out of scope\n"),
        ],
    );
    p.qa_done(id);
    (p, id)
}

#[test]
fn factory_md_edited_in_the_experiment_is_refused_and_ignored() {
    let (p, id) = bar_lowered_in_factory_md();
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    let f = failures(&v);
    for check in ["factory_md", "scope", "threshold", "score_direction"] {
        assert!(f.contains(check), "{check} missing: {v}");
    }
    assert!(details(&v, "scope").contains("README.md"), "{v}");
    // .factory/config.json is a cache, never the gate's authority.
    let id = p.begin("config cache");
    fs::write(
        p.path().join(".factory/config.json"),
        r#"{"goal": "g", "scope": ["**"], "guards": [], "eval_command": "echo 1", "eval_threshold": 0.0, "constraints": []}"#,
    )
    .unwrap();
    p.build(id, &[("README.md", "# out of scope\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(failures(&v).contains("scope"), "{v}");
}

/// What a person reads when the gate refuses: the text render of a precheck with
/// four failing checks, pinned (times and the temp paths stand in as names).
#[test]
fn a_refused_precheck_renders_every_failing_check_with_its_reason() {
    let (p, id) = bar_lowered_in_factory_md();
    let o = p.factory(&["precheck", "--exp", &id.to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let project = p.path().display().to_string();
    let render = format!("{}{}", text(&o.stdout), text(&o.stderr)).replace(&project, "[project]");
    insta::with_settings!({filters => vec![
        (r"\b\d+(\.\d+)?\s?(ms|s)\b", "[time]"),
        (r"/tmp/[^\s`'\)]+", "[tmp]"),
        (r"\b[0-9a-f]{40}\b", "[sha]"),
        (r"\b[0-9a-f]{7,12}\b", "[short-sha]"),
    ]}, {
        insta::assert_snapshot!(render);
    });
}

#[test]
fn ignored_and_untracked_files_do_not_reach_the_eval() {
    let p = project(READS_BONUS, "0.7", "");
    let id = p.begin("a bonus");
    p.build(id, &[("src/notes.txt", "nothing\n")]);
    // Ignored: no guard sees it, and the gate's checkout does not have it.
    fs::write(p.worktree(id).join("bonus.txt"), "0.99\n").unwrap();
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["score"], 0.7, "the ignored file was not measured: {v}");
    assert!(
        details(&v, "score_direction").contains("no measurable improvement"),
        "{v}"
    );
    // Untracked: named by git_clean, and not measured either.
    fs::write(p.worktree(id).join("src/extra.txt"), "x\n").unwrap();
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(details(&v, "git_clean").contains("src/extra.txt"), "{v}");
}

#[test]
fn a_moved_target_ref_is_reported_and_never_followed() {
    let p = project("cat src/level.txt", "0.7", "");
    let id = p.begin("worse, then move main");
    let head = p.build(id, &[("src/level.txt", "0.6\n")]);
    // The candidate points `main` at its own commit, so that a merge base would be it.
    let repo = Repository::open(p.path()).unwrap();
    repo.reference("refs/heads/main", head, true, "move")
        .unwrap();
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(details(&v, "score_direction").contains("regressed"), "{v}");
    assert_eq!(
        v["score_before"], 0.7,
        "measured from the recorded base: {v}"
    );
    let base = details(&v, "base_commit");
    assert!(
        base.contains("moved") && base.contains(&head.to_string()),
        "{v}"
    );
}

#[test]
fn an_eval_command_that_crashes_is_an_error_never_a_verdict() {
    let p = project("sh src/eval.sh", "0.7", "");
    fs::write(p.path().join("src/eval.sh"), "cat src/level.txt\n").unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "eval script");
    let id = p.begin("crash the eval");
    p.build(id, &[("src/eval.sh", "echo boom >&2; exit 3\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v}");
    assert!(
        v.get("passed").is_none() && v.get("verdict").is_none(),
        "{v}"
    );
    let err = v["error"].as_str().unwrap();
    assert!(err.contains("head") && err.contains("exit code 3"), "{err}");
    let record: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/experiments/001/precheck.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["passed"], false);
    assert!(
        record["error"].as_str().unwrap().contains("boom"),
        "{record}"
    );
    let o = p.factory(&["finalize", "--id", "1", "--verdict", "keep"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    // Printing nothing parsable is the same error.
    p.build(id, &[("src/eval.sh", "echo all good\n")]);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v}");
    assert!(v["error"].as_str().unwrap().contains("no score"), "{v}");
    assert!(p.scratch_left().is_empty(), "{:?}", p.scratch_left());
}

#[test]
fn a_failing_guard_command_refuses_a_better_score() {
    // The score rises, but factory.md's guard `test -f src/level.txt` no longer holds.
    let p = project(
        "cat src/level.txt 2>/dev/null || cat src/alt.txt",
        "0.7",
        "",
    );
    let id = p.begin("move the level");
    fs::remove_file(p.worktree(id).join("src/level.txt")).unwrap();
    p.build(id, &[("src/alt.txt", "0.9\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["passed"], false, "{v}");
    assert!(failures(&v).contains("guard_commands"), "{v}");
    let why = details(&v, "guard_commands");
    assert!(
        why.contains("test -f src/level.txt") && why.contains("exit code 1"),
        "{why}"
    );
    assert!(
        !failures(&v).contains("score_direction"),
        "the score did rise: {v}"
    );
    let o = p.factory(&["finalize", "--id", "1", "--verdict", "keep"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}

#[test]
fn a_run_whose_precheck_errors_records_the_experiment_as_error() {
    let p = project("sh src/eval.sh", "0.7", "");
    fs::write(p.path().join("src/eval.sh"), "cat src/level.txt\n").unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "eval script");
    fs::write(
        p.path().join(".factory-build.sh"),
        "cd .factory/worktrees/exp-001 && printf 'exit 3\\n' > src/eval.sh && git add -A && git -c user.name=t -c user.email=t@t commit -qm crash\n",
    )
    .unwrap();
    let wf = p.path().join(".factory-crash.fwf");
    fs::write(
        &wf,
        "workflow crash {\n    fn begin \"factory begin {{project_path}} --hypothesis crash\"\n    fn build \"sh .factory-build.sh\"\n    gate precheck by fn(\"factory precheck {{project_path}} --exp {{exp_id}} --json\")\n    fn keep \"factory finalize {{project_path}} --id {{exp_id}} --verdict keep\"\n    fn revert \"factory finalize {{project_path}} --id {{exp_id}} --verdict revert\"\n    flow {\n        start -> begin -> build -> precheck\n        precheck.proceed -> keep -> end\n        precheck.halt -> revert -> end\n    }\n}\n",
    )
    .unwrap();
    let o = p.factory(&["run", wf.to_str().unwrap()]);
    let out = format!("{}\n{}", text(&o.stdout), text(&o.stderr));
    let rows = fs::read_to_string(p.path().join(".factory/results.tsv")).unwrap_or_default();
    let header: Vec<&str> = rows.lines().next().unwrap_or("").split('\t').collect();
    let col = header.iter().position(|h| *h == "verdict").unwrap();
    let verdicts: Vec<&str> = rows
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(col))
        .collect();
    assert_eq!(verdicts, vec!["error"], "{out}");
}

#[test]
fn honest_improvements_are_kept() {
    // A JSON object's `score` (booleans are details), and a number inside text.
    for (command, better) in [
        (
            "printf '{\"passed\": true, \"score\": %s}\\n' $(cat src/level.txt)",
            "0.8",
        ),
        ("echo \"level: $(cat src/level.txt)\"", "0.75"),
    ] {
        let p = project(command, "0.7", "");
        keep_honest(&p, &[("src/level.txt", &format!("{better}\n"))]);
    }
    // A real code change: the eval measures how many sums a function gets right, and
    // the change fixes its bug.
    let command = "python3 -B -c \"import sys; sys.path.insert(0, 'src'); from calc import add; print(sum(add(a, b) == a + b for a in range(5) for b in range(5)) / 25)\"";
    let p = project(command, "0.7", "");
    fs::write(
        p.path().join("src/calc.py"),
        "def add(a, b):\n    return a + b if a else 0\n",
    )
    .unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "calc");
    keep_honest(&p, &[("src/calc.py", "def add(a, b):\n    return a + b\n")]);
}

/// Begins an experiment, commits `files`, completes QA, prechecks and keeps it.
fn keep_honest(p: &Project, files: &[(&str, &str)]) {
    let id = p.begin("an honest improvement");
    let head = p.build(id, files);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["commit"], head.to_string());
    let o = p.factory(&["finalize", "--id", &id.to_string(), "--verdict", "keep"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("keep"), "{}", text(&o.stdout));
}

#[test]
fn a_noisy_eval_gives_the_same_verdict_ten_times() {
    // ±10% multiplicative jitter around the level; the change doubles the level.
    let jitter = "awk -v s=\"$(od -An -N2 -tu2 /dev/urandom)\" -v b=\"$(cat src/level.txt)\" 'BEGIN { srand(s); printf \"%.4f\\n\", b * (0.9 + 0.2 * rand()) }'";
    let p = project(jitter, "0.4", "");
    let id = p.begin("double the level");
    p.build(id, &[("src/level.txt", "0.8\n")]);
    p.qa_done(id);
    let mut verdicts = Vec::new();
    let mut spreads = Vec::new();
    for _ in 0..10 {
        let (code, v) = p.precheck(id);
        verdicts.push((code, v["passed"].clone()));
        spreads.push(v["comparison"]["head"]["spread"].as_f64().unwrap_or(0.0));
    }
    assert!(
        verdicts.iter().all(|v| *v == (Some(0), Value::Bool(true))),
        "{verdicts:?}"
    );
    assert!(
        spreads.iter().any(|s| *s > 0.0),
        "the eval really was noisy: {spreads:?}"
    );
}

/// ±10% multiplicative jitter around the level in `src/level.txt`.
const JITTER: &str = "awk -v s=\"$(od -An -N2 -tu2 /dev/urandom)\" -v b=\"$(cat src/level.txt)\" 'BEGIN { srand(s); printf \"%.4f\\n\", b * (0.9 + 0.2 * rand()) }'";

#[test]
fn an_improvement_inside_the_noise_gets_extra_runs_and_a_stable_verdict() {
    // 0.5 → 0.585: a little more than the ±10% jitter, so k = 3 runs often (about 1 in 3)
    // cannot tell; 30 prechecks all take k runs with odds of about (2/3)^30, 1 in 200,000
    // (15 failed about once in 400 suites).
    let p = project(JITTER, "0.5", "");
    let id = p.begin("raise the level a little");
    p.build(id, &[("src/level.txt", "0.585\n")]);
    p.qa_done(id);
    let mut verdicts = Vec::new();
    let mut extended = 0;
    for _ in 0..30 {
        let (code, v) = p.precheck(id);
        verdicts.push((code, v["passed"].clone()));
        let c = &v["comparison"];
        assert_eq!(c["planned_runs"], 3, "{v}");
        assert_eq!(
            c["base"]["runs"].as_array().unwrap().len() as u64,
            c["runs"].as_u64().unwrap()
        );
        if c["runs"] == 9 {
            extended += 1;
            assert!(
                c["extra_runs"]
                    .as_str()
                    .unwrap()
                    .contains("inside the noise"),
                "{v}"
            );
            assert!(
                details(&v, "score_direction").contains("more interleaved run"),
                "{v}"
            );
        } else {
            assert_eq!(c["runs"], 3, "{v}");
            assert!(c.get("extra_runs").is_none(), "{v}");
        }
    }
    assert!(
        verdicts.iter().all(|v| *v == (Some(0), Value::Bool(true))),
        "{verdicts:?}"
    );
    assert!(extended > 0, "no precheck took extra runs");
}

#[test]
fn a_deterministic_eval_takes_exactly_k_runs() {
    let p = project("cat src/level.txt", "0.7", "\n## Eval runs\n4\n");
    let id = p.begin("raise the level");
    p.build(id, &[("src/level.txt", "0.71\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v}");
    let c = &v["comparison"];
    assert_eq!(
        (c["runs"].clone(), c["planned_runs"].clone()),
        (4.into(), 4.into()),
        "{v}"
    );
    assert_eq!(c["head"]["runs"].as_array().unwrap().len(), 4, "{v}");
    assert!(c.get("extra_runs").is_none(), "{v}");
}

#[test]
fn a_target_branch_that_moves_on_legitimately_does_not_fail_the_experiment_branch() {
    let p = project("cat src/level.txt", "0.7", "");
    let id = p.begin("raise the level");
    // Someone else lands work on main after begin.
    fs::write(p.path().join("README.md"), "# score, documented\n").unwrap();
    let moved = commit_all(&Repository::open(p.path()).unwrap(), "docs on main");
    p.build(id, &[("src/level.txt", "0.8\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v}");
    assert!(!failures(&v).contains("experiment_branch"), "{v}");
    assert!(
        details(&v, "base_commit").contains(&moved.to_string()),
        "{v}"
    );
    let o = p.factory(&["finalize", "--id", &id.to_string(), "--verdict", "keep"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("keep"), "{}", text(&o.stdout));
}

#[test]
fn the_test_guard_runs_under_the_projects_test_timeout() {
    let dir_md =
        factory_md("cat src/level.txt", "").replace("## Test timeout\n30", "## Test timeout\n4");
    let p = project("cat src/level.txt", "0.7", "");
    fs::write(p.path().join("factory.md"), dir_md).unwrap();
    fs::write(
        p.path().join("test_slow.py"),
        "import time\nimport unittest\n\n\nclass Slow(unittest.TestCase):\n    def test_sleeps(self):\n        time.sleep(60)\n        self.assertTrue(True)\n",
    )
    .unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "a slow test");
    let id = p.begin("raise the level");
    p.build(id, &[("src/level.txt", "0.8\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    let d = details(&v, "tests_kept");
    assert!(
        d.contains("timed out after 4s") && d.contains("test_timeout"),
        "{v}"
    );
    assert!(
        d.contains("test_sleeps"),
        "the test running when killed is named: {d}"
    );
}

#[test]
fn a_threshold_relative_to_the_base_judges_the_change_not_the_scale() {
    // The eval's own scale sits below the fixed 0.5: a real improvement fails it.
    let p = project("cat src/level.txt", "0.30", "");
    let id = p.begin("raise the level");
    p.build(id, &[("src/level.txt", "0.40\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        details(&v, "threshold").contains("below the threshold 0.5000"),
        "{v}"
    );

    // `base`: no regression below the base commit; the improvement passes.
    let relative = |threshold: &str, extra: &str| {
        let p = project("cat src/level.txt", "0.30", extra);
        let md = fs::read_to_string(p.path().join("factory.md")).unwrap();
        fs::write(
            p.path().join("factory.md"),
            md.replace(
                "## Eval threshold\n0.5",
                &format!("## Eval threshold\n{threshold}"),
            ),
        )
        .unwrap();
        commit_all(&Repository::open(p.path()).unwrap(), "relative threshold");
        p
    };
    let p = relative("base", "");
    keep_honest(&p, &[("src/level.txt", "0.40\n")]);

    // A fall below the base fails `threshold` as well as the direction, naming `base`.
    let p = relative("base", "");
    let id = p.begin("lower the level");
    p.build(id, &[("src/level.txt", "0.20\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    let why = details(&v, "threshold");
    assert!(
        why.contains("head mean 0.2000") && why.contains("`base`"),
        "{why}"
    );

    // A dimension's own floor fails whatever the composite does.
    let p = relative("base", "\n## Dimension thresholds\n- eval_command: 0.5\n");
    let id = p.begin("raise the level a little");
    p.build(id, &[("src/level.txt", "0.40\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        details(&v, "threshold")
            .contains("dimension eval_command: 0.4000 is below its threshold 0.5000"),
        "{v}"
    );

    // A drop within a declared `base - t` is no regression of the composite either
    // (here nothing else shows what the change does, so it is still not kept).
    let p = relative(
        "base",
        "\n## Dimension thresholds\n- eval_command: base - 0.01\n",
    );
    let id = p.begin("a small cost for a cleaner file");
    p.build(id, &[("src/level.txt", "0.295\n")]);
    p.qa_done(id);
    let (_, v) = p.precheck(id);
    let direction = details(&v, "score_direction");
    assert!(
        direction
            .contains("eval_command: 0.3000 → 0.2950, within `base - 0.01` (counted as no change)")
            && !direction.contains("regressed below"),
        "{direction}"
    );
    assert!(!failures(&v).contains("threshold"), "{v}");
}

#[test]
fn a_deterministic_base_is_measured_once_per_commit_configuration_and_toolchain() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let dimension = format!(
        "\n## Project eval\n- name: probe\n  command: echo measured >> {}\n",
        log.path().display()
    );
    let p = project("factory eval", "0.5", &dimension);
    let id = p.begin("a change");
    p.build(id, &[("src/level.txt", "0.6\n")]);
    p.qa_done(id);
    let runs = || fs::read_to_string(log.path()).unwrap().lines().count();
    p.precheck(id);
    assert_eq!(runs(), 2, "the base and the head, once each");
    let o = p.factory(&["precheck", "--exp", &id.to_string()]);
    assert!(
        text(&o.stdout).contains("measured before under the same configuration")
            || text(&o.stderr).contains("measured before under the same configuration"),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert_eq!(runs(), 3, "the second precheck measured only the head");
    assert!(
        fs::read_dir(p.path().join(".factory/cache/base"))
            .unwrap()
            .count()
            == 1
    );

    // Another configuration at the base is another key: measured again.
    let md = fs::read_to_string(p.path().join("factory.md")).unwrap();
    fs::write(
        p.path().join("factory.md"),
        md.replace("## Test timeout\n30", "## Test timeout\n31"),
    )
    .unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "timeout");
    let id = p.begin("the same change on the new base");
    p.build(id, &[("src/level.txt", "0.6\n")]);
    p.qa_done(id);
    p.precheck(id);
    assert_eq!(
        runs(),
        5,
        "a new base commit and configuration: both sides measured"
    );
}

#[test]
fn a_base_kept_from_an_earlier_experiment_is_neither_set_up_nor_run_again() {
    needs("python3");
    let log = tempfile::NamedTempFile::new().unwrap();
    let extra = format!(
        "\n## Setup\n- echo setup >> {log}\n",
        log = log.path().display()
    );
    let p = project("factory eval", "0.5", &extra);
    // A unittest suite that logs each run and checks the level file.
    let test = format!(
        "import unittest\n\n\nclass LevelTest(unittest.TestCase):\n    def test_level(self):\n        with open({log:?}, 'a') as f:\n            f.write('tests\\n')\n        with open('src/level.txt') as f:\n            self.assertTrue(float(f.read()) < 1)\n",
        log = log.path().display().to_string()
    );
    fs::create_dir_all(p.path().join("tests")).unwrap();
    fs::write(p.path().join("tests/test_level.py"), test).unwrap();
    fs::write(p.path().join("tests/__init__.py"), "").unwrap();
    let md = fs::read_to_string(p.path().join("factory.md")).unwrap();
    fs::write(
        p.path().join("factory.md"),
        md.replace("- src/**\n", "- src/**\n- tests/**\n"),
    )
    .unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "tests");
    let lines = |what: &str| {
        fs::read_to_string(log.path())
            .unwrap()
            .lines()
            .filter(|l| *l == what)
            .count()
    };

    let id = p.begin("a change");
    p.build(id, &[("src/level.txt", "0.6\n")]);
    p.qa_done(id);
    let (_, first) = p.precheck(id);
    assert!(!failures(&first).contains("tests_kept"), "{first:#}");
    assert_eq!(
        (lines("setup"), lines("tests")),
        (2, 2),
        "each side once: {first:#}"
    );

    // The same base again: only the head is set up and run.
    let (_, second) = p.precheck(id);
    assert_eq!(
        (failures(&second), &second["score_before"]),
        (failures(&first), &first["score_before"]),
        "the same verdict on the kept base: {second:#}"
    );
    assert_eq!((lines("setup"), lines("tests")), (3, 3), "the head only");
    assert!(
        details(&second, "provenance").contains("not set up again"),
        "{second:#}"
    );

    // A head whose test fails is confirmed on the base: it is set up and run after all.
    let id = p.begin("a change that breaks the test");
    p.build(id, &[("src/level.txt", "2\n")]);
    p.qa_done(id);
    let (_, broken) = p.precheck(id);
    assert!(
        details(&broken, "tests_kept").contains("LevelTest.test_level"),
        "{broken:#}"
    );
    assert_eq!(lines("setup"), 5, "the head, and the base to confirm on");
    assert!(lines("tests") >= 6, "the head twice and the base once more");
}
