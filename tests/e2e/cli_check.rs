//! `factory check` as docs/cli.md describes it: the current directory by default, a
//! summary line, a warning for a path with no workflow, and a file that is not UTF-8
//! reported while every other file is still checked (text and JSON).

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("the factory binary is built");
    cmd.current_dir(cwd).env("FACTORY_HOME", cwd.join(".home"));
    cmd
}

const GOOD: &str =
    "workflow good {\n    fn a \"true\"\n    flow {\n        start -> a -> end\n    }\n}\n";
/// FWF003: the flow names a node that does not exist.
const BROKEN: &str = "workflow broken {\n    fn a \"true\"\n    flow {\n        start -> a -> nowhere -> end\n    }\n}\n";

#[test]
fn check_without_a_path_checks_the_current_directory_and_summarizes() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("wf")).unwrap();
    fs::write(dir.path().join("wf/good.fwf"), GOOD).unwrap();
    fs::write(dir.path().join("other.fwf"), GOOD).unwrap();
    factory(dir.path())
        .arg("check")
        .assert()
        .code(0)
        .stdout("")
        .stderr("checked 2 file(s): 0 error(s), 0 warning(s)\n");

    fs::write(dir.path().join("wf/broken.fwf"), BROKEN).unwrap();
    factory(dir.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("FWF003"))
        .stderr(predicate::str::ends_with(
            "checked 3 file(s): 1 error(s), 0 warning(s)\n",
        ));
}

#[test]
fn a_directory_without_workflows_is_a_warning_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("README.md"), "# not a workflow\n").unwrap();
    factory(dir.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "warning: no .fwf or .fwir file in .",
        ))
        .stderr(predicate::str::contains(
            "checked 0 file(s): 0 error(s), 0 warning(s)",
        ));
    let out = factory(dir.path())
        .args(["check", "--format", "json", "."])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(json, serde_json::json!([]));
}

/// A directory holding one non-UTF-8 file among others.
fn mixed_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a_latin1.fwf"), b"workflow caf\xe9 {\n}\n").unwrap();
    fs::write(dir.path().join("b_broken.fwf"), BROKEN).unwrap();
    fs::write(dir.path().join("c_good.fwf"), GOOD).unwrap();
    dir
}

#[test]
fn a_non_utf8_file_is_named_and_the_others_are_still_checked() {
    let dir = mixed_dir();
    factory(dir.path())
        .args(["check", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a_latin1.fwf: not UTF-8 text; workflow files must be UTF-8",
        ))
        .stderr(predicate::str::contains("save the file as UTF-8"))
        // The file after it in the walk is still checked and its error reported.
        .stderr(predicate::str::contains("FWF003"))
        .stderr(predicate::str::contains("b_broken.fwf:4:"))
        .stderr(predicate::str::contains(
            "checked 3 file(s): 1 error(s), 0 warning(s), 1 unreadable",
        ))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn a_non_utf8_file_is_an_entry_of_valid_json_beside_the_other_diagnostics() {
    let dir = mixed_dir();
    let out = factory(dir.path())
        .args(["check", "--format", "json", "."])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON array");
    let items = json.as_array().expect("an array");
    let codes: Vec<&str> = items.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["FWF003", "unreadable"], "{json:#}");
    let bad = &items[1];
    assert!(bad["file"].as_str().unwrap().ends_with("a_latin1.fwf"));
    assert_eq!(bad["severity"], "error");
    assert_eq!(
        bad["message"],
        "not UTF-8 text; workflow files must be UTF-8"
    );
    assert_eq!(bad["line"], 1);
}

#[test]
fn json_findings_name_what_they_are_about_as_data() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("w.fwf"),
        "workflow w {\n    agent a { role: poet }\n    fork f\n    fn b \"true\"\n    fn c \"true\"\n    flow {\n        start -> a -> f\n        f -> b, c -> end\n    }\n}\n",
    )
    .unwrap();
    let out = factory(dir.path())
        .args(["check", "--format", "json", "w.fwf"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let subject = |code: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == code)
            .map(|d| d["subject"].clone())
            .unwrap_or_else(|| panic!("no {code} in {json:#}"))
    };
    assert_eq!(
        subject("FWF010"),
        serde_json::json!({"kind": "role", "name": "poet"})
    );
    assert_eq!(
        subject("FWF014"),
        serde_json::json!({"kind": "node", "name": "f"})
    );
}
