//! A kept experiment's branch as it stands now, against the commit its keep measured
//! (the record's `commit`): what the run's summary, `factory finalize` and `factory pr`
//! name. A branch moved after the keep is reported, and only the measured commit is
//! ever delivered.

use std::path::Path;

use crate::store::{ExperimentRecord, Verdict};
use crate::worktrees;

/// The kept commit and where its branch points now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptBranch {
    pub branch: String,
    /// The commit the keep's precheck measured.
    pub commit: String,
    /// The branch's tip now; `None` when the branch is gone.
    pub tip: Option<String>,
}

impl KeptBranch {
    /// Of a kept record that names its commit (records from before it did name none).
    pub fn of(project: &Path, record: &ExperimentRecord) -> Option<KeptBranch> {
        if record.verdict != Verdict::Keep {
            return None;
        }
        let commit = record.commit.clone()?;
        Some(KeptBranch {
            branch: worktrees::branch_name(record.id),
            tip: worktrees::branch_tip(project, record.id).ok().flatten(),
            commit,
        })
    }

    /// Whether the branch no longer points at the kept commit.
    pub fn moved(&self) -> bool {
        self.tip.as_deref() != Some(self.commit.as_str())
    }

    /// One line for a person: the branch and its kept commit, or what happened to it.
    pub fn describe(&self) -> String {
        let kept = short(&self.commit);
        match &self.tip {
            Some(tip) if tip == &self.commit => format!(
                "branch {} at {kept} is ready to review and merge (factory never merges it)",
                self.branch
            ),
            Some(tip) => format!(
                "warning: branch {} moved to {} after the keep measured {kept}; only {kept} was \
                 measured — merge that commit (`git merge {}`), not the branch",
                self.branch,
                short(tip),
                self.commit
            ),
            None => format!(
                "warning: branch {} is gone; the kept commit is {}",
                self.branch, self.commit
            ),
        }
    }
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}
