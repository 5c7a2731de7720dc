//! `factory worktrees list|clean`: the built binary on real git repositories in temp
//! dirs, with experiments in every state a worktree can be left in.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{Project, commit_all, text};
use factory_runtime::store::{ExperimentStore, Outcome, Verdict};
use git2::{BranchType, Repository, WorktreeAddOptions};
use serde_json::Value;

/// A project on `main` with, besides the user's own uncommitted work:
/// - 1 open, one commit ahead of its base;
/// - 2 finalized `revert` and 3 finalized `keep` whose cleanup never ran (a crash
///   between the record and the removal), 5 finalized `error` with a file left in it,
///   6 finalized `quarantined`;
/// - 4 open with its directory deleted (missing);
/// - 9 a `factory-exp-009` worktree with no experiment behind it (orphaned);
/// - 12 a leftover `exp-012` directory git does not know;
/// - a worktree the user made by hand, which is not factory's.
struct Fixture {
    project: Project,
    _target: tempfile::TempDir,
    mine: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let target = tempfile::tempdir().unwrap();
        let project = Project::committed(target.path());
        let p = project.path();
        for h in ["one", "two", "three", "four", "five", "six"] {
            let o = project.factory(&["begin", "--hypothesis", h]);
            assert!(o.status.success(), "{}", text(&o.stderr));
        }
        // 1: a commit of work, brought home as the executor does when its agent ends.
        let wt1 = Repository::open(worktree(p, 1)).unwrap();
        fs::write(worktree(p, 1).join("src/lib.rs"), "// changed\n").unwrap();
        commit_all(&wt1, "work");
        factory_runtime::worktrees::repo::import(p, 1).unwrap();
        // 2, 3, 5, 6: recorded by the store alone, so their worktrees stay.
        let store = ExperimentStore::with_registry(p, Some(project.home().to_path_buf()));
        for (id, verdict) in [
            (2, Verdict::Revert),
            (3, Verdict::Keep),
            (5, Verdict::Error),
            (6, Verdict::Quarantined),
        ] {
            store.finalize(id, Outcome::new(verdict)).unwrap();
        }
        fs::write(worktree(p, 5).join("notes.txt"), "unsaved\n").unwrap();
        let repo = Repository::open(p).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        // 4: an older factory's git worktree, gone behind git's back.
        fs::remove_dir_all(worktree(p, 4)).unwrap();
        let four = repo
            .find_branch("factory/exp-004", BranchType::Local)
            .unwrap()
            .into_reference();
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(&four));
        repo.worktree("factory-exp-004", &worktree(p, 4), Some(&opts))
            .unwrap();
        fs::remove_dir_all(worktree(p, 4)).unwrap();
        // 9: an older factory's naming, no experiment.
        let branch = repo.branch("factory/exp-009", &head, false).unwrap();
        let reference = branch.into_reference();
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(&reference));
        repo.worktree("factory-exp-009", &worktree(p, 9), Some(&opts))
            .unwrap();
        // 12: a directory only.
        fs::create_dir_all(worktree(p, 12)).unwrap();
        fs::write(worktree(p, 12).join("stale.txt"), "x\n").unwrap();
        // The user's own worktree, index and uncommitted work.
        let mut index = repo.index().unwrap();
        index.read_tree(&head.tree().unwrap()).unwrap();
        index.write().unwrap();
        // (checked byte for byte before and after)
        let mine = tempfile::tempdir().unwrap();
        let mine_path = mine.path().join("mine");
        repo.worktree("mine", &mine_path, None).unwrap();
        fs::write(p.join("src/lib.rs"), "// the user's edit\n").unwrap();
        fs::write(p.join("scratch.txt"), "untracked\n").unwrap();
        Fixture {
            project,
            _target: target,
            mine,
        }
    }

    fn path(&self) -> &Path {
        self.project.path()
    }

    fn list(&self) -> Vec<Value> {
        let o = self.project.factory(&["worktrees", "list", "--json"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    fn has_branch(&self, id: u32) -> bool {
        Repository::open(self.path())
            .unwrap()
            .find_branch(&format!("factory/exp-{id:03}"), BranchType::Local)
            .is_ok()
    }

    /// Everything clean must never touch, as it is now.
    fn untouchable(&self) -> (String, String, String, Vec<u8>, bool) {
        let repo = Repository::open(self.path()).unwrap();
        let head = repo.head().unwrap();
        (
            format!("{:?} {:?}", head.name(), head.target()),
            fs::read_to_string(self.path().join("src/lib.rs")).unwrap(),
            fs::read_to_string(self.path().join("scratch.txt")).unwrap(),
            fs::read(self.path().join(".git/index")).unwrap(),
            self.mine.path().join("mine/src/lib.rs").is_file(),
        )
    }
}

fn worktree(project: &Path, id: u32) -> PathBuf {
    project.join(format!(".factory/worktrees/exp-{id:03}"))
}

fn by_id(list: &[Value], id: u64) -> &Value {
    list.iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no exp {id} in {list:#?}"))
}

#[test]
fn list_shows_every_factory_worktree_with_its_status() {
    let f = Fixture::new();
    let list = f.list();
    let ids: Vec<u64> = list.iter().map(|e| e["id"].as_u64().unwrap()).collect();
    assert_eq!(
        ids,
        [1, 2, 3, 4, 5, 6, 9, 12],
        "the user's worktree is not listed"
    );

    let statuses: Vec<&str> = list.iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        [
            "open",
            "revert",
            "keep",
            "missing",
            "error",
            "quarantined",
            "orphaned",
            "orphaned",
        ]
    );

    let one = by_id(&list, 1);
    assert_eq!(one["branch"], "factory/exp-001");
    assert_eq!(one["hypothesis"], "one");
    assert_eq!(one["experiment"], "open");
    assert_eq!(one["verdict"], Value::Null);
    assert_eq!(one["ahead"], 1);
    assert_eq!(one["dirty"], false);
    assert_eq!(one["registered"], true);
    assert_eq!(one["exists"], true);
    assert!(
        one["path"]
            .as_str()
            .unwrap()
            .ends_with(".factory/worktrees/exp-001")
    );

    let two = by_id(&list, 2);
    assert_eq!(two["experiment"], "finished");
    assert_eq!(two["verdict"], "revert");
    assert_eq!(two["ahead"], 0);
    assert_eq!(by_id(&list, 5)["dirty"], true);

    let four = by_id(&list, 4);
    assert_eq!(four["experiment"], "open");
    assert_eq!(four["exists"], false);
    assert_eq!(four["registered"], true);

    let nine = by_id(&list, 9);
    assert_eq!(nine["experiment"], "none");
    assert_eq!(nine["hypothesis"], Value::Null);
    assert_eq!(nine["ahead"], Value::Null, "no base on record");
    assert_eq!(nine["branch"], "factory/exp-009");

    let twelve = by_id(&list, 12);
    assert_eq!(twelve["registered"], false);
    assert_eq!(twelve["branch"], Value::Null);

    let every_key = [
        "id",
        "status",
        "experiment",
        "branch",
        "path",
        "hypothesis",
        "registered",
        "exists",
        "ahead",
        "dirty",
    ];
    for e in &list {
        for key in every_key {
            assert!(e.get(key).is_some(), "{key} missing in {e}");
        }
    }

    let o = f.project.factory(&["worktrees", "list"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("exp-001  open"), "{out}");
    assert!(
        out.contains("factory/exp-001  .factory/worktrees/exp-001  (1 ahead)"),
        "{out}"
    );
    assert!(out.contains("exp-005  error"), "{out}");
    assert!(out.contains("uncommitted changes"), "{out}");
    assert!(out.contains("not registered with git"), "{out}");
    assert!(out.contains("8 worktrees, 1 open"), "{out}");
}

#[test]
fn clean_yes_removes_finished_and_orphaned_and_keeps_open_work_and_the_checkout() {
    let f = Fixture::new();
    let before = f.untouchable();
    let o = f.project.factory(&["worktrees", "clean", "--yes"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}\n{}", text(&o.stderr));
    // The plan comes first, each with why.
    assert!(out.starts_with("will remove:\n"), "{out}");
    assert!(
        out.contains(
            ".factory/worktrees/exp-002  factory/exp-002  finished (revert): the worktree and branch factory/exp-002"
        ),
        "{out}"
    );
    assert!(
        out.contains("finished (keep): the worktree; branch factory/exp-003 stays"),
        "{out}"
    );
    assert!(
        out.contains("orphaned (no experiment 9 on record)"),
        "{out}"
    );
    assert!(out.contains("experiment 1 is open"), "{out}");
    assert!(out.contains("uncommitted changes"), "{out}");
    assert!(
        out.trim_end()
            .ends_with("removed 5 worktrees (1 branch deleted), left 3"),
        "{out}"
    );

    let p = f.path();
    // Open experiments keep everything, even one whose directory is gone.
    assert!(worktree(p, 1).join("src/lib.rs").is_file());
    assert!(f.has_branch(1) && f.has_branch(4));
    // Finished ones: a revert's branch goes (as finalize does), a keep's stays.
    assert!(!worktree(p, 2).exists() && !f.has_branch(2));
    assert!(!worktree(p, 3).exists() && f.has_branch(3));
    assert!(!worktree(p, 6).exists() && f.has_branch(6));
    // Uncommitted work in a finished experiment is left, and so is its branch.
    assert_eq!(
        fs::read_to_string(worktree(p, 5).join("notes.txt")).unwrap(),
        "unsaved\n"
    );
    assert!(f.has_branch(5));
    // Orphaned: the worktree goes, the branch stays; the leftover directory goes.
    assert!(!worktree(p, 9).exists() && f.has_branch(9));
    assert!(!worktree(p, 12).exists());
    // git no longer knows the removed older-style worktree (9); experiment
    // repositories were never registered in the user's repository.
    let repo = Repository::open(p).unwrap();
    let names: Vec<String> = repo
        .worktrees()
        .unwrap()
        .iter()
        .flatten()
        .flatten()
        .map(str::to_owned)
        .collect();
    assert!(!names.contains(&"factory-exp-001".to_owned()), "{names:?}");
    assert!(names.contains(&"factory-exp-004".to_owned()), "{names:?}");
    assert!(names.contains(&"mine".to_owned()), "{names:?}");
    for gone in ["factory-exp-002", "factory-exp-003", "factory-exp-009"] {
        assert!(!names.contains(&gone.to_owned()), "{names:?}");
    }
    // The user's checkout, index, uncommitted files and own worktree: untouched.
    assert_eq!(f.untouchable(), before);

    let list = f.list();
    let ids: Vec<u64> = list.iter().map(|e| e["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [1, 4, 5]);
    let again = f.project.factory(&["worktrees", "clean", "--yes"]);
    assert!(again.status.success());
    assert!(
        text(&again.stdout).starts_with("nothing to remove\n"),
        "{}",
        text(&again.stdout)
    );
}

#[test]
fn clean_without_a_terminal_or_yes_refuses_and_changes_nothing() {
    let f = Fixture::new();
    let before = f.untouchable();
    let listed = f.list();

    let o = f.project.factory(&["worktrees", "clean"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.contains("no terminal to confirm on; nothing removed"),
        "{err}"
    );
    assert!(err.contains("--yes"), "{err}");
    assert!(
        text(&o.stdout).contains("will remove:"),
        "the plan is shown"
    );
    assert_eq!(f.list(), listed);
    assert_eq!(f.untouchable(), before);

    let dry = f.project.factory(&["worktrees", "clean", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(text(&dry.stdout).contains("will remove:"));
    assert!(text(&dry.stdout).ends_with("dry run: nothing removed\n"));
    assert_eq!(f.list(), listed);
    assert!(f.has_branch(2));
    assert_eq!(f.untouchable(), before);
}

#[test]
fn a_verdict_this_build_does_not_know_is_shown_as_written_and_its_branch_kept() {
    let target = tempfile::tempdir().unwrap();
    let project = Project::committed(target.path());
    let p = project.path();
    for h in ["one", "two"] {
        assert!(
            project
                .factory(&["begin", "--hypothesis", h])
                .status
                .success()
        );
    }
    // As a newer factory would record it (no results.tsv row read by this build).
    let record = serde_json::json!({
        "id": 1,
        "timestamp": "2026-12-01T00:00:00Z",
        "hypothesis": "one",
        "change_summary": "",
        "issue_number": null,
        "pr_number": null,
        "score_before": null,
        "score_after": null,
        "delta": null,
        "verdict": "quarantined-later",
        "cost_usd": null,
        "notes": "conflicted with main",
        "research_citations": []
    });
    fs::write(
        p.join(".factory/experiments/001/verdict.json"),
        serde_json::to_string_pretty(&record).unwrap(),
    )
    .unwrap();
    let o = project.factory(&["worktrees", "list", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(list[0]["status"], "quarantined-later");
    assert_eq!(list[0]["experiment"], "finished");
    assert_eq!(list[1]["status"], "open");

    let o = project.factory(&["worktrees", "clean", "--yes"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!worktree(p, 1).exists());
    let repo = Repository::open(p).unwrap();
    assert!(
        repo.find_branch("factory/exp-001", BranchType::Local)
            .is_ok()
    );
    assert!(worktree(p, 2).is_dir());
}

#[test]
fn a_path_that_is_not_a_directory_or_not_a_repository_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = assert_cmd::Command::cargo_bin("factory")
        .unwrap()
        .args(["worktrees", "list"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("is not a directory"));
    let o = assert_cmd::Command::cargo_bin("factory")
        .unwrap()
        .args(["worktrees", "clean", "--yes"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("git init"), "{}", text(&o.stderr));
}

#[test]
fn clean_never_removes_a_directory_outside_the_projects_worktrees() {
    let target = tempfile::tempdir().unwrap();
    let project = Project::committed(target.path());
    let p = project.path();
    // git's record of a factory-named worktree that lives elsewhere (say, a project
    // copied with its .git): not ours to delete.
    let elsewhere = tempfile::tempdir().unwrap();
    let path = elsewhere.path().join("exp-020");
    let repo = Repository::open(p).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    let branch = repo.branch("factory/exp-020", &head, false).unwrap();
    let reference = branch.into_reference();
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(&reference));
    repo.worktree("factory-exp-020", &path, Some(&opts))
        .unwrap();

    let o = project.factory(&["worktrees", "list", "--json"]);
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(list[0]["id"], 20);
    assert_eq!(list[0]["status"], "orphaned");

    let o = project.factory(&["worktrees", "clean", "--yes"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("not under this project's .factory/worktrees/"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("left 1"), "{out}");
    assert!(path.join("Cargo.toml").is_file());
}

#[test]
fn begin_after_factory_was_removed_never_adopts_a_leftover_branch() {
    let target = tempfile::tempdir().unwrap();
    let project = Project::committed(target.path());
    let p = project.path();
    let o = project.factory(&["begin", "--hypothesis", "earlier work"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    fs::write(worktree(p, 1).join("src/lib.rs"), "// earlier\n").unwrap();
    let earlier = commit_all(&Repository::open(worktree(p, 1)).unwrap(), "earlier");
    factory_runtime::worktrees::repo::import(p, 1).unwrap();
    // The user starts over: `.factory/` goes, the branch stays.
    fs::remove_dir_all(p.join(".factory")).unwrap();

    let o = project.factory(&["begin", "--hypothesis", "new work"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim(),
        "2",
        "the next free id, not the branch's"
    );
    let repo = Repository::open(p).unwrap();
    let main = repo.head().unwrap().peel_to_commit().unwrap().id();
    let tip = |name: &str| {
        repo.find_branch(name, BranchType::Local)
            .unwrap()
            .get()
            .peel_to_commit()
            .unwrap()
            .id()
    };
    assert_eq!(
        tip("factory/exp-002"),
        main,
        "the new experiment starts at main"
    );
    assert_eq!(
        tip("factory/exp-001"),
        earlier,
        "the earlier work is untouched"
    );
    let wt = Repository::open(worktree(p, 2)).unwrap();
    assert_eq!(wt.head().unwrap().peel_to_commit().unwrap().id(), main);
}

#[test]
fn an_error_verdict_sets_the_experiments_commits_aside_instead_of_deleting_them() {
    let target = tempfile::tempdir().unwrap();
    let project = Project::committed(target.path());
    let p = project.path();
    for h in ["with work", "without work"] {
        let o = project.factory(&["begin", "--hypothesis", h]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    fs::write(worktree(p, 1).join("src/lib.rs"), "// the agent's work\n").unwrap();
    let work = commit_all(&Repository::open(worktree(p, 1)).unwrap(), "work");
    for id in ["1", "2"] {
        let o = project.factory(&["finalize", "--id", id, "--verdict", "error"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        if id == "1" {
            assert!(
                text(&o.stderr).contains("kept on branch factory/failed/exp-001"),
                "{}",
                text(&o.stderr)
            );
        }
    }
    let repo = Repository::open(p).unwrap();
    let branch = |name: &str| repo.find_branch(name, BranchType::Local).ok();
    assert!(branch("factory/exp-001").is_none());
    let kept = branch("factory/failed/exp-001").expect("the work is set aside");
    assert_eq!(kept.get().peel_to_commit().unwrap().id(), work);
    // A branch with nothing on it goes, as before.
    assert!(branch("factory/exp-002").is_none());
    assert!(branch("factory/failed/exp-002").is_none());
    assert!(!worktree(p, 1).exists() && !worktree(p, 2).exists());
}
