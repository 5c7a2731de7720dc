//! `factory.md` → [`FactoryConfig`] (spec §8.7, §9.4, §10.2).
//!
//! Each heading is mapped to a field through [`SECTION_MAP`] (exact snake-case key,
//! else the part before a parenthesis, e.g. "Scope (modifiable files)"). Every field
//! has a kind saying how its body is read; the value is then checked against the
//! field's serde type on its own, so an error names the heading and line it came from.
//! Headings that map to no field are kept in `extra_sections`.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::markdown::{MdProblem, Section, sections, snake_case};
use super::model::*;

/// How a section body becomes a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    List,
    /// A score or a floor relative to the base (`base - 0.02`).
    Threshold,
    Bool,
    TestTimeout,
    /// A whole number of eval runs, 1..=20.
    Runs,
    /// List items, each a block of `key: value` lines.
    Blocks,
    /// `key: value` lines (dotted keys nest) or a fenced JSON object.
    Object,
}

/// Field name, kind, and the heading aliases (snake case) that map to it.
pub const SECTION_MAP: &[(&str, &[&str])] = &[
    ("goal", &["goal", "goals", "objective", "mission"]),
    (
        "scope",
        &[
            "scope",
            "modifiable",
            "modifiable_files",
            "in_scope",
            "files_in_scope",
        ],
    ),
    ("guards", &["guards", "guard", "guard_commands"]),
    (
        "eval_command",
        &[
            "eval_command",
            "command",
            "eval",
            "evaluation",
            "eval_cmd",
            "score_command",
        ],
    ),
    (
        "eval_threshold",
        &[
            "eval_threshold",
            "threshold",
            "min_score",
            "minimum_score",
            "passing_score",
        ],
    ),
    ("constraints", &["constraints", "rules"]),
    ("hypothesis_budget", &["hypothesis_budget"]),
    ("target_branch", &["target_branch", "branch", "base_branch"]),
    ("smoke_test", &["smoke_test", "smoke", "smoke_command"]),
    (
        "project_eval",
        &[
            "project_eval",
            "project_evals",
            "project_eval_dimensions",
            "custom_evals",
        ],
    ),
    (
        "dimension_thresholds",
        &[
            "dimension_thresholds",
            "per_dimension_thresholds",
            "thresholds_per_dimension",
        ],
    ),
    ("eval_weights", &["eval_weights", "weights"]),
    ("research_target", &["research_target", "research"]),
    ("inner_loop", &["inner_loop"]),
    ("outer_loop", &["outer_loop"]),
    ("mutable_surfaces", &["mutable_surfaces", "mutable"]),
    (
        "fixed_surfaces",
        &[
            "fixed_surfaces",
            "fixed",
            "immutable",
            "immutable_files",
            "do_not_modify",
        ],
    ),
    ("research_constraints", &["research_constraints"]),
    ("cost_budget", &["cost_budget", "cost", "budget"]),
    ("hard_constraints", &["hard_constraints", "hard_rules"]),
    ("eval_spec", &["eval_spec", "eval_specification"]),
    ("hygiene_weights", &["hygiene_weights"]),
    ("growth_weights", &["growth_weights"]),
    ("adversarial", &["adversarial"]),
    ("parallel", &["parallel", "parallelism"]),
    ("clean_pr", &["clean_pr"]),
    ("clean_pr_include", &["clean_pr_include"]),
    ("clean_pr_exclude", &["clean_pr_exclude"]),
    (
        "test_timeout",
        &["test_timeout", "timeout", "tests_timeout"],
    ),
    ("eval_runs", &["eval_runs", "runs", "eval_repetitions"]),
    (
        "setup",
        &[
            "setup",
            "set_up",
            "setup_commands",
            "environment_setup",
            "checkout_setup",
        ],
    ),
    ("runner", &["runner", "agent_runner"]),
    ("models", &["models", "agent_models"]),
    ("placement", &["placement", "sandbox"]),
];

/// Fields without a default: `factory.md` must have a heading for each.
pub const REQUIRED: [&str; 6] = [
    "goal",
    "scope",
    "guards",
    "eval_command",
    "eval_threshold",
    "constraints",
];

fn kind_of(field: &str) -> Kind {
    match field {
        "goal" | "eval_command" | "target_branch" | "smoke_test" | "runner" | "placement" => {
            Kind::Text
        }
        "eval_threshold" => Kind::Threshold,
        "clean_pr" => Kind::Bool,
        "test_timeout" => Kind::TestTimeout,
        "eval_runs" => Kind::Runs,
        "project_eval" | "hard_constraints" => Kind::Blocks,
        "hypothesis_budget"
        | "eval_weights"
        | "research_target"
        | "inner_loop"
        | "outer_loop"
        | "cost_budget"
        | "hygiene_weights"
        | "growth_weights"
        | "adversarial"
        | "parallel"
        | "dimension_thresholds" => Kind::Object,
        _ => Kind::List,
    }
}

/// The field a heading (as written) maps to, if any: its snake-case form is looked
/// up in [`SECTION_MAP`], then the part before a parenthesis ("Scope (modifiable
/// files)" → `scope`).
pub fn field_for_heading(heading: &str) -> Option<&'static str> {
    let lookup = |k: &str| {
        SECTION_MAP
            .iter()
            .find(|(_, aliases)| aliases.contains(&k))
            .map(|(f, _)| *f)
    };
    lookup(&snake_case(heading)).or_else(|| {
        let (head, _) = heading.split_once('(')?;
        lookup(&snake_case(head))
    })
}

/// Parses the text of a `factory.md`.
pub fn parse_factory_md(text: &str) -> Result<FactoryConfig, MdProblem> {
    let mut fields: Map<String, Value> = Map::new();
    let mut extra = std::collections::BTreeMap::new();
    let mut grouped: Vec<(&'static str, Section)> = Vec::new();
    for section in sections(text) {
        match field_for_heading(&section.heading) {
            // Two sections for one setting: joining them silently (two goals become
            // one paragraph) surprises; the user decides which one holds.
            Some(field) => match grouped.iter().find(|(f, _)| *f == field) {
                Some((_, first)) => {
                    return Err(MdProblem {
                        line: Some(section.line),
                        message: format!(
                            "section `{}` appears twice (lines {} and {}); keep one, or merge them",
                            section.heading, first.line, section.line
                        ),
                    });
                }
                None => grouped.push((field, section)),
            },
            None => {
                let body = section.raw_text();
                if !body.is_empty() && !section.key.is_empty() {
                    extra
                        .entry(section.key.clone())
                        .and_modify(|b: &mut String| {
                            b.push('\n');
                            b.push_str(&body);
                        })
                        .or_insert(body);
                }
            }
        }
    }
    for (field, section) in &grouped {
        let value = section_value(field, section)?;
        check_field(field, &value)
            .and_then(|()| check_sense(field, &value))
            .map_err(|e| MdProblem {
                line: Some(section.first_line()),
                message: format!("section `{}` ({field}): {e}", section.heading),
            })?;
        fields.insert((*field).to_owned(), value);
    }
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|f| !fields.contains_key(*f))
        .collect();
    if !missing.is_empty() {
        let wanted: Vec<String> = missing
            .iter()
            .map(|f| format!("`## {}`", heading_title(f)))
            .collect();
        return Err(MdProblem {
            line: None,
            message: format!("required section(s) missing: {}", wanted.join(", ")),
        });
    }
    if !extra.is_empty() {
        fields.insert(
            "extra_sections".into(),
            serde_json::to_value(extra).unwrap_or_default(),
        );
    }
    let config: FactoryConfig =
        serde_json::from_value(Value::Object(fields)).map_err(|e| MdProblem {
            line: None,
            message: e.to_string(),
        })?;
    config.validate().map_err(|problems| MdProblem {
        line: None,
        message: problems.join("; "),
    })?;
    Ok(config)
}

/// "eval_command" → "Eval command", for messages.
fn heading_title(field: &str) -> String {
    let words = field.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

fn section_value(field: &str, s: &Section) -> Result<Value, MdProblem> {
    if field == "parallel"
        && let Some(value) = super::parallel::parallel_value(s)
    {
        return value;
    }
    let at = |message: String| MdProblem {
        line: Some(s.first_line()),
        message: format!("section `{}`: {message}", s.heading),
    };
    Ok(match kind_of(field) {
        Kind::Text => Value::String(s.text()),
        Kind::List => Value::Array(
            s.items()
                .into_iter()
                .map(|i| Value::String(i.text))
                .collect(),
        ),
        // A number stays one (its range is checked with the field's type, below);
        // `base - 0.02` stays its text.
        Kind::Threshold => {
            let t = s.text();
            match t.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Some(n) => Value::Number(n),
                None => Value::String(Threshold::parse(&t).map_err(at)?.to_string()),
            }
        }
        Kind::Bool => {
            let t = s.text().to_lowercase();
            match t.as_str() {
                "true" | "yes" | "on" | "1" => Value::Bool(true),
                "false" | "no" | "off" | "0" => Value::Bool(false),
                _ => return Err(at(format!("`{t}` is not true or false"))),
            }
        }
        Kind::TestTimeout => {
            let t = s.text();
            let secs = match t.parse::<i64>() {
                Ok(n) if n >= 1 => n as u64,
                _ => {
                    tracing::warn!(value = %t, "test_timeout is not a positive integer; using {DEFAULT_TEST_TIMEOUT}");
                    DEFAULT_TEST_TIMEOUT
                }
            };
            Value::from(secs)
        }
        Kind::Runs => {
            let t = s.text();
            match t.parse::<u32>() {
                Ok(n) if (1..=20).contains(&n) => Value::from(n),
                _ => {
                    return Err(at(format!(
                        "`{t}` is not a whole number of runs between 1 and 20 (write e.g. `3`)"
                    )));
                }
            }
        }
        Kind::Blocks => {
            let mut blocks = Vec::new();
            for item in s.items() {
                let block = Value::Object(key_values(&item.text, field));
                let checked = match field {
                    "project_eval" => check::<ProjectEvalDimension>(&block),
                    _ => check::<HardConstraint>(&block),
                };
                checked.map_err(|e| MdProblem {
                    line: Some(item.line),
                    message: format!(
                        "section `{}`: item `{}`: {e}",
                        s.heading,
                        first_line(&item.text)
                    ),
                })?;
                blocks.push(block);
            }
            Value::Array(blocks)
        }
        Kind::Object => match s.fenced() {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| at(format!("the fenced block is not valid JSON: {e}")))?,
            None => {
                let lines = s
                    .items()
                    .into_iter()
                    .map(|i| i.text)
                    .collect::<Vec<_>>()
                    .join("\n");
                Value::Object(key_values(&lines, field))
            }
        },
    })
}

/// Keys whose values stay strings even when they look like numbers.
const STRING_KEYS: &[&str] = &[
    "name",
    "command",
    "check",
    "description",
    "eval_command",
    "metric_name",
    "objective",
    "metric",
    "run_command",
    "result_path",
    "result_parser",
    "role",
    "parse",
    "selection_strategy",
    "aggregate",
];

/// Reads `key: value` lines into an object. A line that does not start with
/// `identifier: ` continues the previous value (joined by `\n`). Dotted keys nest
/// (`generator.threshold: 0.5`). In hard constraints `command` is accepted for `check`.
fn key_values(text: &str, field: &str) -> Map<String, Value> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match split_key(line) {
            Some((k, v)) => pairs.push((k.to_owned(), v.trim().to_owned())),
            None => {
                if let Some((_, v)) = pairs.last_mut() {
                    if !v.is_empty() {
                        v.push('\n');
                    }
                    v.push_str(line.trim());
                }
            }
        }
    }
    let mut map = Map::new();
    for (key, raw) in pairs {
        let key = if field == "hard_constraints" && key == "command" {
            "check".to_owned()
        } else {
            key
        };
        let leaf = key.rsplit('.').next().unwrap_or(&key).to_owned();
        // Dimension thresholds are keyed by dimension names (`eval_command: 0.5`).
        let value = if STRING_KEYS.contains(&leaf.as_str()) && field != "dimension_thresholds" {
            Value::String(super::markdown::unquote(&raw))
        } else {
            infer(&raw)
        };
        insert_dotted(&mut map, &key, value);
    }
    map
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn split_key(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    let k = k.trim();
    let valid = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && (v.is_empty() || v.starts_with([' ', '\t']));
    valid.then_some((k, v))
}

fn insert_dotted(map: &mut Map<String, Value>, key: &str, value: Value) {
    match key.split_once('.') {
        None => {
            map.insert(key.to_owned(), value);
        }
        Some((head, rest)) => {
            let child = map
                .entry(head.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(m) = child {
                insert_dotted(m, rest, value);
            }
        }
    }
}

/// The JSON value a markdown scalar most plausibly means: integer, float, bool, a
/// JSON array/object when it looks like one, else the text.
fn infer(raw: &str) -> Value {
    let t = super::markdown::unquote(raw);
    if let Ok(i) = t.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(f) = t.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    match t.as_str() {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if (t.starts_with('[') || t.starts_with('{'))
        && let Ok(v) = serde_json::from_str(&t)
    {
        return v;
    }
    Value::String(t)
}

fn check<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    serde_json::from_value::<T>(value.clone())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Checks one field's value against its type, so errors point at its section.
/// Values that parse but cannot be meant: a threshold the composite (0..=1) can never
/// reach, a scope that makes every change a violation.
fn check_sense(field: &str, value: &Value) -> Result<(), String> {
    match field {
        "eval_threshold" => check::<Threshold>(value),
        "setup" => match value.as_array().and_then(|items| {
            items
                .iter()
                .position(|i| i.as_str().is_none_or(|t| t.trim().is_empty()))
        }) {
            Some(n) => Err(format!(
                "command {} is empty; write one shell command per bullet (e.g. `- npm ci`) or one per line of a fenced block",
                n + 1
            )),
            None => Ok(()),
        },
        "scope" if value.as_array().is_some_and(Vec::is_empty) => Err(
            "lists no files, so every change would be out of scope; add globs such as `src/**`"
                .to_string(),
        ),
        _ => Ok(()),
    }
}

/// `## Models` lines are `role: model`.
fn check_models(value: &Value) -> Result<(), String> {
    let lines = value.as_array().map(Vec::as_slice).unwrap_or_default();
    for line in lines {
        let text = line.as_str().unwrap_or_default();
        if !text
            .split_once(':')
            .is_some_and(|(r, m)| !r.trim().is_empty() && !m.trim().is_empty())
        {
            return Err(format!(
                "`{text}` is not `role: model` (e.g. `- builder: opus`, `- default: sonnet`)"
            ));
        }
    }
    Ok(())
}

fn check_field(field: &str, value: &Value) -> Result<(), String> {
    match field {
        "hypothesis_budget" => check::<HypothesisBudget>(value),
        "project_eval" => check::<Vec<ProjectEvalDimension>>(value),
        "eval_weights" => check::<EvalWeights>(value),
        "research_target" => check::<ResearchTarget>(value),
        "inner_loop" => check::<InnerLoopConfig>(value),
        "outer_loop" => check::<OuterLoopConfig>(value),
        "cost_budget" => check::<CostBudgetConfig>(value),
        "hard_constraints" => check::<Vec<HardConstraint>>(value),
        "hygiene_weights" | "growth_weights" => check::<TierWeights>(value),
        "dimension_thresholds" => check::<std::collections::BTreeMap<String, Threshold>>(value),
        "adversarial" => check::<AdversarialConfig>(value),
        "parallel" => check::<ParallelConfig>(value),
        "models" => check_models(value),
        "placement" => match value.as_str().map(str::trim) {
            Some(p) if factory_compiler::ir::Placement::parse(p).is_some() => Ok(()),
            other => Err(format!(
                "`{}` is not a placement: write `host` or `sandbox` (docs/sandbox.md)",
                other.unwrap_or_default()
            )),
        },
        _ => Ok(()),
    }
}
