//! Project-defined dimensions: the commands factory.md declares (`project_eval`) and the
//! project's own `eval/score.py`. Each runs with its own timeout; a crash, timeout or
//! malformed output scores 0 with the reason and never stops the others.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::score::{EvalResult, Tier};
use crate::sys::process::{run_program, run_shell, useful_lines};

pub use crate::project::config::{
    EvalParse as ParseMode, ProjectEvalDimension as ProjectDimension,
};

/// Runs one declared dimension from `root`.
pub fn run_dimension(root: &Path, dim: &ProjectDimension) -> EvalResult {
    let fail = |why: String| EvalResult::failed(&dim.name, Tier::Project, dim.weight, why);
    let timeout = Duration::from_secs(dim.timeout.max(1));
    let out = match run_shell(&dim.command, root, timeout) {
        Ok(out) => out,
        Err(e) => return fail(e.to_string()),
    };
    if out.timed_out {
        return fail(format!(
            "`{}` timed out after {}s and was killed",
            dim.command,
            timeout.as_secs()
        ));
    }
    match dim.parse {
        ParseMode::ExitCode if out.success() => EvalResult::new(
            &dim.name,
            Tier::Project,
            1.0,
            dim.weight,
            true,
            format!("`{}` exited 0", dim.command),
        ),
        ParseMode::ExitCode => fail(format!(
            "`{}` failed ({}): {}",
            dim.command,
            out.exit_text(),
            useful_lines(&out, 3)
        )),
        ParseMode::Json if !out.success() => fail(format!(
            "`{}` crashed (exit {:?}): {}",
            dim.command,
            out.code,
            useful_lines(&out, 3)
        )),
        ParseMode::Json => match parse_score_json(&out.stdout) {
            Ok((score, passed, details)) => {
                EvalResult::new(&dim.name, Tier::Project, score, dim.weight, passed, details)
            }
            Err(why) => fail(format!("`{}` printed invalid output: {why}", dim.command)),
        },
    }
}

/// The JSON value a command printed: the whole stdout, or else its last JSON line
/// (so a command may log before printing its result).
fn json_from(stdout: &str) -> Result<Value, String> {
    if let Ok(v) = serde_json::from_str(stdout.trim()) {
        return Ok(v);
    }
    stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l.trim()).ok())
        .ok_or_else(|| format!("no JSON in output {:?}", truncate(stdout.trim(), 120)))
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn check_score(v: &Value, what: &str) -> Result<f64, String> {
    let score = v
        .as_f64()
        .ok_or_else(|| format!("{what} must be a number, got {v}"))?;
    if !(0.0..=1.0).contains(&score) {
        return Err(format!("{what} {score} is outside 0..1"));
    }
    Ok(score)
}

/// `(score, passed, details)` from a number or `{"score": .., "passed": .., "details": ..}`.
fn parse_score_json(stdout: &str) -> Result<(f64, bool, String), String> {
    let v = json_from(stdout)?;
    if v.is_number() {
        let s = check_score(&v, "score")?;
        return Ok((s, s >= 1.0, format!("score {s:.3}")));
    }
    let score = check_score(
        v.get("score").ok_or("object has no `score` field")?,
        "score",
    )?;
    let passed = v
        .get("passed")
        .and_then(Value::as_bool)
        .unwrap_or(score >= 1.0);
    let details = v
        .get("details")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("score {score:.3}"));
    Ok((score, passed, details))
}

/// Runs `eval/score.py` when present; its dimensions are additive hygiene dimensions.
///
/// Accepted output: `{"dimensions": [{"name", "score", "weight"?, "passed"?, "details"?}]}`,
/// a bare list of such objects, or an object mapping names to scores.
/// Returns `None` when the project has no `eval/score.py`.
pub fn run_score_py(root: &Path, timeout: Duration) -> Option<Vec<EvalResult>> {
    let script = root.join("eval").join("score.py");
    if !script.is_file() {
        return None;
    }
    const NAME: &str = "eval/score.py";
    let fail = |why: String| Some(vec![EvalResult::failed(NAME, Tier::Hygiene, 1.0, why)]);
    let out = match run_program("python3", &["eval/score.py"], root, timeout) {
        Ok(out) => out,
        Err(e) => return fail(e.to_string()),
    };
    if out.timed_out {
        return fail(format!(
            "timed out after {}s and was killed",
            timeout.as_secs()
        ));
    }
    if !out.success() {
        return fail(format!("crashed ({}): {}", out.exit_text(), out.tail(3)));
    }
    match parse_score_py(&out.stdout) {
        Ok(results) if results.is_empty() => fail("printed no dimensions".into()),
        Ok(results) => Some(results),
        Err(why) => fail(format!("printed invalid output: {why}")),
    }
}

fn parse_score_py(stdout: &str) -> Result<Vec<EvalResult>, String> {
    let v = json_from(stdout)?;
    let items = match v.get("dimensions").unwrap_or(&v) {
        Value::Array(items) => items.clone(),
        Value::Object(map) => map
            .iter()
            .map(|(k, s)| serde_json::json!({"name": k, "score": s}))
            .collect(),
        other => {
            return Err(format!(
                "expected a list or object of dimensions, got {other}"
            ));
        }
    };
    items
        .iter()
        .map(|item| {
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .ok_or("a dimension has no `name`")?;
            let score = check_score(
                item.get("score").unwrap_or(&Value::Null),
                &format!("score of `{name}`"),
            )?;
            let weight = item.get("weight").and_then(Value::as_f64).unwrap_or(1.0);
            let passed = item
                .get("passed")
                .and_then(Value::as_bool)
                .unwrap_or(score >= 1.0);
            let details = item
                .get("details")
                .and_then(Value::as_str)
                .unwrap_or("from eval/score.py");
            Ok(EvalResult::new(
                name,
                Tier::Hygiene,
                score,
                weight,
                passed,
                details,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(name: &str, command: &str, parse: ParseMode, timeout_secs: u64) -> ProjectDimension {
        ProjectDimension {
            name: name.into(),
            command: command.into(),
            parse,
            weight: 1.0,
            timeout: timeout_secs,
            description: String::new(),
            deterministic: None,
        }
    }

    #[test]
    fn json_and_exit_code_dimensions_score() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_dimension(
            dir.path(),
            &dim(
                "acc",
                "echo working; echo '{\"score\": 0.75}'",
                ParseMode::Json,
                5,
            ),
        );
        assert_eq!(r.score, 0.75);
        assert!(!r.passed);
        let r = run_dimension(dir.path(), &dim("num", "echo 1", ParseMode::Json, 5));
        assert_eq!(r.score, 1.0);
        assert!(r.passed);
        let r = run_dimension(dir.path(), &dim("ok", "true", ParseMode::ExitCode, 5));
        assert_eq!(r.score, 1.0);
        let r = run_dimension(dir.path(), &dim("bad", "exit 4", ParseMode::ExitCode, 5));
        assert_eq!(r.score, 0.0);
    }

    #[test]
    fn crash_timeout_and_bad_json_score_zero_with_reason() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_dimension(
            dir.path(),
            &dim("crash", "echo boom >&2; exit 3", ParseMode::Json, 5),
        );
        assert_eq!(r.score, 0.0);
        assert!(
            r.details.contains("crashed") && r.details.contains("boom"),
            "{}",
            r.details
        );
        let r = run_dimension(dir.path(), &dim("slow", "sleep 10", ParseMode::Json, 1));
        assert!(r.details.contains("timed out"), "{}", r.details);
        let r = run_dimension(
            dir.path(),
            &dim("garbage", "echo hello", ParseMode::Json, 5),
        );
        assert!(r.details.contains("no JSON"), "{}", r.details);
        let r = run_dimension(
            dir.path(),
            &dim("range", "echo '{\"score\": 7}'", ParseMode::Json, 5),
        );
        assert!(r.details.contains("outside 0..1"), "{}", r.details);
    }

    #[test]
    fn score_py_forms_are_accepted_and_crash_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(run_score_py(dir.path(), Duration::from_secs(5)).is_none());
        std::fs::create_dir(dir.path().join("eval")).unwrap();
        let script = dir.path().join("eval/score.py");
        std::fs::write(&script, "import json\nprint(json.dumps({'dimensions': [{'name': 'docs', 'score': 0.5, 'weight': 2}]}))\n").unwrap();
        let r = run_score_py(dir.path(), Duration::from_secs(20)).unwrap();
        assert_eq!(
            (r[0].name.as_str(), r[0].score, r[0].weight),
            ("docs", 0.5, 2.0)
        );
        std::fs::write(&script, "print('{\"a\": 1.0, \"b\": 0.0}')\n").unwrap();
        let r = run_score_py(dir.path(), Duration::from_secs(20)).unwrap();
        assert_eq!(r.len(), 2);
        std::fs::write(&script, "raise SystemExit('no data')\n").unwrap();
        let r = run_score_py(dir.path(), Duration::from_secs(20)).unwrap();
        assert_eq!(r[0].score, 0.0);
        assert!(r[0].details.contains("no data"), "{}", r[0].details);
    }
}
