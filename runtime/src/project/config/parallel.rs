//! factory.md's `## Parallel` section, read line by line so each problem names its own
//! line: `parallel_hypotheses` (1..=MAX_PARALLEL, or absent for the workflow's count)
//! and `selection_strategy`.

use serde_json::{Map, Value};

use super::markdown::{MdProblem, Section, bullet, unquote};
use super::model::{MAX_PARALLEL, SelectionStrategy, parallel_hypotheses_problem};

const KEYS: &str = "`parallel_hypotheses` and `selection_strategy`";

/// The section as the JSON object [`super::model::ParallelConfig`] reads, or the first
/// problem at its line. `None` when the body is a fenced JSON object: that form goes
/// through the generic object reader and [`super::model::FactoryConfig::validate`].
pub(super) fn parallel_value(s: &Section) -> Option<Result<Value, MdProblem>> {
    if s.fenced().is_some() {
        return None;
    }
    Some(read(s))
}

fn read(s: &Section) -> Result<Value, MdProblem> {
    let mut map = Map::new();
    for (line, raw) in &s.body {
        let at = |message: String| MdProblem {
            line: Some(*line),
            message: format!("section `{}`: {message}", s.heading),
        };
        let t = raw.trim();
        if t.is_empty() || (t.starts_with("<!--") && t.ends_with("-->")) {
            continue;
        }
        let text = bullet(t).unwrap_or(t).trim();
        let Some((key, value)) = text.split_once(':') else {
            return Err(at(format!(
                "`{text}` is not a `key: value` line; the keys are {KEYS} (e.g. `- parallel_hypotheses: 3`)"
            )));
        };
        let (key, value) = (key.trim(), unquote(value));
        if map.contains_key(key) {
            return Err(at(format!("`{key}` is set twice; keep one")));
        }
        let parsed = match key {
            "parallel_hypotheses" => hypotheses(&value).map_err(at)?,
            "selection_strategy" => strategy(&value).map_err(at)?,
            _ => return Err(at(format!("unknown key `{key}`; the keys are {KEYS}"))),
        };
        map.insert(key.to_owned(), parsed);
    }
    Ok(Value::Object(map))
}

fn hypotheses(value: &str) -> Result<Value, String> {
    let n: i64 = value.parse().map_err(|_| {
        format!(
            "`parallel_hypotheses` is `{value}`, not a whole number; write one from 1 to {MAX_PARALLEL} (e.g. `parallel_hypotheses: 3`)"
        )
    })?;
    match parallel_hypotheses_problem(n) {
        Some(problem) => Err(problem),
        None => Ok(Value::from(n)),
    }
}

fn strategy(value: &str) -> Result<Value, String> {
    match SelectionStrategy::from_name(value) {
        Some(s) => Ok(Value::from(s.as_str())),
        None => {
            let known: Vec<String> = SelectionStrategy::ALL
                .iter()
                .map(|s| format!("`{}`", s.as_str()))
                .collect();
            Err(format!(
                "`{value}` is not a selection strategy; write one of {}",
                known.join(", ")
            ))
        }
    }
}
