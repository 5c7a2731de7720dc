//! Each rule of tests-by-identity on real git repositories run by the real runners.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use git2::{Oid, Repository, Signature};

use super::attribution::Declared;
use super::runners::{JsFramework, Runner, Tools};
use super::{Identity, check_identity, check_identity_declared};

struct Fixture {
    dir: tempfile::TempDir,
    repo: Repository,
    base: Oid,
}

impl Fixture {
    fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let mut f = Self {
            dir,
            repo,
            base: Oid::ZERO_SHA1,
        };
        for (p, t) in files {
            f.write(p, t);
        }
        f.base = f.commit("base");
        f
    }

    fn write(&self, path: &str, text: &str) {
        let p = self.dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn remove(&self, path: &str) {
        fs::remove_file(self.dir.path().join(path)).unwrap();
    }

    fn commit(&self, message: &str) -> Oid {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("t", "t@example.com").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    fn check(&self, tools: &Tools) -> Identity {
        let head = self.commit("head");
        check_identity(&self.repo, self.base, head, tools).unwrap()
    }
}

fn messages(identity: &Identity) -> Vec<String> {
    identity.findings.iter().map(|f| f.message()).collect()
}

/// Asserts a finding mentions every needle.
fn refused(identity: &Identity, needles: &[&str]) {
    let all = messages(identity);
    assert!(
        all.iter().any(|m| needles.iter().all(|n| m.contains(n))),
        "no finding with {needles:?} in {all:#?}"
    );
}

/// A Python with the standard library only: the unittest runner, whether or not the
/// machine's python3 has pytest (the gate prefers pytest when it is installed).
fn python_tools() -> Tools {
    Tools {
        python: Some(plain_python()),
        timeout: Duration::from_secs(120),
        ..Tools::default()
    }
}

fn plain_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        // Shared between runs like the pytest one; re-running venv on it is harmless.
        let venv = std::env::temp_dir().join("factory-test-plain-venv");
        let py = venv.join("bin/python");
        if py.exists() {
            return py;
        }
        let made = std::process::Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(made, "these tests need python3 with venv");
        py
    })
    .clone()
}

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TEST_CALC: &str = "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_add_zero(self):\n        total = add(0, 5)\n        self.assertEqual(total, 5)\n";

fn py() -> Fixture {
    Fixture::new(&[("calc.py", CALC), ("test_calc.py", TEST_CALC)])
}

#[test]
fn python_honest_change_adding_and_renaming_a_test_passes() {
    let f = py();
    f.write(
        "test_calc.py",
        &TEST_CALC
            .replace("test_add_zero", "test_zero_is_identity")
            .replace(
                "    def test_add(self):",
                "    def test_add_negative(self):\n        self.assertEqual(add(-1, -2), -3)\n\n    def test_add(self):",
            ),
    );
    let id = f.check(&python_tools());
    assert!(id.runner.is_some());
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (2, 3));
}

#[test]
fn python_rename_with_a_changed_body_is_refused() {
    let f = py();
    f.write(
        "test_calc.py",
        &TEST_CALC
            .replace("test_add_zero", "test_zero")
            .replace("self.assertEqual(total, 5)", "self.assertTrue(total)"),
    );
    refused(
        &f.check(&python_tools()),
        &[
            "test_calc.py:10",
            "test_add_zero",
            "no longer exists",
            "rename whose body is unchanged",
        ],
    );
}

#[test]
fn python_test_rewritten_into_one_that_shows_the_change_is_kept_and_padding_is_not() {
    // `add` gains a default; `test_add_zero` becomes `test_add_default`, which fails on
    // the base's code, while the old test still passes on the head's.
    let rewrite = |new_test: &str| {
        let f = py();
        f.write("calc.py", &CALC.replace("b)", "b=0)"));
        f.write(
            "test_calc.py",
            &TEST_CALC.replace(
                "    def test_add_zero(self):\n        total = add(0, 5)\n        self.assertEqual(total, 5)\n",
                new_test,
            ),
        );
        f.check(&python_tools())
    };
    let id = rewrite("    def test_add_default(self):\n        self.assertEqual(add(5), 5)\n");
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!(
        id.evidence.retired,
        vec!["test_calc.CalcTest.test_add_zero → test_calc.CalcTest.test_add_default"]
    );
    // The same swap for a test that passes on the base too proves nothing: deleted.
    let id = rewrite("    def test_add_five(self):\n        self.assertEqual(add(5, 0), 5)\n");
    refused(&id, &["test_add_zero", "no longer exists"]);
    assert!(id.evidence.retired.is_empty());
}

#[test]
fn python_deleted_test_is_refused_and_fewer_run() {
    let f = py();
    f.write(
        "test_calc.py",
        TEST_CALC.split("\n    def test_add_zero").next().unwrap(),
    );
    let id = f.check(&python_tools());
    refused(&id, &["test_add_zero", "no longer exists"]);
    refused(
        &id,
        &["1 tests executed at head, 2 at base", "at least as many"],
    );
}

#[test]
fn python_tests_moved_out_of_discovery_are_refused() {
    let f = py();
    f.remove("test_calc.py");
    f.write("check_calc.py", TEST_CALC);
    let id = f.check(&python_tools());
    refused(&id, &["0 tests executed at head, 2 at base"]);
    refused(&id, &["test_add", "no longer exists"]);
}

#[test]
fn python_skip_is_refused() {
    let f = py();
    f.write(
        "test_calc.py",
        &TEST_CALC.replace(
            "    def test_add(self):",
            "    @unittest.skip('flaky')\n    def test_add(self):",
        ),
    );
    let id = f.check(&python_tools());
    refused(&id, &["test_add", "skipped at head", "no new skips"]);
    refused(
        &id,
        &["test_calc.py:7", "new skip or expected-failure marker"],
    );
}

#[test]
fn python_tautology_is_refused() {
    let f = py();
    f.write(
        "test_calc.py",
        &TEST_CALC.replace("self.assertEqual(add(1, 2), 3)", "self.assertTrue(True)"),
    );
    refused(
        &f.check(&python_tools()),
        &[
            "test_calc.py:8",
            "test `test_add`",
            "tautology `self.assertTrue(True)`",
            "an assertion that can fail",
        ],
    );
}

#[test]
fn python_shadowing_module_is_refused() {
    let f = py();
    f.write("json.py", "def loads(s):\n    return {}\n");
    f.write("pkg/__init__.py", "");
    f.write("pkg/json.py", "X = 1\n"); // inside a package: `pkg.json`, shadows nothing
    let id = f.check(&python_tools());
    refused(&id, &["json.py", "shadows the Python module `json`"]);
    assert_eq!(id.findings.len(), 1, "{:#?}", messages(&id));
}

#[test]
fn python_test_that_now_fails_is_refused() {
    let f = py();
    f.write("calc.py", "def add(a, b):\n    return a - b\n");
    refused(
        &f.check(&python_tools()),
        &[
            "test_add",
            "passed at base and is failed at head",
            "it still passes",
        ],
    );
}

/// A Python with pytest: `FACTORY_TEST_PYTHON`, else a venv made once in the temp dir.
fn pytest_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        if let Some(p) = std::env::var_os("FACTORY_TEST_PYTHON") {
            return PathBuf::from(p);
        }
        let venv = std::env::temp_dir().join("factory-test-pytest-venv");
        let py = venv.join("bin/python");
        let ok = |p: &Path, args: &[&str]| {
            std::process::Command::new(p)
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !ok(&py, &["-c", "import pytest"]) {
            assert!(
                ok(
                    Path::new("python3"),
                    &["-m", "venv", &venv.to_string_lossy()]
                ),
                "python3 -m venv failed"
            );
            assert!(
                ok(&py, &["-m", "pip", "install", "-q", "pytest"]),
                "installing pytest into {} failed",
                venv.display()
            );
        }
        py
    })
    .clone()
}

const PYTEST_FILE: &str = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_zero():\n    assert add(0, 5) == 5\n";

#[test]
fn pytest_rules_by_identity() {
    let tools = Tools {
        python: Some(pytest_python()),
        ..python_tools()
    };
    let base = [("calc.py", CALC), ("tests/test_calc.py", PYTEST_FILE)];

    // Honest: rename with the same body, add a test.
    let f = Fixture::new(&base);
    f.write(
        "tests/test_calc.py",
        &format!(
            "{}\n\ndef test_big():\n    assert add(100, 1) == 101\n",
            PYTEST_FILE.replace("test_add_zero", "test_zero_is_identity")
        ),
    );
    let id = f.check(&tools);
    assert_eq!(id.runner, Some(Runner::Pytest));
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (2, 3));

    // xfail, and `assert x == x`.
    let f = Fixture::new(&base);
    f.write(
        "tests/test_calc.py",
        &format!(
            "import pytest\n{}",
            PYTEST_FILE
                .replace("def test_add():", "@pytest.mark.xfail\ndef test_add():")
                .replace("assert add(0, 5) == 5", "x = add(0, 5)\n    assert x == x")
        ),
    );
    let id = f.check(&tools);
    refused(
        &id,
        &[
            "tests/test_calc.py::test_add",
            "marked as an expected failure",
        ],
    );
    refused(
        &id,
        &[
            "tests/test_calc.py:12",
            "test `test_add_zero`",
            "tautology `assert x == x`",
        ],
    );

    // A conftest.py that monkeypatches what the tests import.
    let f = Fixture::new(&base);
    f.write(
        "tests/conftest.py",
        "import calc\n\ncalc.add = lambda a, b: 3 if (a, b) == (1, 2) else a + b\nsetattr(calc, 'sub', None)\n",
    );
    refused(
        &f.check(&tools),
        &["tests/conftest.py:4", "conftest.py patches"],
    );
}

/// Each fixture builds in its own scratch target dir: fixture crates share a name, so a
/// target dir shared between concurrently checked repositories could serve stale builds.
fn cargo_tools() -> Tools {
    Tools {
        timeout: Duration::from_secs(300),
        ..Tools::default()
    }
}

const CARGO_TOML: &str =
    "[package]\nname = \"idfx\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const LIB_RS: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_zero() {\n        let total = add(0, 5);\n        assert_eq!(total, 5);\n    }\n}\n";

fn rust() -> Fixture {
    Fixture::new(&[("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB_RS)])
}

#[test]
fn cargo_honest_change_passes() {
    let f = rust();
    f.write(
        "src/lib.rs",
        &LIB_RS.replace("fn adds_zero()", "fn zero_is_identity()").replace(
            "    #[test]\n    fn adds() {",
            "    #[test]\n    fn adds_negative() {\n        assert_eq!(add(-1, -2), -3);\n    }\n\n    #[test]\n    fn adds() {",
        ),
    );
    let id = f.check(&cargo_tools());
    assert_eq!(id.runner, Some(Runner::Cargo));
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (2, 3));
}

#[test]
fn cargo_ignore_tautology_rename_and_failure_are_refused() {
    // #[ignore], and assert_eq!(1, 1) in place of a real assertion.
    let f = rust();
    f.write(
        "src/lib.rs",
        &LIB_RS
            .replace(
                "    #[test]\n    fn adds()",
                "    #[test]\n    #[ignore]\n    fn adds()",
            )
            .replace("assert_eq!(total, 5);", "assert_eq!(1, 1);"),
    );
    let id = f.check(&cargo_tools());
    refused(
        &id,
        &["src/lib.rs::tests::adds", "skipped at head", "no new skips"],
    );
    refused(
        &id,
        &[
            "src/lib.rs:10",
            "new skip or expected-failure marker `#[ignore]`",
        ],
    );
    refused(
        &id,
        &[
            "src/lib.rs:18",
            "test `adds_zero`",
            "tautology `assert_eq!(1, 1);`",
        ],
    );

    // A rename whose body changed; the other test deleted; and a test that now fails.
    let f = rust();
    f.write(
        "src/lib.rs",
        &LIB_RS
            .replace("a + b\n", "a + b + i32::from(a == 1)\n")
            .replace(
                "    #[test]\n    fn adds_zero() {\n        let total = add(0, 5);\n        assert_eq!(total, 5);\n    }\n",
                "",
            )
            .replace("fn adds()", "fn sums()"),
    );
    let id = f.check(&cargo_tools());
    refused(
        &id,
        &[
            "src/lib.rs:15",
            "src/lib.rs::tests::adds_zero",
            "no longer exists",
        ],
    );
    refused(&id, &["src/lib.rs::tests::adds`", "no longer exists"]);
    refused(&id, &["1 tests executed at head, 2 at base"]);
}

#[test]
fn cargo_test_that_now_fails_is_refused() {
    let f = rust();
    f.write("src/lib.rs", &LIB_RS.replace("a + b\n", "a * b\n"));
    refused(
        &f.check(&cargo_tools()),
        &[
            "src/lib.rs::tests::adds",
            "failed at head",
            "it still passes",
        ],
    );
}

const DOC_LIB_RS: &str = "/// Adds.\n///\n/// ```\n/// assert_eq!(idfx::add(1, 2), 3);\n/// ```\n///\n/// ```\n/// assert_eq!(idfx::add(0, 5), 5);\n/// ```\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

#[test]
fn cargo_doc_tests_are_kept_through_a_rename_a_move_and_a_new_ignored_example() {
    let f = Fixture::new(&[("Cargo.toml", CARGO_TOML), ("src/lib.rs", DOC_LIB_RS)]);
    // `add` renamed to `sum` with its examples, moved to another file, and a new
    // ```ignore example (documentation rustdoc reports as ignored).
    f.write("src/lib.rs", "mod ops;\npub use ops::sum;\n");
    f.write(
        "src/ops.rs",
        &DOC_LIB_RS.replace("add", "sum").replace(
            "/// Adds.\n",
            "/// Adds.\n///\n/// ```ignore\n/// let _ = sum(a, b); // like a + b\n/// ```\n",
        ),
    );
    let id = f.check(&cargo_tools());
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (2, 2));

    // A deleted example is a test gone, named at its line in the base's file.
    let f = Fixture::new(&[("Cargo.toml", CARGO_TOML), ("src/lib.rs", DOC_LIB_RS)]);
    f.write(
        "src/lib.rs",
        &DOC_LIB_RS.replace(
            "///\n/// ```\n/// assert_eq!(idfx::add(0, 5), 5);\n/// ```\n",
            "",
        ),
    );
    let id = f.check(&cargo_tools());
    refused(
        &id,
        &[
            "src/lib.rs:8",
            "doc:idfx::src/lib.rs - add #2",
            "no longer exists",
        ],
    );

    // An example failing at the base marked `ignore` at the head (upstream's "fix: build
    // failure") silences nothing that protected anything: no finding, not one test fewer.
    let failing = DOC_LIB_RS.replace("add(0, 5), 5)", "add(0, 5), 6)");
    let f = Fixture::new(&[("Cargo.toml", CARGO_TOML), ("src/lib.rs", &failing)]);
    f.write(
        "src/lib.rs",
        &failing.replacen(
            "/// ```\n/// assert_eq!(idfx::add(0",
            "/// ```ignore\n/// assert_eq!(idfx::add(0",
            1,
        ),
    );
    let id = f.check(&cargo_tools());
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (2, 1));
}

const NODE_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('adds', () => {\n  assert.strictEqual(1 + 2, 3);\n});\n\ntest.describe('suite', () => {\n  test.it('keeps zero', () => {\n    assert.strictEqual(0 + 5, 5);\n  });\n});\n";

#[test]
fn node_rename_passes_and_skip_is_refused() {
    assert!(
        crate::sys::process::which("node").is_some(),
        "this test needs node"
    );
    let tools = Tools {
        timeout: Duration::from_secs(120),
        ..Tools::default()
    };
    let base = [
        (
            "package.json",
            "{\"name\": \"fx\", \"version\": \"1.0.0\"}\n",
        ),
        ("test/calc.test.js", NODE_TEST),
    ];
    let f = Fixture::new(&base);
    f.write(
        "test/calc.test.js",
        &format!(
            "{}\ntest('adds negatives', () => {{\n  assert.strictEqual(-1 + -2, -3);\n}});\n",
            NODE_TEST.replace("'adds'", "'sums'")
        ),
    );
    let id = f.check(&tools);
    assert_eq!(id.runner, Some(Runner::Node(JsFramework::NodeTest)));
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (2, 3));

    let f = Fixture::new(&base);
    f.write(
        "test/calc.test.js",
        &NODE_TEST.replace(
            "test.it('keeps zero', () => {",
            "test.it.skip('keeps zero', () => {",
        ),
    );
    let id = f.check(&tools);
    refused(
        &id,
        &[
            "suite > keeps zero",
            "skipped at head",
            "test/calc.test.js:9",
        ],
    );
    refused(
        &id,
        &["test/calc.test.js:9", "new skip or expected-failure marker"],
    );
}

/// A cache whose `get` returns the stored value, and a test pinning it.
const CACHE: &str = "class Cache:\n    def __init__(self):\n        self.d = {}\n\n    def put(self, k, v):\n        self.d[k] = v\n\n    def get(self, k, default=None):\n        return self.d.get(k, default)\n";
const TEST_CACHE: &str = "import unittest\n\nfrom cache import Cache\n\n\nclass CacheTest(unittest.TestCase):\n    def test_get(self):\n        c = Cache()\n        c.put(2, 4)\n        self.assertEqual(c.get(2), 4)\n\n    def test_missing(self):\n        self.assertIsNone(Cache().get(9))\n";

fn cache() -> Fixture {
    Fixture::new(&[("cache.py", CACHE), ("test_cache.py", TEST_CACHE)])
}

fn check_declared(f: &Fixture, declared: &Declared) -> Identity {
    let head = f.commit("head");
    check_identity_declared(&f.repo, f.base, head, &python_tools(), declared).unwrap()
}

/// The code broken, and its test weakened so it still passes.
fn weaken(f: &Fixture) {
    f.write(
        "cache.py",
        &CACHE.replace(
            "return self.d.get(k, default)",
            "return default if k not in self.d else k",
        ),
    );
    f.write(
        "test_cache.py",
        &TEST_CACHE.replace(
            "self.assertEqual(c.get(2), 4)",
            "self.assertEqual(c.get(2), 2)",
        ),
    );
}

#[test]
fn a_new_test_that_fails_at_the_head_is_refused() {
    let f = cache();
    let mut text = TEST_CACHE.to_string();
    for i in 0..3 {
        text.push_str(&format!(
            "\n    def test_broken_{i}(self):\n        self.assertEqual(Cache().get(1, 0), {})\n",
            i + 1
        ));
    }
    f.write("test_cache.py", &text);
    let id = f.check(&python_tools());
    for i in 0..3 {
        refused(
            &id,
            &[
                &format!("test_broken_{i}"),
                "is new and failed",
                "every test at the head passes",
            ],
        );
    }
}

#[test]
fn a_weakened_assertion_is_an_edited_expectation_naming_old_and_new() {
    let f = cache();
    weaken(&f);
    let id = check_declared(&f, &Declared::default());
    refused(
        &id,
        &[
            "test_cache.py:7",
            "test_get",
            "edited expectation",
            "was `self.assertEqual(c.get(2), 4)`; now `self.assertEqual(c.get(2), 2)`",
            "Behaviour change: test_get",
        ],
    );
    assert_eq!(id.evidence.edited.len(), 1, "{:#?}", id.evidence);
    assert!(!id.evidence.edited[0].confirmed);
}

#[test]
fn a_declared_and_confirmed_behaviour_change_is_not_refused() {
    let f = cache();
    weaken(&f);
    let declared = Declared {
        changes: vec!["test_get".into()],
        confirmed: vec!["test_get".into()],
    };
    let id = check_declared(&f, &declared);
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert!(id.evidence.edited[0].confirmed);
    assert!(
        id.evidence
            .notes()
            .iter()
            .any(|n| n.contains("declared in the hypothesis and confirmed by QA")),
        "{:#?}",
        id.evidence.notes()
    );
    // Declared but not confirmed (or the other way round) is still refused.
    let f = cache();
    weaken(&f);
    let only_declared = Declared {
        changes: vec!["test_get".into()],
        confirmed: vec![],
    };
    refused(
        &check_declared(&f, &only_declared),
        &["test_get", "edited expectation"],
    );
}

#[test]
fn a_bug_fix_shows_a_fail_to_pass_test_and_padding_proves_nothing() {
    let f = Fixture::new(&[
        (
            "cache.py",
            &CACHE.replace("return self.d.get(k, default)", "return self.d.get(k)"),
        ),
        ("test_cache.py", TEST_CACHE),
    ]);
    f.write("cache.py", CACHE);
    f.write(
        "test_cache.py",
        &format!(
            "{TEST_CACHE}\n    def test_default(self):\n        self.assertEqual(Cache().get(1, 7), 7)\n\n    def test_padding(self):\n        self.assertIsNone(Cache().get(3))\n"
        ),
    );
    let id = f.check(&python_tools());
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!(
        id.evidence.fail_to_pass,
        vec!["test_cache.CacheTest.test_default"]
    );
    assert_eq!(
        id.evidence.proves_nothing,
        vec!["test_cache.CacheTest.test_padding"]
    );
    assert_eq!(id.evidence.base_passed, 2);
}

#[test]
fn a_test_flaky_at_the_base_is_reported_and_not_blamed() {
    let state = tempfile::tempdir().unwrap();
    let counter = state.path().join("runs");
    // Passes on the 1st and 4th run, fails on the 2nd and 3rd: base, head, base, head.
    let flaky = format!(
        "import os, unittest\n\n\nclass FlakyTest(unittest.TestCase):\n    def test_sometimes(self):\n        p = {counter:?}\n        n = int(open(p).read()) + 1 if os.path.exists(p) else 1\n        open(p, 'w').write(str(n))\n        self.assertIn(n, (1, 4))\n"
    );
    let f = Fixture::new(&[
        ("calc.py", CALC),
        ("test_calc.py", TEST_CALC),
        ("test_flaky.py", &flaky),
    ]);
    f.write(
        "calc.py",
        &format!("{CALC}\n\ndef sub(a, b):\n    return a - b\n"),
    );
    let id = f.check(&python_tools());
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    let flaky = &id.evidence.flaky;
    assert_eq!(flaky.len(), 1, "{:#?}", id.evidence);
    assert!(flaky[0].test.ends_with("test_sometimes"));
    assert_eq!((flaky[0].base.passed, flaky[0].base.failed), (1, 1));
    assert_eq!((flaky[0].head.passed, flaky[0].head.failed), (1, 1));
    assert!(
        id.evidence
            .notes()
            .iter()
            .any(|n| n.contains("is flaky") && n.contains("not blamed"))
    );
}

// ----------------------------------------------------------------- mocha, from npm

/// A mocha project: `## Setup` installs mocha from the registry into each checkout.
const CALC_JS: &str = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n";
const CALC_MOCHA: &str = "const assert = require('assert');\nconst { add, sub } = require('../calc');\n\ndescribe('add', function () {\n  it('adds', function () {\n    assert.strictEqual(add(1, 2), 3);\n  });\n\n  it('keeps zero', function () {\n    assert.strictEqual(add(0, 5), 5);\n  });\n});\n\ndescribe('sub', function () {\n  it('subtracts', function () {\n    assert.strictEqual(sub(5, 3), 2);\n  });\n});\n";

fn mocha_tools() -> Tools {
    assert!(
        crate::sys::process::which("npm").is_some(),
        "this test needs npm (.ci/run installs it)"
    );
    Tools {
        timeout: Duration::from_secs(300),
        setup: vec!["npm install --no-audit --no-fund --no-package-lock".into()],
        ..Tools::default()
    }
}

fn mocha() -> Fixture {
    Fixture::new(&[
        (
            "package.json",
            "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"scripts\": { \"test\": \"mocha --reporter spec --bail test/\" },\n  \"devDependencies\": { \"mocha\": \"10.8.2\" }\n}\n",
        ),
        (".gitignore", "node_modules/\n"),
        ("calc.js", CALC_JS),
        ("test/calc.test.js", CALC_MOCHA),
    ])
}

#[test]
fn mocha_tests_by_identity_rename_passes_and_each_cheat_is_named() {
    let tools = mocha_tools();
    // Honest: a test renamed with its body kept, and a new one.
    let f = mocha();
    f.write(
        "test/calc.test.js",
        &CALC_MOCHA.replace("'keeps zero'", "'is identity on zero'").replace(
            "describe('sub', function () {\n",
            "describe('sub', function () {\n  it('goes negative', function () {\n    assert.strictEqual(sub(1, 3), -2);\n  });\n\n",
        ),
    );
    let id = f.check(&tools);
    assert_eq!(id.runner, Some(Runner::Node(JsFramework::Mocha)));
    assert!(id.findings.is_empty(), "{:#?}", messages(&id));
    assert_eq!((id.base_executed, id.head_executed), (3, 4));
    // `--bail` is dropped: a failing test does not hide the ones after it.
    let f = mocha();
    f.write(
        "calc.js",
        &CALC_JS.replace("a + b", "a + b + (a === 1 ? 1 : 0)"),
    );
    let id = f.check(&tools);
    refused(
        &id,
        &[
            "test/calc.test.js > add > adds",
            "test/calc.test.js:5",
            "passed at base and is failed at head",
        ],
    );
    assert_eq!(id.head_executed, 3, "{:#?}", messages(&id));

    // Cheats: sub broken and its expectation edited to match; a skip; a tautology.
    let f = mocha();
    f.write("calc.js", &CALC_JS.replace("a - b", "a - b - 1"));
    f.write(
        "test/calc.test.js",
        &CALC_MOCHA
            .replace("sub(5, 3), 2", "sub(5, 3), 1")
            .replace("it('keeps zero'", "it.skip('keeps zero'")
            .replace(
                "assert.strictEqual(add(1, 2), 3);",
                "assert.strictEqual(add(1, 2), add(1, 2));",
            ),
    );
    let id = f.check(&tools);
    refused(
        &id,
        &[
            "test/calc.test.js:15",
            "test `test/calc.test.js > sub > subtracts`",
            "edited expectation",
            "was `assert.strictEqual(sub(5, 3), 2);`; now `assert.strictEqual(sub(5, 3), 1);`",
        ],
    );
    refused(
        &id,
        &["test/calc.test.js > add > keeps zero", "skipped at head"],
    );
    refused(
        &id,
        &["test/calc.test.js:9", "new skip or expected-failure marker"],
    );
    refused(
        &id,
        &[
            "test/calc.test.js:6",
            "test `adds`",
            "assertion replaced by a tautology",
        ],
    );
}

#[test]
fn mocha_not_installed_is_could_not_measure_not_zero_tests() {
    let no_setup = Tools {
        timeout: Duration::from_secs(60),
        ..Tools::default()
    };
    // Declared but not installed (no `## Setup`): the provenance probe refuses.
    let f = mocha();
    f.write("calc.js", &CALC_JS.replace("a - b", "b - a"));
    let head = f.commit("head");
    let err = check_identity(&f.repo, f.base, head, &no_setup).unwrap_err();
    assert!(
        err.contains("could not measure") && err.contains("`mocha`"),
        "{err}"
    );
    // Run by the test script but not declared (a global mocha assumed): named, and the
    // runner is not run to report no tests.
    let f = Fixture::new(&[
        (
            "package.json",
            "{ \"name\": \"calc\", \"version\": \"1.0.0\", \"scripts\": { \"test\": \"mocha test/\" } }\n",
        ),
        ("calc.js", CALC_JS),
        ("test/calc.test.js", CALC_MOCHA),
    ]);
    f.write("calc.js", &CALC_JS.replace("a - b", "b - a"));
    let id = f.check(&no_setup);
    refused(
        &id,
        &[
            "(tests)",
            "the project's tests run with mocha (package.json's `test` script `mocha test/`)",
            "not installed in the checkout's own node_modules",
            "`## Setup` must install it",
        ],
    );
    assert_eq!(id.runner, None);
}
