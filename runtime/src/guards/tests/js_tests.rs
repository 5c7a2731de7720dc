//! The JavaScript frameworks' reports, as captured from real runs (mocha 10 with
//! factory's reporter, jest 29, vitest 1 and 3, ava 6, tape 5; each on the same two
//! files: a pass, a failure, a skip, a todo, a nested describe, a same-named test in a
//! second file and a hook that throws), and package.json scripts of real projects.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::guards::tests_kept::runners::Outcome::{self, ExpectedFailure, Failed, Passed, Skipped};

/// Every id a run should report, with its outcome.
type Expected = Vec<(String, Outcome)>;

/// Each fixture: its parser, the checkout it was captured in, and every id it reports.
#[test]
fn each_frameworks_captured_report_gives_stable_ids_and_outcomes() {
    let html = "should return mime type for \".html\"";
    let describe = "mime.lookup(extension)";
    let a = |titles: &[&str]| format!("test/a.test.js > {}", titles.join(" > "));
    let b = |titles: &[&str]| format!("test/b.test.js > {}", titles.join(" > "));
    // What mocha, jest and vitest agree on for test/a.test.js.
    let file_a = vec![
        (a(&["top level"]), Passed),
        (a(&[describe, html]), Passed),
        (a(&[describe, "fails"]), Failed),
        (a(&[describe, "is skipped"]), Skipped),
        (a(&[describe, "is pending"]), Skipped),
        (a(&[describe, "nested", "deep"]), Passed),
        (b(&[describe, "deep"]), Passed),
    ];
    let with = |extra: Vec<(String, Outcome)>| {
        let mut all = file_a.clone();
        all.extend(extra);
        all
    };
    let cases: Vec<(&str, TestRun, Expected)> = vec![
        (
            "mocha 10",
            parse_mocha(
                include_str!("js_fixtures/mocha10.jsonl"),
                Path::new("/tmp/jscap/m"),
            ),
            // The before-all hook that throws fails the test it stopped.
            with(vec![(b(&["hooks", "never runs"]), Failed)]),
        ),
        (
            "jest 29",
            parse_jest(
                include_str!("js_fixtures/jest29.json"),
                Path::new("/tmp/jscap/j"),
            ),
            // A file that cannot load fails under its own id.
            with(vec![
                (b(&["hooks", "never runs"]), Failed),
                ("test/c.test.js".into(), Failed),
            ]),
        ),
        (
            "vitest 1",
            parse_jest(
                include_str!("js_fixtures/vitest1.json"),
                Path::new("/tmp/jscap/v"),
            ),
            // vitest skips what a broken hook stopped, and fails the file.
            with(vec![
                (b(&["hooks", "never runs"]), Skipped),
                ("test/b.test.js".into(), Failed),
            ]),
        ),
        (
            "vitest 3",
            parse_jest(
                include_str!("js_fixtures/vitest3.json"),
                Path::new("/tmp/jscap/vitest3"),
            ),
            with(vec![
                (b(&["hooks", "never runs"]), Skipped),
                ("test/b.test.js".into(), Failed),
            ]),
        ),
        (
            "ava 6",
            parse_ava(include_str!("js_fixtures/ava6.tap")),
            vec![
                (format!("a > {html}"), Passed),
                ("a > fails".into(), Failed),
                ("a > is skipped".into(), Skipped),
                ("a > is pending".into(), ExpectedFailure),
                ("a > known bug".into(), Passed),
                ("b > fails".into(), Passed),
            ],
        ),
        (
            "tape 5",
            parse_tape(include_str!("js_fixtures/tape5.tap")),
            vec![
                (html.to_string(), Passed),
                // Two tests named `fails`, one failing: the id keeps the worst.
                ("fails".into(), Failed),
                ("with subtests".into(), Passed),
                ("child".into(), Passed),
                ("todo one".into(), ExpectedFailure),
            ],
        ),
    ];
    for (name, run, expected) in cases {
        let expected: std::collections::BTreeMap<String, Outcome> = expected.into_iter().collect();
        assert_eq!(run.outcomes, expected, "{name}");
    }
}

#[test]
fn a_missing_or_broken_report_is_no_tests_not_a_crash() {
    assert!(parse_jest("", Path::new("/x")).outcomes.is_empty());
    assert!(
        parse_jest("{\"testResults\": 3}", Path::new("/x"))
            .outcomes
            .is_empty()
    );
    assert!(
        parse_mocha("not json\n{}\n", Path::new("/x"))
            .outcomes
            .is_empty()
    );
    assert!(parse_tape("").outcomes.is_empty());
}

fn inv(manifest: serde_json::Value) -> Option<Invocation> {
    invocation(&manifest)
}

#[test]
fn the_framework_is_read_from_the_test_script_and_then_the_dependencies() {
    let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    // jshttp/mime-types: one plain mocha command.
    let m = inv(json!({
        "devDependencies": {"mocha": "10.8.2", "nyc": "15.1.0"},
        "scripts": {"test": "mocha --reporter spec test/test.js",
                    "test-ci": "nyc --reporter=lcov --reporter=text npm test"}
    }))
    .unwrap();
    assert_eq!(m.framework, JsFramework::Mocha);
    assert_eq!(m.args, words(&["--reporter", "spec", "test/test.js"]));
    assert!(m.plain);
    // expressjs/cors: lint, then mocha under nyc through `npm run`.
    let c = inv(json!({
        "devDependencies": {"mocha": "9.2.2", "nyc": "15.1.0", "eslint": "7"},
        "scripts": {"test": "npm run lint && npm run test-ci",
                    "test-ci": "nyc --reporter=lcov --reporter=text mocha --require test/support/env",
                    "lint": "eslint lib test"}
    }))
    .unwrap();
    assert_eq!(c.framework, JsFramework::Mocha);
    assert_eq!(c.args, words(&["--require", "test/support/env"]));
    assert!(!c.plain, "lint and nyc run too");
    let j = inv(
        json!({"scripts": {"test": "cross-env NODE_ENV=test jest --coverage"},
                       "devDependencies": {"jest": "29"}}),
    )
    .unwrap();
    assert_eq!(
        (j.framework, j.env.clone(), j.plain),
        (JsFramework::Jest, words(&["NODE_ENV=test"]), true)
    );
    let v = inv(json!({"scripts": {"test": "vitest"}})).unwrap();
    assert_eq!(v.framework, JsFramework::Vitest);
    let a = inv(json!({"scripts": {"test": "xo && ava --verbose"}})).unwrap();
    assert_eq!((a.framework, a.plain), (JsFramework::Ava, false));
    let t = inv(json!({"scripts": {"test": "tape 'test/**/*.js' | tap-spec"}})).unwrap();
    assert_eq!(
        (t.framework, t.args.clone()),
        (JsFramework::Tape, words(&["'test/**/*.js'"]))
    );
    let tn = inv(json!({"scripts": {"test": "node test/index.js"},
                        "devDependencies": {"tape": "5"}}))
    .unwrap();
    assert_eq!(
        (tn.framework, tn.via_node, tn.args.clone()),
        (JsFramework::Tape, true, words(&["test/index.js"]))
    );
    let n = inv(json!({"scripts": {"test": "node --test"}, "devDependencies": {"mocha": "1"}}))
        .unwrap();
    assert_eq!((n.framework, n.plain), (JsFramework::NodeTest, true));
    let narrowed = inv(json!({"scripts": {"test": "node --test test/unit/"}})).unwrap();
    assert_eq!(
        (narrowed.framework, narrowed.plain),
        (JsFramework::NodeTest, false)
    );
    let by_path =
        inv(json!({"scripts": {"test": "node ./node_modules/mocha/bin/mocha.js test"}})).unwrap();
    assert_eq!(by_path.framework, JsFramework::Mocha);
    // npm's placeholder script: the declared framework, run with its defaults.
    let d = inv(
        json!({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"},
                       "devDependencies": {"jest": "29"}}),
    )
    .unwrap();
    assert_eq!((d.framework, d.plain), (JsFramework::Jest, false));
    assert!(inv(json!({"scripts": {"test": "make check"}})).is_none());
    assert!(inv(json!({"dependencies": {"left-pad": "1"}})).is_none());
}

#[test]
fn the_command_swaps_the_reporter_and_drops_watch_and_bail() {
    let dir = Path::new("/nonexistent-checkout");
    let (report, reporter) = (Path::new("/s/report.json"), Path::new("/s/rep.cjs"));
    let cmd = |manifest| command(dir, &inv(manifest).unwrap(), report, reporter);
    let mocha =
        cmd(json!({"scripts": {"test": "mocha --reporter spec --bail --check-leaks test/"}}));
    assert!(
        mocha.ends_with("mocha --check-leaks test/ --reporter '/s/rep.cjs'"),
        "{mocha}"
    );
    assert!(
        mocha.contains("FACTORY_TEST_REPORT='/s/report.json'"),
        "{mocha}"
    );
    let jest = cmd(json!({"scripts": {"test": "NODE_ENV=test jest --coverage --runInBand"}}));
    assert!(
        jest.ends_with("NODE_ENV=test jest --runInBand --ci --json --outputFile='/s/report.json'"),
        "{jest}"
    );
    let vitest = cmd(json!({"scripts": {"test": "vitest --coverage.enabled --reporter=verbose"}}));
    assert!(
        vitest.ends_with("vitest run --reporter=json --outputFile='/s/report.json'"),
        "{vitest}"
    );
    let ava = cmd(json!({"scripts": {"test": "ava --verbose test/*.js"}}));
    assert!(ava.ends_with("ava test/*.js --tap"), "{ava}");
    let tape =
        cmd(json!({"scripts": {"test": "node test/index.js"}, "devDependencies": {"tape": "5"}}));
    assert!(tape.ends_with(" node test/index.js"), "{tape}");
}

#[test]
fn a_framework_that_is_not_installed_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let m = inv(json!({"scripts": {"test": "mocha test/"}})).unwrap();
    let why = missing(dir.path(), &m).unwrap();
    for needle in [
        "mocha",
        "`mocha test/`",
        "not installed",
        "node_modules",
        "## Setup",
    ] {
        assert!(why.contains(needle), "{needle:?} not in {why}");
    }
    std::fs::create_dir_all(dir.path().join("node_modules/.bin")).unwrap();
    std::fs::write(dir.path().join("node_modules/.bin/mocha"), "").unwrap();
    assert_eq!(missing(dir.path(), &m), None);
    let node = inv(json!({"scripts": {"test": "node --test"}})).unwrap();
    assert_eq!(missing(dir.path(), &node), None);
}

/// Each framework installed from npm and run as the test guard runs it, in a checkout of
/// its own: the live report gives the ids the captured ones do.
#[test]
fn live_runs_of_jest_vitest_ava_and_tape_give_the_captured_ids() {
    use crate::guards::tests_kept::runners::{Runner, Tools, run};
    assert!(
        crate::sys::process::which("npm").is_some(),
        "this test needs npm (.ci/run installs it)"
    );
    let root = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "deps/package.json",
        "{\"name\": \"deps\", \"version\": \"1.0.0\", \"private\": true, \"devDependencies\": {\"jest\": \"29.7.0\", \"vitest\": \"3.2.7\", \"ava\": \"6.4.1\", \"tape\": \"5.10.2\"}}\n",
    );
    let install = crate::sys::process::run_shell(
        "npm install --no-audit --no-fund --no-package-lock 2>&1",
        &root.path().join("deps"),
        Duration::from_secs(600),
    )
    .unwrap();
    assert!(install.success(), "npm install: {}", install.tail(20));
    let suite = "describe('parse', () => {\n  it('reads \"a\"', () => { expect(1).toBe(1) })\n  it('fails', () => { expect(1).toBe(2) })\n  it.skip('later', () => {})\n})\n";
    // (framework, `test` script, test file, its text, what it reports)
    type Project<'a> = (
        JsFramework,
        &'a str,
        &'a str,
        &'a str,
        Vec<(&'a str, Outcome)>,
    );
    let projects: [Project; 4] = [
        (
            JsFramework::Jest,
            "jest --coverage",
            "test/p.test.js",
            suite,
            vec![
                ("test/p.test.js > parse > reads \"a\"", Passed),
                ("test/p.test.js > parse > fails", Failed),
                ("test/p.test.js > parse > later", Skipped),
            ],
        ),
        (
            JsFramework::Vitest,
            "vitest",
            "test/p.test.mjs",
            &format!("import {{ describe, it, expect }} from 'vitest'\n{suite}"),
            vec![
                ("test/p.test.mjs > parse > reads \"a\"", Passed),
                ("test/p.test.mjs > parse > fails", Failed),
                ("test/p.test.mjs > parse > later", Skipped),
            ],
        ),
        (
            JsFramework::Ava,
            "ava --verbose",
            "test/p.js",
            "const test = require('ava')\ntest('reads \"a\"', t => { t.is(1, 1) })\ntest('fails', t => { t.is(1, 2) })\ntest.skip('later', t => { t.pass() })\n",
            vec![
                ("reads \"a\"", Passed),
                ("fails", Failed),
                ("later", Skipped),
            ],
        ),
        (
            JsFramework::Tape,
            "tape test/*.js | tap-spec",
            "test/p.js",
            "const test = require('tape')\ntest('reads \"a\"', t => { t.equal(1, 1); t.end() })\ntest('fails', t => { t.equal(1, 2); t.end() })\n",
            vec![("reads \"a\"", Passed), ("fails", Failed)],
        ),
    ];
    let scratch = tempfile::tempdir().unwrap();
    for (fw, script, file, text, expected) in projects {
        let dir = root.path().join(fw.name());
        write(
            &format!("{}/package.json", fw.name()),
            &format!(
                "{{\"name\": \"p\", \"version\": \"1.0.0\", \"scripts\": {{\"test\": \"{script}\"}}}}\n"
            ),
        );
        write(&format!("{}/{file}", fw.name()), text);
        std::os::unix::fs::symlink(
            root.path().join("deps/node_modules"),
            dir.join("node_modules"),
        )
        .unwrap();
        let tools = Tools {
            timeout: Duration::from_secs(300),
            ..Tools::default()
        };
        let got = run(Runner::Node(fw), &dir, &tools, scratch.path()).unwrap();
        let expected: std::collections::BTreeMap<String, Outcome> = expected
            .into_iter()
            .map(|(id, o)| (id.to_string(), o))
            .collect();
        assert_eq!(got.outcomes, expected, "{}: {}", fw.name(), got.tail);
    }
}
