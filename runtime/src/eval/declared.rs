//! factory.md's `Eval command`: when it is not factory's own eval, it is run and its
//! printed score is one more project dimension (`eval_command`), in `factory eval` and
//! on both sides of a precheck alike.

use std::path::Path;
use std::time::Duration;

use super::score::{EvalResult, Tier};
use crate::sys::process::run_shell;

/// `Eval command` values that mean "factory's own eval": nothing extra runs.
pub fn is_builtin_eval(command: &str) -> bool {
    let c = command.trim();
    c.is_empty() || c == "factory eval" || c.starts_with("factory eval ")
}

/// What an eval result's details say when its score is only the last number in text
/// output — a test runner's "2 passed in 0.03s" scores 0.03. `init`, `doctor` and `eval`
/// warn on it.
pub const BARE_NUMBER_NOTE: &str = "read as the last number in its text output";

/// Test runners whose output is a report, not a score: as an eval command, the score
/// would be whatever number they print last.
const TEST_RUNNERS: &[&str] = &[
    "pytest",
    "python -m pytest",
    "python3 -m pytest",
    "python -m unittest",
    "python3 -m unittest",
    "cargo test",
    "go test",
    "npm test",
    "npx jest",
    "jest",
    "mocha",
    "npx mocha",
    "yarn test",
    "pnpm test",
];

/// A warning for an `Eval command` that is a test runner, or `None`.
pub fn test_runner_warning(command: &str) -> Option<String> {
    let c = command.trim();
    TEST_RUNNERS
        .iter()
        .find(|r| c == **r || c.starts_with(&format!("{r} ")))
        .map(|r| {
            format!(
                "`## Eval command` is `{c}`, a test runner ({r}): its output is a report, so its \
                 score would be the last number it prints (a runtime, a count) and that score \
                 is half the composite. The tests are already measured; make the eval command \
                 print a score in 0..=1 as JSON (`{{\"score\": 0.83}}` on its last line), or \
                 write `factory eval`"
            )
        })
}

/// The score an eval command printed: a JSON object's `score` (the whole output or its
/// last JSON line), else a bare JSON number, else the last number in the text. Other
/// fields (booleans, counts) are details, never scores. It must lie in 0..=1.
pub fn parse_eval_output(stdout: &str) -> Result<f64, String> {
    parse_scored(stdout).map(|(score, _)| score)
}

/// [`parse_eval_output`], and whether the score was only the last number in text.
fn parse_scored(stdout: &str) -> Result<(f64, bool), String> {
    let json = serde_json::from_str::<serde_json::Value>(stdout.trim())
        .ok()
        .filter(|v| v.is_object() || v.is_number())
        .or_else(|| {
            stdout.lines().rev().find_map(|l| {
                serde_json::from_str::<serde_json::Value>(l.trim())
                    .ok()
                    .filter(|v| v.is_object())
            })
        });
    let (score, bare) = match json {
        Some(serde_json::Value::Object(map)) => (
            map.get("score")
                .and_then(serde_json::Value::as_f64)
                .ok_or("printed a JSON object without a numeric `score`")?,
            false,
        ),
        Some(v) => (
            v.as_f64()
                .ok_or("printed a JSON value that is not a number")?,
            false,
        ),
        None => (
            last_number(stdout).ok_or("printed no score (no JSON `score`, no number)")?,
            true,
        ),
    };
    if !score.is_finite() || !(0.0..=1.0).contains(&score) {
        return Err(format!("printed the score {score}, outside 0..=1"));
    }
    Ok((score, bare))
}

fn last_number(text: &str) -> Option<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .filter_map(|t| t.trim_matches('.').parse::<f64>().ok())
        .rfind(|n| n.is_finite())
}

/// Runs the declared eval command in `dir`; a crash, timeout or unparsable output is an
/// error (the precheck cannot measure, so nothing may be kept), never a low score.
pub fn run_eval_command(
    dir: &Path,
    command: &str,
    timeout: Duration,
) -> Result<EvalResult, String> {
    let out = run_shell(command, dir, timeout).map_err(|e| e.to_string())?;
    if out.timed_out {
        return Err(format!(
            "`{command}` timed out after {}s and was killed",
            timeout.as_secs()
        ));
    }
    if !out.success() {
        return Err(format!(
            "`{command}` failed ({}): {}",
            out.exit_text(),
            out.tail(3)
        ));
    }
    let (score, bare) = parse_scored(&out.stdout).map_err(|why| format!("`{command}` {why}"))?;
    let details = if bare {
        format!(
            "`{command}` printed {score}, {BARE_NUMBER_NOTE}: it may not be a score; print \
             `{{\"score\": X}}` as its last line to say what is"
        )
    } else {
        format!("`{command}` printed {score}")
    };
    Ok(EvalResult::new(
        "eval_command",
        Tier::Project,
        score,
        1.0,
        true,
        details,
    ))
}
