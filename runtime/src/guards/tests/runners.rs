//! The project's own test runner, detected from a checkout and run there; its output
//! parsed into test identities and outcomes. Nothing an agent reports is used.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};

pub use super::js::JsFramework;
pub use crate::eval::discovery::test_files::{files_under, pytest_needed, skipped_dir};
use crate::sys::pattern::re;
use crate::sys::process::{Output, run_program, run_shell, which};

/// A test runner factory knows how to list and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    Pytest,
    Unittest,
    Cargo,
    Go,
    /// A JavaScript suite, run by the framework its package.json uses.
    Node(JsFramework),
}

impl Runner {
    pub fn name(self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Unittest => "unittest",
            Runner::Cargo => "cargo test",
            Runner::Go => "go test",
            Runner::Node(fw) => fw.name(),
        }
    }

    /// The source files this runner's tests are written in.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Runner::Pytest | Runner::Unittest => &["py"],
            Runner::Cargo => &["rs"],
            Runner::Go => &["go"],
            Runner::Node(_) => &["js", "mjs", "cjs", "ts", "jsx", "tsx", "mts", "cts"],
        }
    }
}

/// One test's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// Skipped or ignored (`#[ignore]`, `@skip`, `t.Skip`, `# SKIP`).
    Skipped,
    /// Marked as expected to fail (`xfail`, `expectedFailure`, `# TODO`), whatever it did.
    ExpectedFailure,
}

impl Outcome {
    /// The test's body actually ran and counted.
    pub fn executed(self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Failed)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::ExpectedFailure => "marked as an expected failure",
        }
    }
}

/// Every test one run reported, by identity.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TestRun {
    pub outcomes: BTreeMap<String, Outcome>,
    /// The runner's last lines, for when it reported nothing.
    pub tail: String,
    /// The run was killed at the time limit ([`Tools::timeout`]).
    pub timed_out: bool,
}

impl TestRun {
    pub fn executed(&self) -> usize {
        self.outcomes.values().filter(|o| o.executed()).count()
    }
    pub(super) fn record(&mut self, id: String, outcome: Outcome) {
        // A test reported twice (setup error after a pass) keeps its worst outcome.
        let entry = self.outcomes.entry(id).or_insert(outcome);
        if outcome == Outcome::Failed {
            *entry = Outcome::Failed;
        }
    }
}

/// The programs used, and their limits.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The Python interpreter (`python3` on `PATH` by default).
    pub python: Option<PathBuf>,
    /// Where cargo builds; `None` means a directory beside the scratch checkouts. Never
    /// share one between repositories checked at the same time: same-named crates would
    /// be served each other's builds.
    pub cargo_target_dir: Option<PathBuf>,
    /// Per run: factory.md's `test_timeout` when the gate runs it (900 s by default).
    pub timeout: Duration,
    /// factory.md's `## Setup` (as committed at the base), run in each checkout before
    /// its tests.
    pub setup: Vec<String>,
}

impl Default for Tools {
    fn default() -> Self {
        Self {
            python: which("python3").or_else(|| which("python")),
            cargo_target_dir: None,
            timeout: Duration::from_secs(900),
            setup: Vec::new(),
        }
    }
}

impl Tools {
    /// The interpreter for the checkout at `dir`: its own `.venv`'s when set-up made one
    /// (`worktrees::setup`), else [`Tools::python`].
    fn python_for(&self, dir: &Path) -> Option<PathBuf> {
        crate::worktrees::setup::venv_python(dir).or_else(|| self.python.clone())
    }

    fn python_has(&self, dir: &Path, module: &str) -> bool {
        let Some(py) = self.python_for(dir) else {
            return false;
        };
        let Some(py) = py.to_str() else {
            return false;
        };
        run_program(
            py,
            &["-c", &format!("import {module}")],
            &std::env::temp_dir(),
            Duration::from_secs(30),
        )
        .map(|o| o.success())
        .unwrap_or(false)
    }

    fn python_str(&self, dir: &Path) -> Result<String, String> {
        self.python_for(dir)
            .and_then(|p| p.to_str().map(str::to_string))
            .ok_or_else(|| "python3 is not installed".to_string())
    }
}

/// The runner for the checkout at `dir`, or `None` when it has no tests factory can run.
/// An error when the project needs a runner that is not installed (fail closed).
pub fn detect(dir: &Path, tools: &Tools) -> Result<Option<Runner>, String> {
    if dir.join("Cargo.toml").is_file() {
        return Ok(Some(Runner::Cargo));
    }
    if dir.join("go.mod").is_file() {
        return Ok(Some(Runner::Go));
    }
    let files = files_under(dir);
    let name_of = |f: &String| f.rsplit('/').next().unwrap_or(f).to_string();
    let py_tests: Vec<&String> = files
        .iter()
        .filter(|f| {
            let n = name_of(f);
            n.ends_with(".py") && (n.starts_with("test") || n.ends_with("_test.py"))
        })
        .collect();
    if !py_tests.is_empty() {
        if tools.python_for(dir).is_none() {
            return Err("the project has Python tests but python3 is not installed".into());
        }
        if tools.python_has(dir, "pytest") {
            return Ok(Some(Runner::Pytest));
        }
        if let Some(why) = pytest_needed(dir, &files) {
            return Err(format!(
                "the project's tests need pytest ({why}), which is not installed for python3 (pip install pytest)"
            ));
        }
        return Ok(Some(Runner::Unittest));
    }
    if dir.join("package.json").is_file() {
        let invocation = super::js::manifest(dir).and_then(|m| super::js::invocation(&m));
        if let Some(inv) = invocation.filter(|i| i.framework != JsFramework::NodeTest) {
            if which("node").is_none() {
                return Err(format!(
                    "the project's tests run with {} but node is not installed",
                    inv.framework.name()
                ));
            }
            if let Some(why) = super::js::missing(dir, &inv) {
                return Err(why);
            }
            return Ok(Some(Runner::Node(inv.framework)));
        }
        let js_tests = files.iter().any(|f| {
            let n = name_of(f);
            [".test.", "_test.", "-test."].iter().any(|m| n.contains(m))
                || f.starts_with("test/")
                || f.contains("/test/")
        });
        if js_tests {
            if which("node").is_none() {
                return Err("the project has JavaScript tests but node is not installed".into());
            }
            return Ok(Some(Runner::Node(JsFramework::NodeTest)));
        }
    }
    Ok(None)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// How `dir`'s package.json runs `framework`: its `test` script's arguments when the
/// script uses that framework, else the framework with its defaults.
fn js_invocation(dir: &Path, framework: JsFramework) -> super::js::Invocation {
    super::js::manifest(dir)
        .and_then(|m| super::js::invocation(&m))
        .filter(|i| i.framework == framework)
        .unwrap_or(super::js::Invocation {
            framework,
            env: Vec::new(),
            args: Vec::new(),
            via_node: false,
            plain: false,
            source: "its defaults".into(),
        })
}

/// Whether `npm test` in `dir` runs exactly `runner`'s suite: its `test` script is one
/// plain invocation of that framework (the eval's `npm test` may then read this run).
pub fn npm_test_runs(runner: Runner, dir: &Path) -> bool {
    match runner {
        Runner::Node(fw) => super::js::manifest(dir)
            .and_then(|m| super::js::invocation(&m))
            .is_some_and(|i| i.framework == fw && i.plain),
        _ => false,
    }
}

/// Runs `runner` in `dir` and parses every test it reports. An error only when the
/// runner could not be started at all.
pub fn run(runner: Runner, dir: &Path, tools: &Tools, scratch: &Path) -> Result<TestRun, String> {
    // The checkout's own environment (its .venv first on PATH, no NODE_PATH).
    let _env = crate::worktrees::setup::enter(dir);
    let shell = |script: &str| run_shell(script, dir, tools.timeout).map_err(|e| e.to_string());
    let (out, mut parsed): (Output, TestRun) = match runner {
        Runner::Node(fw) => super::js::run(dir, &js_invocation(dir, fw), tools.timeout)?,
        Runner::Pytest => {
            let py = tools.python_str(dir)?;
            let out = shell(&format!(
                "PYTHONDONTWRITEBYTECODE=1 {} -m pytest -v -rA -p no:cacheprovider -o console_output_style=classic 2>&1",
                shell_quote(&py)
            ))?;
            let parsed = parse_pytest(&out.stdout);
            (out, parsed)
        }
        Runner::Unittest => {
            let py = tools.python_str(dir)?;
            let out = shell(&format!(
                "PYTHONDONTWRITEBYTECODE=1 {} -m unittest discover -v 2>&1",
                shell_quote(&py)
            ))?;
            let parsed = parse_unittest(&out.stdout);
            (out, parsed)
        }
        Runner::Cargo => {
            let target = tools
                .cargo_target_dir
                .clone()
                .unwrap_or_else(|| scratch.join("target"));
            let out = shell(&format!(
                "CARGO_TARGET_DIR={} cargo test --no-fail-fast --color never 2>&1",
                shell_quote(&target.to_string_lossy())
            ))?;
            let parsed = parse_cargo(&out.stdout);
            (out, parsed)
        }
        Runner::Go => {
            // -count=1: a cached pass would hide a flaky test's second run.
            let out = shell("go test -count=1 -json ./... 2>&1")?;
            let parsed = parse_go(&out.stdout);
            (out, parsed)
        }
    };
    parsed.timed_out = out.timed_out;
    parsed.tail = if out.timed_out {
        format!(
            "timed out after {}s; last output: {}",
            tools.timeout.as_secs(),
            out.tail(2)
        )
    } else {
        out.tail(5)
    };
    Ok(parsed)
}

static PYTEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:\[gw\d+\] (?:\[\s*\d+%\] )?)?(\S+?::.+?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?:\s|$)",
    )
});
static PYTEST_SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+?::\S+)(?: - .*)?$"));

/// `pytest -v -rA`: `tests/test_a.py::test_x PASSED`, and the summary's
/// `PASSED tests/test_a.py::test_x` (which survives an `addopts = -q`).
pub fn parse_pytest(output: &str) -> TestRun {
    let mut run = TestRun::default();
    for line in output.lines() {
        let found = PYTEST_LINE
            .captures(line)
            .map(|c| (c[1].to_string(), c[2].to_string()))
            .or_else(|| {
                PYTEST_SUMMARY
                    .captures(line)
                    .map(|c| (c[2].to_string(), c[1].to_string()))
            });
        if let Some((id, status)) = found {
            let outcome = match status.as_str() {
                "PASSED" => Outcome::Passed,
                "FAILED" | "ERROR" => Outcome::Failed,
                "SKIPPED" => Outcome::Skipped,
                _ => Outcome::ExpectedFailure,
            };
            run.record(id, outcome);
        }
    }
    run
}

static UNITTEST_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"^(\w+) \(([\w.]+)\) \.\.\. (.*)$"));
static UNITTEST_HEAD: LazyLock<Regex> = LazyLock::new(|| re(r"^(\w+) \(([\w.]+)\)$"));

/// `python -m unittest -v`: `test_x (pkg.mod.Class.test_x) ... ok` (3.11+) or
/// `test_x (pkg.mod.Class) ... ok`; a docstring puts the status on the next line.
pub fn parse_unittest(output: &str) -> TestRun {
    // A status unittest prints; anything else after ` ... ` is output the test wrote
    // (a warning on stderr), and the status follows on a later line of its own.
    fn status_of(text: &str) -> Option<Outcome> {
        let t = text.trim();
        if t == "ok" {
            Some(Outcome::Passed)
        } else if t.starts_with("skipped") {
            Some(Outcome::Skipped)
        } else if t.starts_with("expected failure") || t.starts_with("unexpected success") {
            Some(Outcome::ExpectedFailure)
        } else if t == "FAIL" || t == "ERROR" {
            Some(Outcome::Failed)
        } else {
            None
        }
    }
    let mut run = TestRun::default();
    let mut pending: Option<(String, String)> = None;
    for line in output.lines() {
        let (name, path, outcome) = if let Some(c) = UNITTEST_LINE.captures(line) {
            match status_of(&c[3]) {
                Some(o) => (c[1].to_string(), c[2].to_string(), o),
                None => {
                    pending = Some((c[1].to_string(), c[2].to_string()));
                    continue;
                }
            }
        } else if let Some(c) = UNITTEST_HEAD.captures(line) {
            pending = Some((c[1].to_string(), c[2].to_string()));
            continue;
        } else if let Some(o) = pending
            .as_ref()
            .and_then(|_| status_of(line.rsplit_once(" ... ").map_or(line, |(_, s)| s)))
        {
            let Some((name, path)) = pending.take() else {
                continue;
            };
            (name, path, o)
        } else {
            continue;
        };
        pending = None;
        let id = if path.ends_with(&format!(".{name}")) {
            path
        } else {
            format!("{path}.{name}")
        };
        run.record(id, outcome);
    }
    run
}

static CARGO_RUNNING: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*Running (?:unittests )?(\S+) \("));
static CARGO_DOC: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*Doc-tests (\S+)"));
static CARGO_TEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^test (.+?) \.\.\. (ok|FAILED|ignored)\b"));

/// `cargo test`: `Running tests/a.rs (...)` then `test m::t ... ok|ignored|FAILED`; ids are
/// `<target source>::<test path>` (doc-tests `doc:<crate>::<file> - <item>`, then ` #2`, …
/// for the item's later examples in line order: the line itself moves with any edit above).
pub fn parse_cargo(output: &str) -> TestRun {
    let mut run = TestRun::default();
    let mut target = String::new();
    // Doc-tests by (target, item): their lines and outcomes, numbered once all are read.
    let mut examples: BTreeMap<(String, String), Vec<(u64, Outcome)>> = BTreeMap::new();
    for line in output.lines() {
        if let Some(c) = CARGO_RUNNING.captures(line) {
            target = c[1].to_string();
        } else if let Some(c) = CARGO_DOC.captures(line) {
            target = format!("doc:{}", &c[1]);
        } else if let Some(c) = CARGO_TEST.captures(line) {
            let outcome = match &c[2] {
                "ok" => Outcome::Passed,
                "ignored" => Outcome::Skipped,
                _ => Outcome::Failed,
            };
            let name = c[1].trim_end_matches(" - should panic");
            match name.rsplit_once(" (line ") {
                Some((item, rest)) if target.starts_with("doc:") => {
                    let line = rest
                        .split(|ch: char| !ch.is_ascii_digit())
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(u64::MAX);
                    examples
                        .entry((target.clone(), item.to_string()))
                        .or_default()
                        .push((line, outcome));
                }
                _ => run.record(format!("{target}::{name}"), outcome),
            }
        }
    }
    for ((target, item), mut found) in examples {
        found.sort_by_key(|(line, _)| *line);
        for (i, (_, outcome)) in found.into_iter().enumerate() {
            run.record(super::doctest::id(&target, &item, i + 1), outcome);
        }
    }
    run
}

/// `go test -json`: one event per line; ids are `<package>/<Test>`.
pub fn parse_go(output: &str) -> TestRun {
    let mut run = TestRun::default();
    for line in output.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(action), Some(pkg), Some(test)) = (
            v.get("Action").and_then(|a| a.as_str()),
            v.get("Package").and_then(|a| a.as_str()),
            v.get("Test").and_then(|a| a.as_str()),
        ) else {
            continue;
        };
        let outcome = match action {
            "pass" => Outcome::Passed,
            "fail" => Outcome::Failed,
            "skip" => Outcome::Skipped,
            _ => continue,
        };
        run.record(format!("{pkg}/{test}"), outcome);
    }
    run
}

static TAP_SUBTEST: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)# Subtest: (.*)$"));
static TAP_RESULT: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\s*)(ok|not ok) \d+ - (.*?)(?: # (SKIP|TODO)\b.*)?$"));

/// TAP (`node --test --test-reporter=tap`): nested subtests give ids `parent > child`;
/// only leaves (tests without subtests) are counted.
pub fn parse_tap(output: &str) -> TestRun {
    let mut run = TestRun::default();
    let mut stack: Vec<String> = Vec::new();
    let mut parents: std::collections::BTreeSet<String> = Default::default();
    let mut results: Vec<(String, Outcome)> = Vec::new();
    for line in output.lines() {
        if let Some(c) = TAP_SUBTEST.captures(line) {
            let level = c[1].len() / 4;
            stack.truncate(level);
            if level > 0 {
                parents.insert(stack.join(" > "));
            }
            stack.push(c[2].to_string());
        } else if let Some(c) = TAP_RESULT.captures(line) {
            let level = c[1].len() / 4;
            let mut path: Vec<String> = stack.iter().take(level).cloned().collect();
            path.push(c[3].to_string());
            let outcome = match (c.get(4).map(|m| m.as_str()), &c[2]) {
                (Some("SKIP"), _) => Outcome::Skipped,
                (Some(_), _) => Outcome::ExpectedFailure,
                (None, "ok") => Outcome::Passed,
                _ => Outcome::Failed,
            };
            results.push((path.join(" > "), outcome));
        }
    }
    for (id, outcome) in results {
        if !parents.contains(&id) {
            run.record(id, outcome);
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_runner_output() {
        let p = parse_pytest(
            "tests/test_a.py::test_x PASSED\ntests/test_a.py::T::test_y SKIPPED (why)\ntests/test_a.py::test_z XFAIL\ntests/test_a.py::test_w FAILED\nPASSED tests/test_a.py::test_q\nFAILED tests/test_a.py::test_w - assert 1 == 2\n",
        );
        assert_eq!(p.outcomes.len(), 5);
        assert_eq!(p.outcomes["tests/test_a.py::test_w"], Outcome::Failed);
        assert_eq!(p.outcomes["tests/test_a.py::T::test_y"], Outcome::Skipped);
        assert_eq!(p.executed(), 3);

        let u = parse_unittest(
            "test_a (t.test_m.A.test_a) ... ok\ntest_b (t.test_m.A)\nDoc line ... skipped 'x'\ntest_c (t.test_m.A.test_c) ... FAIL\ntest_d (t.test_m.A.test_d) ... expected failure\n",
        );
        assert_eq!(u.outcomes["t.test_m.A.test_a"], Outcome::Passed);
        assert_eq!(u.outcomes["t.test_m.A.test_b"], Outcome::Skipped);
        assert_eq!(u.outcomes["t.test_m.A.test_c"], Outcome::Failed);
        assert_eq!(u.outcomes["t.test_m.A.test_d"], Outcome::ExpectedFailure);
        // A warning the test printed sits between the test's name and its status.
        let w = parse_unittest(
            "test_e (t.m.A.test_e) ... /x/t.py:8: ResourceWarning: unclosed file\n  open(p)\nok\ntest_f (t.m.A.test_f) ... ok\n",
        );
        assert_eq!(w.outcomes["t.m.A.test_e"], Outcome::Passed);
        assert_eq!(w.outcomes["t.m.A.test_f"], Outcome::Passed);

        let c = parse_cargo(
            "     Running unittests src/lib.rs (target/debug/deps/x-1)\ntest tests::a ... ok\ntest tests::b ... ignored, slow\n     Running tests/it.rs (target/debug/deps/it-2)\ntest a ... FAILED\n   Doc-tests x\ntest src/lib.rs - add (line 3) ... ok\n",
        );
        assert_eq!(c.outcomes["src/lib.rs::tests::a"], Outcome::Passed);
        assert_eq!(c.outcomes["src/lib.rs::tests::b"], Outcome::Skipped);
        assert_eq!(c.outcomes["tests/it.rs::a"], Outcome::Failed);
        assert_eq!(c.outcomes["doc:x::src/lib.rs - add"], Outcome::Passed);
        // An item's examples are numbered in line order (rustdoc sorts `(line 100)` before
        // `(line 99)`): each is its own test, as cargo counts them.
        let d = parse_cargo(
            "   Doc-tests x\ntest src/lib.rs - B::new (line 100) ... FAILED\ntest src/lib.rs - B::new (line 99) ... ok\ntest src/lib.rs - B::new (line 120) - compile ... ok\ntest src/lib.rs - (line 1) ... ignored\n",
        );
        assert_eq!(d.outcomes["doc:x::src/lib.rs - B::new"], Outcome::Passed);
        assert_eq!(d.outcomes["doc:x::src/lib.rs - B::new #2"], Outcome::Failed);
        assert_eq!(d.outcomes["doc:x::src/lib.rs - B::new #3"], Outcome::Passed);
        assert_eq!(d.outcomes["doc:x::src/lib.rs -"], Outcome::Skipped);

        let g = parse_go(
            "{\"Action\":\"pass\",\"Package\":\"m/p\",\"Test\":\"TestA\"}\n{\"Action\":\"skip\",\"Package\":\"m/p\",\"Test\":\"TestB\"}\n{\"Action\":\"pass\",\"Package\":\"m/p\"}\n",
        );
        assert_eq!(g.outcomes.len(), 2);
        assert_eq!(g.outcomes["m/p/TestB"], Outcome::Skipped);

        let t = parse_tap(
            "# Subtest: suite\n    # Subtest: adds\n    ok 1 - adds\n    # Subtest: later\n    ok 2 - later # SKIP\nok 1 - suite\n# Subtest: top\nnot ok 2 - top\n",
        );
        assert_eq!(t.outcomes["suite > adds"], Outcome::Passed);
        assert_eq!(t.outcomes["suite > later"], Outcome::Skipped);
        assert_eq!(t.outcomes["top"], Outcome::Failed);
        assert!(!t.outcomes.contains_key("suite"));
    }
}
