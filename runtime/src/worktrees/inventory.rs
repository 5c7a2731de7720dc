//! What worktrees factory has made for a project, and what each one is now: git's
//! registered worktrees with a `factory-exp-` admin name, plus `exp-NNN` directories
//! under `.factory/worktrees/` that git no longer knows (a crash between pruning git's
//! record and deleting the directory, or a hand-edited `.git/worktrees/`).
//!
//! Reading only: nothing here changes the repository or the store.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{BranchType, Oid, Repository, RepositoryOpenFlags, StatusOptions};
use serde::Serialize;

use super::{ADMIN_PREFIX, WorktreeError, branch_name, git, io_at, open};
use crate::project::layout::FactoryPaths;
use crate::store::{ExperimentStore, History, StoreError, load_history};

/// One of factory's worktrees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The experiment id in its name (`exp-NNN`).
    pub id: u32,
    /// The branch checked out there, else the experiment's branch when it still
    /// exists; `None` when there is no such branch any more.
    pub branch: Option<String>,
    /// The worktree's directory (git's record, else the directory found).
    pub path: PathBuf,
    /// The experiment's hypothesis, when there is a record of it.
    pub hypothesis: Option<String>,
    /// `open`, the verdict, `orphaned` or `missing` (see [`Entry::status`]).
    pub status: String,
    /// What the store says about the experiment (`experiment`: open, finished or
    /// none, with `verdict` when finished).
    #[serde(flatten)]
    pub experiment: Experiment,
    /// git knows it: an experiment repository that opens, or a worktree an older
    /// factory registered in `.git/worktrees/`.
    pub registered: bool,
    /// Its directory exists.
    pub exists: bool,
    /// Commits on the branch that its base commit does not have; `None` when the
    /// base or the branch is unknown.
    pub ahead: Option<usize>,
    /// Uncommitted changes (untracked files count); `None` when it cannot be told.
    pub dirty: Option<bool>,
}

/// An experiment's state as the store has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "experiment", rename_all = "lowercase")]
pub enum Experiment {
    /// Begun and not finalized: its worktree is in use.
    Open,
    /// Finalized with this verdict (any string: verdicts newer than this build are
    /// shown as they are written).
    Finished {
        /// The verdict as recorded.
        verdict: String,
    },
    /// No experiment of this id was ever begun here.
    #[serde(rename = "none")]
    Unknown,
}

impl Entry {
    /// The one-word status: `missing` (registered, directory gone) first, then
    /// `orphaned` (no experiment record), then the verdict, else `open`.
    fn status_of(registered: bool, exists: bool, experiment: &Experiment) -> String {
        match experiment {
            _ if registered && !exists => "missing".to_owned(),
            Experiment::Unknown => "orphaned".to_owned(),
            Experiment::Finished { verdict } => verdict.clone(),
            Experiment::Open => "open".to_owned(),
        }
    }
}

/// Why the inventory could not be read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum InventoryError {
    /// Git or the file system refused.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Worktree(#[from] WorktreeError),
    /// The experiment store could not be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] StoreError),
}

/// Every worktree factory made for the project at `project`, ascending by id.
pub fn list(project: &Path) -> Result<Vec<Entry>, InventoryError> {
    let repo = open(project)?;
    let found = find(&repo, project)?;
    let store = ExperimentStore::with_registry(project, None);
    let history = load_history(project)?;
    let mut entries = Vec::with_capacity(found.len());
    for (id, place) in found {
        entries.push(describe(&repo, &store, &history, id, place)?);
    }
    Ok(entries)
}

/// One experiment's worktree, as [`list`] would report it; `None` when factory has
/// no worktree for it. What `clean` re-reads just before it removes anything.
pub fn entry(project: &Path, id: u32) -> Result<Option<Entry>, InventoryError> {
    let repo = open(project)?;
    let Some(place) = find(&repo, project)?.remove(&id) else {
        return Ok(None);
    };
    let store = ExperimentStore::with_registry(project, None);
    let history = load_history(project)?;
    Ok(Some(describe(&repo, &store, &history, id, place)?))
}

/// Where a worktree was found.
struct Place {
    path: PathBuf,
    registered: bool,
}

/// Registered `factory-exp-NNN` worktrees (an older factory's), then `exp-NNN`
/// directories: experiment repositories, or directories git does not know.
fn find(repo: &Repository, project: &Path) -> Result<BTreeMap<u32, Place>, WorktreeError> {
    let mut found = BTreeMap::new();
    let names = repo.worktrees().map_err(git)?;
    for name in names.iter().flatten().flatten() {
        let Some(id) = name.strip_prefix(ADMIN_PREFIX).and_then(parse_id) else {
            continue;
        };
        let wt = repo.find_worktree(name).map_err(git)?;
        found.insert(
            id,
            Place {
                path: wt.path().to_path_buf(),
                registered: true,
            },
        );
    }
    let dir = FactoryPaths::new(project).worktrees_dir();
    let listing = match fs::read_dir(&dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(io_at(&dir)(e)),
    };
    for item in listing {
        let item = item.map_err(io_at(&dir))?;
        let Some(id) = item
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix("exp-"))
            .and_then(parse_id)
        else {
            continue;
        };
        if item.path().is_dir() {
            let registered = super::repo::open_experiment(&item.path()).is_ok();
            found.entry(id).or_insert(Place {
                path: item.path(),
                registered,
            });
        }
    }
    Ok(found)
}

/// `NNN` as factory writes it: digits only (so `exp-1.bak` is not ours).
fn parse_id(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn describe(
    repo: &Repository,
    store: &ExperimentStore,
    history: &History,
    id: u32,
    place: Place,
) -> Result<Entry, InventoryError> {
    let exists = place.path.is_dir();
    let (experiment, hypothesis) = experiment_of(store, history, id)?;
    // The worktree's own repository, never a search upwards: a directory whose link to
    // git is broken must not be answered for by the project's repository.
    let own = exists
        .then(|| {
            Repository::open_ext(&place.path, RepositoryOpenFlags::NO_SEARCH, &[] as &[&Path]).ok()
        })
        .flatten();
    let checked_out = own.as_ref().and_then(checked_out_branch);
    let branch = checked_out.or_else(|| {
        let name = branch_name(id);
        repo.find_branch(&name, BranchType::Local)
            .ok()
            .map(|_| name)
    });
    let base = store
        .info(id)
        .ok()
        .flatten()
        .and_then(|i| i.workspace)
        .and_then(|w| Oid::from_str(&w.base_commit).ok());
    // The experiment's own repository holds its latest commits before they are
    // imported (it reads the project's objects, so the base is there too).
    let ahead = match (&branch, base) {
        (Some(b), Some(base)) => own
            .as_ref()
            .and_then(|o| commits_ahead(o, b, base))
            .or_else(|| commits_ahead(repo, b, base)),
        _ => None,
    };
    let dirty = own.as_ref().and_then(has_changes);
    Ok(Entry {
        id,
        branch,
        path: place.path,
        hypothesis,
        status: Entry::status_of(place.registered, exists, &experiment),
        experiment,
        registered: place.registered,
        exists,
        ahead,
        dirty,
    })
}

/// The experiment's state and hypothesis. An experiment known only from its begin
/// event (its directory deleted) counts as open: nothing says it is done.
fn experiment_of(
    store: &ExperimentStore,
    history: &History,
    id: u32,
) -> Result<(Experiment, Option<String>), StoreError> {
    if let Some(r) = history.records.iter().find(|r| r.id == id) {
        let verdict = r.verdict.as_str().to_owned();
        return Ok((Experiment::Finished { verdict }, Some(r.hypothesis.clone())));
    }
    if let Some((verdict, hypothesis)) = raw_verdict(store.paths(), id) {
        return Ok((Experiment::Finished { verdict }, hypothesis));
    }
    if let Some(p) = history.pending.iter().find(|p| p.id == id) {
        return Ok((Experiment::Open, Some(p.hypothesis.clone())));
    }
    if let Ok(Some(info)) = store.info(id) {
        return Ok((Experiment::Open, Some(info.hypothesis)));
    }
    if store.is_known(id)? {
        return Ok((Experiment::Open, None));
    }
    Ok((Experiment::Unknown, None))
}

/// A `verdict.json` this build cannot parse as a record (a verdict added later, say
/// `quarantined`): its verdict string as written, so it still counts as finished.
fn raw_verdict(paths: &FactoryPaths, id: u32) -> Option<(String, Option<String>)> {
    let text = fs::read_to_string(paths.experiment_dir(id).join("verdict.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let verdict = json.get("verdict")?.as_str()?.to_owned();
    let hypothesis = json
        .get("hypothesis")
        .and_then(|h| h.as_str())
        .map(str::to_owned);
    Some((verdict, hypothesis))
}

fn checked_out_branch(repo: &Repository) -> Option<String> {
    let head = repo.head().ok()?;
    head.is_branch()
        .then(|| head.shorthand().ok().map(str::to_owned))
        .flatten()
}

fn commits_ahead(repo: &Repository, branch: &str, base: Oid) -> Option<usize> {
    let tip = repo
        .find_branch(branch, BranchType::Local)
        .ok()?
        .get()
        .target()?;
    repo.graph_ahead_behind(tip, base)
        .ok()
        .map(|(ahead, _)| ahead)
}

/// Modified, staged or untracked files (ignored ones do not count).
fn has_changes(repo: &Repository) -> Option<bool> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .exclude_submodules(true);
    repo.statuses(Some(&mut opts)).ok().map(|s| !s.is_empty())
}

/// `path` relative to `project` when it lies inside it (as printed), else as it is.
pub fn shown(project: &Path, path: &Path) -> PathBuf {
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let path_abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path_abs
        .strip_prefix(&project)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The lines `factory worktrees list` prints: one per worktree, then a count.
pub fn render(project: &Path, entries: &[Entry]) -> String {
    if entries.is_empty() {
        return "no factory worktrees\n".to_owned();
    }
    let mut out = String::new();
    for e in entries {
        let ahead = e
            .ahead
            .map_or("? ahead".to_owned(), |n| format!("{n} ahead"));
        let dirty = match e.dirty {
            Some(true) => ", uncommitted changes",
            Some(false) => "",
            None if e.exists => ", changes unknown",
            None => "",
        };
        let unregistered = if e.registered {
            ""
        } else {
            ", not registered with git"
        };
        out.push_str(&format!(
            "exp-{:03}  {:<10}  {}  {}  ({ahead}{dirty}{unregistered})\n",
            e.id,
            e.status,
            e.branch.as_deref().unwrap_or("(no branch)"),
            shown(project, &e.path).display(),
        ));
        if let Some(h) = e.hypothesis.as_deref().and_then(|h| h.lines().next()) {
            out.push_str(&format!("          {h}\n"));
        }
    }
    let open = entries.iter().filter(|e| e.status == "open").count();
    out.push_str(&format!(
        "{} worktree{}, {open} open\n",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" }
    ));
    out
}
