//! Tests by identity through the built binary: `factory begin`, a commit in the
//! experiment's worktree, `factory precheck --exp N --json` — a skipped test is refused by
//! name; an honest change that adds a test and renames one keeps `tests_kept` green.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use git2::Repository;
use serde_json::Value;
use support::{commit_all, text};

struct Project {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Project {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn factory(&self, args: &[&str]) -> Output {
        Command::cargo_bin("factory")
            .expect("binary")
            .current_dir(self.path())
            .env("FACTORY_HOME", self.home.path())
            .env_remove("FACTORY_RUN_ID")
            .args(args)
            .output()
            .expect("factory runs")
    }

    fn worktree(&self, id: u32) -> PathBuf {
        self.path().join(format!(".factory/worktrees/exp-{id:03}"))
    }
}

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_add_zero(self):\n        self.assertEqual(add(0, 5), 5)\n";

/// A Python project whose tests run with unittest; its score is `score.txt`; its
/// factory.md is committed.
fn project() -> Project {
    assert!(
        std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs python3"
    );
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    fs::write(dir.path().join(".gitignore"), ".factory/\n").unwrap();
    fs::write(dir.path().join("calc.py"), CALC).unwrap();
    fs::write(dir.path().join("test_calc.py"), TESTS).unwrap();
    fs::write(dir.path().join("score.txt"), "0.7\n").unwrap();
    // The gate reads its configuration from factory.md at the base commit.
    fs::write(
        dir.path().join("factory.md"),
        "# Calc\n\n## Goal\na higher score\n\n## Scope\n- *.py\n- score.txt\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.5\n\n## Constraints\n\n## Target branch\nmain\n\n## Project eval\n- name: quality\n  command: cat score.txt\n  parse: json\n  timeout: 10\n\n## Test timeout\n60\n",
    )
    .unwrap();
    commit_all(&repo, "init");
    Project {
        dir,
        home: tempfile::tempdir().unwrap(),
    }
}

fn experiment(p: &Project, hypothesis: &str, tests: &str) -> Value {
    let o = p.factory(&["begin", "--hypothesis", hypothesis]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id: u32 = text(&o.stdout).trim().parse().unwrap();
    let wt = p.worktree(id);
    fs::write(wt.join("test_calc.py"), tests).unwrap();
    fs::write(wt.join("score.txt"), "0.8\n").unwrap();
    commit_all(&Repository::open(&wt).unwrap(), hypothesis);
    let o = p.factory(&["precheck", "--exp", &id.to_string(), "--json"]);
    let out = text(&o.stdout);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{}", text(&o.stderr)))
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name} in {report:#}"))
}

#[test]
fn precheck_refuses_a_skipped_test_by_name_and_passes_an_honest_rename() {
    let p = project();
    let skipped = experiment(
        &p,
        "skip the slow test",
        &TESTS.replace(
            "    def test_add(self):",
            "    @unittest.skip('slow')\n    def test_add(self):",
        ),
    );
    assert_eq!(skipped["passed"], false, "{skipped:#}");
    assert!(
        skipped["failures"]
            .as_array()
            .is_some_and(|f| f.iter().any(|n| n == "tests_kept")),
        "{skipped:#}"
    );
    let details = check(&skipped, "tests_kept")["details"].to_string();
    for needle in [
        "CalcTest",
        "test_add",
        "passed at base and is skipped at head",
        "test_calc.py:7",
        "new skip or expected-failure marker",
    ] {
        assert!(details.contains(needle), "{needle:?} not in {details}");
    }

    let honest = experiment(
        &p,
        "rename a test and cover negatives",
        &format!(
            "{}\n    def test_add_negative(self):\n        self.assertEqual(add(-1, -2), -3)\n",
            TESTS.replace("test_add_zero", "test_zero_is_identity")
        ),
    );
    let kept = check(&honest, "tests_kept");
    assert_eq!(kept["passed"], true, "{honest:#}");
}
