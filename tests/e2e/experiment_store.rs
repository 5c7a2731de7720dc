//! The store commands as a user runs them: init, detect, begin, finalize, history.
//! Every command gets its own FACTORY_HOME so the real ~/.factory is never touched.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const FACTORY: &str = env!("CARGO_BIN_EXE_factory");

const FACTORY_MD: &str = "\
# Factory
## Goal
Faster parsing.
## Modifiable
- src/**
## Guards
- cargo test
## Command
python eval/score.py
## Threshold
0.6
## Constraints
- no new dependencies
";

fn factory(home: &Path, args: &[&str]) -> Output {
    Command::new(FACTORY)
        .args(args)
        .env("FACTORY_HOME", home)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path()).unwrap();
    dir
}

/// A git repository with one commit: what `begin` needs to branch an experiment from.
fn committed_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    fs::write(dir.path().join(".gitignore"), ".factory/\n").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(".gitignore")).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
    dir
}

fn detect_with_path(project: &Path, path_env: &str, extra: &[&str]) -> Output {
    let mut args = vec!["detect", project.to_str().unwrap()];
    args.extend_from_slice(extra);
    Command::new(FACTORY)
        .args(&args)
        .env("PATH", path_env)
        .output()
        .unwrap()
}

fn write_gh(dir: &Path, body: &str) {
    let gh = dir.join("gh");
    fs::write(&gh, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&gh, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in ["init", "detect", "begin", "finalize", "history"] {
        let o = Command::new(FACTORY)
            .args([cmd, "--help"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{cmd}");
        let text = stdout(&o);
        assert!(
            text.contains("Example"),
            "{cmd} --help lacks an example:\n{text}"
        );
        assert!(text.contains(&format!("factory {cmd}")), "{cmd}: {text}");
    }
}

#[test]
fn detect_reports_each_state_from_real_repositories() {
    let no_gh = "/nonexistent-bin";
    let tmp = tempfile::tempdir().unwrap();
    let plain = detect_with_path(tmp.path(), no_gh, &[]);
    assert_eq!(stdout(&plain), "no_repo\n");
    assert!(plain.status.success());

    let r = repo();
    assert_eq!(
        stdout(&detect_with_path(r.path(), no_gh, &[])),
        "no_factory\n"
    );

    // A gh that reports an open plan issue makes the repo incomplete.
    let bin = tempfile::tempdir().unwrap();
    write_gh(
        bin.path(),
        "case \"$*\" in *'--label plan'*) echo '[{\"number\":1,\"labels\":[{\"name\":\"plan\"}]}]';; *) echo '[]';; esac",
    );
    let o = detect_with_path(r.path(), bin.path().to_str().unwrap(), &["--json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["state"], "incomplete", "{json}");

    fs::create_dir_all(r.path().join(".factory")).unwrap();
    fs::write(
        r.path().join(".factory/eval_profile.json"),
        r#"{"human_reviewed":false}"#,
    )
    .unwrap();
    fs::write(r.path().join(".factory/config.json"), "{}").unwrap();
    assert_eq!(
        stdout(&detect_with_path(r.path(), no_gh, &[])),
        "evals_pending_review\n"
    );
    fs::remove_file(r.path().join(".factory/eval_profile.json")).unwrap();
    assert_eq!(
        stdout(&detect_with_path(r.path(), no_gh, &[])),
        "has_factory\n"
    );
}

#[test]
fn detect_survives_a_hanging_gh() {
    let r = repo();
    let bin = tempfile::tempdir().unwrap();
    write_gh(
        bin.path(),
        "sleep 30\necho '[{\"number\":1,\"labels\":[{\"name\":\"plan\"}]}]'",
    );
    // The fake gh comes first; the system directories provide `sleep`.
    let path_env = format!("{}:/usr/bin:/bin", bin.path().display());
    let start = Instant::now();
    let o = detect_with_path(r.path(), &path_env, &["--json", "--gh-timeout", "1"]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["state"], "no_factory");
    assert_eq!(json["gh"], "timed_out");
}

#[test]
fn init_writes_config_and_names_the_fix_when_factory_md_is_broken() {
    let home = tempfile::tempdir().unwrap();
    let r = repo();
    let p = r.path().to_str().unwrap();
    let o = factory(home.path(), &["init", p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("factory.md") && stderr(&o).contains("factory init"),
        "{}",
        stderr(&o)
    );

    fs::write(
        r.path().join("factory.md"),
        FACTORY_MD.replace("0.6", "lots"),
    )
    .unwrap();
    let o = factory(home.path(), &["init", p]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("factory.md:11") && err.contains("--reparse"),
        "{err}"
    );
    assert!(!r.path().join(".factory").exists());

    fs::write(r.path().join("factory.md"), FACTORY_MD).unwrap();
    let o = factory(home.path(), &["init", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let config: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(r.path().join(".factory/config.json")).unwrap())
            .unwrap();
    assert_eq!(config["eval_command"], "python eval/score.py");
    assert_eq!(config["test_timeout"], 600);
    factory(home.path(), &["init", p, "--reparse"]);
    assert_eq!(
        fs::read_to_string(r.path().join(".gitignore")).unwrap(),
        ".factory/\n"
    );
    assert_eq!(
        stdout(&detect_with_path(r.path(), "/nonexistent", &[])),
        "has_factory\n"
    );
}

#[test]
fn begin_finalize_history_round_trip() {
    let home = tempfile::tempdir().unwrap();
    let proj = committed_repo();
    let p = proj.path().to_str().unwrap();
    let mut ids = Vec::new();
    for i in 0..12 {
        let o = factory(
            home.path(),
            &["begin", p, "--hypothesis", &format!("idea {i}")],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let id = stdout(&o).trim().to_owned();
        // A keep needs a precheck (tests/e2e/experiment_isolation.rs); scores given as
        // arguments are recorded for the other verdicts.
        let verdict = if i % 2 == 0 { "error" } else { "revert" };
        let o = factory(
            home.path(),
            &[
                "finalize",
                p,
                "--id",
                &id,
                "--verdict",
                verdict,
                "--score-before",
                "0.1",
                "--score-after",
                "0.3",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("delta +0.2"), "{}", stdout(&o));
        ids.push(id);
    }
    assert_eq!(ids.first().map(String::as_str), Some("1"));
    assert_eq!(ids.last().map(String::as_str), Some("12"));
    let o = factory(home.path(), &["history", p]);
    let text = stdout(&o);
    assert!(
        text.contains("#012 revert") && text.contains("hypothesis: idea 11"),
        "{text}"
    );
    assert!(
        text.contains("Earlier experiments:") && text.contains("#003"),
        "{text}"
    );
    assert!(
        text.contains("2 experiments (#001-#002): 0 keep, 1 revert, 1 error"),
        "{text}"
    );

    let json: serde_json::Value =
        serde_json::from_slice(&factory(home.path(), &["history", p, "--json"]).stdout).unwrap();
    assert_eq!(json["records"].as_array().unwrap().len(), 12);

    // Errors exit 1 with the remedy; nothing is appended.
    let o = factory(
        home.path(),
        &["finalize", p, "--id", "3", "--verdict", "keep"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("already finalized"));
    let o = factory(
        home.path(),
        &["finalize", p, "--id", "99", "--verdict", "keep"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("factory begin"));
    let o = factory(home.path(), &["begin", p, "--hypothesis", "  "]);
    assert_eq!(o.status.code(), Some(2));
    let rows = fs::read_to_string(proj.path().join(".factory/results.tsv")).unwrap();
    assert_eq!(rows.lines().count(), 13);

    // A mistyped PATH is an error, and nothing is created there.
    let typo = proj.path().join("typo");
    let t = typo.to_str().unwrap();
    for args in [
        vec!["begin", t, "--hypothesis", "x"],
        vec!["history", t],
        vec!["init", t],
    ] {
        let o = factory(home.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    }
    assert!(!typo.exists());
}

#[test]
fn parallel_losers_name_their_winner_and_a_quarantined_branch_is_left_to_look_at() {
    let home = tempfile::tempdir().unwrap();
    let proj = committed_repo();
    let p = proj.path().to_str().unwrap();
    // Three parallel branches begun together: 1 wins, 2 is quarantined, 3 loses.
    for h in ["one", "two", "three"] {
        let o = factory(home.path(), &["begin", p, "--hypothesis", h]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let finalize = |extra: &[&str]| {
        let mut args = vec!["finalize", p];
        args.extend_from_slice(extra);
        factory(home.path(), &args)
    };
    // Without a successor, the newest cannot be superseded; a bad successor is named.
    for (extra, why) in [
        (
            &["--id", "3", "--verdict", "superseded"][..],
            "no later experiment exists",
        ),
        (
            &[
                "--id",
                "3",
                "--verdict",
                "superseded",
                "--superseded-by",
                "3",
            ],
            "cannot supersede itself",
        ),
        (
            &[
                "--id",
                "3",
                "--verdict",
                "superseded",
                "--superseded-by",
                "7",
            ],
            "experiment 7 was never begun",
        ),
        (
            &["--id", "3", "--verdict", "revert", "--superseded-by", "1"],
            "only a `superseded` verdict",
        ),
    ] {
        let o = finalize(extra);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
        // miette wraps long messages; compare words.
        let err = stderr(&o).replace('│', " ");
        let err = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(err.contains(why), "{extra:?}: {err}");
    }
    let o = finalize(&[
        "--id",
        "3",
        "--verdict",
        "superseded",
        "--superseded-by",
        "1",
        "--notes",
        "scored 0.55",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let record: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(record["verdict"], "superseded");
    assert_eq!(record["notes"], "superseded by exp 1; scored 0.55");

    let o = finalize(&[
        "--id",
        "2",
        "--verdict",
        "quarantined",
        "--notes",
        "conflicts with the tip in src/lib.rs",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "experiment 2: quarantined");
    // Like superseded: the worktree is gone, the branch is left to look at.
    let repo = git2::Repository::open(proj.path()).unwrap();
    let branch = |id: u32| {
        repo.find_branch(&format!("factory/exp-{id:03}"), git2::BranchType::Local)
            .is_ok()
    };
    assert!(branch(2) && branch(3));
    let left: Vec<_> = fs::read_dir(proj.path().join(".factory/worktrees"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        ["exp-001"],
        "only the unfinished experiment 1 keeps one"
    );
    let o = factory(home.path(), &["history", p]);
    assert!(
        stdout(&o).contains("#002 quarantined") && stdout(&o).contains("#003 superseded"),
        "{}",
        stdout(&o)
    );
    let rows = fs::read_to_string(proj.path().join(".factory/results.tsv")).unwrap();
    assert_eq!(
        rows.lines().count(),
        3,
        "header and two rows: refusals append nothing"
    );
}

#[test]
fn eight_processes_of_25_cycles_get_200_distinct_ids_and_intact_rows() {
    let home = tempfile::tempdir().unwrap();
    let proj = committed_repo();
    let p = proj.path().to_str().unwrap().to_owned();
    // Each worker is one shell process looping over the real binary, so eight
    // independent processes contend for the store lock at all times.
    let script = r#"
        w=$1; f=$2; p=$3
        for i in $(seq 1 25); do
            id=$("$f" begin "$p" --hypothesis "worker $w cycle $i	with a tab") || exit 1
            "$f" finalize "$p" --id "$id" --verdict revert --score-before 0.$w --score-after 0.$i \
                --notes "w$w i$i" >/dev/null || exit 1
        done
    "#;
    // Their stderr (a branch line and a note per `begin`) is captured, not inherited:
    // 200 notes would bury `cargo test`'s summary. It is shown only when a worker fails.
    let children: Vec<_> = (1..=8)
        .map(|w| {
            Command::new("sh")
                .args(["-c", script, "sh", &w.to_string(), FACTORY, &p])
                .env("FACTORY_HOME", home.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "a worker failed:\n{}", stderr(&out));
    }
    let text = fs::read_to_string(proj.path().join(".factory/results.tsv")).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("id\t"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 200);
    assert!(rows.iter().all(|r| r.len() == 13), "a torn row");
    let ids: BTreeSet<u32> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(ids, (1..=200).collect::<BTreeSet<u32>>());
    let hyps: BTreeSet<&str> = rows.iter().map(|r| r[6]).collect();
    assert_eq!(hyps.len(), 200);
    let json: serde_json::Value =
        serde_json::from_slice(&factory(home.path(), &["history", &p, "--json"]).stdout).unwrap();
    assert_eq!(json["records"].as_array().unwrap().len(), 200);
    assert!(json["pending"].as_array().unwrap().is_empty());
    let registry: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(home.path().join("registry.json")).unwrap())
            .unwrap();
    assert_eq!(registry["projects"][0]["experiment_count"], 200);
}

#[test]
fn corrupt_files_and_a_broken_symlink_never_stop_the_store() {
    let home = tempfile::tempdir().unwrap();
    let proj = committed_repo();
    let p = proj.path().to_str().unwrap();
    // A dangling .factory symlink is replaced, not followed.
    std::os::unix::fs::symlink(proj.path().join("elsewhere"), proj.path().join(".factory"))
        .unwrap();
    let o = factory(home.path(), &["begin", p, "--hypothesis", "first"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!proj.path().join("elsewhere").exists());
    assert!(
        proj.path()
            .join(".factory/experiments/001/hypothesis.md")
            .is_file()
    );
    factory(
        home.path(),
        &["finalize", p, "--id", "1", "--verdict", "revert"],
    );

    let f = proj.path().join(".factory");
    fs::OpenOptions::new()
        .append(true)
        .open(f.join("events.jsonl"))
        .and_then(|mut file| std::io::Write::write_all(&mut file, b"{\"type\": \"torn\n"))
        .unwrap();
    fs::OpenOptions::new()
        .append(true)
        .open(f.join("results.tsv"))
        .and_then(|mut file| std::io::Write::write_all(&mut file, b"garbage row"))
        .unwrap();
    fs::write(home.path().join("registry.json"), "not json").unwrap();

    let o = factory(home.path(), &["begin", p, "--hypothesis", "second"]);
    assert_eq!(stdout(&o), "2\n", "{}", stderr(&o));
    let o = factory(
        home.path(),
        &["finalize", p, "--id", "2", "--verdict", "error"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = factory(home.path(), &["history", p]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("warning") && stderr(&o).contains("results.tsv"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("#002 error") && stdout(&o).contains("#001 revert"),
        "{}",
        stdout(&o)
    );
    // The corrupt registry was set aside, not lost.
    let kept = fs::read_dir(home.path())
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("registry.json.corrupt-")
        });
    assert!(kept);
}
