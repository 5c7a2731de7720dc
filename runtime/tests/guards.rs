//! Each guard catches its violation in a real git repository and passes the clean case.

mod common;

use common::TestRepo;
use factory_runtime::guards::{self, GuardInputs, GuardResult, Patterns};

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n";
const TESTS: &str = "#[test]\nfn one() { assert!(true); }\n\n#[test]\nfn two() { assert_eq!(2, 2); assert_ne!(1, 2); }\n";

fn project() -> TestRepo {
    let t = TestRepo::new(&[
        ("src/lib.rs", LIB),
        ("src/util.rs", "pub fn u() {}\n"),
        ("tests/basic.rs", TESTS),
        ("eval/score.py", "print('{\"score\": 1}')\n"),
        ("README.md", "# demo\n"),
        ("Cargo.lock", "# lock v1\n"),
    ]);
    t.branch("exp/1");
    t
}

fn inputs() -> GuardInputs {
    GuardInputs {
        target_branch: "main".into(),
        scope: vec!["src/**".into(), "tests/**".into()],
        fixed_surfaces: vec!["eval/**".into(), "src/frozen.rs".into()],
        require_clean: true,
        base_commit: None,
        test_timeout: None,
        declared: Default::default(),
        setup: Vec::new(),
        checkouts: None,
        kept_base_tests: None,
    }
}

fn run(t: &TestRepo) -> Vec<GuardResult> {
    guards::run_guards(t.path(), &inputs()).unwrap()
}

fn guard<'a>(results: &'a [GuardResult], name: &str) -> &'a GuardResult {
    results
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no guard {name}"))
}

/// Asserts that exactly the guard `name` failed, with a violation mentioning `needle`.
fn only_failure(results: &[GuardResult], name: &str, needle: &str) {
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(failed, vec![name], "{results:#?}");
    let g = guard(results, name);
    assert!(
        g.violations.iter().any(|v| v.contains(needle)),
        "{needle:?} not in {:?}",
        g.violations
    );
}

#[test]
fn clean_in_scope_change_passes_every_guard() {
    let t = project();
    t.write(
        "src/lib.rs",
        &format!("{LIB}\npub fn sub(a: i32, b: i32) -> i32 {{ a - b }}\n"),
    );
    t.write("tests/more.rs", "#[test]\nfn three() { assert!(1 < 2); }\n");
    t.write("Cargo.lock", "# lock v2\n"); // allowlisted lock file, outside scope
    t.write(".factory/last_eval.json", "{}"); // factory's own state never counts
    t.commit_all("work");
    let results = run(&t);
    assert!(results.iter().all(|r| r.passed), "{results:#?}");
    assert_eq!(results.len(), 9);
}

#[test]
fn git_clean_catches_uncommitted_and_untracked_files() {
    let t = project();
    t.write("src/new.rs", "pub fn n() {}\n");
    let results = run(&t);
    only_failure(&results, "git_clean", "src/new.rs");
}

#[test]
fn experiment_branch_must_not_be_target_detached_or_unrooted() {
    let t = project();
    t.checkout("main");
    only_failure(&run(&t), "experiment_branch", "target branch");

    let t = project();
    t.detach();
    only_failure(&run(&t), "experiment_branch", "detached");

    // main moves on after the branch was cut: the branch is no longer rooted at its tip.
    let t = project();
    t.checkout("main");
    t.write("src/util.rs", "pub fn u2() {}\n");
    t.commit_all("main moves");
    t.checkout("exp/1");
    only_failure(&run(&t), "experiment_branch", "not rooted");
}

#[test]
fn scope_catches_out_of_scope_edit_deletion_and_renames() {
    let t = project();
    t.write("README.md", "# changed\n");
    t.commit_all("edit");
    only_failure(&run(&t), "scope", "README.md: changed outside scope");

    let t = project();
    t.remove("README.md");
    t.commit_all("delete");
    only_failure(&run(&t), "scope", "README.md: deleted outside scope");

    // Renaming an in-scope file to outside: the new path is out of scope.
    let t = project();
    t.rename("src/util.rs", "scripts/util.rs");
    t.commit_all("move out");
    only_failure(
        &run(&t),
        "scope",
        "scripts/util.rs: renamed into place outside scope",
    );

    // Renaming an out-of-scope file into scope: the old path was out of scope.
    let t = project();
    t.rename("README.md", "src/README.md");
    t.commit_all("move in");
    only_failure(&run(&t), "scope", "README.md: renamed away outside scope");
}

#[test]
fn scope_catches_uncommitted_rename_in_the_working_tree() {
    let t = project();
    t.rename("src/util.rs", "scripts/util.rs");
    let repo = guards::open_repo(t.path()).unwrap();
    let base = guards::base_commit(&repo, "main").unwrap();
    let changes = guards::changed_files(&repo, base).unwrap();
    let scope = Patterns::new(&inputs().scope).unwrap();
    let g = guards::check_scope(t.path(), &changes, &scope);
    assert!(
        g.violations.iter().any(|v| v.contains("scripts/util.rs")),
        "{g:?}"
    );
}

#[test]
fn scope_catches_symlink_pointing_outside_the_repository() {
    let t = project();
    t.symlink("../../../etc/passwd", "src/secrets.rs");
    t.commit_all("link");
    only_failure(&run(&t), "symlinks", "symlink points outside");

    let t = project();
    t.symlink("/etc/hostname", "src/host.rs");
    t.commit_all("absolute link");
    only_failure(&run(&t), "symlinks", "symlink points outside");

    // A link that stays inside the repository is fine.
    let t = project();
    t.symlink("util.rs", "src/alias.rs");
    t.commit_all("inner link");
    assert!(run(&t).iter().all(|r| r.passed));
}

#[test]
fn dot_dot_paths_are_rejected() {
    let mut bad = inputs();
    bad.scope = vec!["src/../README.md".into()];
    let t = project();
    let err = guards::run_guards(t.path(), &bad).unwrap_err().to_string();
    assert!(
        err.contains("src/../README.md") && err.contains("`..`"),
        "{err}"
    );

    let change = guards::Change {
        path: "src/../../etc/passwd".into(),
        old_path: None,
        kind: guards::ChangeKind::Modified,
        is_symlink: false,
        old_blob: None,
    };
    let scope = Patterns::new(&["src/**".to_string()]).unwrap();
    let g = guards::check_scope(t.path(), &[change], &scope);
    assert!(
        g.violations
            .iter()
            .any(|v| v.contains("leaves the repository")),
        "{g:?}"
    );
}

#[test]
fn fixed_surfaces_catch_edit_rename_and_deletion() {
    let mut scoped_everything = inputs();
    scoped_everything.scope = vec!["**".into()];
    let check = |t: &TestRepo, needle: &str| {
        let results = guards::run_guards(t.path(), &scoped_everything).unwrap();
        let g = guard(&results, "fixed_surfaces");
        assert!(
            !g.passed && g.violations.iter().any(|v| v.contains(needle)),
            "{needle}: {results:#?}"
        );
    };
    let t = project();
    t.write("src/frozen.rs", "// frozen\n");
    t.commit_all("add frozen");
    check(&t, "src/frozen.rs: fixed surface added");

    let t = project();
    t.rename("eval/score.py", "src/score.py");
    t.commit_all("move eval away");
    check(&t, "eval/score.py: fixed surface renamed");

    let t = project();
    t.remove("eval/score.py");
    t.commit_all("delete eval");
    check(&t, "eval/score.py: fixed surface deleted");
}

#[test]
fn scope_and_fixed_surfaces_share_one_matcher() {
    let t = project();
    t.write("docs/guide/intro.md", "hi\n");
    t.commit_all("docs");
    let repo = guards::open_repo(t.path()).unwrap();
    let base = guards::base_commit(&repo, "main").unwrap();
    let changes = guards::changed_files(&repo, base).unwrap();
    for pattern in ["docs/**/*.md", "docs/", "docs/*", "**/intro.md"] {
        let p = Patterns::new(&[pattern.to_string()]).unwrap();
        let in_scope = guards::check_scope(t.path(), &changes, &p).passed;
        let touches_fixed = !guards::check_fixed_surfaces(&changes, &p).passed;
        assert!(
            in_scope && touches_fixed,
            "{pattern}: scope {in_scope}, fixed {touches_fixed}"
        );
    }
}

#[test]
fn lock_files_never_trigger_scope_or_fixed_surfaces() {
    let mut i = inputs();
    i.fixed_surfaces.push("*.lock".into());
    let t = project();
    t.write("Cargo.lock", "# lock v9\n");
    t.write("web/package-lock.json", "{}\n");
    t.commit_all("deps");
    let results = guards::run_guards(t.path(), &i).unwrap();
    assert!(results.iter().all(|r| r.passed), "{results:#?}");
}

#[test]
fn eval_immutable_catches_modification_addition_and_ignores_bytecode() {
    let t = project();
    t.write("eval/score.py", "print('{\"score\": 0.1}')\n");
    let repo = guards::open_repo(t.path()).unwrap();
    let before =
        guards::eval_snapshot_at(&repo, guards::base_commit(&repo, "main").unwrap()).unwrap();
    let after = guards::eval_snapshot_workdir(&repo).unwrap();
    let g = guards::check_eval_immutable(&before, &after);
    assert!(
        !g.passed && g.violations[0].contains("eval/score.py: modified"),
        "{g:?}"
    );

    let t = project();
    t.write("eval/helper.py", "X = 1\n");
    t.write("eval/__pycache__/score.cpython-311.pyc", "bytes");
    let repo = guards::open_repo(t.path()).unwrap();
    let before =
        guards::eval_snapshot_at(&repo, guards::base_commit(&repo, "main").unwrap()).unwrap();
    let g = guards::check_eval_immutable(&before, &guards::eval_snapshot_workdir(&repo).unwrap());
    assert_eq!(g.violations, vec!["eval/helper.py: added to eval/"]);

    // Unchanged eval/ (bytecode aside): snapshot from git equals snapshot from disk.
    let t = project();
    t.write("eval/__pycache__/x.pyc", "bytes");
    let repo = guards::open_repo(t.path()).unwrap();
    let before =
        guards::eval_snapshot_at(&repo, guards::base_commit(&repo, "main").unwrap()).unwrap();
    assert_eq!(before.entries.len(), 1);
    assert!(
        guards::check_eval_immutable(&before, &guards::eval_snapshot_workdir(&repo).unwrap())
            .passed
    );
}

#[test]
fn deleting_or_weakening_tests_is_caught() {
    let t = project();
    t.remove("tests/basic.rs");
    t.commit_all("drop tests");
    only_failure(&run(&t), "tests_kept", "tests/basic.rs: test file deleted");

    let t = project();
    t.write(
        "tests/basic.rs",
        "#[test]\nfn one() { assert!(true); }\n\n#[test]\nfn two() { assert_eq!(2, 2); }\n",
    );
    t.commit_all("fewer asserts");
    only_failure(&run(&t), "tests_kept", "2 → 2 tests, 3 → 2 assertions");

    // An inline #[test] removed from a source file counts too.
    let t = project();
    t.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    );
    t.commit_all("drop inline test");
    only_failure(
        &run(&t),
        "tests_kept",
        "src/lib.rs: tests weakened (1 → 0 tests",
    );

    // Moving a test file with its content intact is not weakening.
    let t = project();
    t.rename("tests/basic.rs", "tests/renamed.rs");
    t.commit_all("rename tests");
    assert!(run(&t).iter().all(|r| r.passed), "{:#?}", run(&t));
}

#[test]
fn untracked_symlink_pointing_outside_is_caught_before_any_commit() {
    let t = project();
    t.symlink("../../outside.txt", "src/escape.rs");
    let repo = guards::open_repo(t.path()).unwrap();
    let base = guards::base_commit(&repo, "main").unwrap();
    let changes = guards::changed_files(&repo, base).unwrap();
    let scope = Patterns::new(&inputs().scope).unwrap();
    let g = guards::check_scope(t.path(), &changes, &scope);
    assert!(
        g.violations
            .iter()
            .any(|v| v.contains("src/escape.rs: symlink points outside")),
        "{g:?}"
    );
}

#[test]
fn no_secrets_catches_an_added_credential_but_not_one_already_there() {
    let t = project();
    t.write(
        "src/config.rs",
        "pub const KEY: &str = \"AKIAABCDEFGHIJKLMNOP\";\n",
    );
    t.commit_all("leak");
    only_failure(
        &run(&t),
        "no_secrets",
        "src/config.rs: AWS access key id added (line 1)",
    );

    // A fixture key present at the base commit is not re-reported when the file changes.
    let t = TestRepo::new(&[("src/fixture.rs", "// AKIAABCDEFGHIJKLMNOP\n")]);
    t.branch("exp/1");
    t.write("src/fixture.rs", "// AKIAABCDEFGHIJKLMNOP\n// more\n");
    t.commit_all("edit");
    let results = guards::run_guards(t.path(), &inputs()).unwrap();
    assert!(guard(&results, "no_secrets").passed, "{results:#?}");
}

#[test]
fn violation_messages_keep_the_path_as_written() {
    let mut i = inputs();
    i.scope = vec!["**".into()];
    i.fixed_surfaces = vec!["Docs/**".into()];
    let t = project();
    t.write("Docs/Guide.md", "x\n");
    t.commit_all("docs");
    let results = guards::run_guards(t.path(), &i).unwrap();
    let v = &guard(&results, "fixed_surfaces").violations;
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].starts_with("Docs/Guide.md: fixed surface added in commit "),
        "{v:?}"
    );
}
