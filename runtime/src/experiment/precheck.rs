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
use crate::precheck::{self, CheckOutcome, PrecheckError, PrecheckOptions, PrecheckReport};
use crate::project::config;
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
    /// The base commit's mean composite, measured by this precheck.
    pub score_before: Option<f64>,
    /// The head commit's mean composite.
    pub score_after: Option<f64>,
    /// When it finished (ISO-8601, UTC); the same instant as its `precheck.completed` event.
    pub timestamp: String,
    /// Every check with its details.
    #[serde(default)]
    pub checks: Vec<CheckOutcome>,
    /// The recorded base commit both sides were compared from (hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// Both sides' runs, means and spreads, the margin and the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<crate::precheck::Comparison>,
    /// Set when the gate could not measure: the record then never passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why a passing record may be kept: `improved`, or `neutral` (unmeasurable by this
    /// eval, with the evidence in `score_direction`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<crate::precheck::VerdictClass>,
    /// The gate configuration judged under: factory.md at the base and the eval
    /// profile (absent when the gate could not measure, and in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<crate::store::GateConfig>,
}

/// How long one reason may be: a line of a terminal or a results.tsv note, not a log.
const REASON_CHARS: usize = 200;

impl PrecheckRecord {
    /// Why this precheck did not pass, one line per failing check (`name: first
    /// detail`, `(+N more)` when it has more), or the error that kept it from
    /// measuring; empty when it passed. What a revert's notes, the run's closing lines
    /// and notifications say.
    pub fn reasons(&self) -> Vec<String> {
        if let Some(error) = &self.error {
            return vec![format!("could not measure: {}", one_line(error))];
        }
        if self.passed {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| {
                let more = match c.details.len() {
                    0 | 1 => String::new(),
                    n => format!(" (+{} more)", n - 1),
                };
                match c.details.first() {
                    Some(d) => format!("{}: {}{more}", c.name, one_line(d)),
                    None => c.name.clone(),
                }
            })
            .collect();
        if out.is_empty() {
            // An older record with names only.
            out.extend(self.failures.iter().cloned());
        }
        out
    }
}

/// `text` on one line and at most [`REASON_CHARS`] characters.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(REASON_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

pub(crate) fn precheck_json(project: &Path, id: u32) -> PathBuf {
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
    use crate::sys::files::{JsonFileError, read_json};
    read_json(&path).map_err(|e| match e {
        JsonFileError::Io(e) => io_at(&path)(e),
        JsonFileError::Invalid(e) => {
            io_at(&path)(io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
        }
    })
}

/// The eval the precheck of experiment `id` scored (`precheck_eval.json`): `Ok(None)`
/// when there is none, `Err` saying why it cannot be read.
pub fn load_precheck_eval(project: &Path, id: u32) -> Result<Option<EvalReport>, String> {
    eval::read_report(&precheck_eval_json(project, id))
}

/// The settings `factory eval --exp N` measures experiment `id` with: factory.md as
/// committed at its recorded base commit — the configuration its precheck reads — and
/// the project's eval profile.
pub fn eval_settings(project: &Path, id: u32) -> Result<EvalSettings, ExperimentError> {
    let (_, ws) = workspace_of(project, id)?;
    let repo = worktrees::open(project)?;
    let base = git2::Oid::from_str(&ws.base_commit).map_err(|_| {
        ExperimentError::Worktree(worktrees::WorktreeError::Git(format!(
            "`{}` is not a commit id",
            ws.base_commit
        )))
    })?;
    let config = config::read_factory_md_at(&repo, base, &ws.subdir)?;
    Ok(EvalSettings::from_config(&config).with_profile_of(project))
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

/// The base commit `factory begin` chained for experiment `id` (its last verified
/// `experiment.workspace`); `None` for an experiment begun before the event existed, or
/// a log that does not verify (the QA proof then fails the precheck on its own).
fn chained_base(project: &Path, id: u32) -> Option<String> {
    let log = crate::events::chain::verify(&FactoryPaths::new(project)).ok()?;
    log.of_kind(crate::events::kinds::EXPERIMENT_WORKSPACE)
        .filter(|v| v.event.get("exp_id").and_then(|e| e.as_u64()) == Some(u64::from(id)))
        .filter_map(|v| v.event.get("base_commit")?.as_str().map(str::to_owned))
        .last()
}

/// `factory precheck PATH --exp N`: the gate for experiment `id` (docs/gate.md). The
/// configuration is factory.md as committed at the recorded base commit; the base and
/// the worktree's HEAD are checked out into scratch directories outside the project and
/// measured there by the gate itself; the git-derived guards read the worktree's branch.
/// The result is recorded in `experiments/NNN/precheck.json` plus a
/// `precheck.completed` event — only after both sides finished. A side the eval cannot
/// measure records a failing record with its `error` and returns
/// [`crate::precheck::PrecheckError::Measurement`]: an error, never a verdict.
/// `opts.exp_id`, `code_dir`, `base_commit` and `target_branch` are set here;
/// `use_last_eval` and `allow_dirty` are ignored.
pub fn precheck(
    project: &Path,
    id: u32,
    mut opts: PrecheckOptions,
) -> Result<(PrecheckReport, PrecheckRecord), ExperimentError> {
    let code = code_dir(project, id)?;
    let (_, ws) = workspace_of(project, id)?;
    if let Some(chained) = chained_base(project, id)
        && chained != ws.base_commit
    {
        return Err(ExperimentError::BaseRewritten {
            id,
            recorded: ws.base_commit.clone(),
            chained,
        });
    }
    // The experiment's commits come home first: what is measured is in the project's
    // repository, by id.
    let commit = worktrees::repo::import(project, id)?.head.to_string();
    let repo = worktrees::open(project)?;
    let bad_oid = |hex: &str| {
        ExperimentError::Worktree(worktrees::WorktreeError::Git(format!(
            "`{hex}` is not a commit id"
        )))
    };
    let base = git2::Oid::from_str(&ws.base_commit).map_err(|_| bad_oid(&ws.base_commit))?;
    let head = git2::Oid::from_str(&commit).map_err(|_| bad_oid(&commit))?;
    let config = config::read_factory_md_at(&repo, base, &ws.subdir)?;
    let target_moved = repo
        .find_branch(&ws.target_branch, git2::BranchType::Local)
        .ok()
        .and_then(|b| b.get().target())
        .filter(|tip| *tip != base)
        .map(|tip| (ws.target_branch.clone(), tip.to_string()));
    opts.use_last_eval = false;
    opts.allow_dirty = false;
    opts.exp_id = Some(id);
    opts.code_dir = Some(code.clone());
    opts.base_commit = Some(ws.base_commit.clone());
    opts.target_branch = Some(ws.target_branch.clone());
    let sides = precheck::ExperimentSides {
        project,
        code: &code,
        repo: &repo,
        base,
        head,
        subdir: &ws.subdir,
        target_moved,
    };
    let mut report = match precheck::run_experiment_precheck(&config, &sides, &opts) {
        Ok(r) => r,
        Err(
            e @ (PrecheckError::Measurement { .. }
            | PrecheckError::Scratch { .. }
            | PrecheckError::Setup { .. }
            | PrecheckError::Provenance { .. }
            | PrecheckError::CannotStart { .. }),
        ) => {
            // Fail closed on disk too: no earlier passing record survives an error.
            let record = PrecheckRecord {
                exp_id: id,
                passed: false,
                failures: vec!["error".into()],
                commit: commit.clone(),
                score_before: None,
                score_after: None,
                timestamp: crate::sys::clock::now_iso8601(),
                checks: vec![CheckOutcome::fail("error", vec![e.to_string()])],
                base_commit: Some(ws.base_commit.clone()),
                comparison: None,
                error: Some(e.to_string()),
                class: None,
                gate: None,
            };
            write_record(project, id, &record)?;
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    // A commit made while the checks ran was not what they saw: fail closed.
    let after = worktrees::experiment_head(project, id)?;
    if after != commit {
        report.checks.push(CheckOutcome::fail(
            "worktree_unchanged",
            vec![format!(
                "the worktree moved from {commit} to {after} while the precheck ran; run it again"
            )],
        ));
        report.failures.push("worktree_unchanged".into());
        report.passed = false;
        report.class = None;
    }
    let timestamp = crate::sys::clock::now_iso8601();
    let record = PrecheckRecord {
        exp_id: id,
        passed: report.passed,
        failures: report.failures.clone(),
        commit,
        score_before: report.score_before,
        score_after: report.score,
        timestamp: timestamp.clone(),
        checks: report.checks.clone(),
        base_commit: Some(ws.base_commit.clone()),
        comparison: report.comparison.clone(),
        error: None,
        class: report.class,
        gate: report.gate.clone(),
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
    // The chained event carries the record's hash: an edited record no longer matches.
    // Record and event are written under the events lock together, so of two prechecks
    // racing (one orphaned by a killed run), the last event always seals the file.
    let event = Event {
        timestamp,
        data: EventData::PrecheckCompleted {
            exp_id: id,
            passed: record.passed,
            commit: record.commit.clone(),
            score_before: record.score_before,
            score_after: record.score_after,
            record_sha256: Some(events::chain::sha256_hex(json.as_bytes())),
        },
    };
    events::append_after(&FactoryPaths::new(project), &event, || {
        atomic_write(&path, json.as_bytes())
    })
    .map_err(|e| match e {
        events::AfterError::Before(e) => io_at(&path)(e),
        events::AfterError::Events(e) => e.into(),
    })?;
    Ok((report, record))
}

fn write_record(project: &Path, id: u32, record: &PrecheckRecord) -> Result<(), ExperimentError> {
    let dir = FactoryPaths::new(project).experiment_dir(id);
    fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    let path = precheck_json(project, id);
    let mut json =
        serde_json::to_string_pretty(record).map_err(|e| io_at(&path)(io::Error::other(e)))?;
    json.push('\n');
    atomic_write(&path, json.as_bytes()).map_err(io_at(&path))
}
