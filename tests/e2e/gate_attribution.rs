//! The keep gate's correctness and attribution rules (docs/gate.md, "Correctness and
//! attribution"), through `factory precheck --exp N` on small Python projects with real
//! unittest runs: failing tests revert whatever the score, an edited expectation is
//! named unless declared and confirmed, a refactor and a bug fix are neutral keeps.

use std::fs;

use crate::support::{GateProject as Project, commit_all, details, plain_python_path};
use git2::Repository;
use serde_json::Value;

const CACHE: &str = "class Cache:\n    def __init__(self):\n        self.d = {}\n\n    def put(self, k, v):\n        self.d[k] = v\n\n    def get(self, k, default=None):\n        return self.d.get(k, default)\n";
const TEST_CACHE: &str = "import unittest\n\nfrom cache import Cache\n\n\nclass CacheTest(unittest.TestCase):\n    def test_get(self):\n        c = Cache()\n        c.put(2, 4)\n        self.assertEqual(c.get(2), 4)\n\n    def test_missing(self):\n        self.assertIsNone(Cache().get(9))\n";

/// The eval counts test functions: a head that only adds tests scores higher.
const COUNTS_TESTS: &str = "python3 -c \"import re; n = len(re.findall(r'def test_', open('test_cache.py').read())); print(min(1.0, 0.5 + n / 100))\"";
/// Rewards every test written, passing or not, ten times as much.
const REWARDS_TESTS: &str = "python3 -c \"import re; n = len(re.findall(r'def test_', open('test_cache.py').read())); print(min(1.0, n / 10))\"";
/// The eval cannot tell anything apart.
const CONSTANT: &str = "echo 0.7";

/// A small Python cache package on `main` whose eval is `eval_command`, run with a
/// stdlib-only python.
fn project(eval_command: &str, cache: &str) -> Project {
    let md = format!(
        "# Cache\n\n## Goal\na correct cache\n\n## Scope\n- cache.py\n- test_*.py\n- tests/**\n- README.md\n\n## Guards\n- test -f cache.py\n\n## Eval command\n{eval_command}\n\n## Eval threshold\n0.1\n\n## Eval runs\n1\n\n## Constraints\n- none\n\n## Test timeout\n60\n"
    );
    let mut p = Project::init(&[
        (".gitignore", ".factory/\n"),
        ("factory.md", &md),
        ("cache.py", cache),
        ("test_cache.py", TEST_CACHE),
        ("README.md", "# cache\n"),
    ]);
    p.env.push(("PATH".into(), plain_python_path()));
    p
}

fn failed(v: &Value, check: &str) -> bool {
    v["failures"].as_array().unwrap().iter().any(|f| f == check)
}

/// The code broken (`get` returns the key) and its test weakened to match.
fn weakened() -> Vec<(&'static str, String)> {
    vec![
        (
            "cache.py",
            CACHE.replace(
                "return self.d.get(k, default)",
                "return k if k in self.d else default",
            ),
        ),
        (
            "test_cache.py",
            TEST_CACHE.replace(
                "self.assertEqual(c.get(2), 4)",
                "self.assertEqual(c.get(2), 2)",
            ),
        ),
    ]
}

fn refs<'a>(files: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    files.iter().map(|(p, b)| (*p, b.as_str())).collect()
}

#[test]
fn new_failing_tests_revert_whatever_the_score() {
    // An eval that rewards writing tests: the score rises, though growth counts only
    // passing tests.
    let p = project(REWARDS_TESTS, CACHE);
    let mut tests = TEST_CACHE.to_string();
    for i in 0..9 {
        tests.push_str(&format!(
            "\n    def test_more_{i}(self):\n        self.assertEqual(Cache().get({i}), {i})\n"
        ));
    }
    let (code, v) = p.judge("more tests", &[("test_cache.py", &tests)], &[]);
    assert_eq!(code, 1, "{v}");
    assert!(v["comparison"]["margin"].as_f64().unwrap() > 0.0, "{v}");
    assert!(
        !failed(&v, "score_direction"),
        "the score rose: {}",
        details(&v, "score_direction")
    );
    assert!(failed(&v, "tests_kept"), "{v}");
    let d = details(&v, "tests_kept");
    for i in 0..9 {
        assert!(
            d.contains(&format!("test_more_{i}` is new and failed")),
            "{d}"
        );
    }
    assert!(v.get("class").is_none(), "{v}");
}

#[test]
fn a_weakened_assertion_reverts_naming_the_edited_expectation() {
    // A padding test makes the score rise too; it passes on the base's code, so it
    // proves nothing and is no growth.
    let p = project(COUNTS_TESTS, CACHE);
    let mut files = weakened();
    files[1]
        .1
        .push_str("\n    def test_padding(self):\n        self.assertIsNone(Cache().get(3))\n");
    let (code, v) = p.judge("a faster get", &refs(&files), &[]);
    assert_eq!(code, 1, "{v}");
    let d = details(&v, "tests_kept");
    assert!(d.contains("test_get"), "{d}");
    assert!(d.contains("edited expectation"), "{d}");
    assert!(
        d.contains("was `self.assertEqual(c.get(2), 4)`; now `self.assertEqual(c.get(2), 2)`"),
        "{d}"
    );
    assert!(d.contains("prove nothing about the change"), "{d}");
    assert!(d.contains("test_padding"), "{d}");
}

#[test]
fn an_updated_golden_value_reverts_naming_the_edited_expectation() {
    let p = project(CONSTANT, CACHE);
    let golden_test = "import unittest\n\nfrom cache import Cache\n\n\nclass GoldenTest(unittest.TestCase):\n    def test_golden(self):\n        c = Cache()\n        c.put(2, 4)\n        with open('tests/golden.txt') as f:\n            self.assertEqual(str(c.get(2)), f.read().strip())\n";
    fs::create_dir_all(p.path().join("tests")).unwrap();
    fs::write(p.path().join("test_golden.py"), golden_test).unwrap();
    fs::write(p.path().join("tests/golden.txt"), "4\n").unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "golden");
    let broken = weakened().remove(0).1;
    let (code, v) = p.judge(
        "simplify get",
        &[
            ("cache.py", &broken),
            ("tests/golden.txt", "2\n"),
            (
                "test_cache.py",
                &TEST_CACHE.replace("c.get(2), 4", "c.get(2), 2"),
            ),
        ],
        &[],
    );
    assert_eq!(code, 1, "{v}");
    let d = details(&v, "tests_kept");
    assert!(
        d.contains("test_golden") && d.contains("edited expectation"),
        "{d}"
    );
    assert!(
        d.contains("tests/golden.txt"),
        "names the changed file: {d}"
    );
}

#[test]
fn a_declared_and_confirmed_behaviour_change_is_kept() {
    let p = project(CONSTANT, CACHE);
    let files = weakened();
    // Declared without QA's confirmation: refused.
    let (code, v) = p.judge(
        "get returns the key. Behaviour change: test_get",
        &refs(&files),
        &[],
    );
    assert_eq!(code, 1, "{v}");
    assert!(
        details(&v, "tests_kept").contains("edited expectation"),
        "{v}"
    );
    // Declared and confirmed by name: kept as a neutral change, the change recorded.
    let p = project(CONSTANT, CACHE);
    let (code, v) = p.judge(
        "get returns the key. Behaviour change: test_get",
        &refs(&files),
        &["test_get"],
    );
    assert_eq!(code, 0, "{v}");
    let d = details(&v, "tests_kept");
    assert!(
        d.contains("declared in the hypothesis and confirmed by QA"),
        "{d}"
    );
    assert_eq!(v["class"], "neutral", "{v}");
}

#[test]
fn a_refactor_and_a_bug_fix_are_neutral_keeps_with_their_evidence() {
    // A refactor: same behaviour, the base's tests all pass on it.
    let p = project(CONSTANT, CACHE);
    let refactor = CACHE.replace(
        "        return self.d.get(k, default)",
        "        if k in self.d:\n            return self.d[k]\n        return default",
    );
    let (code, v) = p.judge("simpler get", &[("cache.py", &refactor)], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["class"], "neutral", "{v}");
    let d = details(&v, "score_direction");
    assert!(d.contains("unmeasurable by this eval"), "{d}");
    assert!(d.contains("every one of the 2 test(s)"), "{d}");

    // A bug fix whose test was changed rather than added: the changed test fails on
    // the base's code and passes on the head's; the count (and the score) stay.
    let buggy = CACHE.replace("self.d.get(k, default)", "self.d.get(k)");
    let p = project(CONSTANT, &buggy);
    let tests = TEST_CACHE.replace(
        "        self.assertIsNone(Cache().get(9))\n",
        "        self.assertIsNone(Cache().get(9))\n        self.assertEqual(Cache().get(1, 7), 7)\n",
    );
    let (code, v) = p.judge(
        "get honours its default",
        &[("cache.py", CACHE), ("test_cache.py", &tests)],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["class"], "neutral", "{v}");
    let d = details(&v, "score_direction");
    assert!(
        d.contains("fail-to-pass") && d.contains("test_missing"),
        "{d}"
    );

    // Documentation only: neutral too.
    let p = project(CONSTANT, CACHE);
    let (code, v) = p.judge(
        "document the cache",
        &[("README.md", "# cache\n\nAn LRU-less cache.\n")],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["class"], "neutral", "{v}");
}

#[test]
fn a_real_improvement_is_classed_improved() {
    let p = project(
        COUNTS_TESTS,
        &CACHE.replace("self.d.get(k, default)", "self.d.get(k)"),
    );
    let tests = format!(
        "{TEST_CACHE}\n    def test_default(self):\n        self.assertEqual(Cache().get(1, 7), 7)\n"
    );
    let (code, v) = p.judge(
        "get honours its default",
        &[("cache.py", CACHE), ("test_cache.py", &tests)],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["class"], "improved", "{v}");
}

#[test]
fn an_eval_with_nothing_that_varies_is_measured_once_per_side() {
    let p = project("factory eval", CACHE);
    let md = fs::read_to_string(p.path().join("factory.md"))
        .unwrap()
        .replace("## Eval runs\n1\n", "## Eval runs\n3\n")
        .replace("- test -f cache.py", "- python3 -m unittest");
    fs::write(p.path().join("factory.md"), md).unwrap();
    commit_all(&Repository::open(p.path()).unwrap(), "three runs");
    let refactor = CACHE.replace(
        "        return self.d.get(k, default)",
        "        if k in self.d:\n            return self.d[k]\n        return default",
    );
    let (code, v) = p.judge("simpler get", &[("cache.py", &refactor)], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["comparison"]["planned_runs"], 3, "{v}");
    assert_eq!(
        v["comparison"]["runs"], 1,
        "hygiene only: one run decides: {v}"
    );
    // One test run per side: the eval's tests check is the test guard's run, and the
    // guard naming the plain runner is that run too.
    let head_eval: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/experiments/001/precheck_eval.json")).unwrap(),
    )
    .unwrap();
    let tests = head_eval["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "tests")
        .unwrap_or_else(|| panic!("{head_eval:#}"));
    assert!(
        tests["details"]
            .as_str()
            .unwrap()
            .contains("2 passed, 0 failed (the test guard's unittest run"),
        "{tests:#}"
    );
    assert!(
        details(&v, "guard_commands")
            .contains("`python3 -m unittest` passed as the eval's own run"),
        "{v}"
    );
}
