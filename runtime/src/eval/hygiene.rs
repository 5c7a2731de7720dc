//! Hygiene dimensions: build, tests, lint, format and type check, run with the commands
//! introspection found. Each check is scored on its own; a crash or timeout scores 0 with
//! the reason and the next check still runs.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::parse::{self, TestCounts};
use super::score::{EvalResult, Tier};
use crate::eval::discovery::introspect::{Check, CheckKind, OutputParser, ProjectProfile};
use crate::sys::process::{Output, run_shell, useful_lines};
use crate::worktrees::setup::{StartCause, StartFailure, cannot_start};

/// Default raw weights within the hygiene tier (normalised later; overridable per name).
pub fn default_weight(kind: CheckKind) -> f64 {
    match kind {
        CheckKind::Build => 0.25,
        CheckKind::Tests => 0.30,
        CheckKind::Lint => 0.15,
        CheckKind::Format => 0.10,
        CheckKind::TypeCheck => 0.20,
        CheckKind::Coverage => 0.0,
    }
}

/// A dimension that was not measured, and why. Shown to the user, never scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// What running the hygiene checks produced, including the raw numbers growth needs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HygieneRun {
    pub results: Vec<EvalResult>,
    pub skipped: Vec<Skipped>,
    pub test_counts: Option<TestCounts>,
    /// Why no test count is available, when it is not.
    pub test_counts_missing: Option<String>,
    pub coverage: Option<f64>,
    pub coverage_missing: Option<String>,
    /// Each command run and whether it exited 0 (not timed out).
    pub commands: Vec<(String, bool)>,
    /// Checks that could not start (a program or module missing) and a build that
    /// failed: the gate turns these into "could not measure" rather than a score of 0.
    /// Never cached: a base with one is an error, not a measurement to reuse.
    #[serde(skip)]
    pub start_failures: Vec<StartFailure>,
}

/// A test run already made in the checkout by the test guard's runner: the `tests`
/// check uses it instead of running the suite again when its command is that runner's.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownTests {
    /// The runner's name (`cargo test`, `pytest`, `unittest`, `go test`, `node --test`,
    /// `mocha`, `jest`, `vitest`, `ava`, `tape`).
    pub runner: String,
    pub passed: u64,
    pub failed: u64,
    pub timed_out: bool,
    /// The checkout's package.json `test` script is one plain invocation of this runner,
    /// so `npm test` runs this same suite.
    pub npm_test: bool,
}

/// The JavaScript runners, each started as its own executable.
const JS_RUNNERS: &[&str] = &["mocha", "jest", "vitest", "ava", "tape"];

/// `npm test`, `npm t`, `npm run test`, with npm's own quiet flags only (arguments after
/// `--` would change what the script runs).
fn runs_npm_test(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let rest = match words.as_slice() {
        ["npm", "test" | "t" | "tst", rest @ ..] => rest,
        ["npm", "run" | "run-script", "test", rest @ ..] => rest,
        _ => return false,
    };
    rest.iter()
        .all(|w| matches!(*w, "--silent" | "-s" | "--quiet" | "-q") || w.starts_with("--loglevel"))
}

impl KnownTests {
    /// Whether `command` runs the same suite with the same tool: one plain invocation
    /// (no `&&`, `;` or pipe) of the runner's program.
    pub fn serves(&self, command: &str) -> bool {
        let c = command.trim();
        if c.contains("&&") || c.contains(';') || c.contains('|') {
            return false;
        }
        if self.npm_test && runs_npm_test(c) {
            return true;
        }
        match self.runner.as_str() {
            "cargo test" => c.starts_with("cargo test"),
            "go test" => c.starts_with("go test"),
            "pytest" => c.starts_with("pytest") || c.contains("-m pytest"),
            "unittest" => c.contains("-m unittest"),
            "node --test" => c.starts_with("node --test"),
            js if JS_RUNNERS.contains(&js) => {
                let program = c
                    .strip_prefix("npx ")
                    .map(|r| r.trim_start_matches("--no-install ").trim_start())
                    .unwrap_or(c);
                let program = program.split_whitespace().next().unwrap_or("");
                program.rsplit('/').next() == Some(js)
            }
            _ => false,
        }
    }

    /// The plain commands a `Guards` entry may name for this same run.
    pub fn plain_commands(&self) -> Vec<String> {
        let fixed: &[&str] = match self.runner.as_str() {
            "cargo test" => &["cargo test"],
            "go test" => &["go test ./..."],
            "pytest" => &["pytest", "python -m pytest", "python3 -m pytest"],
            "unittest" => &[
                "python -m unittest",
                "python3 -m unittest",
                "python -m unittest discover",
                "python3 -m unittest discover",
            ],
            "node --test" => &["node --test"],
            _ => &[],
        };
        let mut out: Vec<String> = fixed.iter().map(|c| c.to_string()).collect();
        if JS_RUNNERS.contains(&self.runner.as_str()) {
            out.push(self.runner.clone());
            out.push(format!("npx {}", self.runner));
        }
        if self.npm_test {
            out.extend(["npm test".to_string(), "npm test --silent".to_string()]);
        }
        out
    }

    fn result(&self, command: &str, run: &mut HygieneRun) -> EvalResult {
        let name = CheckKind::Tests.name();
        let weight = default_weight(CheckKind::Tests);
        let counts = TestCounts {
            passed: self.passed,
            failed: self.failed,
        };
        let ok = !self.timed_out && self.failed == 0;
        run.commands.push((command.to_string(), ok));
        if self.timed_out {
            run.test_counts_missing = Some("the test run timed out".into());
            return EvalResult::failed(name, Tier::Hygiene, weight, "the test run timed out");
        }
        run.test_counts = Some(counts);
        let details = format!(
            "{} passed, {} failed (the test guard's {} run in this checkout)",
            self.passed, self.failed, self.runner
        );
        let score = if counts.total() == 0 {
            1.0
        } else {
            self.passed as f64 / counts.total() as f64
        };
        EvalResult::new(name, Tier::Hygiene, score, weight, ok, details)
    }
}

/// Runs every check in `profile` from `root`, each limited to `timeout`.
pub fn run_hygiene(
    root: &Path,
    profile: &ProjectProfile,
    timeout: Duration,
    progress: &crate::sys::progress::Progress,
) -> HygieneRun {
    run_hygiene_with(root, profile, timeout, progress, None)
}

/// [`run_hygiene`], with the `tests` check answered by `known` when it serves it.
pub fn run_hygiene_with(
    root: &Path,
    profile: &ProjectProfile,
    timeout: Duration,
    progress: &crate::sys::progress::Progress,
    known: Option<&KnownTests>,
) -> HygieneRun {
    let mut run = HygieneRun::default();
    for check in &profile.checks {
        if check.kind == CheckKind::Tests
            && check.parser == OutputParser::TestSummary
            && let (Some(command), Some(known)) = (&check.command, known)
            && known.serves(command)
        {
            progress.say(&format!(
                "tests: `{command}` answered by the test guard's {} run in this checkout",
                known.runner
            ));
            let result = known.result(command, &mut run);
            run.results.push(result);
            continue;
        }
        let Some(command) = &check.command else {
            let reason = check
                .unavailable
                .clone()
                .unwrap_or_else(|| "no command".into());
            if check.fails {
                if check.kind == CheckKind::Tests {
                    run.test_counts_missing = Some(reason.clone());
                }
                run.results.push(EvalResult::failed(
                    check.kind.name(),
                    Tier::Hygiene,
                    default_weight(check.kind),
                    reason,
                ));
                continue;
            }
            match check.kind {
                CheckKind::Coverage => run.coverage_missing = Some(reason),
                kind => {
                    if kind == CheckKind::Tests {
                        run.test_counts_missing = Some(reason.clone());
                    }
                    run.skipped.push(Skipped {
                        name: kind.name().into(),
                        reason,
                    })
                }
            }
            continue;
        };
        progress.say(&format!("{}: `{command}`", check.kind.name()));
        let outcome = run_shell(command, root, timeout);
        run.commands.push((
            command.clone(),
            outcome.as_ref().is_ok_and(|o| o.success() && !o.timed_out),
        ));
        if let Ok(out) = &outcome {
            progress.say(&format!(
                "{}: {} in {:.1}s",
                check.kind.name(),
                if out.success() { "done" } else { "failed" },
                out.elapsed.as_secs_f64()
            ));
        }
        if let Ok(out) = &outcome
            && check.kind != CheckKind::Coverage
            && !out.success()
            && !out.timed_out
        {
            let cause = cannot_start(out).or_else(|| {
                (check.kind == CheckKind::Build).then(|| StartCause::build_failed(out))
            });
            if let Some(cause) = cause {
                run.start_failures.push(StartFailure {
                    check: check.kind.name().into(),
                    command: command.clone(),
                    cause,
                });
            }
        }
        if check.kind == CheckKind::Coverage {
            match &outcome {
                Ok(out) if !out.timed_out => match parse::coverage_percent(&combined(out)) {
                    Some(pct) => run.coverage = Some(pct),
                    None => {
                        run.coverage_missing = Some(format!(
                            "`{command}` printed no coverage total: {}",
                            out.tail(3)
                        ))
                    }
                },
                Ok(_) => {
                    run.coverage_missing = Some(format!(
                        "`{command}` timed out after {}s",
                        timeout.as_secs()
                    ))
                }
                Err(e) => run.coverage_missing = Some(e.to_string()),
            }
            continue;
        }
        let result = match outcome {
            Err(e) => EvalResult::failed(
                check.kind.name(),
                Tier::Hygiene,
                default_weight(check.kind),
                e.to_string(),
            ),
            Ok(out) => score_output(check, command, &out, timeout, &mut run),
        };
        run.results.push(result);
    }
    run
}

fn combined(out: &Output) -> String {
    format!("{}\n{}", out.stdout, out.stderr)
}

fn score_output(
    check: &Check,
    command: &str,
    out: &Output,
    timeout: Duration,
    run: &mut HygieneRun,
) -> EvalResult {
    let name = check.kind.name();
    let weight = default_weight(check.kind);
    if out.timed_out {
        if check.kind == CheckKind::Tests {
            run.test_counts_missing = Some("the test run timed out".into());
        }
        return EvalResult::failed(
            name,
            Tier::Hygiene,
            weight,
            format!(
                "`{command}` timed out after {}s and was killed",
                timeout.as_secs()
            ),
        );
    }
    let code = out
        .code
        .map_or("a signal".to_string(), |c| format!("exit {c}"));
    match check.parser {
        OutputParser::ExitCode | OutputParser::CoveragePercent => {
            if out.success() {
                EvalResult::new(
                    name,
                    Tier::Hygiene,
                    1.0,
                    weight,
                    true,
                    format!("`{command}` passed"),
                )
            } else {
                EvalResult::failed(
                    name,
                    Tier::Hygiene,
                    weight,
                    format!("`{command}` failed ({code}): {}", useful_lines(out, 3)),
                )
            }
        }
        OutputParser::EmptyOutput => {
            let listed = out.stdout.trim();
            if out.success() && listed.is_empty() {
                EvalResult::new(
                    name,
                    Tier::Hygiene,
                    1.0,
                    weight,
                    true,
                    format!("`{command}` reported nothing"),
                )
            } else if out.success() {
                let files: Vec<&str> = listed.lines().take(5).collect();
                EvalResult::failed(
                    name,
                    Tier::Hygiene,
                    weight,
                    format!(
                        "`{command}` lists {} file(s): {}",
                        listed.lines().count(),
                        files.join(", ")
                    ),
                )
            } else {
                EvalResult::failed(
                    name,
                    Tier::Hygiene,
                    weight,
                    format!("`{command}` failed ({code}): {}", useful_lines(out, 3)),
                )
            }
        }
        OutputParser::TestSummary => {
            let counts = parse::test_counts(&combined(out));
            run.test_counts = counts;
            match counts {
                Some(c) if c.total() > 0 => {
                    let score = c.passed as f64 / c.total() as f64;
                    let ok = c.failed == 0 && out.success();
                    let mut details = format!("{} passed, {} failed", c.passed, c.failed);
                    if !out.success() && c.failed == 0 {
                        details.push_str(&format!(
                            " but `{command}` exited with {code}: {}",
                            useful_lines(out, 3)
                        ));
                    }
                    EvalResult::new(
                        name,
                        Tier::Hygiene,
                        if ok || c.failed > 0 { score } else { 0.0 },
                        weight,
                        ok,
                        details,
                    )
                }
                Some(_) if out.success() => EvalResult::new(
                    name,
                    Tier::Hygiene,
                    1.0,
                    weight,
                    true,
                    "no tests found; nothing failed",
                ),
                None if out.success() => {
                    run.test_counts_missing =
                        Some(format!("`{command}` printed no summary factory recognises"));
                    EvalResult::new(
                        name,
                        Tier::Hygiene,
                        1.0,
                        weight,
                        true,
                        format!("`{command}` passed (no recognised summary)"),
                    )
                }
                _ => {
                    run.test_counts_missing =
                        Some(format!("`{command}` failed before reporting counts"));
                    EvalResult::failed(
                        name,
                        Tier::Hygiene,
                        weight,
                        format!("`{command}` failed ({code}): {}", useful_lines(out, 3)),
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(runner: &str, npm_test: bool) -> KnownTests {
        KnownTests {
            runner: runner.into(),
            passed: 3,
            failed: 0,
            timed_out: false,
            npm_test,
        }
    }

    #[test]
    fn a_js_run_serves_its_own_program_and_npm_test_only_when_the_script_is_it() {
        let mocha = known("mocha", true);
        for served in [
            "npm test --silent",
            "npm test",
            "npm run test",
            "npm t -s",
            "mocha --reporter dot test/",
            "npx mocha",
            "./node_modules/.bin/mocha",
        ] {
            assert!(mocha.serves(served), "{served}");
        }
        for not in [
            "npm test -- --grep x",
            "npm run test:unit",
            "npm test && npm run lint",
            "jest",
            "node --test",
        ] {
            assert!(!mocha.serves(not), "{not}");
        }
        // A `test` script that does more (lint, nyc) is run by the eval itself.
        assert!(!known("jest", false).serves("npm test --silent"));
        assert!(known("jest", false).serves("npx --no-install jest --ci"));
        assert_eq!(
            mocha.plain_commands(),
            vec!["mocha", "npx mocha", "npm test", "npm test --silent"]
        );
        assert_eq!(
            known("cargo test", false).plain_commands(),
            vec!["cargo test"]
        );
    }
}
