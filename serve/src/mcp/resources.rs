//! The server's resources: the default project's `results.tsv`, its last eval, each
//! run's events (`factory://runs/{run_id}/events`) and each experiment's own evidence
//! (`factory://experiments/{id}/evidence`).

use std::path::Path;

use factory_runtime::project::layout::FactoryPaths;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use super::background::run_event_values;

pub const RESULTS: &str = "factory://results.tsv";
pub const LAST_EVAL: &str = "factory://last_eval.json";
const RUN_PREFIX: &str = "factory://runs/";
const RUN_SUFFIX: &str = "/events";
const EXP_PREFIX: &str = "factory://experiments/";
const EXP_SUFFIX: &str = "/evidence";

pub fn list() -> Vec<Resource> {
    vec![
        Resource::new(RESULTS, "results.tsv")
            .with_description(
                "Every finalized experiment of the project, one tab-separated row each (id, timestamp, verdict, scores, delta, hypothesis)",
            )
            .with_mime_type("text/tab-separated-values"),
        Resource::new(LAST_EVAL, "last_eval.json")
            .with_description(
                "The project's last eval: every dimension's score and the composite (written by `factory eval` and the eval tool)",
            )
            .with_mime_type("application/json"),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{RUN_PREFIX}{{run_id}}{RUN_SUFFIX}"), "run events")
            .with_description(
                "One run's events from .factory/events.jsonl as JSON lines (run ids: start_run, project_state)",
            )
            .with_mime_type("application/x-ndjson"),
        ResourceTemplate::new(format!("{EXP_PREFIX}{{id}}{EXP_SUFFIX}"), "experiment evidence")
            .with_description(
                "The reports and verdicts one experiment's nodes left, as JSON: each file's node, visit, declared path, SHA-256, and its text from the experiment's own copy (`state` says when the copy is missing or was edited)",
            )
            .with_mime_type("application/json"),
    ]
}

/// Experiment `id`'s evidence: every kept file with the text of its copy.
fn evidence(project: &Path, id: &str, uri: &str) -> Result<ResourceContents, String> {
    use factory_runtime::experiment::evidence::{self, Copy};
    let id: u32 = id.trim_start_matches('0').parse().map_err(|_| {
        format!("`{id}` is not an experiment id (a number, as in {EXP_PREFIX}3{EXP_SUFFIX})")
    })?;
    let files = evidence::list(project, id)
        .map_err(|e| format!("cannot read experiment {id}'s evidence: {e}"))?;
    if files.is_empty() {
        return Err(format!(
            "experiment {id} kept no evidence (no node of it has finished, or it predates evidence)"
        ));
    }
    let entries: Vec<serde_json::Value> = files
        .iter()
        .map(|f| {
            let (state, text) = match evidence::read(project, id, f) {
                Copy::Intact(bytes) => {
                    ("intact", Some(String::from_utf8_lossy(&bytes).into_owned()))
                }
                Copy::NotCopied => ("not_copied", None),
                Copy::Missing => ("missing", None),
                Copy::Changed => ("changed", None),
            };
            serde_json::json!({
                "node": f.node, "visit": f.visit, "path": f.path, "sha256": f.sha256,
                "bytes": f.bytes, "at": f.at, "state": state, "text": text,
            })
        })
        .collect();
    let json = serde_json::to_string_pretty(&entries).map_err(|e| e.to_string())?;
    Ok(ResourceContents::text(json, uri).with_mime_type("application/json"))
}

/// The contents of `uri`, or why it cannot be read.
pub fn read(project: &Path, uri: &str) -> Result<ResourceContents, String> {
    let paths = FactoryPaths::new(project);
    let file = |path: std::path::PathBuf, mime: &str, what: &str| {
        std::fs::read_to_string(&path)
            .map(|text| ResourceContents::text(text, uri).with_mime_type(mime))
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("{} does not exist yet: {what}", path.display())
                }
                _ => format!("cannot read {}: {e}", path.display()),
            })
    };
    if uri == RESULTS {
        return file(
            paths.results_tsv(),
            "text/tab-separated-values",
            "no experiment has been finalized",
        );
    }
    if uri == LAST_EVAL {
        return file(
            paths.last_eval_json(),
            "application/json",
            "run the eval tool (or `factory eval`) first",
        );
    }
    if let Some(run_id) = uri
        .strip_prefix(RUN_PREFIX)
        .and_then(|r| r.strip_suffix(RUN_SUFFIX))
    {
        let lines: Vec<String> = run_event_values(project, run_id)?
            .iter()
            .map(|v| v.to_string())
            .collect();
        if lines.is_empty() {
            return Err(format!(
                "run `{run_id}` has no events in {}",
                paths.events_jsonl().display()
            ));
        }
        return Ok(ResourceContents::text(lines.join("\n") + "\n", uri)
            .with_mime_type("application/x-ndjson"));
    }
    if let Some(id) = uri
        .strip_prefix(EXP_PREFIX)
        .and_then(|r| r.strip_suffix(EXP_SUFFIX))
    {
        return evidence(project, id, uri);
    }
    Err(format!(
        "unknown resource `{uri}`; the resources are {RESULTS}, {LAST_EVAL}, {RUN_PREFIX}<run_id>{RUN_SUFFIX} and {EXP_PREFIX}<id>{EXP_SUFFIX}"
    ))
}
