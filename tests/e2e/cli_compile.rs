//! `factory check` and `factory compile`, run as a user runs them.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory() -> Command {
    Command::cargo_bin("factory").expect("the factory binary is built")
}

const DIAMOND: &str = "//! A fork and its join.
workflow fj {
    fork f
    agent a { role: builder }
    agent b { role: researcher }
    join j
    gate ok by agent(ceo) \"Good?\"
    flow {
        start -> f -> a, b -> j -> ok
        ok.proceed -> end
        ok.reloop(max 2) -> f
        ok.halt -> end
    }
}
";

/// What `factory compile FILE --emit FORM` prints; the compile must succeed.
fn emit(file: &Path, form: &str) -> Vec<u8> {
    factory()
        .args(["compile", "--emit", form])
        .arg(file)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).expect("write fixture");
    path
}

#[test]
fn check_reports_an_error_with_its_place_and_help_then_passes_once_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let broken = DIAMOND.replace("ok.reloop(max 2) -> f", "ok.reloop -> f");
    let path = write(dir.path(), "fj.fwf", &broken);
    factory()
        .arg("check")
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("FWF018"))
        .stderr(predicate::str::contains("fj.fwf:11:"))
        .stderr(predicate::str::contains("help:"))
        .stderr(predicate::str::contains("panicked").not());
    write(dir.path(), "fj.fwf", DIAMOND);
    factory()
        .arg("check")
        .arg(&path)
        .assert()
        .code(0)
        .stderr("checked 1 file(s): 0 error(s), 0 warning(s)\n");
}

#[test]
fn check_searches_directories_and_can_deny_warnings() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("nested")).unwrap();
    let with_unused = DIAMOND.replace(
        "    join j\n",
        "    join j\n    agent idle { role: builder }\n",
    );
    write(&dir.path().join("nested"), "w.fwf", &with_unused);
    factory()
        .arg("check")
        .arg(dir.path())
        .assert()
        .code(0)
        .stderr(predicate::str::contains("FWF104"));
    factory()
        .args(["check", "--deny-warnings"])
        .arg(dir.path())
        .assert()
        .code(1);
}

#[test]
fn check_prints_json_with_code_severity_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "fj.fwf",
        &DIAMOND.replace("-> j -> ok", "-> ok"),
    );
    let out = factory()
        .args(["check", "--format", "json"])
        .arg(&path)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let items: serde_json::Value = serde_json::from_slice(&out).expect("stdout is JSON");
    let items = items.as_array().expect("an array");
    assert!(!items.is_empty());
    for item in items {
        for key in ["code", "severity", "file", "line", "column", "message"] {
            assert!(item.get(key).is_some(), "missing {key} in {item}");
        }
    }
    assert!(
        items.iter().any(|i| i["severity"] == "error"
            && i["code"].as_str().is_some_and(|c| c.starts_with("FWF")))
    );
}

#[test]
fn check_exits_2_on_a_missing_path() {
    factory()
        .args(["check", "/nonexistent/dir/x.fwf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("x.fwf"));
}

#[test]
fn ir_text_round_trips_byte_for_byte_through_compile() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "fj.fwf", DIAMOND);
    let ir = emit(&src, "ir");
    let ir_path = dir.path().join("fj.fwir");
    fs::write(&ir_path, &ir).unwrap();
    let again = emit(&ir_path, "ir");
    assert_eq!(
        String::from_utf8_lossy(&ir),
        String::from_utf8_lossy(&again)
    );
    // -o writes the same text to a file.
    let out = dir.path().join("out.fwir");
    factory()
        .args(["compile", "--emit", "ir", "-o"])
        .arg(&out)
        .arg(&ir_path)
        .assert()
        .code(0);
    assert_eq!(fs::read(&out).unwrap(), ir);
}

#[test]
fn deleting_a_join_line_from_ir_text_reports_the_unmatched_fork() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "fj.fwf", DIAMOND);
    let ir = emit(&src, "ir");
    let text = String::from_utf8(ir).unwrap();
    let without_join: String = text
        .lines()
        .filter(|l| *l != "node j join")
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without_join, text, "the join line was present");
    let path = write(dir.path(), "fj.fwir", &without_join);
    factory()
        .arg("check")
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("FWF014"))
        .stderr(predicate::str::contains("fork `f` has no matching join"));
}

#[test]
fn compile_emits_json_dot_and_mermaid() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "fj.fwf", DIAMOND);
    let json = emit(&src, "ir-json");
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["ir_version"], 1);
    assert_eq!(v["workflow"]["name"], "fj");
    factory()
        .args(["compile", "--emit", "dot"])
        .arg(&src)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("digraph"))
        .stdout(predicate::str::contains("diamond"));
    factory()
        .args(["compile", "--emit", "mermaid"])
        .arg(&src)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("flowchart"));
}

#[test]
fn compile_refuses_a_workflow_with_errors_and_emits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "fj.fwf", &DIAMOND.replace("join j\n", ""));
    factory()
        .args(["compile", "--emit", "ir"])
        .arg(&src)
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "has 1 error(s); nothing was compiled",
        ));
}

#[test]
fn every_compiler_command_has_help_with_an_example() {
    for cmd in ["check", "compile"] {
        factory()
            .args([cmd, "--help"])
            .assert()
            .code(0)
            .stdout(predicate::str::contains("Example"))
            .stdout(predicate::str::contains(format!("factory {cmd}")));
    }
}

#[test]
fn modes_lists_built_in_modes_and_project_overrides_win() {
    let dir = tempfile::tempdir().unwrap();
    factory()
        .arg("modes")
        .current_dir(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("improve"))
        .stdout(predicate::str::contains("built-in"));
    // Compiling a mode by name uses the embedded copy...
    let builtin = factory()
        .args(["compile", "improve", "--emit", "ir"])
        .current_dir(dir.path())
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&builtin).contains("experiment.trial.begin"));
    // ...until the project overrides it, with a role only the project defines.
    let wf = dir.path().join(".factory/workflows");
    fs::create_dir_all(&wf).unwrap();
    fs::create_dir_all(dir.path().join(".factory/agents")).unwrap();
    fs::write(
        dir.path().join(".factory/agents/linguist.md"),
        "# Linguist\n",
    )
    .unwrap();
    write(
        &wf,
        "improve.fwf",
        "workflow improve {\n    agent words { role: linguist writes: \"w.md\" check: exists }\n    flow { start -> words -> end }\n}\n",
    );
    factory()
        .arg("modes")
        .current_dir(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("overrides the built-in mode"));
    let overridden = factory()
        .args(["compile", "improve", "--emit", "ir"])
        .current_dir(dir.path())
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&overridden);
    assert!(
        text.contains("node words agent role=\"linguist\""),
        "{text}"
    );
    factory()
        .args(["compile", "no-such-mode"])
        .current_dir(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("neither a file nor a mode"));
}

#[test]
fn a_file_that_is_not_utf8_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bin.fwf");
    fs::write(&path, [0xff, 0xfe, b' ', b'x']).unwrap();
    factory()
        .arg("check")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not UTF-8"));
}
