//! Real git repositories in temp dirs for runtime integration tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use git2::{IndexAddOption, Repository, Signature};

pub struct TestRepo {
    pub dir: tempfile::TempDir,
    pub repo: Repository,
}

impl TestRepo {
    /// A repository on `main` with one commit holding `files`.
    pub fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        repo.set_head("refs/heads/main").unwrap();
        let t = TestRepo { dir, repo };
        t.write(".gitignore", ".factory/\n");
        for (path, text) in files {
            t.write(path, text);
        }
        t.commit_all("initial");
        t
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, path: &str, text: &str) {
        let p = self.dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    pub fn remove(&self, path: &str) {
        fs::remove_file(self.dir.path().join(path)).unwrap();
    }

    pub fn rename(&self, from: &str, to: &str) {
        let to_path = self.dir.path().join(to);
        fs::create_dir_all(to_path.parent().unwrap()).unwrap();
        fs::rename(self.dir.path().join(from), to_path).unwrap();
    }

    pub fn symlink(&self, target: &str, link: &str) {
        let p = self.dir.path().join(link);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    /// Stages everything (deletions included) and commits on the current HEAD.
    pub fn commit_all(&self, message: &str) {
        let mut index = self.repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("t", "t@example.invalid").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<_> = parent.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap();
    }

    /// Creates `name` at HEAD and switches to it.
    pub fn branch(&self, name: &str) {
        let head = self.repo.head().unwrap().peel_to_commit().unwrap();
        self.repo.branch(name, &head, false).unwrap();
        self.checkout(name);
    }

    pub fn checkout(&self, name: &str) {
        let refname = format!("refs/heads/{name}");
        let obj = self.repo.revparse_single(&refname).unwrap();
        self.repo
            .checkout_tree(&obj, Some(git2::build::CheckoutBuilder::new().force()))
            .unwrap();
        self.repo.set_head(&refname).unwrap();
    }

    pub fn detach(&self) {
        let id = self.repo.head().unwrap().target().unwrap();
        self.repo.set_head_detached(id).unwrap();
    }
}
