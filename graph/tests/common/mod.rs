//! Fixture projects copied into temporary git repositories.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use factory_graph::CodeGraph;
use git2::{Repository, Signature, Time};

pub fn fixture_dir(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(lang)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Copies fixture `lang` into a temporary directory, `git init`s it and commits every
/// file.
pub fn fixture_repo(lang: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture_dir(lang), tmp.path());
    Repository::init(tmp.path()).unwrap();
    commit_all(tmp.path(), "initial", 0);
    tmp
}

/// Stages every file and commits with a fixed author and time.
pub fn commit_all(root: &Path, message: &str, seconds: i64) {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::new("Fixture", "fixture@example.invalid", &Time::new(seconds, 0)).unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parent_refs)
        .unwrap();
}

/// A reviewable rendering of a graph: one line per node, then one per link.
pub fn render(graph: &CodeGraph) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "other files: {:?}\n\nnodes:\n",
        graph.graph.other_files
    ));
    for n in &graph.nodes {
        let mut flags = Vec::new();
        if let Some(l) = n.language {
            flags.push(l.to_string());
        }
        if n.test {
            flags.push("test".into());
        }
        if n.parse_error {
            flags.push("parse_error".into());
        }
        if n.non_utf8 {
            flags.push("non_utf8".into());
        }
        if let Some(lines) = n.lines {
            flags.push(format!("{lines} lines"));
        }
        let span = match (n.line, n.end_line) {
            (Some(a), Some(b)) => format!(" L{a}-{b}"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {:<9} {}{}{}\n",
            n.kind.as_str(),
            n.id,
            span,
            if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            }
        ));
    }
    out.push_str("\nlinks:\n");
    for l in &graph.links {
        let count = if l.count > 1 {
            format!(" (x{})", l.count)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {} -{}-> {}{}\n",
            l.source, l.relation, l.target, count
        ));
    }
    out
}
