//! `factory eval`, `factory discover` and `factory precheck` as a user runs them, on real
//! projects in temp dirs (a `cargo new` Rust project, real git repositories).

use crate::support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const FACTORY: &str = env!("CARGO_BIN_EXE_factory");

fn factory(dir: &Path, args: &[&str]) -> Output {
    Command::new(FACTORY)
        .args(args)
        .current_dir(dir)
        .env("FACTORY_HOME", dir.join(".home"))
        // A child cargo builds into the project's own target dir, not ours.
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

fn result<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
}

fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// `cargo new` (offline) plus one passing test.
fn rust_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("cargo")
        .args(["new", "--offline", "--quiet", "--name", "demo", "proj"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let proj = dir.path().join("proj");
    let main = fs::read_to_string(proj.join("src/main.rs")).unwrap();
    fs::write(
        proj.join("src/main.rs"),
        format!("{main}\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn adds() {{\n        assert_eq!(2 + 2, 4);\n    }}\n}}\n"),
    )
    .unwrap();
    dir
}

#[test]
fn eval_scores_a_generated_rust_project() {
    let dir = rust_project();
    let proj = dir.path().join("proj");
    fs::create_dir(proj.join(".factory")).unwrap();

    let out = factory(&proj, &["eval", "--json"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(report["language"], "rust");
    assert_eq!(result(&report, "build").unwrap()["score"], 1.0);
    let tests = result(&report, "tests").unwrap();
    assert_eq!(tests["details"], "1 passed, 0 failed");
    assert_eq!(report["test_count"], 1);
    if on_path("cargo-clippy") {
        assert_eq!(result(&report, "lint").unwrap()["passed"], true);
    }
    if on_path("cargo-fmt") {
        assert_eq!(result(&report, "format").unwrap()["passed"], true);
    }
    let total = report["total"].as_f64().unwrap();
    assert!(total > 0.5 && total <= 1.0, "{total}");
    // Best-effort dashboard copy and the first baseline were written into .factory/.
    let last: Value =
        serde_json::from_str(&fs::read_to_string(proj.join(".factory/last_eval.json")).unwrap())
            .unwrap();
    assert_eq!(last["total"], report["total"]);
    let baseline: Value = serde_json::from_str(
        &fs::read_to_string(proj.join(".factory/eval_baseline.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(baseline["test_count"], 1);

    // Break a test and the formatting: the table shows it and the scores drop.
    let main = fs::read_to_string(proj.join("src/main.rs")).unwrap();
    fs::write(
        proj.join("src/main.rs"),
        main.replace("assert_eq!(2 + 2, 4);", "assert_eq!(2 + 2, 5);") + "fn   ugly( ){}\n",
    )
    .unwrap();
    let out = factory(&proj, &["eval"]);
    let table = stdout(&out);
    assert!(table.contains("tests       hygiene   0.00"), "{table}");
    if on_path("cargo-fmt") {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("format") && l.contains("FAIL")),
            "{table}"
        );
    }
    assert!(table.contains("composite: "), "{table}");
}

#[test]
fn crashing_and_timing_out_dimensions_score_zero_and_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".factory")).unwrap();
    let config = serde_json::json!({
        "goal": "g", "scope": ["**"], "guards": [], "eval_command": "factory eval", "eval_threshold": 0.5, "constraints": [],
        "project_eval": [
            {"name": "crashy", "command": "echo boom >&2; exit 7", "parse": "json", "timeout": 10},
            {"name": "slow", "command": "sleep 30", "parse": "json", "timeout": 1},
            {"name": "good", "command": "echo '{\"score\": 0.9}'", "parse": "json", "timeout": 10}
        ]
    });
    fs::write(dir.path().join(".factory/config.json"), config.to_string()).unwrap();
    let start = std::time::Instant::now();
    let out = factory(dir.path(), &["eval", "--json"]);
    assert!(
        start.elapsed().as_secs() < 20,
        "the slow dimension was not killed"
    );
    // 0.9 / 3 is below the 0.5 threshold: the command ran and reports a failure.
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let crashy = result(&report, "crashy").unwrap();
    assert_eq!(crashy["score"], 0.0);
    assert!(crashy["details"].as_str().unwrap().contains("boom"));
    assert!(
        result(&report, "slow").unwrap()["details"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
    assert_eq!(result(&report, "good").unwrap()["score"], 0.9);
    assert!((report["total"].as_f64().unwrap() - 0.3).abs() < 1e-9);
}

#[test]
fn a_dimension_below_its_threshold_fails_the_eval_and_base_reads_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".factory")).unwrap();
    let config = |floor: f64| {
        serde_json::json!({
            "goal": "g", "scope": ["**"], "guards": [], "eval_command": "factory eval",
            "eval_threshold": "base - 0.05", "constraints": [],
            "dimension_thresholds": {"good": floor},
            "project_eval": [
                {"name": "good", "command": "printf '{\"score\": %s}' $(cat level)", "parse": "json", "timeout": 10}
            ]
        })
        .to_string()
    };
    fs::write(dir.path().join("level"), "0.9\n").unwrap();
    fs::write(dir.path().join(".factory/config.json"), config(0.95)).unwrap();
    let out = factory(dir.path(), &["eval"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("dimension threshold: good: 0.9000 is below its threshold 0.9500"),
        "{}",
        stdout(&out)
    );

    // Met floors pass; the first eval records the baseline `base` is then read against.
    fs::write(dir.path().join(".factory/config.json"), config(0.5)).unwrap();
    let out = factory(dir.path(), &["eval", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    fs::write(dir.path().join("level"), "0.8\n").unwrap();
    let out = factory(dir.path(), &["eval", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let report = json(&out);
    assert!(
        (report["threshold"].as_f64().unwrap() - 0.85).abs() < 1e-9,
        "{report}"
    );
}

#[test]
fn discover_writes_an_unreviewed_profile_and_approve_flips_it() {
    let dir = rust_project();
    let proj = dir.path().join("proj");
    let out = factory(&proj, &["discover"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("awaiting review"), "{}", stdout(&out));
    let profile: Value =
        serde_json::from_str(&fs::read_to_string(proj.join(".factory/eval_profile.json")).unwrap())
            .unwrap();
    assert_eq!(profile["human_reviewed"], false);
    assert_eq!(profile["project_type"], "rust");
    assert!(
        profile["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["command"] == "cargo test")
    );

    let out = factory(&proj, &["discover", "--approve", "--json"]);
    assert!(out.status.success());
    assert_eq!(json(&out)["human_reviewed"], true);

    // The alias generates and approves in one go when there is no profile yet.
    let other = rust_project();
    let proj = other.path().join("proj");
    assert!(
        factory(&proj, &["discover", "--auto-approve"])
            .status
            .success()
    );
    let profile: Value =
        serde_json::from_str(&fs::read_to_string(proj.join(".factory/eval_profile.json")).unwrap())
            .unwrap();
    assert_eq!(profile["human_reviewed"], true);
}

#[test]
fn discover_tries_the_profile_at_head_and_drops_what_cannot_pass() {
    let dir = rust_project();
    let proj = dir.path().join("proj");
    // Committed unformatted: `cargo fmt --check` fails at HEAD, as an old formatter
    // would on every base.
    fs::write(proj.join("src/lib.rs"), "pub fn  spaced( )->u8{1}\n").unwrap();
    fs::write(proj.join(".gitignore"), "target\n.factory/\n").unwrap();
    git(&proj, &["add", "-A"]);
    git(&proj, &["commit", "-qm", "init"]);
    let out = factory(&proj, &["discover"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let text = stdout(&out);
    let format = text
        .lines()
        .find(|l| l.starts_with("  FAIL  format: "))
        .unwrap_or_else(|| panic!("{text}"));
    // The first line that says what went wrong, not the output's last lines.
    assert!(
        format.contains("cargo fmt") && format.contains("Diff in"),
        "{format}"
    );
    assert!(text.contains("  ok    build"), "{text}");
    assert!(text.contains("`factory discover --drop format`"), "{text}");
    // Nothing was written into the project by the trial.
    assert!(
        !proj.join("target").exists(),
        "the trial built in its own checkout"
    );

    let out = factory(
        &proj,
        &["discover", "--no-trial", "--drop", "format", "--json"],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    let profile = json(&out);
    assert!(profile.get("trial").is_none(), "{profile}");
    let dims = profile["dimensions"].as_array().unwrap();
    assert!(!dims.iter().any(|d| d["name"] == "format"), "{profile}");
    assert!(
        profile["unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["name"] == "format"),
        "{profile}"
    );
    let out = factory(&proj, &["discover", "--no-trial", "--drop", "formatt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no such dimension"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn precheck_reports_which_checks_failed_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "-b", "main"]);
    fs::write(p.join(".gitignore"), ".factory/\n.home/\n").unwrap();
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(p.join("src/a.txt"), "a\n").unwrap();
    fs::write(p.join("README.md"), "r\n").unwrap();
    git(p, &["add", "-A"]);
    git(p, &["commit", "-qm", "init"]);
    git(p, &["checkout", "-qb", "exp/1"]);
    fs::write(p.join("src/a.txt"), "a\nb\n").unwrap();
    git(p, &["commit", "-qam", "work"]);
    fs::create_dir(p.join(".factory")).unwrap();
    let config = serde_json::json!({
        "goal": "g", "scope": ["src/**"], "guards": [], "eval_command": "factory eval", "eval_threshold": 0.5, "constraints": [],
        "project_eval": [{"name": "q", "command": "echo 1", "parse": "json", "timeout": 10}],
        "hard_constraints": [{"name": "always", "check": "true"}]
    });
    fs::write(p.join(".factory/config.json"), config.to_string()).unwrap();

    let out = factory(p, &["precheck", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["passed"], true);

    fs::write(p.join("README.md"), "changed\n").unwrap();
    git(p, &["commit", "-qam", "out of scope"]);
    let out = factory(p, &["precheck", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    assert_eq!(report["passed"], false);
    assert_eq!(report["failures"], serde_json::json!(["scope"]));
    let scope = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "scope")
        .unwrap();
    assert!(scope["details"][0].as_str().unwrap().contains("README.md"));

    let out = factory(p, &["precheck"]);
    assert!(
        stdout(&out).contains("FAIL  scope") && stdout(&out).contains("precheck FAILED: scope"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn precheck_without_config_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = factory(dir.path(), &["precheck"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("factory.md") || err.contains("factory init"),
        "{err}"
    );
}

#[test]
fn every_command_has_help_with_an_example() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["eval", "discover", "precheck"] {
        let out = factory(dir.path(), &[cmd, "--help"]);
        assert!(out.status.success());
        let help = stdout(&out);
        assert!(
            help.contains("Example") && help.contains(&format!("factory {cmd}")),
            "{cmd}: {help}"
        );
    }
}

fn python_project(eval_command: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fs::write(d.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    fs::write(
        d.join("test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    .unwrap();
    fs::write(
        d.join("factory.md"),
        format!(
            "# calc\n\n## Goal\nCorrect adds.\n\n## Scope\n- *.py\n\n## Guards\n- true\n\n\
             ## Eval command\n{eval_command}\n\n## Eval threshold\n0.0\n\n## Constraints\n- none\n"
        ),
    )
    .unwrap();
    tmp
}

/// Tests that exist and cannot run fail the `tests` dimension with the install hint; a
/// pytest-style test is never "no tests found" under unittest.
#[test]
fn pytest_tests_without_pytest_fail_the_tests_dimension_naming_the_install() {
    let tmp = python_project("factory eval");
    let d = tmp.path();
    let path = support::plain_python_path();
    let run = |args: &[&str]| {
        Command::new(FACTORY)
            .args(args)
            .current_dir(d)
            .env("FACTORY_HOME", d.join(".home"))
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let report = json(&run(&["eval", "--json"]));
    let tests = result(&report, "tests").unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(tests["passed"], false, "{tests:#}");
    assert_eq!(tests["score"], 0.0, "{tests:#}");
    let details = tests["details"].as_str().unwrap();
    assert!(details.contains("pip install pytest"), "{details}");
    assert!(details.contains("test_calc.py"), "{details}");
    let doctor = run(&["doctor"]);
    let out = stdout(&doctor);
    assert!(
        out.contains("FAIL  toolchain     python: no way to run the tests"),
        "{out}"
    );
    assert!(out.contains("pip install pytest"), "{out}");
}

/// An eval command whose output is text scores its last number: eval and doctor say so,
/// and init warns when the command is a test runner.
#[test]
fn a_score_read_from_text_output_is_warned_about() {
    let tmp = python_project("echo \"2 passed in 0.03s\"");
    let d = tmp.path();
    assert!(factory(d, &["init"]).status.success());
    let eval = factory(d, &["eval"]);
    let err = String::from_utf8_lossy(&eval.stderr).into_owned();
    assert!(
        err.contains("warning: `echo \"2 passed in 0.03s\"` printed 0.03, read as the last number"),
        "{err}"
    );
    let doctor = stdout(&factory(d, &["doctor"]));
    assert!(
        doctor.contains("FAIL  eval command  the last eval:"),
        "{doctor}"
    );

    let runner = python_project("python3 -m unittest -q");
    let init = factory(runner.path(), &["init"]);
    let err = String::from_utf8_lossy(&init.stderr).into_owned();
    assert!(init.status.success(), "{err}");
    assert!(
        err.contains("warning: `## Eval command` is `python3 -m unittest -q`, a test runner"),
        "{err}"
    );
    let doctor = stdout(&factory(runner.path(), &["doctor"]));
    assert!(
        doctor.contains("FAIL  eval command  `## Eval command` is"),
        "{doctor}"
    );
}
