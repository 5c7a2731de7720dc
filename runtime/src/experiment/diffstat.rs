//! What an experiment changed, as `git diff --stat` would say it: read-only, from the
//! commits on record (the branch's tip while it exists, else the commit precheck
//! checked), compared with the experiment's base commit.

use std::path::Path;

use git2::{Oid, Repository};
use serde::Serialize;

use crate::store::ExperimentStore;

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStat {
    pub path: String,
    pub insertions: usize,
    pub deletions: usize,
}

/// The change between the experiment's base and its head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffStat {
    pub base: String,
    pub head: String,
    pub files: Vec<FileStat>,
}

/// The repository with experiment `id`'s head and base commits; `Err` says why there
/// are none (no workspace on record, the commits are gone).
fn head_and_base(project: &Path, id: u32) -> Result<(Repository, Oid, Oid), String> {
    let info = ExperimentStore::with_registry(project, None)
        .info(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("experiment {id} has no experiment.json"))?;
    let ws = info
        .workspace
        .ok_or_else(|| format!("experiment {id} never had a branch"))?;
    let repo = Repository::discover(project).map_err(|e| e.message().to_string())?;
    let branch_tip = repo
        .find_branch(&ws.branch, git2::BranchType::Local)
        .ok()
        .and_then(|b| b.get().target());
    let checked = super::load_precheck(project, id)
        .ok()
        .flatten()
        .and_then(|p| Oid::from_str(&p.commit).ok());
    let record = ExperimentStore::open(project).record(id).ok().flatten();
    let base = Oid::from_str(&ws.base_commit).map_err(|e| e.message().to_string())?;
    // An open experiment's latest work is in its own repository (which reads the
    // project's objects too), before any import.
    if record.is_none()
        && let Ok(exp) =
            crate::worktrees::repo::open_experiment(&crate::worktrees::worktree_path(project, id))
        && let Ok(head) = exp.head().and_then(|h| h.peel_to_commit()).map(|c| c.id())
    {
        return Ok((exp, head, base));
    }
    // A keep is the commit it measured, wherever its branch went since.
    let kept = record
        .and_then(|r| r.commit)
        .and_then(|c| Oid::from_str(&c).ok());
    let head = kept.or(branch_tip).or(checked).ok_or_else(|| {
        format!(
            "the branch {} is gone and no precheck names a commit",
            ws.branch
        )
    })?;
    Ok((repo, head, base))
}

/// The subjects of the experiment's commits, oldest first.
pub fn commit_subjects(project: &Path, id: u32) -> Result<Vec<String>, String> {
    let (repo, head, base) = head_and_base(project, id)?;
    let mut walk = repo.revwalk().map_err(|e| e.message().to_string())?;
    walk.push(head).map_err(|e| e.message().to_string())?;
    walk.hide(base).map_err(|e| e.message().to_string())?;
    let mut subjects: Vec<String> = walk
        .flatten()
        .filter_map(|oid| repo.find_commit(oid).ok())
        .filter_map(|c| c.summary().ok().flatten().map(str::to_string))
        .collect();
    subjects.reverse();
    Ok(subjects)
}

/// The diff stat of experiment `id`; `Err` says why there is none (no workspace on
/// record, the commits are gone).
pub fn diff_stat(project: &Path, id: u32) -> Result<DiffStat, String> {
    let (repo, head, base) = head_and_base(project, id)?;
    let tree = |oid: Oid| {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|_| format!("commit {oid} is no longer in the repository"))
    };
    let diff = repo
        .diff_tree_to_tree(Some(&tree(base)?), Some(&tree(head)?), None)
        .map_err(|e| e.message().to_string())?;
    let mut files = Vec::new();
    for i in 0..diff.deltas().len() {
        let Ok(Some(patch)) = git2::Patch::from_diff(&diff, i) else {
            continue;
        };
        let (_, insertions, deletions) = patch.line_stats().unwrap_or((0, 0, 0));
        let delta = patch.delta();
        let path = delta
            .new_file()
            .path()
            .or(delta.old_file().path())
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        files.push(FileStat {
            path,
            insertions,
            deletions,
        });
    }
    Ok(DiffStat {
        base: base.to_string(),
        head: head.to_string(),
        files,
    })
}
