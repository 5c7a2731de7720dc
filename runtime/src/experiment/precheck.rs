//! Measuring an experiment: `eval` and `precheck` run on its worktree, read the
//! project's configuration and record into the project's `.factory/`. Precheck leaves
//! `experiments/NNN/precheck.json` — what a keep is later checked against.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ExperimentError, code_dir, io_at, workspace_of};
use crate::eval::{self, EvalReport, EvalSettings};
use crate::events::{self, Event, EventData};
use crate::precheck::{self, CheckOutcome, PrecheckOptions, PrecheckReport};
use crate::project::config::FactoryConfig;
use crate::project::layout::FactoryPaths;
use crate::sys::files::atomic_write;
use crate::worktrees;

/// `experiments/NNN/precheck.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecheckRecord {
    /// The experiment checked.
    pub exp_id: u32,
    /// Every check passed.
    pub passed: bool,
    /// Names of the failed checks.
    pub failures: Vec<String>,
    /// The worktree's HEAD commit that was checked (hex).
    pub commit: String,
    /// The score compared with: the recorded baseline, else the last kept score.
    pub score_before: Option<f64>,
    /// This precheck's composite.
    pub score_after: Option<f64>,
    /// When it finished (ISO-8601, UTC); the same instant as its `precheck.completed` event.
    pub timestamp: String,
    /// Every check with its details.
    #[serde(default)]
    pub checks: Vec<CheckOutcome>,
}

fn precheck_json(project: &Path, id: u32) -> PathBuf {
    FactoryPaths::new(project)
        .experiment_dir(id)
        .join("precheck.json")
}

/// The eval the precheck scored, kept so a keep can make it the growth baseline.
pub(crate) fn precheck_eval_json(project: &Path, id: u32) -> PathBuf {
    FactoryPaths::new(project)
        .experiment_dir(id)
        .join("precheck_eval.json")
}

/// The precheck recorded for experiment `id`, if any.
pub fn load_precheck(project: &Path, id: u32) -> Result<Option<PrecheckRecord>, ExperimentError> {
    let path = precheck_json(project, id);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_at(&path)(e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| io_at(&path)(io::Error::new(io::ErrorKind::InvalidData, e.to_string())))
}

/// `factory eval PATH --exp N`: measures experiment `id`'s worktree against the
/// project's baseline; the result goes to the project's `.factory/last_eval.json`.
pub fn eval(
    project: &Path,
    id: u32,
    settings: &EvalSettings,
) -> Result<EvalReport, ExperimentError> {
    let code = code_dir(project, id)?;
    Ok(eval::run_eval_at(&code, project, settings)?)
}

/// `factory precheck PATH --exp N`: runs eval and every guard on experiment `id`'s
/// worktree (changed files diffed against its recorded base commit; configuration from
/// the project) and records the result in `experiments/NNN/precheck.json` plus a
/// `precheck.completed` event. `opts.exp_id`, `code_dir`, `base_commit` and
/// `target_branch` are set here; `use_last_eval` and `allow_dirty` are ignored, since
/// the record must describe the committed HEAD it names.
pub fn precheck(
    project: &Path,
    id: u32,
    config: &FactoryConfig,
    mut opts: PrecheckOptions,
) -> Result<(PrecheckReport, PrecheckRecord), ExperimentError> {
    let code = code_dir(project, id)?;
    let (_, ws) = workspace_of(project, id)?;
    let commit = worktrees::head_commit(&code)?;
    // What is recorded must be what HEAD is: a fresh eval of a clean worktree.
    opts.use_last_eval = false;
    opts.allow_dirty = false;
    opts.exp_id = Some(id);
    opts.code_dir = Some(code.clone());
    opts.base_commit = Some(ws.base_commit.clone());
    opts.target_branch = Some(ws.target_branch.clone());
    let mut report = precheck::run_precheck(project, config, &opts)?;
    // A commit made while the checks ran was not what they saw: fail closed.
    let after = worktrees::head_commit(&code)?;
    if after != commit {
        report.checks.push(CheckOutcome::fail(
            "worktree_unchanged",
            vec![format!(
                "the worktree moved from {commit} to {after} while the precheck ran; run it again"
            )],
        ));
        report.failures.push("worktree_unchanged".into());
        report.passed = false;
    }
    let event = Event::new(EventData::PrecheckCompleted {
        exp_id: id,
        passed: report.passed,
        commit: commit.clone(),
        score_before: report.score_before,
        score_after: report.score,
    });
    let record = PrecheckRecord {
        exp_id: id,
        passed: report.passed,
        failures: report.failures.clone(),
        commit,
        score_before: report.score_before,
        score_after: report.score,
        timestamp: event.timestamp.clone(),
        checks: report.checks.clone(),
    };
    let dir = FactoryPaths::new(project).experiment_dir(id);
    fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    if let Some(eval) = &report.eval {
        let path = precheck_eval_json(project, id);
        let json =
            serde_json::to_string_pretty(eval).map_err(|e| io_at(&path)(io::Error::other(e)))?;
        atomic_write(&path, json.as_bytes()).map_err(io_at(&path))?;
    }
    let path = precheck_json(project, id);
    let mut json =
        serde_json::to_string_pretty(&record).map_err(|e| io_at(&path)(io::Error::other(e)))?;
    json.push('\n');
    atomic_write(&path, json.as_bytes()).map_err(io_at(&path))?;
    events::append(&FactoryPaths::new(project), &event)?;
    Ok((report, record))
}
