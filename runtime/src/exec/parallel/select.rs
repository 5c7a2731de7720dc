//! The `select` node (`best_score`): among the branches of the parallel node before it
//! whose precheck passed at their branch's last commit, the best composite score wins
//! (ties: fewer changed lines, then the lower experiment id). The winner is applied
//! onto the target branch's current tip and checked again there — the whole precheck:
//! tests, eval, guards — before anything is recorded. A conflict or a failed re-check
//! quarantines that branch (its branch left at the commit that passed, the reason in
//! its notes) and the next best is tried. The winner's experiment becomes the run's
//! `exp_id` for the node that keeps it; the other passing branches are `superseded` by
//! it; a branch that ended without a passing precheck and without a verdict is
//! `revert`. The selection is written to the node's `writes` file.

use std::path::PathBuf;

use serde::Serialize;

use super::fanout::{RESULTS_VAR, short};
use super::record::{BranchRecord, ParallelRecord};
use crate::events::{self, Event, EventData};
use crate::exec::node::{NodeCx, NodeReport};
use crate::exec::view::View;
use crate::experiment::{self, PrecheckRecord};
use crate::project::layout::FactoryPaths;
use crate::store::{ExperimentStore, Outcome, Verdict};
use crate::worktrees::integrate::{self, Applied};

/// The strategies a `select` node knows.
pub const STRATEGIES: &[&str] = &["best_score"];

/// Everything the selection needs, owned (it runs off the async threads).
pub struct Job {
    project: PathBuf,
    node: String,
    results: Option<String>,
    writes: Vec<PathBuf>,
    view: View,
    /// Where the re-check's commands run (the run's gate placement).
    placement: crate::placement::Placement,
}

impl Job {
    pub fn new(cx: &NodeCx<'_>) -> Result<Job, String> {
        let strategy = cx.node.attrs.strategy.as_deref().unwrap_or("best_score");
        if !STRATEGIES.contains(&strategy) {
            return Err(format!(
                "`{}` selects by `{strategy}`, which this version does not know (it knows {})",
                cx.node.id,
                STRATEGIES.join(", ")
            ));
        }
        let mut writes = Vec::new();
        for w in &cx.node.attrs.writes {
            writes.push(
                cx.roots
                    .resolve_write(&cx.render("writes", &w.path).map_err(|e| e.to_string())?),
            );
        }
        Ok(Job {
            project: cx.env.project.clone(),
            node: cx.node.id.clone(),
            results: cx.vars.get(RESULTS_VAR).cloned(),
            writes,
            view: cx.env.view.clone(),
            placement: cx.env.gate_placement(),
        })
    }

    pub fn run(self) -> Result<NodeReport, String> {
        let Some(path) = &self.results else {
            return Err(format!(
                "`{}` selects among the branches of a `parallel` node, and none ran before it in this run",
                self.node
            ));
        };
        let record = ParallelRecord::load(std::path::Path::new(path))?;
        let store = ExperimentStore::open(&self.project);
        let mut rows: Vec<Row> = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        for b in &record.branches {
            let recorded = store.record(b.exp_id).map_err(|e| e.to_string())?;
            if let Some(done) = recorded {
                rows.push(Row::of(b, done.verdict.as_str(), None, done.notes));
                continue;
            }
            match self.passing(b) {
                Some(c) => candidates.push(c),
                None => {
                    let notes = "ended without a passing precheck at its last commit".to_string();
                    self.finalize(b.exp_id, Outcome::new(Verdict::Revert), &notes)?;
                    rows.push(Row::of(b, "revert", None, notes));
                }
            }
        }
        candidates.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.lines.cmp(&b.lines))
                .then(a.branch.exp_id.cmp(&b.branch.exp_id))
        });
        let mut winner: Option<(Candidate, PrecheckRecord)> = None;
        let mut losers = Vec::new();
        for c in candidates {
            if winner.is_some() {
                losers.push(c);
                continue;
            }
            self.view.note(&format!(
                "{}: re-checking exp-{:03} (score {:.4}) on {}'s tip",
                self.node, c.branch.exp_id, c.score, record.target_branch
            ));
            match self.reverify(&c) {
                Ok(rec) => winner = Some((c, rec)),
                Err(reason) => {
                    let notes = format!("quarantined: {reason}");
                    self.log("branch.quarantined", &c.branch, &reason);
                    self.finalize(c.branch.exp_id, quarantined(), &notes)?;
                    rows.push(Row::of(&c.branch, "quarantined", Some(c.score), notes));
                }
            }
        }
        let Some((won, rec)) = winner else {
            self.write(&record, &rows, None)?;
            self.table(&rows);
            return Err(format!(
                "no branch of `{}` passed its precheck and the re-check on {}'s tip; nothing is kept",
                record.node, record.target_branch
            ));
        };
        let of = record.branches.len();
        for l in losers {
            let notes = format!(
                "superseded by exp {} (best of {of} branches, score {:.4} against {:.4})",
                won.branch.exp_id, won.score, l.score
            );
            // A loser that cannot be recorded stays open (for `factory finalize`); it
            // never costs the winner its keep.
            match self.finalize(l.branch.exp_id, superseded(won.branch.exp_id), &notes) {
                Ok(()) => rows.push(Row::of(&l.branch, "superseded", Some(l.score), notes)),
                Err(e) => rows.push(Row::of(&l.branch, "open", Some(l.score), e)),
            }
        }
        let score_after = rec.score_after.unwrap_or(won.score);
        rows.push(Row::of(
            &won.branch,
            "selected",
            Some(score_after),
            format!(
                "re-checked on {} at {}",
                record.target_branch,
                short(rec.base_commit.as_deref().unwrap_or(""))
            ),
        ));
        self.log(
            "branch.selected",
            &won.branch,
            "best score, re-checked on the tip",
        );
        self.write(&record, &rows, Some((&won, &rec)))?;
        self.table(&rows);
        let mut report = NodeReport::done();
        report.vars.extend([
            ("exp_id".to_string(), won.branch.exp_id.to_string()),
            ("branch".to_string(), won.branch.branch.clone()),
            (
                "worktree".to_string(),
                won.branch.worktree.display().to_string(),
            ),
        ]);
        Ok(report)
    }

    /// The branch as a candidate, when its precheck passed at its branch's last commit.
    fn passing(&self, b: &BranchRecord) -> Option<Candidate> {
        let pre = experiment::load_precheck(&self.project, b.exp_id).ok()??;
        let tip = crate::worktrees::branch_tip(&self.project, b.exp_id).ok()??;
        if !pre.passed || pre.commit != tip {
            return None;
        }
        let base = pre.base_commit.clone()?;
        let lines = integrate::changed_lines(&self.project, b.exp_id, &base).unwrap_or(usize::MAX);
        Some(Candidate {
            branch: b.clone(),
            score: pre.score_after?,
            lines,
        })
    }

    /// Applies the candidate onto the target's tip and runs the precheck there. On a
    /// failed re-check its branch goes back to the commit that passed.
    fn reverify(&self, c: &Candidate) -> Result<PrecheckRecord, String> {
        let id = c.branch.exp_id;
        let store = ExperimentStore::open(&self.project);
        let info = store
            .info(id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("experiment {id} has no record"))?;
        let ws = info
            .workspace
            .clone()
            .ok_or_else(|| format!("experiment {id} has no worktree on record"))?;
        let applied = integrate::onto_tip(&self.project, id, &ws.base_commit, &ws.target_branch)
            .map_err(|e| e.to_string())?;
        let undo = match &applied {
            Applied::Conflict { tip, commit, files } => {
                return Err(format!(
                    "commit {} conflicts with {} at {} in {}",
                    short(commit),
                    ws.target_branch,
                    short(tip),
                    files.join(", ")
                ));
            }
            Applied::AlreadyOnTip { .. } => None,
            Applied::Replayed { tip, from, .. } => {
                let mut moved = ws.clone();
                moved.base_commit = tip.clone();
                store.set_workspace(id, moved).map_err(|e| e.to_string())?;
                Some(from.clone())
            }
        };
        let opts = crate::precheck::PrecheckOptions {
            placement: Some(self.placement),
            ..Default::default()
        };
        let checked = experiment::precheck(&self.project, id, opts);
        let failure = match &checked {
            Ok((_, rec)) if rec.passed => None,
            Ok((_, rec)) => Some(format!(
                "failed the re-check on {}'s tip: {}",
                ws.target_branch,
                rec.failures.join(", ")
            )),
            Err(e) => Some(format!(
                "the re-check on {}'s tip could not run: {e}",
                ws.target_branch
            )),
        };
        match (failure, checked) {
            (None, Ok((_, rec))) => Ok(rec),
            (failure, _) => {
                if let Some(from) = undo {
                    integrate::reset_branch(&self.project, id, &from).map_err(|e| e.to_string())?;
                    store.set_workspace(id, ws).map_err(|e| e.to_string())?;
                }
                Err(failure.unwrap_or_default())
            }
        }
    }

    fn finalize(&self, id: u32, mut outcome: Outcome, notes: &str) -> Result<(), String> {
        outcome.notes = notes.to_string();
        experiment::finalize(&self.project, id, outcome)
            .map(|_| ())
            .map_err(|e| format!("cannot record experiment {id}: {e}"))
    }

    fn log(&self, kind: &str, b: &BranchRecord, reason: &str) {
        let mut fields = serde_json::Map::new();
        fields.insert("exp_id".into(), b.exp_id.into());
        fields.insert("node".into(), self.node.clone().into());
        fields.insert("reason".into(), reason.into());
        let _ = events::append(
            &FactoryPaths::new(&self.project),
            &Event::new(EventData::Other {
                kind: kind.to_string(),
                fields,
            }),
        );
    }

    fn write(
        &self,
        record: &ParallelRecord,
        rows: &[Row],
        won: Option<(&Candidate, &PrecheckRecord)>,
    ) -> Result<(), String> {
        let result = Selection {
            strategy: "best_score",
            node: &record.node,
            target_branch: &record.target_branch,
            winner: won.map(|(c, rec)| Winner {
                exp_id: c.branch.exp_id,
                branch: c.branch.branch.clone(),
                hypothesis: c.branch.hypothesis.clone(),
                score_before: rec.score_before,
                score_after: rec.score_after,
                changed_lines: c.lines,
                verified_on: rec.base_commit.clone().unwrap_or_default(),
                commit: rec.commit.clone(),
            }),
            branches: rows,
        };
        let mut json = serde_json::to_vec_pretty(&result).map_err(|e| e.to_string())?;
        json.push(b'\n');
        for path in &self.writes {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            crate::sys::files::atomic_write(path, &json)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(())
    }

    fn table(&self, rows: &[Row]) {
        let mut rows: Vec<&Row> = rows.iter().collect();
        rows.sort_by_key(|r| r.index);
        for r in rows {
            let score = r.score.map_or("      -".to_string(), |s| format!("{s:.4}"));
            self.view.note(&format!(
                "  h{:<2} exp-{:03}  {score}  {:<11} {}",
                r.index, r.exp_id, r.verdict, r.notes
            ));
        }
    }
}

/// A quarantined branch's outcome.
fn quarantined() -> Outcome {
    Outcome::new(Verdict::Quarantined)
}

/// A losing branch's outcome.
fn superseded(by: u32) -> Outcome {
    Outcome::new(Verdict::Superseded).superseded_by(by)
}

struct Candidate {
    branch: BranchRecord,
    score: f64,
    lines: usize,
}

/// One branch in the selection's report.
#[derive(Debug, Serialize)]
struct Row {
    index: usize,
    exp_id: u32,
    hypothesis: String,
    verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    notes: String,
}

impl Row {
    fn of(b: &BranchRecord, verdict: &str, score: Option<f64>, notes: String) -> Row {
        Row {
            index: b.index,
            exp_id: b.exp_id,
            hypothesis: b.hypothesis.clone(),
            verdict: verdict.to_string(),
            score,
            notes,
        }
    }
}

#[derive(Serialize)]
struct Selection<'a> {
    strategy: &'static str,
    node: &'a str,
    target_branch: &'a str,
    winner: Option<Winner>,
    branches: &'a [Row],
}

#[derive(Serialize)]
struct Winner {
    exp_id: u32,
    branch: String,
    hypothesis: String,
    score_before: Option<f64>,
    score_after: Option<f64>,
    changed_lines: usize,
    /// The target's commit the winner was re-checked on.
    verified_on: String,
    /// The winner's commit on that tip.
    commit: String,
}
