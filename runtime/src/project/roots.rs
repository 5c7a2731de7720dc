//! Where a node's or an agent's artifact paths live. A path under `.factory/` is the
//! project's store; any other relative path belongs to the code, so it resolves in the
//! experiment's worktree once one exists, else in the project. A parallel branch has
//! its own `.factory/` files (reviews, verdicts, its plan) in an overlay under its
//! experiment's directory: it writes there, and reads there first, then from the
//! project's `.factory/`. The store's shared files (results, events, experiments,
//! runs) are never overlaid; they are shared through their locks. The executor and
//! `factory agent` resolve paths by this one rule.

use std::path::{Path, PathBuf};

/// The two roots an artifact path can be relative to.
#[derive(Debug, Clone)]
pub struct Roots {
    pub project: PathBuf,
    pub worktree: Option<PathBuf>,
    /// A parallel branch's own `.factory/` (see the module doc).
    pub overlay: Option<PathBuf>,
}

/// `.factory/` paths every branch shares through the store's locks.
const SHARED: &[&str] = &[
    "results.tsv",
    "events.jsonl",
    "experiments/",
    "runs/",
    "state/",
    "worktrees/",
    "keys/",
];

impl Roots {
    /// Where `path` is read from: a branch's own copy when it has one.
    pub fn resolve(&self, path: &str) -> PathBuf {
        match self.overlaid(path) {
            Some(own) if own.exists() => own,
            _ => self.shared(path),
        }
    }

    /// Where `path` is written to: a branch writes its `.factory/` files in its overlay.
    pub fn resolve_write(&self, path: &str) -> PathBuf {
        self.overlaid(path).unwrap_or_else(|| self.shared(path))
    }

    fn overlaid(&self, path: &str) -> Option<PathBuf> {
        let rest = path.strip_prefix(".factory/")?;
        if SHARED
            .iter()
            .any(|s| rest == s.trim_end_matches('/') || rest.starts_with(s))
        {
            return None;
        }
        Some(self.overlay.as_ref()?.join(rest))
    }

    fn shared(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        if path.starts_with(".factory/") || path == "factory.md" {
            return self.project.join(p);
        }
        self.worktree.as_deref().unwrap_or(&self.project).join(p)
    }

    /// Where commands and agents work: the worktree when there is one.
    pub fn work_dir(&self) -> &Path {
        self.worktree.as_deref().unwrap_or(&self.project)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_paths_resolve_in_the_project_and_code_paths_in_the_worktree() {
        let roots = Roots {
            project: "/p".into(),
            worktree: Some("/p/.factory/worktrees/exp-001".into()),
            overlay: None,
        };
        assert_eq!(
            roots.resolve(".factory/reviews/a.md"),
            PathBuf::from("/p/.factory/reviews/a.md")
        );
        assert_eq!(
            roots.resolve("src/lib.rs"),
            PathBuf::from("/p/.factory/worktrees/exp-001/src/lib.rs")
        );
        assert_eq!(roots.resolve("factory.md"), PathBuf::from("/p/factory.md"));
    }

    #[test]
    fn a_branch_writes_its_own_files_and_reads_its_own_first_but_shares_the_store() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().to_path_buf();
        let overlay = project.join(".factory/experiments/004");
        let roots = Roots {
            project: project.clone(),
            worktree: None,
            overlay: Some(overlay.clone()),
        };
        // Writes go to the overlay, store files stay shared.
        assert_eq!(
            roots.resolve_write(".factory/reviews/ceo.md"),
            overlay.join("reviews/ceo.md")
        );
        for shared in [
            ".factory/results.tsv",
            ".factory/experiments/004/precheck.json",
        ] {
            assert_eq!(roots.resolve_write(shared), project.join(shared));
        }
        // Reads fall back to the project until the branch has its own copy.
        std::fs::create_dir_all(project.join(".factory/strategy")).unwrap();
        std::fs::write(project.join(".factory/strategy/current.md"), "plan").unwrap();
        assert_eq!(
            roots.resolve(".factory/strategy/current.md"),
            project.join(".factory/strategy/current.md")
        );
        std::fs::create_dir_all(overlay.join("strategy")).unwrap();
        std::fs::write(overlay.join("strategy/current.md"), "mine").unwrap();
        assert_eq!(
            roots.resolve(".factory/strategy/current.md"),
            overlay.join("strategy/current.md")
        );
    }
}
