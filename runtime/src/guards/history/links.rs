//! Symlinks resolved inside git trees, never followed on disk: a link whose target
//! leaves the repository (absolute, climbing through `..`, into `.git` or `.factory`),
//! existing or dangling, is a violation.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use git2::{Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};

use super::{MODE_LINK, Touch, dedup, link_target};
use crate::guards::GuardResult;
use crate::guards::secrets;

/// How many symlinks one resolution may pass through before it counts as a loop.
const MAX_LINK_HOPS: usize = 40;

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
