//! The keep gate on a JavaScript project whose tests are written for mocha (docs/gate.md,
//! "Tests by identity"), through `factory precheck --exp N`: `## Setup` runs `npm ci`
//! in each checkout (mocha from the registry, pinned by a committed package-lock.json),
//! the test guard runs mocha from the checkout's own node_modules and compares tests by
//! `file > describe > it`. An honest feature with its test is kept; a bug hidden by an
//! edited expectation, a skip and a tautology are each reverted by name. Needs node and
//! npm with the registry reachable (`.ci/run` installs them).

use crate::support::{GateProject as Project, check, commit_all, needs, text};
use git2::Repository;
use serde_json::Value;

const CALC: &str = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n";
const TESTS: &str = "const assert = require('assert');\nconst calc = require('../calc');\n\ndescribe('calc', function () {\n  describe('add', function () {\n    it('adds', function () {\n      assert.strictEqual(calc.add(1, 2), 3);\n    });\n  });\n\n  describe('sub', function () {\n    it('subtracts', function () {\n      assert.strictEqual(calc.sub(5, 3), 2);\n    });\n  });\n});\n";
const PACKAGE: &str = "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"scripts\": { \"test\": \"mocha --reporter spec test/\" },\n  \"devDependencies\": { \"mocha\": \"10.8.2\" }\n}\n";
const FACTORY_MD: &str = "# Calc\n\n## Goal\ncorrect arithmetic\n\n## Scope\n- calc.js\n- test/**\n\n## Setup\n- npm ci --no-audit --no-fund\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.0\n\n## Eval runs\n1\n\n## Constraints\n- none\n\n## Test timeout\n300\n";

/// The calc project with a package-lock.json npm resolved for it, committed on main.
fn project() -> Project {
    needs("node");
    needs("npm");
    let mut p = Project::init(&[
        (".gitignore", ".factory/\nnode_modules/\n"),
        ("package.json", PACKAGE),
        ("calc.js", CALC),
        ("test/calc.test.js", TESTS),
        ("factory.md", FACTORY_MD),
    ]);
    let lock = std::process::Command::new("npm")
        .args(["install", "--package-lock-only", "--no-audit", "--no-fund"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(
        lock.status.success(),
        "npm could not resolve mocha (is the registry reachable?): {}",
        text(&lock.stderr)
    );
    commit_all(&Repository::open(p.path()).unwrap(), "lock");
    p.env
        .push(("NPM_CONFIG_UPDATE_NOTIFIER".into(), "false".into()));
    p
}

/// The details of check `name`; the check must be there.
fn details(v: &Value, name: &str) -> String {
    check(v, name)["details"].to_string()
}

fn failed(v: &Value, check: &str) -> bool {
    v["failures"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == check))
}

#[test]
fn a_mocha_project_keeps_an_honest_feature_and_reverts_each_cheat_by_name() {
    let p = project();

    // Honest: a new function and its test, which fails on the base's code.
    let (code, v) = p.judge(
        "add mul",
        &[
            ("calc.js", &format!("{CALC}exports.mul = (a, b) => a * b;\n")),
            (
                "test/calc.test.js",
                &TESTS.replace(
                    "  describe('sub', function () {",
                    "  describe('mul', function () {\n    it('multiplies', function () {\n      assert.strictEqual(calc.mul(2, 3), 6);\n    });\n  });\n\n  describe('sub', function () {",
                ),
            ),
        ],
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["passed"], true, "{v:#}");
    let kept = details(&v, "tests_kept");
    assert!(
        kept.contains("fail-to-pass")
            && kept.contains("test/calc.test.js > calc > mul > multiplies"),
        "{kept}"
    );
    assert!(
        details(&v, "provenance").contains("`npm ci --no-audit --no-fund`"),
        "{v:#}"
    );

    // A bug in add hidden by editing what its test expects.
    let (code, v) = p.judge(
        "a faster add",
        &[
            ("calc.js", &CALC.replace("a + b", "a + b + 1")),
            (
                "test/calc.test.js",
                &TESTS.replace("calc.add(1, 2), 3", "calc.add(1, 2), 4"),
            ),
        ],
        &[],
    );
    assert_eq!(code, 1, "{v:#}");
    assert!(failed(&v, "tests_kept"), "{v:#}");
    let d = details(&v, "tests_kept");
    for needle in [
        "test/calc.test.js:6",
        "test/calc.test.js > calc > add > adds",
        "edited expectation",
        "was `assert.strictEqual(calc.add(1, 2), 3);`; now `assert.strictEqual(calc.add(1, 2), 4);`",
    ] {
        assert!(d.contains(needle), "{needle:?} not in {d}");
    }

    // The same bug, its test skipped; then its assertion made a tautology.
    for (n, (test, needles)) in [
        (
            TESTS.replace("it('adds'", "it.skip('adds'"),
            ["test/calc.test.js > calc > add > adds", "skipped at head"],
        ),
        (
            TESTS.replace("calc.add(1, 2), 3", "calc.add(1, 2), calc.add(1, 2)"),
            ["test/calc.test.js:7", "assertion replaced by a tautology"],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let (code, v) = p.judge(
            &format!("a cheaper add, take {n}"),
            &[
                ("calc.js", &CALC.replace("a + b", "a + b + 1")),
                ("test/calc.test.js", &test),
            ],
            &[],
        );
        assert_eq!(code, 1, "{v:#}");
        let d = details(&v, "tests_kept");
        for needle in needles {
            assert!(d.contains(needle), "{needle:?} not in {d}");
        }
    }
}
