//! Removing the worktrees factory no longer needs: those of finished experiments (any
//! verdict), orphaned ones (no experiment on record) and missing ones (git's record of a
//! directory that is gone). Never an open experiment's, never one with uncommitted
//! changes, and a branch only when finalize itself deletes it ([`branch_goes_with`]).
//!
//! Two steps, so a caller can show the plan and ask before anything changes: [`plan`]
//! reads, [`execute`] removes, re-reading each worktree just before it does.

use std::path::Path;
use std::str::FromStr;

use super::inventory::{self, Entry, Experiment, InventoryError};
use super::{Removed, branch_goes_with, remove, worktree_path};
use crate::store::Verdict;

/// A worktree `clean` will remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The worktree as listed.
    pub entry: Entry,
    /// Its branch is deleted too (a revert's or an error's).
    pub delete_branch: bool,
    /// Why it goes, and what goes with it.
    pub why: String,
}

/// A worktree `clean` leaves alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The worktree as listed.
    pub entry: Entry,
    /// Why it stays.
    pub why: String,
}

/// What `clean` will do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Worktrees to remove, ascending by id.
    pub remove: Vec<Removal>,
    /// Worktrees left alone, ascending by id.
    pub skip: Vec<Skip>,
}

/// What became of one planned removal.
#[derive(Debug)]
pub enum Done {
    /// Removed; what was actually there.
    Removed(Removed),
    /// Changed since the plan was made (an experiment begun with its id, a file
    /// written in it): left alone, and why.
    Skipped(String),
    /// Already gone when its turn came.
    Gone,
    /// git, the store or the file system refused.
    Failed(InventoryError),
}

/// Reads every factory worktree of the project and decides which go.
pub fn plan(project: &Path) -> Result<Plan, InventoryError> {
    let mut plan = Plan::default();
    for entry in inventory::list(project)? {
        match decide(project, &entry) {
            Decision::Remove { delete_branch, why } => plan.remove.push(Removal {
                entry,
                delete_branch,
                why,
            }),
            Decision::Keep(why) => plan.skip.push(Skip { entry, why }),
        }
    }
    Ok(plan)
}

/// Removes what `plan` lists, one worktree at a time, each re-read first: one that
/// would no longer be removed is skipped with the reason. A failure does not stop the
/// rest.
pub fn execute(project: &Path, plan: &Plan) -> Vec<(u32, Done)> {
    plan.remove
        .iter()
        .map(|r| {
            let id = r.entry.id;
            let done = match inventory::entry(project, id) {
                Ok(None) => Done::Gone,
                Ok(Some(now)) => match decide(project, &now) {
                    Decision::Keep(why) => Done::Skipped(why),
                    Decision::Remove { .. } => match set_aside_errored(project, &now)
                        .and_then(|()| remove(project, id, r.delete_branch))
                    {
                        Ok(removed) => Done::Removed(removed),
                        Err(e) => Done::Failed(e.into()),
                    },
                },
                Err(e) => Done::Failed(e),
            };
            (id, done)
        })
        .collect()
}

/// An errored experiment's commits are set aside before its branch goes, as finalize
/// does ([`super::set_aside_work`]).
fn set_aside_errored(project: &Path, e: &Entry) -> Result<(), super::WorktreeError> {
    if matches!(&e.experiment, Experiment::Finished { verdict } if verdict == "error") {
        let base = crate::store::ExperimentStore::open(project)
            .info(e.id)
            .ok()
            .flatten()
            .and_then(|i| i.workspace)
            .map(|w| w.base_commit);
        super::set_aside_work(project, e.id, base.as_deref())?;
    }
    Ok(())
}

enum Decision {
    Remove { delete_branch: bool, why: String },
    Keep(String),
}

/// The one rule for what `clean` does with a worktree.
fn decide(project: &Path, e: &Entry) -> Decision {
    let id = e.id;
    // Only ever a directory where factory puts them: git's record may name another
    // place (a copied project, another project of the same repository).
    if e.exists && !same_place(&e.path, &worktree_path(project, id)) {
        return Decision::Keep(
            "it is not under this project's .factory/worktrees/; `git worktree remove PATH` removes it"
                .to_owned(),
        );
    }
    let (state, delete_branch) = match &e.experiment {
        Experiment::Open => {
            return Decision::Keep(format!(
                "experiment {id} is open; finalize it first (`factory finalize --id {id} --verdict ...`)"
            ));
        }
        Experiment::Finished { verdict } => (
            format!("finished ({verdict})"),
            // A verdict this build does not know keeps its branch: the safe side.
            Verdict::from_str(verdict).is_ok_and(branch_goes_with),
        ),
        Experiment::Unknown => (format!("orphaned (no experiment {id} on record)"), false),
    };
    if e.exists {
        match e.dirty {
            Some(true) => {
                return Decision::Keep(
                    "it has uncommitted changes; commit or discard them there, then clean again"
                        .to_owned(),
                );
            }
            // A registered worktree git cannot read: nothing says its work is saved.
            None if e.registered => {
                return Decision::Keep(
                    "git cannot read it to tell whether it has uncommitted changes (`git -C PATH status` shows why)"
                        .to_owned(),
                );
            }
            _ => {}
        }
    }
    let what = if e.registered && !e.exists {
        "its directory is gone: git's record of it"
    } else {
        "the worktree"
    };
    let branch = match (e.branch.as_deref(), delete_branch) {
        (Some(b), true) => format!(" and branch {b}"),
        (Some(b), false) => format!("; branch {b} stays"),
        (None, _) => String::new(),
    };
    Decision::Remove {
        delete_branch,
        why: format!("{state}: {what}{branch}"),
    }
}

fn same_place(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The plan as `factory worktrees clean` prints it before asking.
pub fn render_plan(project: &Path, plan: &Plan) -> String {
    let mut out = String::new();
    if plan.remove.is_empty() {
        out.push_str("nothing to remove\n");
    } else {
        out.push_str("will remove:\n");
        for r in &plan.remove {
            out.push_str(&line(project, &r.entry, &r.why));
        }
    }
    if !plan.skip.is_empty() {
        out.push_str("will leave:\n");
        for s in &plan.skip {
            out.push_str(&line(project, &s.entry, &s.why));
        }
    }
    out
}

fn line(project: &Path, e: &Entry, why: &str) -> String {
    format!(
        "  {}  {}  {why}\n",
        inventory::shown(project, &e.path).display(),
        e.branch.as_deref().unwrap_or("(no branch)"),
    )
}

/// Counts for the summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Worktrees removed (or found already gone).
    pub removed: usize,
    /// Branches deleted.
    pub branches: usize,
    /// Worktrees left alone, planned or on re-reading.
    pub skipped: usize,
    /// Removals git or the file system refused.
    pub failed: usize,
}

impl Summary {
    /// Adds up a plan's skips and what [`execute`] did.
    pub fn of(plan: &Plan, done: &[(u32, Done)]) -> Summary {
        let mut s = Summary {
            skipped: plan.skip.len(),
            ..Summary::default()
        };
        for (_, d) in done {
            match d {
                Done::Removed(r) => {
                    s.removed += 1;
                    s.branches += usize::from(r.branch);
                }
                Done::Gone => s.removed += 1,
                Done::Skipped(_) => s.skipped += 1,
                Done::Failed(_) => s.failed += 1,
            }
        }
        s
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "removed {} ({} deleted), left {}",
            plural(self.removed, "worktree", "worktrees"),
            plural(self.branches, "branch", "branches"),
            self.skipped,
        )?;
        if self.failed > 0 {
            write!(f, ", {} failed", self.failed)?;
        }
        Ok(())
    }
}
