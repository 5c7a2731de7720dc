//! Commands refuse what they cannot act on, naming it and the fix, with the exit code
//! docs/cli.md gives: a project path that is not a directory (`modes`, `runs`, `graph`,
//! `run`, `discover`), a missing skills directory, a project outside git for
//! `discover`, and a broken factory.md (exit 1 in every command).

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("the factory binary is built");
    cmd.current_dir(cwd).env("FACTORY_HOME", cwd.join(".home"));
    cmd
}

#[test]
fn modes_on_a_missing_path_names_it_instead_of_listing_built_ins() {
    let dir = tempfile::tempdir().unwrap();
    factory(dir.path())
        .args(["modes", "/nonexistent/project"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "/nonexistent/project is not a directory",
        ));
    factory(dir.path())
        .arg("modes")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("improve"));
}

#[test]
fn every_project_path_that_is_not_a_directory_is_named_not_treated_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["runs", "no-such-project"][..],
        &["graph", "status", "no-such-project"],
        &["graph", "query", "main", "no-such-project"],
        &["graph", "extract", "no-such-project"],
        &[
            "run",
            "improve",
            "--project",
            "no-such-project",
            "--dry-run",
        ],
        &["discover", "no-such-project"],
        &["modes", "no-such-project"],
        &["config", "show", "--project", "no-such-project"],
    ] {
        factory(dir.path())
            .args(args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "no-such-project is not a directory",
            ))
            .stderr(predicate::str::contains("pass the project's directory"));
    }
    assert!(!dir.path().join("no-such-project").exists());
}

#[test]
fn skills_check_on_a_missing_dir_is_exit_2_naming_it_and_the_export() {
    let dir = tempfile::tempdir().unwrap();
    factory(dir.path())
        .args(["skills", "check", "--dir", "typo"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("typo is not a directory"))
        .stderr(predicate::str::contains(
            "create the skills with `factory skills export",
        ));
    assert!(!dir.path().join("typo").exists());
}

#[test]
fn discover_outside_git_refuses_like_begin_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("notes");
    fs::create_dir(&plain).unwrap();
    for args in [
        vec!["discover", "notes"],
        vec!["discover", "notes", "--approve"],
    ] {
        factory(dir.path())
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not a git repository: notes"))
            .stderr(predicate::str::contains("git init"));
    }
    assert!(
        !plain.join(".factory").exists(),
        "discover created .factory/"
    );
    // The refusal is begin's own.
    factory(dir.path())
        .args(["begin", "notes", "--hypothesis", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a git repository: notes"));
}

#[test]
fn a_broken_factory_md_is_exit_1_with_its_problem_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("factory.md"), "# Goal\nBe fast.\n").unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("factory.md")).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
    for args in [
        &["init", "."][..],
        &["eval", "."],
        &["precheck", "."],
        &["begin", ".", "--hypothesis", "x"],
    ] {
        factory(dir.path())
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("factory.md"))
            .stderr(predicate::str::contains("`## Scope`"))
            .stderr(predicate::str::contains("fix factory.md"));
    }
}
