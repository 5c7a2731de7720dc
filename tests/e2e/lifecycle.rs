//! A kept experiment moves the growth baseline; a reverted one does not. Each
//! experiment's change is made and committed in its own worktree, as an agent would.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use factory_runtime::events::{self, Event};
use factory_runtime::project::layout::FactoryPaths;
use git2::{Repository, Signature};
use predicates::prelude::*;

fn factory(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("binary");
    cmd.current_dir(dir)
        .env("FACTORY_HOME", dir.join(".factory/test-home"))
        .env_remove("FACTORY_RUN_ID");
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

fn commit_all(dir: &Path, message: &str) {
    let repo = Repository::open(dir).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::now("t", "t@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap();
}

fn baseline_tests(dir: &Path) -> u64 {
    let text =
        fs::read_to_string(dir.join(".factory/eval_baseline.json")).expect("baseline written");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["test_count"].as_u64().expect("test_count")
}

/// Adds a test to the experiment's worktree and commits it there.
fn add_a_test(dir: &Path, id: u32) -> PathBuf {
    let wt = dir.join(format!(".factory/worktrees/exp-{id:03}"));
    let lib = wt.join("src/lib.rs");
    let extra = "\n#[cfg(test)]\nmod more {\n    #[test]\n    fn empty_text_has_no_words() {\n        assert_eq!(super::word_count(\"\"), 0);\n    }\n}\n";
    fs::write(&lib, fs::read_to_string(&lib).unwrap() + extra).unwrap();
    commit_all(&wt, "cover the empty text");
    wt
}

#[test]
fn keep_records_the_judged_eval_as_the_growth_baseline_and_revert_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_demo(dir);
    Repository::init(dir).unwrap();
    commit_all(dir, "demo");
    factory(dir).arg("init").assert().code(0);
    factory(dir).arg("eval").assert().code(0);
    assert_eq!(baseline_tests(dir), 2, "the first eval sets the baseline");
    let user_lib = fs::read(dir.join("src/lib.rs")).unwrap();

    // An experiment that adds a test, evaluated, then reverted: the baseline stays.
    factory(dir)
        .args(["begin", "--hypothesis", "cover the empty text"])
        .assert()
        .code(0)
        .stdout("1\n");
    add_a_test(dir, 1);
    factory(dir).args(["eval", "--exp", "1"]).assert().code(0);
    factory(dir)
        .args(["finalize", "--id", "1", "--verdict", "revert"])
        .assert()
        .code(0);
    assert_eq!(baseline_tests(dir), 2);

    // The same change kept: growth is now measured from three tests.
    factory(dir)
        .args([
            "begin",
            "--hypothesis",
            "prove word_count handles zero-length input",
        ])
        .assert()
        .code(0)
        .stdout("2\n");
    add_a_test(dir, 2);
    // QA, written as factory writes it: chained under the binary's key.
    for role in ["health_checker", "code_reviewer", "adversarial_tester"] {
        events::append_in_home(
            &FactoryPaths::new(dir),
            &dir.join(".factory/test-home"),
            &Event::raw("agent.completed")
                .with("role", role)
                .with("exp_id", 2),
        )
        .unwrap();
    }
    factory(dir)
        .args(["precheck", "--exp", "2"])
        .assert()
        .code(0);
    factory(dir)
        .args(["finalize", "--id", "2", "--verdict", "keep"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("growth baseline moved"));
    assert_eq!(baseline_tests(dir), 3);
    // The user's own checkout never saw either change.
    assert_eq!(fs::read(dir.join("src/lib.rs")).unwrap(), user_lib);
}
