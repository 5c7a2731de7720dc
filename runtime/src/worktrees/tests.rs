use std::fs;
use std::path::Path;

use git2::{Repository, Signature};

use super::*;

fn commit_all(repo: &Repository, message: &str) -> Oid {
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::now("t", "t@example.com").unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
}

fn project_with_commit(dir: &Path) -> Repository {
    let repo = Repository::init(dir).unwrap();
    fs::write(dir.join(".gitignore"), ".factory/\n").unwrap();
    fs::write(dir.join("lib.txt"), "one\n").unwrap();
    commit_all(&repo, "init");
    repo
}

fn current_branch(repo: &Repository) -> String {
    repo.head().unwrap().shorthand().unwrap().to_owned()
}

#[test]
fn create_branches_from_the_tip_and_leaves_the_checkout_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = project_with_commit(dir);
    let head = current_branch(&repo);
    let tip = repo.head().unwrap().target().unwrap();
    fs::write(dir.join("lib.txt"), "one\nuncommitted\n").unwrap();
    fs::write(dir.join("scratch.txt"), "untracked\n").unwrap();

    let ws = create(dir, 1, "no-such-branch").unwrap();
    assert_eq!(ws.branch, "factory/exp-001");
    assert_eq!(ws.base_commit, tip.to_string());
    assert_eq!(ws.target_branch, head);
    assert!(ws.note.as_deref().unwrap().contains("no-such-branch"));
    assert_eq!(
        fs::read_to_string(ws.code_dir().join("lib.txt")).unwrap(),
        "one\n"
    );
    assert!(!ws.code_dir().join("scratch.txt").exists());
    assert_eq!(head_commit(&ws.worktree).unwrap(), tip.to_string());

    // The user's checkout: same branch, same files, same index.
    assert_eq!(current_branch(&repo), head);
    assert_eq!(
        fs::read_to_string(dir.join("lib.txt")).unwrap(),
        "one\nuncommitted\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("scratch.txt")).unwrap(),
        "untracked\n"
    );

    // Idempotent, and the named target is used when it exists.
    let again = create(dir, 1, &head).unwrap();
    assert_eq!(again.worktree, ws.worktree);
    assert_eq!(again.note, None);

    let removed = remove(dir, 1, true).unwrap();
    assert!(removed.worktree && removed.branch);
    assert!(!ws.worktree.exists());
    assert_eq!(branch_tip(dir, 1).unwrap(), None);
    assert_eq!(remove(dir, 1, true).unwrap(), Removed::default());
    assert_eq!(current_branch(&repo), head);
}

#[test]
fn a_removed_worktree_directory_is_recreated_on_the_existing_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = project_with_commit(dir);
    let ws = create(dir, 2, &current_branch(&repo)).unwrap();
    fs::write(ws.worktree.join("lib.txt"), "two\n").unwrap();
    let wt_repo = Repository::open(&ws.worktree).unwrap();
    let work = commit_all(&wt_repo, "work");
    // The executor imports an agent's commits when its node ends.
    assert_eq!(repo::import(dir, 2).unwrap().head, work);
    fs::remove_dir_all(&ws.worktree).unwrap();

    let back = create(dir, 2, &current_branch(&repo)).unwrap();
    assert_eq!(head_commit(&back.worktree).unwrap(), work.to_string());
    assert_eq!(back.base_commit, ws.base_commit);
    // Keep-style removal leaves the branch.
    remove(dir, 2, false).unwrap();
    assert_eq!(branch_tip(dir, 2).unwrap(), Some(work.to_string()));
}

/// What a `create` killed half-way leaves — a registered worktree with half its files,
/// or a directory git never registered — is discarded, and the branch kept.
#[test]
fn an_unfinished_worktree_is_discarded_and_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = project_with_commit(dir);
    let ws = create(dir, 3, &current_branch(&repo)).unwrap();
    // Half a checkout: a tracked file missing.
    fs::remove_file(ws.worktree.join("lib.txt")).unwrap();
    discard_unfinished(dir, 3).unwrap();
    let again = create(dir, 3, &current_branch(&repo)).unwrap();
    assert_eq!(
        fs::read_to_string(again.worktree.join("lib.txt")).unwrap(),
        "one\n"
    );

    // A directory git never registered: `create` alone refuses it.
    remove(dir, 3, false).unwrap();
    fs::create_dir_all(worktree_path(dir, 3)).unwrap();
    fs::write(worktree_path(dir, 3).join("partial"), "x").unwrap();
    assert!(matches!(
        create(dir, 3, &current_branch(&repo)),
        Err(WorktreeError::PathTaken { .. })
    ));
    discard_unfinished(dir, 3).unwrap();
    let made = create(dir, 3, &current_branch(&repo)).unwrap();
    assert!(made.worktree.join("lib.txt").is_file());
    assert!(branch_tip(dir, 3).unwrap().is_some(), "the branch is kept");
}

#[test]
fn no_repository_and_no_commits_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let err = create(tmp.path(), 1, "main").unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepo { .. }), "{err}");
    Repository::init(tmp.path()).unwrap();
    let err = create(tmp.path(), 1, "main").unwrap_err();
    assert!(matches!(err, WorktreeError::NoCommits { .. }), "{err}");
}

/// The experiment's repository shares nothing with the user's but the objects it
/// borrows: its config, hooks, branches and replace refs stay its own, and what comes
/// home is the commit its HEAD names, never a replacement.
#[test]
fn an_experiment_repository_keeps_its_git_state_to_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = project_with_commit(dir);
    let config_before = fs::read_to_string(dir.join(".git/config")).unwrap();
    let ws = create(dir, 4, &current_branch(&repo)).unwrap();
    assert!(ws.worktree.join(".git").is_dir(), "a repository of its own");
    assert!(
        repo.worktrees().unwrap().is_empty(),
        "no worktree in the user's repository"
    );

    let exp = Repository::open(&ws.worktree).unwrap();
    exp.config()
        .unwrap()
        .set_str("filter.evil.smudge", "sed s/one/two/")
        .unwrap();
    fs::create_dir_all(ws.worktree.join(".git/hooks")).unwrap();
    fs::write(
        ws.worktree.join(".git/hooks/post-merge"),
        "#!/bin/sh
",
    )
    .unwrap();
    fs::write(ws.worktree.join("lib.txt"), "honest\n").unwrap();
    let honest = commit_all(&exp, "honest");
    // A replacement for the honest commit, and a branch of its own.
    fs::write(ws.worktree.join("lib.txt"), "decoy\n").unwrap();
    let decoy = commit_all(&exp, "decoy");
    exp.reference(&format!("refs/replace/{honest}"), decoy, true, "t")
        .unwrap();
    exp.reference("refs/heads/main", decoy, true, "t").unwrap();
    exp.reference("refs/heads/factory/exp-004", honest, true, "t")
        .unwrap();
    exp.set_head("refs/heads/factory/exp-004").unwrap();

    let imported = repo::import(dir, 4).unwrap();
    assert_eq!(imported.head, honest);
    assert_eq!(branch_tip(dir, 4).unwrap(), Some(honest.to_string()));
    let blob = repo
        .find_commit(honest)
        .unwrap()
        .tree()
        .unwrap()
        .get_name("lib.txt")
        .unwrap()
        .to_object(&repo)
        .unwrap();
    assert_eq!(blob.as_blob().unwrap().content(), b"honest\n");
    assert_eq!(
        fs::read_to_string(dir.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!dir.join(".git/hooks/post-merge").exists());
    assert!(
        repo.find_reference(&format!("refs/replace/{honest}"))
            .is_err()
    );
    let main = current_branch(&repo);
    assert_ne!(
        repo.refname_to_id(&format!("refs/heads/{main}")).unwrap(),
        decoy,
        "the user's branch is not the experiment's"
    );
}

/// An agent that points its repository's working tree at the user's checkout gets an
/// error, not a checkout written there.
#[test]
fn an_experiment_repository_aimed_at_the_users_checkout_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = project_with_commit(dir);
    let ws = create(dir, 5, &current_branch(&repo)).unwrap();
    Repository::open(&ws.worktree)
        .unwrap()
        .config()
        .unwrap()
        .set_str("core.worktree", dir.to_str().unwrap())
        .unwrap();
    fs::write(dir.join("lib.txt"), "the user's edit\n").unwrap();
    let tip = repo.head().unwrap().target().unwrap();
    let err = integrate::reset_branch(dir, 5, &tip.to_string()).unwrap_err();
    assert!(matches!(err, WorktreeError::Reconfigured { .. }), "{err}");
    assert!(matches!(
        repo::import(dir, 5),
        Err(WorktreeError::Reconfigured { .. })
    ));
    assert_eq!(
        fs::read_to_string(dir.join("lib.txt")).unwrap(),
        "the user's edit\n"
    );
}

/// Several commits with nested directories come home whole: every commit and tree of
/// the branch is readable from the user's repository alone (no alternates there).
#[test]
fn an_import_brings_every_commit_and_tree_of_the_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = project_with_commit(dir);
    let ws = create(dir, 6, &current_branch(&repo)).unwrap();
    let exp = Repository::open(&ws.worktree).unwrap();
    let mut tips = Vec::new();
    for n in 0..3 {
        let deep = ws.worktree.join(format!("a/b{n}/c"));
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("f.txt"), format!("{n}\n")).unwrap();
        tips.push(commit_all(&exp, &format!("step {n}")));
    }
    // Part of the history came home already (an import after the first agent node).
    exp.reference("refs/heads/factory/exp-006", tips[0], true, "t")
        .unwrap();
    repo::import(dir, 6).unwrap();
    exp.reference("refs/heads/factory/exp-006", tips[2], true, "t")
        .unwrap();
    assert_eq!(repo::import(dir, 6).unwrap().branch, Some(tips[2]));
    let fresh = Repository::open(dir).unwrap();
    let mut walk = fresh.revwalk().unwrap();
    walk.push(tips[2]).unwrap();
    let mut seen = 0;
    for oid in walk {
        let commit = fresh.find_commit(oid.unwrap()).unwrap();
        commit
            .tree()
            .unwrap()
            .walk(git2::TreeWalkMode::PreOrder, |_, e| {
                e.to_object(&fresh).expect("every object is home");
                git2::TreeWalkResult::Ok
            })
            .unwrap();
        seen += 1;
    }
    assert_eq!(seen, 4, "three steps and the initial commit");
}
