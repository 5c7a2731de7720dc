//! Experiments in their own worktrees, and a keep the store enforces: the built binary
//! on real git repositories in temp dirs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{GateProject as Project, commit_all, text};
use assert_cmd::Command;
use factory_runtime::events::{self, Event};
use factory_runtime::project::layout::FactoryPaths;
use git2::{Oid, Repository};
use serde_json::Value;

/// What only these tests need of the gate's project.
impl Project {
    fn repo(&self) -> Repository {
        Repository::open(self.path()).unwrap()
    }

    fn branch_tip(&self, id: u32) -> Option<Oid> {
        self.repo()
            .find_branch(&format!("factory/exp-{id:03}"), git2::BranchType::Local)
            .ok()
            .and_then(|b| b.get().target())
    }

    /// One QA role's completion for experiment `id`, as factory writes it.
    fn qa_role(&self, id: u32, role: &str) {
        events::append_in_home(
            &FactoryPaths::new(self.path()),
            self.home.path(),
            &Event::raw("agent.completed")
                .with("role", role)
                .with("exp_id", id),
        )
        .unwrap();
    }

    fn results_rows(&self) -> Vec<Vec<String>> {
        fs::read_to_string(self.path().join(".factory/results.tsv"))
            .unwrap_or_default()
            .lines()
            .skip(1)
            .map(|l| l.split('\t').map(str::to_owned).collect())
            .collect()
    }
}

/// factory.md of the test project: the composite is the number in `src/score.txt`.
pub const FACTORY_MD: &str = "# Score\n\n## Goal\na higher score\n\n## Scope\n- src/**\n\n## Guards\n\n## Eval command\ncat src/score.txt\n\n## Eval threshold\n0.5\n\n## Constraints\n\n## Project eval\n- name: quality\n  command: cat src/score.txt\n  parse: json\n  timeout: 10\n\n## Test timeout\n30\n";

/// A project on `main` whose composite is the number in `src/score.txt` (no known
/// language, so no hygiene checks run): fast, and fully decided by the test. Its
/// factory.md is committed: the gate reads it at the experiment's base commit.
fn project() -> Project {
    Project::init(&[
        (".gitignore", ".factory/\n"),
        ("src/score.txt", "0.7\n"),
        ("README.md", "# demo\n"),
        ("factory.md", FACTORY_MD),
    ])
}

fn begin(p: &Project, hypothesis: &str) -> u32 {
    let o = p.factory(&["begin", "--hypothesis", hypothesis]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout).trim().parse().unwrap()
}

/// Commits `score` into experiment `id`'s worktree, as a builder agent would.
fn build(p: &Project, id: u32, score: &str) -> Oid {
    let wt = p.worktree(id);
    fs::write(wt.join("src/score.txt"), format!("{score}\n")).unwrap();
    commit_all(&Repository::open(&wt).unwrap(), &format!("score {score}"))
}

fn precheck(p: &Project, id: u32) -> Value {
    let o = p.factory(&["precheck", "--exp", &id.to_string(), "--json"]);
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let file = p
        .path()
        .join(format!(".factory/experiments/{id:03}/precheck.json"));
    serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap()
}

fn keep(p: &Project, id: u32) -> Output {
    p.factory(&["finalize", "--id", &id.to_string(), "--verdict", "keep"])
}

#[test]
fn begin_branches_from_the_target_tip_and_never_touches_the_checkout() {
    let p = project();
    let repo = p.repo();
    let main_tip = repo.head().unwrap().target().unwrap();
    // The user works on a branch of their own, ahead of main, with uncommitted work.
    let feature = repo
        .branch("feature", &repo.find_commit(main_tip).unwrap(), false)
        .unwrap();
    repo.set_head(feature.get().name().unwrap()).unwrap();
    fs::write(p.path().join("README.md"), "# demo\nmore\n").unwrap();
    let feature_tip = commit_all(&repo, "feature work");
    fs::write(p.path().join("README.md"), "# demo\nmore\nuncommitted\n").unwrap();
    fs::write(p.path().join("notes.txt"), "untracked\n").unwrap();
    let index_before = fs::read(p.path().join(".git/index")).unwrap();

    let o = p.factory(&[
        "begin",
        "--hypothesis",
        "raise the score",
        "--run-key",
        "run-1/begin/1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let begun: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(begun["id"], 1);
    assert_eq!(begun["branch"], "factory/exp-001");
    assert_eq!(begun["base_commit"], main_tip.to_string());
    assert_eq!(p.branch_tip(1), Some(main_tip));
    let wt = PathBuf::from(begun["worktree"].as_str().unwrap());
    assert_eq!(wt, p.worktree(1).canonicalize().unwrap());
    assert_eq!(
        fs::read_to_string(wt.join("README.md")).unwrap(),
        "# demo\n"
    );
    assert!(!wt.join("notes.txt").exists());

    // The user's checkout: same branch and commit, same index, files byte-identical.
    let head = repo.head().unwrap();
    assert_eq!(head.name().ok(), Some("refs/heads/feature"));
    assert_eq!(head.target(), Some(feature_tip));
    assert_eq!(fs::read(p.path().join(".git/index")).unwrap(), index_before);
    assert_eq!(
        fs::read_to_string(p.path().join("README.md")).unwrap(),
        "# demo\nmore\nuncommitted\n"
    );
    assert_eq!(
        fs::read_to_string(p.path().join("notes.txt")).unwrap(),
        "untracked\n"
    );

    let info: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/experiments/001/experiment.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(info["run_key"], "run-1/begin/1");
    assert_eq!(info["workspace"]["target_branch"], "main");
    assert_eq!(info["workspace"]["base_commit"], main_tip.to_string());

    // The same run key, given or from the executor's environment, is the same experiment.
    let again = p.factory(&[
        "begin",
        "--hypothesis",
        "raise the score",
        "--run-key",
        "run-1/begin/1",
    ]);
    assert_eq!(text(&again.stdout), "1\n", "{}", text(&again.stderr));
    let by_env = |visit: &str| {
        Command::cargo_bin("factory")
            .unwrap()
            .current_dir(p.path())
            .env("FACTORY_HOME", p.home.path())
            .env("FACTORY_RUN_ID", "run-2")
            .env("FACTORY_NODE", "begin")
            .env("FACTORY_VISIT", visit)
            .args(["begin", "--hypothesis", "another idea"])
            .output()
            .unwrap()
    };
    assert_eq!(text(&by_env("1").stdout), "2\n");
    assert_eq!(text(&by_env("1").stdout), "2\n");
    assert_eq!(text(&by_env("2").stdout), "3\n");
    let key = factory_runtime::store::run_key("run-2", "begin", 2);
    let found = factory_runtime::store::find_by_run_key(p.path(), &key)
        .unwrap()
        .unwrap();
    assert_eq!(found.id, 3);
    assert!(p.worktree(3).join("README.md").is_file());

    // A worktree lost while the experiment is open comes back on the next begin.
    fs::remove_dir_all(p.worktree(3)).unwrap();
    assert_eq!(text(&by_env("2").stdout), "3\n");
    assert!(p.worktree(3).join("README.md").is_file());
}

#[test]
fn a_directory_without_git_history_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = |dir: &Path| {
        Command::cargo_bin("factory")
            .unwrap()
            .env("FACTORY_HOME", home.path())
            .args(["begin", dir.to_str().unwrap(), "--hypothesis", "x"])
            .output()
            .unwrap()
    };
    let o = run(dir.path());
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("not a git repository") && err.contains("git init"),
        "{err}"
    );
    Repository::init(dir.path()).unwrap();
    let err = text(&run(dir.path()).stderr);
    assert!(
        err.contains("no commits") && err.contains("commit"),
        "{err}"
    );
    // Nothing was allocated by the refused begins.
    assert!(!dir.path().join(".factory/experiments/001").exists());
}

#[test]
fn keep_needs_a_passing_precheck_at_the_kept_commit_after_the_last_qa() {
    let p = project();
    // The first eval of the target is the baseline the experiment is compared with.
    let o = p.factory(&["eval"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = begin(&p, "raise the score");
    let first = build(&p, id, "0.8");

    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("no precheck") && err.contains("factory precheck --exp 1"),
        "{err}"
    );

    // `eval --exp` measures the worktree, and records into the project.
    let o = p.factory(&["eval", "--exp", "1", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["total"], 0.8, "{report}");
    let last: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/last_eval.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(last["total"], 0.8);

    p.qa_done(id);
    // A precheck record must describe a fresh eval of a clean, committed HEAD.
    let o = p.factory(&["precheck", "--exp", "1", "--allow-dirty"]);
    assert_eq!(o.status.code(), Some(2));
    let record = precheck(&p, id);
    assert_eq!(record["passed"], true, "{record}");
    assert_eq!(record["commit"], first.to_string());
    assert_eq!(record["score_before"], 0.7);
    assert_eq!(record["score_after"], 0.8);
    assert!(record["timestamp"].as_str().unwrap().ends_with('Z'));

    // A commit after the precheck is not what it passed.
    let second = build(&p, id, "0.9");
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("moved") && err.contains("factory precheck"),
        "{err}"
    );
    let record = precheck(&p, id);
    assert_eq!(record["commit"], second.to_string());

    // Nor is a QA run that finished after it.
    p.qa_role(id, "adversarial_tester");
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("adversarial_tester"),
        "{}",
        text(&o.stderr)
    );
    precheck(&p, id);

    // Scores are the precheck's, never the caller's.
    let o = p.factory(&[
        "finalize",
        "--id",
        "1",
        "--verdict",
        "keep",
        "--score-after",
        "1.0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--score-before"),
        "{}",
        text(&o.stderr)
    );

    let o = keep(&p, id);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "experiment 1: keep (delta +0.2)\n");
    assert!(!p.worktree(id).exists());
    assert_eq!(p.branch_tip(id), Some(second), "the kept branch stays");
    assert_eq!(
        p.repo().head().unwrap().name().ok(),
        Some("refs/heads/main")
    );
    let rows = p.results_rows();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert!(row.contains(&"keep".to_owned()), "{row:?}");
    assert!(
        row.contains(&"0.7".to_owned()) && row.contains(&"0.9".to_owned()),
        "{row:?}"
    );

    // Finalizing again (a resumed run) changes nothing; another verdict is refused.
    let o = keep(&p, id);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(p.results_rows().len(), 1);
    let o = p.factory(&["finalize", "--id", "1", "--verdict", "revert"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("already finalized"));
    assert_eq!(p.branch_tip(id), Some(second));
    // A finalized experiment has nothing left to measure.
    let o = p.factory(&["eval", "--exp", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("already finalized"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_failed_precheck_cannot_be_kept_and_revert_removes_branch_and_worktree() {
    let p = project();
    p.factory(&["eval"]);
    let id = begin(&p, "lower the score");
    build(&p, id, "0.6");
    p.qa_done(id);
    let o = p.factory(&["precheck", "--exp", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("score_direction"),
        "{}",
        text(&o.stderr)
    );

    for _ in 0..2 {
        let o = p.factory(&["finalize", "--id", "1", "--verdict", "revert"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    assert!(!p.worktree(id).exists());
    assert_eq!(p.branch_tip(id), None);
    assert_eq!(p.results_rows().len(), 1);
    assert!(
        p.path()
            .join(".factory/experiments/001/verdict.json")
            .is_file()
    );
    assert!(p.repo().worktrees().unwrap().is_empty());
}

/// Runs `git` in `dir` as an agent in its worktree would, failing the test if it fails.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.invalid")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", text(&o.stderr));
    text(&o.stdout).trim().to_owned()
}

/// On the host, with the agent's full rights and git's own commands: a filter driver
/// and a hooks path in its repository's config, a hook, a replace ref for its commit
/// and a `main` of its own all stay in the experiment's repository. The user's config,
/// hooks, refs and `main` are as they were, and what is measured and kept is the
/// commit the agent made, not its replacement.
#[test]
fn git_state_an_agent_changes_stays_in_its_experiment_repository() {
    let p = project();
    let o = p.factory(&["eval"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let repo = p.repo();
    let config_before = fs::read_to_string(p.path().join(".git/config")).unwrap();
    let main_before = repo.refname_to_id("refs/heads/main").unwrap();
    let id = begin(&p, "raise the score");
    let wt = p.worktree(id);

    let honest = build(&p, id, "0.8");
    let decoy = {
        fs::write(wt.join("src/score.txt"), "0.99\n").unwrap();
        git_in(&wt, &["commit", "-qam", "decoy"]);
        let decoy = git_in(&wt, &["rev-parse", "HEAD"]);
        git_in(&wt, &["reset", "-q", "--hard", &honest.to_string()]);
        decoy
    };
    git_in(&wt, &["replace", &honest.to_string(), &decoy]);
    git_in(&wt, &["branch", "-f", "main", &decoy]);
    git_in(&wt, &["config", "filter.evil.smudge", "sed s/0.8/0.1/"]);
    git_in(&wt, &["config", "core.hooksPath", "/tmp/elsewhere"]);
    fs::write(wt.join(".git/info/attributes"), "* filter=evil\n").unwrap();
    fs::write(wt.join(".git/hooks/post-merge"), "#!/bin/sh\necho owned\n").unwrap();

    p.qa_done(id);
    let record = precheck(&p, id);
    assert_eq!(record["commit"], honest.to_string(), "{record}");
    assert_eq!(
        record["score_after"], 0.8,
        "the honest commit, not the decoy"
    );
    let o = keep(&p, id);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let verdict: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/experiments/001/verdict.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(verdict["commit"], honest.to_string(), "{verdict}");
    assert!(
        text(&o.stderr).contains(&format!(
            "branch factory/exp-001 at {}",
            &honest.to_string()[..10]
        )),
        "{}",
        text(&o.stderr)
    );

    assert_eq!(
        fs::read_to_string(p.path().join(".git/config")).unwrap(),
        config_before
    );
    assert!(!p.path().join(".git/hooks/post-merge").exists());
    assert!(!p.path().join(".git/info/attributes").exists());
    assert!(
        repo.references_glob("refs/replace/*")
            .unwrap()
            .next()
            .is_none(),
        "no replace ref in the user's repository"
    );
    assert_eq!(repo.refname_to_id("refs/heads/main").unwrap(), main_before);
    assert_eq!(p.branch_tip(id), Some(honest));
    // What the user's own git shows of the kept branch is the honest change.
    assert_eq!(
        git_in(p.path(), &["show", "factory/exp-001:src/score.txt"]),
        "0.8"
    );
}

/// A branch moved after its keep (by anything left running on the host) is named in
/// what factory prints, and `factory pr` pushes the commit the keep measured, never
/// the moved tip.
#[test]
fn a_kept_branch_moved_after_the_keep_is_reported_and_only_the_kept_commit_is_pushed() {
    let p = project();
    let o = p.factory(&["eval"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = begin(&p, "raise the score");
    let kept = build(&p, id, "0.8");
    p.qa_done(id);
    precheck(&p, id);
    let o = keep(&p, id);
    assert!(o.status.success(), "{}", text(&o.stderr));

    // After the keep, something moves the branch to a commit nobody measured.
    let repo = p.repo();
    let parent = repo.find_commit(kept).unwrap();
    let tree = parent.tree().unwrap();
    let sig = git2::Signature::now("late", "late@example.invalid").unwrap();
    let late = repo
        .commit(None, &sig, &sig, "unmeasured", &tree, &[&parent])
        .unwrap();
    repo.reference("refs/heads/factory/exp-001", late, true, "t")
        .unwrap();

    let origin = tempfile::tempdir().unwrap();
    Repository::init_bare(origin.path()).unwrap();
    repo.remote("origin", origin.path().to_str().unwrap())
        .unwrap();
    let bin = tempfile::tempdir().unwrap();
    let gh = bin.path().join("gh");
    fs::write(
        &gh,
        "#!/bin/sh\n[ \"$1\" = pr ] && echo https://example.invalid/pull/1\nexit 0\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&gh, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let o = p.factory_with(&["pr", "--id", "1"], &[("PATH", &path)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("moved to") && err.contains(&kept.to_string()),
        "{err}"
    );
    let pushed = Repository::open(origin.path())
        .unwrap()
        .refname_to_id("refs/heads/factory/exp-001")
        .unwrap();
    assert_eq!(pushed, kept, "the measured commit, not {late}");
}

/// The base an experiment is measured against is the one `factory begin` chained: an
/// `experiment.json` rewritten to another base (so that a regression would look like
/// no change) makes the precheck an error, and nothing is measured or kept.
#[test]
fn a_rewritten_base_commit_in_experiment_json_is_refused() {
    let p = project();
    let o = p.factory(&["eval"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = begin(&p, "lower the score");
    let head = build(&p, id, "0.6");
    p.qa_done(id);
    let file = p.path().join(".factory/experiments/001/experiment.json");
    let mut info: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let chained = info["workspace"]["base_commit"]
        .as_str()
        .unwrap()
        .to_owned();
    info["workspace"]["base_commit"] = Value::from(head.to_string());
    fs::write(&file, serde_json::to_string_pretty(&info).unwrap()).unwrap();

    let o = p.factory(&["precheck", "--exp", "1"]);
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("is not the base its begin chained") && err.contains(&chained),
        "{err}"
    );
    assert!(
        !p.path()
            .join(".factory/experiments/001/precheck.json")
            .exists(),
        "nothing was measured"
    );
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}
