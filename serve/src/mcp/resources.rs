//! The server's resources: the default project's `results.tsv`, its last eval, and
//! each run's events (`factory://runs/{run_id}/events`).

use std::path::Path;

use factory_runtime::project::layout::FactoryPaths;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use super::background::run_event_values;

pub const RESULTS: &str = "factory://results.tsv";
pub const LAST_EVAL: &str = "factory://last_eval.json";
const RUN_PREFIX: &str = "factory://runs/";
const RUN_SUFFIX: &str = "/events";

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
    ]
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
    Err(format!(
        "unknown resource `{uri}`; the resources are {RESULTS}, {LAST_EVAL} and {RUN_PREFIX}<run_id>{RUN_SUFFIX}"
    ))
}
