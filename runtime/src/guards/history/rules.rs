//! The rules over every touch of every commit: paths (scope, fixed surfaces,
//! submodules) and content (credentials, link targets included).

use std::path::Path;

use git2::Repository;

use super::{Content, MODE_GITLINK, Touch, dedup};
use crate::guards::GuardResult;
use crate::guards::changes::ChangeKind;
use crate::guards::patterns::{Patterns, is_lock_file};
use crate::guards::secrets::{self, SecretCounts};

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
