//! `finalize`: the verdict, the keep rule, the growth baseline and the worktree.

use std::fs;
use std::path::Path;

use super::precheck::{precheck_eval_json, precheck_json};
use super::{ExperimentError, PrecheckRecord};
use crate::eval::{self, Baseline, BaselineError, EvalReport};
use crate::events::chain::sha256_hex;
use crate::events::{self, ChainError, EventData};
use crate::precheck::last_qa_completion;
use crate::project::layout::FactoryPaths;
use crate::store::{ExperimentRecord, ExperimentStore, Outcome, RevertCause, StoreError, Verdict};
use crate::worktrees::{self, Removed, WorktreeError};

/// What finalizing did to the growth baseline.
#[derive(Debug)]
pub enum BaselineUpdate {
    /// The verdict was not `keep` (or this finalize repeated an earlier one): the
    /// baseline stays where it was.
    Unchanged,
    /// Recorded from the eval the precheck scored (else `.factory/last_eval.json`).
    Recorded(Baseline),
    /// A keep, but no eval result to record.
    NoEval,
    /// A keep whose baseline could not be written; the verdict itself is recorded.
    Failed(BaselineError),
}

/// What finalizing did to the experiment's worktree and branch.
#[derive(Debug)]
pub enum Cleanup {
    /// Removed as the verdict asks: a keep leaves the branch, a revert or error deletes it.
    Done {
        /// What was actually there to remove.
        removed: Removed,
        /// The branch left for a human: to merge, on a keep; an error's work, set aside
        /// under `factory/failed/`.
        branch_kept: Option<String>,
    },
    /// Nothing recorded to clean up (an experiment without a workspace).
    NoWorkspace,
    /// Cleanup failed; the verdict is recorded, and finalizing again retries it.
    Failed(WorktreeError),
}

/// The result of [`finalize`].
#[derive(Debug)]
pub struct Finalized {
    /// The experiment's record.
    pub record: ExperimentRecord,
    /// True when the same verdict was already on record (a resumed run): nothing new
    /// was recorded.
    pub repeated: bool,
    /// The growth baseline.
    pub baseline: BaselineUpdate,
    /// The worktree and branch.
    pub cleanup: Cleanup,
    /// Notifiers that could not be told of the verdict (already logged; the verdict
    /// stands).
    pub notify_failures: Vec<String>,
}

/// Records how experiment `id` ended (see [`ExperimentStore::finalize`]).
///
/// A `keep` is refused unless a passing precheck was recorded for the experiment at
/// the commit its branch points at now, after its last QA completion; its scores and
/// delta come from that precheck, and giving any of them in `outcome` is an error. A
/// keep moves the growth baseline and removes the worktree but leaves the branch for a
/// human to merge; `revert` and `error` remove the worktree and delete the branch;
/// `superseded` and `quarantined` remove the worktree and leave the branch. Finalizing
/// again with the verdict on record changes nothing and returns the record (cleanup is
/// retried); another verdict is [`StoreError::AlreadyFinalized`].
pub fn finalize(root: &Path, id: u32, mut outcome: Outcome) -> Result<Finalized, ExperimentError> {
    let keep = outcome.verdict == Verdict::Keep;
    if keep
        && (outcome.score_before.is_some()
            || outcome.score_after.is_some()
            || outcome.delta.is_some())
    {
        return Err(ExperimentError::ScoresFromArguments);
    }
    let store = ExperimentStore::open(root);
    if let Some(done) = store.record(id)? {
        if done.verdict != outcome.verdict {
            return Err(StoreError::AlreadyFinalized {
                id,
                verdict: done.verdict,
            }
            .into());
        }
        let cleanup = clean_up(root, id, done.verdict);
        return Ok(Finalized {
            record: done,
            repeated: true,
            baseline: BaselineUpdate::Unchanged,
            cleanup,
            notify_failures: Vec::new(),
        });
    }
    if !store.is_known(id)? {
        return Err(StoreError::UnknownExperiment { id }.into());
    }
    if keep {
        let passed = check_keep(root, id)?;
        outcome.score_before = passed.score_before;
        outcome.score_after = passed.score_after;
        outcome.commit = Some(passed.commit.clone());
        // A neutral keep says so wherever the record is read: the eval could not score
        // it, the tests or the kind of change showed what it does.
        if passed.class == Some(crate::precheck::VerdictClass::Neutral) {
            let why = passed
                .checks
                .iter()
                .find(|c| c.name == "score_direction")
                .and_then(|c| c.details.first())
                .and_then(|d| d.split("; head mean").next())
                .unwrap_or("neutral with evidence (unmeasurable by this eval)");
            outcome.notes = if outcome.notes.trim().is_empty() {
                why.to_string()
            } else {
                format!("{why}; {}", outcome.notes.trim())
            };
        }
    }
    judged_under(root, id, &mut outcome);
    if outcome.change_summary.trim().is_empty() {
        outcome.change_summary = change_summary(root, id);
    }
    let record = store.finalize(id, outcome)?;
    let baseline = if keep {
        move_baseline(root, id)
    } else {
        BaselineUpdate::Unchanged
    };
    let cleanup = clean_up(root, id, record.verdict);
    // After the cleanup, so a notified keep's branch is there and a revert's is gone.
    let notify_failures = crate::notify::Notification::of_verdict(root, &record)
        .map(|n| crate::notify::announce(&n))
        .unwrap_or_default();
    Ok(Finalized {
        record,
        repeated: false,
        baseline,
        cleanup,
        notify_failures,
    })
}

/// The keep rule; returns the precheck the keep stands on.
///
/// Evidence is read only from the verified event log: the log must verify, its last
/// chained `precheck.completed` for the experiment must be the record on disk (same
/// SHA-256, so an edited `precheck.json` counts for nothing), have passed, name the
/// commit the branch points at now, and no verified QA completion may follow it.
fn check_keep(root: &Path, id: u32) -> Result<PrecheckRecord, ExperimentError> {
    let refuse = |reason: String, fix: String| ExperimentError::KeepRefused { id, reason, fix };
    let rerun = format!(
        "run `factory precheck --exp {id}` on the experiment's final commit, then finalize again"
    );
    // The log and the record are read under one lock: a precheck still running (say,
    // orphaned by a killed run) writes both, or neither, between them.
    let record_path = precheck_json(root, id);
    let (log, record) = match events::chain::verify_reading(&FactoryPaths::new(root), &record_path)
    {
        Ok(read) => read,
        Err(ChainError::Events(e)) => return Err(e.into()),
        Err(broken) => {
            return Err(refuse(
                format!("its evidence cannot be trusted: {broken}"),
                format!(
                    "nothing in an event log that fails verification counts. {}. Or \
                     finalize with --verdict revert",
                    events::chain::recovery(&FactoryPaths::new(root))
                ),
            ));
        }
    };
    let pre = match &record {
        None => None,
        Some(bytes) => Some(
            serde_json::from_slice::<PrecheckRecord>(bytes).map_err(|e| ExperimentError::Io {
                path: record_path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            })?,
        ),
    };
    let Some(pre) = pre else {
        return Err(refuse(
            "no precheck was recorded for it".into(),
            format!(
                "{rerun}; a change the precheck did not pass is finalized with --verdict revert"
            ),
        ));
    };
    let Some(sealed) = log.events.iter().rev().find(
        |v| matches!(v.event.data, EventData::PrecheckCompleted { exp_id, .. } if exp_id == id),
    ) else {
        return Err(refuse(
            "the verified event log holds no precheck.completed for it".into(),
            rerun,
        ));
    };
    let EventData::PrecheckCompleted {
        passed,
        commit,
        record_sha256,
        ..
    } = &sealed.event.data
    else {
        return Err(refuse("the precheck event is not one".into(), rerun));
    };
    let on_disk = record.as_deref().map(sha256_hex).unwrap_or_default();
    if record_sha256.as_deref() != Some(on_disk.as_str()) || sealed.event.timestamp != pre.timestamp
    {
        return Err(refuse(
            format!(
                "experiments/{id:03}/precheck.json is not the record its last verified \
                 precheck.completed (line {}) sealed: it was edited, or written by \
                 something other than that precheck",
                sealed.line
            ),
            rerun,
        ));
    }
    if !passed || !pre.passed {
        return Err(refuse(
            format!(
                "its precheck at {} failed ({}) (line {})",
                short(commit),
                pre.failures.join(", "),
                sealed.line
            ),
            format!(
                "fix the failures on branch {} and {rerun}, or finalize with --verdict revert",
                worktrees::branch_name(id)
            ),
        ));
    }
    if worktrees::worktree_path(root, id).join(".git").exists() {
        // What the experiment's own repository holds now is what its branch is.
        worktrees::repo::import(root, id)?;
    }
    match worktrees::branch_tip(root, id)? {
        None => {
            return Err(refuse(
                format!("its branch {} no longer exists", worktrees::branch_name(id)),
                "a kept experiment is its branch; finalize with --verdict error".into(),
            ));
        }
        Some(tip) if &tip != commit || tip != pre.commit => {
            return Err(refuse(
                format!(
                    "its branch moved to {} after the precheck checked {}",
                    short(&tip),
                    short(commit)
                ),
                rerun,
            ));
        }
        Some(_) => {}
    }
    if let Some(qa) = last_qa_completion(&log, id)
        && qa.line > sealed.line
    {
        let role =
            crate::precheck::qa_completion(&qa.event).unwrap_or_else(|| qa.event.kind().to_owned());
        return Err(refuse(
            format!(
                "QA ({role}) completed at {} (line {}) after the precheck at {} (line {})",
                qa.event.timestamp, qa.line, pre.timestamp, sealed.line
            ),
            rerun,
        ));
    }
    Ok(pre)
}

/// What the experiment's last precheck says about the gate it was judged under and,
/// for a revert, about what caused it. A precheck record that cannot be read counts
/// as none: a revert is always recordable, and one without a readable measurement
/// never blocks a later hypothesis.
fn judged_under(root: &Path, id: u32, outcome: &mut Outcome) {
    let pre = super::load_precheck(root, id).ok().flatten();
    if outcome.gate.is_none() {
        outcome.gate = pre.as_ref().and_then(|p| p.gate.clone());
    }
    if matches!(outcome.verdict, Verdict::Revert | Verdict::Error) {
        outcome.notes = with_reasons(pre.as_ref(), &outcome.notes);
        // What the gate measured is recorded for a revert too (the score chart, history
        // and results.tsv show where it fell), unless the caller gave scores.
        if outcome.score_before.is_none()
            && outcome.score_after.is_none()
            && let Some(p) = pre.as_ref().filter(|p| p.error.is_none())
        {
            outcome.score_before = p.score_before;
            outcome.score_after = p.score_after;
        }
    }
    if outcome.verdict == Verdict::Revert && outcome.revert_cause.is_none() {
        outcome.revert_cause = Some(match &pre {
            None => RevertCause::Unmeasured,
            Some(p) => crate::precheck::revert_cause(p.passed, p.error.as_deref(), &p.checks),
        });
    }
}

/// A revert's notes: the failing checks of its precheck first, then the notes given
/// (the halt or failure that led here, or a person's words), so the reason is named
/// wherever the record is read.
fn with_reasons(pre: Option<&PrecheckRecord>, given: &str) -> String {
    let mut parts = pre.map(PrecheckRecord::reasons).unwrap_or_default();
    let given = given.trim();
    if !given.is_empty() {
        parts.push(given.to_string());
    }
    if parts.is_empty() {
        return "no precheck recorded and no reason given".to_string();
    }
    parts.join("; ")
}

/// A keep makes the eval it was judged on the growth baseline.
fn move_baseline(root: &Path, id: u32) -> BaselineUpdate {
    let judged = fs::read_to_string(precheck_eval_json(root, id))
        .ok()
        .and_then(|t| serde_json::from_str::<EvalReport>(&t).ok());
    match judged.or_else(|| eval::load_last_eval(root)) {
        None => BaselineUpdate::NoEval,
        Some(report) => {
            match eval::record_baseline(root, &report, &format!("kept experiment {id}")) {
                Ok(b) => BaselineUpdate::Recorded(b),
                Err(e) => BaselineUpdate::Failed(e),
            }
        }
    }
}

fn clean_up(root: &Path, id: u32, verdict: Verdict) -> Cleanup {
    let Some(workspace) = ExperimentStore::with_registry(root, None)
        .info(id)
        .ok()
        .flatten()
        .and_then(|i| i.workspace)
    else {
        return Cleanup::NoWorkspace;
    };
    let delete_branch = worktrees::branch_goes_with(verdict);
    // An error is the harness's fault, not the change's: commits on the branch stay.
    let set_aside = if verdict == Verdict::Error {
        match worktrees::set_aside_work(root, id, Some(&workspace.base_commit)) {
            Ok(name) => name,
            Err(e) => return Cleanup::Failed(e),
        }
    } else {
        None
    };
    match worktrees::remove(root, id, delete_branch) {
        Ok(removed) => Cleanup::Done {
            removed,
            branch_kept: set_aside.or_else(|| (!delete_branch).then(|| worktrees::branch_name(id))),
        },
        Err(e) => Cleanup::Failed(e),
    }
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// What the experiment changed, for a record whose caller gave no summary: its
/// commits' subjects and the size of its diff (empty when it made no commit).
fn change_summary(root: &Path, id: u32) -> String {
    let subjects = super::diffstat::commit_subjects(root, id).unwrap_or_default();
    if subjects.is_empty() {
        return String::new();
    }
    let mut text = subjects.join("; ");
    if text.chars().count() > 240 {
        text = text.chars().take(239).collect::<String>() + "…";
    }
    match super::diffstat::diff_stat(root, id) {
        Ok(stat) => {
            let (plus, minus) = stat
                .files
                .iter()
                .fold((0, 0), |(p, m), f| (p + f.insertions, m + f.deletions));
            format!("{text} ({} file(s), +{plus} -{minus})", stat.files.len())
        }
        Err(_) => text,
    }
}
