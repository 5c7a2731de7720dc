//! `factory fmt`, run as a user runs it: rewriting files, `--check`, exit codes.

use std::fs;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory() -> Command {
    Command::cargo_bin("factory").expect("the factory binary is built")
}

const MESSY: &str =
    "// keep me\nworkflow w{\n  agent a{role:builder}   // and me\nflow{\nstart->a->end\n}\n}";
const TIDY: &str = "// keep me\nworkflow w {\n    agent a { role: builder }   // and me\n    flow {\n        start -> a -> end\n    }\n}\n";

#[test]
fn check_lists_unformatted_files_and_exits_1_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let messy = dir.path().join("messy.fwf");
    let tidy = dir.path().join("sub").join("tidy.fwf");
    fs::create_dir_all(tidy.parent().unwrap()).unwrap();
    fs::write(&messy, MESSY).unwrap();
    fs::write(&tidy, TIDY).unwrap();
    factory()
        .args(["fmt", "--check"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("messy.fwf").and(predicate::str::contains("tidy.fwf").not()),
        );
    assert_eq!(
        fs::read_to_string(&messy).unwrap(),
        MESSY,
        "--check must not write"
    );
}

#[test]
fn fmt_rewrites_then_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let messy = dir.path().join("messy.fwf");
    fs::write(&messy, MESSY).unwrap();
    factory().arg("fmt").arg(&messy).assert().success();
    assert_eq!(fs::read_to_string(&messy).unwrap(), TIDY);
    factory()
        .args(["fmt", "--check"])
        .arg(&messy)
        .assert()
        .success()
        .stdout("");
    // No temporary file is left behind.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn fmt_defaults_to_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("x.fwf"), MESSY).unwrap();
    factory()
        .current_dir(dir.path())
        .args(["fmt", "--check"])
        .assert()
        .code(1);
}

#[test]
fn missing_path_is_a_usage_error() {
    factory()
        .args(["fmt", "/definitely/not/here.fwf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not/here.fwf"));
}

#[test]
fn repository_workflows_and_stdlib_are_formatted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    factory()
        .args(["fmt", "--check"])
        .arg(root.join("workflows"))
        .arg(root.join("stdlib"))
        .assert()
        .success();
}

#[test]
fn a_file_with_syntax_errors_is_reported_left_alone_where_broken_and_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.fwf");
    let tidy = dir.path().join("tidy.fwf");
    let text = "workflow w {\n    agent a { role: builder }\n    agent b {{{ role: x\n}\n";
    fs::write(&broken, text).unwrap();
    fs::write(&tidy, TIDY).unwrap();
    factory()
        .arg("fmt")
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("broken.fwf: 1 syntax error(s)")
                .or(predicate::str::contains("broken.fwf: 2 syntax error(s)"))
                .and(predicate::str::contains(
                    "2 file(s): 0 reformatted, 2 unchanged, 1 with syntax errors",
                )),
        );
    assert_eq!(
        fs::read_to_string(&broken).unwrap(),
        text,
        "nothing that does not parse is re-indented"
    );
    factory()
        .arg("fmt")
        .arg(&tidy)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "1 file(s): 0 reformatted, 1 unchanged, 0 with syntax errors",
        ));
}
