//! A kept experiment moves the growth baseline; a reverted one does not.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("binary");
    cmd.current_dir(dir).env("FACTORY_HOME", dir.join("home"));
    cmd
}

fn copy_demo(to: &Path) {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    for rel in ["Cargo.toml", "factory.md", ".gitignore", "src/lib.rs"] {
        let dest = to.join(rel);
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(demo.join(rel), dest).unwrap();
    }
}

fn baseline_tests(dir: &Path) -> u64 {
    let text =
        fs::read_to_string(dir.join(".factory/eval_baseline.json")).expect("baseline written");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["test_count"].as_u64().expect("test_count")
}

#[test]
fn keep_records_the_latest_eval_as_the_growth_baseline_and_revert_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_demo(dir);
    git2::Repository::init(dir).unwrap();
    factory(dir).arg("init").assert().code(0);
    factory(dir).arg("eval").assert().code(0);
    assert_eq!(baseline_tests(dir), 2, "the first eval sets the baseline");

    // An experiment that adds a test, evaluated, then reverted: the baseline stays.
    let lib = dir.join("src/lib.rs");
    let extra = "\n#[cfg(test)]\nmod more {\n    #[test]\n    fn empty_text_has_no_words() {\n        assert_eq!(super::word_count(\"\"), 0);\n    }\n}\n";
    fs::write(&lib, fs::read_to_string(&lib).unwrap() + extra).unwrap();
    factory(dir)
        .args(["begin", "--hypothesis", "cover the empty text"])
        .assert()
        .code(0)
        .stdout("1\n");
    factory(dir).arg("eval").assert().code(0);
    factory(dir)
        .args(["finalize", "--id", "1", "--verdict", "revert"])
        .assert()
        .code(0);
    assert_eq!(baseline_tests(dir), 2);

    // The same change kept: growth is now measured from three tests.
    factory(dir)
        .args(["begin", "--hypothesis", "cover the empty text again"])
        .assert()
        .code(0)
        .stdout("2\n");
    factory(dir).arg("eval").assert().code(0);
    factory(dir)
        .args(["finalize", "--id", "2", "--verdict", "keep"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("growth baseline moved"));
    assert_eq!(baseline_tests(dir), 3);
}
