//! `factory skills export|check` and `factory compile --emit skill`, run as a user runs
//! them: export, check clean, edit a node's text, check again and see the diff.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("the factory binary is built");
    cmd.current_dir(cwd);
    cmd
}

const REVIEW: &str = "//! Review: build a change and let the CEO decide whether it is good enough.
workflow review_change {
    /// Implements the current plan.
    agent builder {
        role: builder
        task: \"Implement the plan for {{exp_id}}.\"
        writes: \".factory/build/notes.md\"
        check: exists
    }
    gate review by agent(ceo) \"Is the change scoped, tested and good?\"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max 2) -> builder
        review.halt -> end
    }
}
";

const NIGHTLY: &str = "//! Nightly: run the benchmarks.
headless workflow nightly {
    fn bench \"cargo bench\"
    flow { start -> bench -> end }
}
";

/// A project with a workflows directory of two modes and a library file.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("wf");
    fs::create_dir(&wf).unwrap();
    fs::write(wf.join("review.fwf"), REVIEW).unwrap();
    fs::write(wf.join("nightly.fwf"), NIGHTLY).unwrap();
    fs::write(
        wf.join("lib.fwf"),
        "subgraph noop() {\n    fn x \"true\"\n    flow { start -> x -> end }\n}\n",
    )
    .unwrap();
    dir
}

#[test]
fn export_then_check_passes_and_an_edited_node_fails_the_check_with_a_diff() {
    let dir = project();
    let root = dir.path();
    factory(root)
        .args(["skills", "export", "--workflows", "wf", "--out", "out"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "out/workflow-review-change/SKILL.md",
        ));
    let skill = fs::read_to_string(root.join("out/workflow-review-change/SKILL.md")).unwrap();
    assert!(skill.starts_with("---\nname: workflow-review-change\n"));
    assert!(skill.contains("factory agent builder --node builder --writes .factory/build/notes.md --task \"Implement the plan for {{exp_id}}.\""));
    assert!(
        root.join("out/workflow-review-change/SKILL.annotations.yaml")
            .is_file()
    );
    assert!(root.join("out/workflow-nightly/SKILL.md").is_file());
    assert!(
        !root.join("out/workflow-noop").exists(),
        "libraries have no skill"
    );

    factory(root)
        .args(["skills", "check", "--workflows", "wf", "--dir", "out"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("2 skill(s) in out match"));

    // Edit a node's text: the check fails and shows the old and the new line.
    let edited = REVIEW.replace("Implement the plan for", "Carefully implement the plan for");
    fs::write(root.join("wf/review.fwf"), edited).unwrap();
    factory(root)
        .args(["skills", "check", "--workflows", "wf", "--dir", "out"])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("out/workflow-review-change/SKILL.md (on disk)")
                .and(predicate::str::contains(
                    "-factory agent builder --node builder --writes .factory/build/notes.md --task \"Implement the plan for {{exp_id}}.\"",
                ))
                .and(predicate::str::contains(
                    "+factory agent builder --node builder --writes .factory/build/notes.md --task \"Carefully implement the plan for {{exp_id}}.\"",
                )),
        )
        .stderr(predicate::str::contains(
            "run `factory skills export --workflows wf --out out`",
        ));

    // Exporting again brings the skills back in line.
    factory(root)
        .args(["skills", "export", "--workflows", "wf", "--out", "out"])
        .assert()
        .success();
    factory(root)
        .args(["skills", "check", "--workflows", "wf", "--dir", "out"])
        .assert()
        .code(0);
}

#[test]
fn check_names_missing_and_extra_skills_and_export_prunes_only_generated_ones() {
    let dir = project();
    let root = dir.path();
    factory(root)
        .args(["skills", "export", "--workflows", "wf", "--out", "out"])
        .assert()
        .success();
    // A hand-written skill beside them is not ours and is left alone.
    fs::create_dir_all(root.join("out/workflow-mine")).unwrap();
    fs::write(
        root.join("out/workflow-mine/SKILL.md"),
        "---\nname: workflow-mine\n---\n",
    )
    .unwrap();

    fs::remove_file(root.join("wf/nightly.fwf")).unwrap();
    fs::remove_file(root.join("out/workflow-review-change/SKILL.annotations.yaml")).unwrap();
    factory(root)
        .args(["skills", "check", "--workflows", "wf", "--dir", "out"])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("missing: out/workflow-review-change/SKILL.annotations.yaml")
                .and(predicate::str::contains("extra: out/workflow-nightly"))
                .and(predicate::str::contains("workflow-mine").not()),
        );

    factory(root)
        .args(["skills", "export", "--workflows", "wf", "--out", "out"])
        .assert()
        .success()
        .stdout(predicate::str::contains("removed out/workflow-nightly"));
    assert!(!root.join("out/workflow-nightly").exists());
    assert!(root.join("out/workflow-mine/SKILL.md").is_file());
    factory(root)
        .args(["skills", "check", "--workflows", "wf", "--dir", "out"])
        .assert()
        .code(0);
}

#[test]
fn a_workflow_with_errors_writes_nothing_and_names_the_problem() {
    let dir = project();
    let root = dir.path();
    let broken = REVIEW.replace(
        "review.reloop(max 2) -> builder",
        "review.reloop -> builder",
    );
    fs::write(root.join("wf/review.fwf"), broken).unwrap();
    factory(root)
        .args(["skills", "export", "--workflows", "wf", "--out", "out"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("FWF018")
                .and(predicate::str::contains("1 workflow(s) do not compile")),
        );
    assert!(!root.join("out").exists(), "nothing is written");
    factory(root)
        .args([
            "skills",
            "check",
            "--workflows",
            "missing-dir",
            "--dir",
            "out",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read the workflows directory missing-dir",
        ));
}

#[test]
fn export_defaults_to_the_modes_and_claude_skills_of_the_project() {
    let dir = project();
    let root = dir.path();
    fs::create_dir_all(root.join(".factory/workflows")).unwrap();
    fs::write(root.join(".factory/workflows/nightly.fwf"), NIGHTLY).unwrap();
    factory(root).args(["skills", "export"]).assert().success();
    assert!(
        root.join(".claude/skills/workflow-nightly/SKILL.md")
            .is_file()
    );
    let annotations =
        fs::read_to_string(root.join(".claude/skills/workflow-nightly/SKILL.annotations.yaml"))
            .unwrap();
    assert!(
        annotations.contains("file: .factory/workflows/nightly.fwf"),
        "{annotations}"
    );
    factory(root).args(["skills", "check"]).assert().code(0);
}

#[test]
fn compile_emit_skill_writes_the_skill_directory() {
    let dir = project();
    let root = dir.path();
    factory(root)
        .args([
            "compile",
            "wf/review.fwf",
            "--emit",
            "skill",
            "-o",
            "skills",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "skills/workflow-review-change/SKILL.md",
        ));
    let skill = fs::read_to_string(root.join("skills/workflow-review-change/SKILL.md")).unwrap();
    assert!(skill.contains("### Step 2: `review` — review checkpoint"));
    assert!(skill.contains("at most 2 times; after that, treat a reloop verdict as halt"));
    let annotations =
        fs::read_to_string(root.join("skills/workflow-review-change/SKILL.annotations.yaml"))
            .unwrap();
    assert!(annotations.contains("file: wf/review.fwf"));
    // Without -o, the current directory.
    factory(root)
        .args(["compile", "wf/nightly.fwf", "--emit", "skill"])
        .assert()
        .success();
    assert!(root.join("workflow-nightly/SKILL.md").is_file());
}

#[test]
fn every_skills_command_help_shows_an_example() {
    let root = std::env::temp_dir();
    for args in [
        vec!["skills", "--help"],
        vec!["skills", "export", "--help"],
        vec!["skills", "check", "--help"],
        vec!["compile", "--help"],
    ] {
        factory(&root)
            .args(&args)
            .assert()
            .success()
            .stdout(predicate::str::contains("Example").and(predicate::str::contains("factory ")));
    }
    factory(&root)
        .args(["compile", "--help"])
        .assert()
        .stdout(predicate::str::contains("--emit skill"));
}

#[test]
fn the_built_in_modes_export_and_check_clean() {
    // The repository's own modes, as the acceptance test runs them.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_string_lossy().into_owned();
    factory(repo)
        .args([
            "skills",
            "export",
            "--workflows",
            "workflows",
            "--out",
            &out_dir,
        ])
        .assert()
        .success();
    factory(repo)
        .args([
            "skills",
            "check",
            "--workflows",
            "workflows",
            "--dir",
            &out_dir,
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("match their sources"));
    let modes = fs::read_dir(repo.join("workflows"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "fwf"))
        .count();
    let skills = fs::read_dir(out.path()).unwrap().count();
    assert_eq!(skills, modes, "one skill per mode");
}
