//! `factory demo`: the README's first command, end to end, twice.

use std::fs;

use assert_cmd::Command;

fn demo(
    dir: &std::path::Path,
    target: &std::path::Path,
    home: &std::path::Path,
) -> (String, Vec<String>) {
    demo_mode(dir, target, home, "improve")
}

fn demo_mode(
    dir: &std::path::Path,
    target: &std::path::Path,
    home: &std::path::Path,
    mode: &str,
) -> (String, Vec<String>) {
    demo_placed(dir, target, home, mode, "host")
}

fn demo_placed(
    dir: &std::path::Path,
    target: &std::path::Path,
    home: &std::path::Path,
    mode: &str,
    placement: &str,
) -> (String, Vec<String>) {
    let out = Command::cargo_bin("factory")
        .unwrap()
        .env("CARGO_TARGET_DIR", target)
        .env("FACTORY_HOME", home)
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUN_PLACEMENT")
        .args(["demo", "--mode", mode, "--placement", placement])
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts = fs::read_to_string(dir.join(".factory/results.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(2).unwrap_or("").to_string())
        .collect();
    (text, verdicts)
}

#[test]
fn the_demo_keeps_a_real_improvement_and_does_so_every_time() {
    let (target, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (text_a, verdicts_a) = demo(a.path(), target.path(), home.path());
    let (_, verdicts_b) = demo(b.path(), target.path(), home.path());
    assert_eq!(verdicts_a, ["keep"], "{text_a}");
    assert_eq!(verdicts_a, verdicts_b, "the same verdicts on a second run");
    assert!(text_a.contains("experiment 1: keep, score"), "{text_a}");
    assert!(text_a.contains("branch factory/exp-001"), "{text_a}");
    // The whole improve mode ran: study, research, plan, experiment, archive.
    for file in [
        "strategy/observations.md",
        "strategy/study-combined.md",
        "graph.json",
        "archive/experiment.md",
        "experiments/001/precheck.json",
    ] {
        assert!(a.path().join(".factory").join(file).exists(), "{file}");
    }
    let repo = git2::Repository::open(a.path()).unwrap();
    let kept = repo
        .find_branch("factory/exp-001", git2::BranchType::Local)
        .unwrap();
    let lib = kept
        .get()
        .peel_to_tree()
        .unwrap()
        .get_path(std::path::Path::new("src/lib.rs"))
        .unwrap();
    let blob = repo.find_blob(lib.id()).unwrap();
    assert!(
        String::from_utf8_lossy(blob.content()).contains("HashMap"),
        "the kept branch holds the change"
    );
    // The user's main branch still has the original code.
    let main = fs::read_to_string(a.path().join("src/lib.rs")).unwrap();
    assert!(!main.contains("HashMap"));
}

#[test]
fn the_demo_refuses_a_directory_that_is_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("mine.txt"), "keep me").unwrap();
    let out = Command::cargo_bin("factory")
        .unwrap()
        .arg("demo")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));
    assert_eq!(
        fs::read_to_string(dir.path().join("mine.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn the_parallel_demo_keeps_the_best_of_three_different_changes() {
    let (target, home, dir) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (text, verdicts) = demo_mode(dir.path(), target.path(), home.path(), "parallel-improve");
    let mut sorted = verdicts.clone();
    sorted.sort();
    assert_eq!(sorted, ["keep", "revert", "superseded"], "{text}");
    // The table names each branch with its verdict and the kept branch.
    assert!(text.contains("← kept on factory/exp-001"), "{text}");
    // The API test passes on the base's code too: it proves nothing about a change and
    // is no growth, so the unformatted branch scores below the base and is reverted;
    // the doc comment holds every base test and is a neutral pass, superseded.
    assert!(text.contains("revert     0.7500 → 0.6875"), "{text}");
    assert!(text.contains("superseded 0.7500"), "{text}");
    // Three different real changes, one per branch.
    let repo = git2::Repository::open(dir.path()).unwrap();
    let kept = repo
        .revparse_single("factory/exp-001")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(
        kept.summary().ok().flatten(),
        Some("Count words with a HashMap in most_frequent")
    );
    let doc = repo
        .revparse_single("factory/exp-003")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(
        doc.summary().ok().flatten(),
        Some("Document the tie rule of most_frequent")
    );
    assert!(
        repo.find_branch("factory/exp-002", git2::BranchType::Local)
            .is_err(),
        "a reverted branch is deleted"
    );
    assert!(
        repo.find_branch("factory/exp-003", git2::BranchType::Local)
            .is_ok(),
        "a superseded branch is left"
    );
}

/// Both demos keep under `--placement sandbox`, and every precheck's record says its
/// commands ran in the sandbox (the parallel mode's in-process re-check on main's tip
/// included).
#[test]
fn both_demos_keep_in_the_sandbox_and_their_gates_ran_there() {
    for (mode, expected) in [
        ("improve", vec!["keep"]),
        ("parallel-improve", vec!["revert", "superseded", "keep"]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let target = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let demo_dir = dir.path().join("demo");
        let (text, verdicts) = demo_placed(&demo_dir, target.path(), home.path(), mode, "sandbox");
        assert_eq!(verdicts, expected, "{mode}: {text}");
        let experiments = fs::read_dir(demo_dir.join(".factory/experiments")).unwrap();
        for exp in experiments.flatten() {
            let record = fs::read_to_string(exp.path().join("precheck.json")).unwrap();
            let record: serde_json::Value = serde_json::from_str(&record).unwrap();
            let placement = record["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "placement")
                .and_then(|c| c["details"][0].as_str())
                .unwrap_or_default()
                .to_string();
            assert!(
                placement.starts_with("sandbox:"),
                "{mode} {}: {placement}",
                exp.path().display()
            );
        }
    }
}
