//! `factory ace` as a user runs it: a revert's note becomes a builder bullet that the
//! next resolved builder prompt carries, through reflect and curate, with FACTORY_HOME
//! in a temp dir and real experiments recorded by `factory begin`/`finalize`.

use std::fs;

use crate::support::{Project, text};

/// Records one experiment with `verdict` and `notes` in `p`.
fn experiment(p: &Project, hypothesis: &str, verdict: &str, notes: &str) {
    let begun = p.factory(&["begin", "--hypothesis", hypothesis]);
    assert!(begun.status.success(), "{}", text(&begun.stderr));
    let id = text(&begun.stdout).trim().to_string();
    let done = p.factory(&[
        "finalize",
        "--id",
        &id,
        "--verdict",
        verdict,
        "--notes",
        notes,
    ]);
    assert!(done.status.success(), "{}", text(&done.stderr));
}

/// What the builder agent is given: the exec runner prints its prompt file.
fn builder_prompt(p: &Project) -> String {
    let out = p.factory(&[
        "agent",
        "builder",
        "--runner",
        "exec",
        "--agent-cmd",
        "cat {prompt_file}",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

const BULLET: &str = "Don't change files outside the scope (README.md)";

#[test]
fn a_bullet_learned_from_a_revert_appears_in_the_next_builder_prompt() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    experiment(
        &p,
        "explore a cache",
        "revert",
        "scope violation: README.md",
    );
    assert!(!builder_prompt(&p).contains(BULLET), "nothing learned yet");

    let reflect = p.factory(&["ace", "reflect"]);
    assert!(reflect.status.success(), "{}", text(&reflect.stderr));
    let out = text(&reflect.stdout);
    assert!(out.contains("reflected over 1 project"), "{out}");
    assert!(
        out.contains(&format!("DON'T helpful=1 harmful=0 :: {BULLET}")),
        "{out}"
    );

    let curate = p.factory(&["ace", "curate"]);
    assert!(curate.status.success(), "{}", text(&curate.stderr));
    assert!(
        text(&curate.stdout).contains("builder: "),
        "{}",
        text(&curate.stdout)
    );
    let file = p.home().join("playbooks/builder.md");
    assert!(fs::read_to_string(&file).unwrap().contains(BULLET));

    let prompt = builder_prompt(&p);
    let default = prompt
        .find("## Playbook: builder")
        .expect("the default playbook");
    let learned = prompt
        .find("## Learned playbook: builder")
        .expect("the learned playbook");
    let bullet = prompt.find(BULLET).expect("the learned bullet");
    assert!(default < learned && learned < bullet, "{prompt}");
    assert!(bullet < prompt.find("## Task").unwrap(), "{prompt}");

    let show = p.factory(&["ace", "show", "builder"]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let out = text(&show.stdout);
    assert!(
        out.contains("default: built-in prompts/playbooks/builder.md"),
        "{out}"
    );
    assert!(
        out.contains(&format!("learned: {} (1 bullet)", file.display())),
        "{out}"
    );
    assert!(out.contains(BULLET), "{out}");
}

#[test]
fn curate_reports_merges_and_a_broken_playbook_is_an_error_left_untouched() {
    let target = tempfile::tempdir().unwrap();
    let a = Project::committed(target.path());
    let b = Project::committed(target.path());
    experiment(
        &a,
        "explore a cache",
        "revert",
        "scope violation: README.md",
    );
    experiment(&b, "explore a queue", "revert", "scope violation: NOTES.md");
    let dry = a.factory(&[
        "ace",
        "reflect",
        "--dry-run",
        "--project",
        b.path().to_str().unwrap(),
    ]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(
        text(&dry.stdout).contains("dry run"),
        "{}",
        text(&dry.stdout)
    );
    assert!(!a.home().join("ace/candidates.json").exists());
    let reflect = a.factory(&["ace", "reflect", "--project", b.path().to_str().unwrap()]);
    assert!(text(&reflect.stdout).contains("reflected over 2 projects"));

    let curate = a.factory(&["ace", "curate", "--dry-run"]);
    let out = text(&curate.stdout);
    assert!(
        out.contains("merged") && out.contains("(NOTES.md)"),
        "{out}"
    );
    assert!(out.contains("dry run, not written"), "{out}");
    assert!(!a.home().join("playbooks/builder.md").exists());

    let file = a.home().join("playbooks/builder.md");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let broken = "## Playbook: builder\n\n### DO\nremember this\n";
    fs::write(&file, broken).unwrap();
    let curate = a.factory(&["ace", "curate"]);
    assert_eq!(curate.status.code(), Some(1));
    let err = text(&curate.stderr);
    assert!(err.contains(&format!("{}:4:", file.display())), "{err}");
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        broken,
        "never overwritten"
    );

    let agent = a.factory(&[
        "agent",
        "builder",
        "--runner",
        "exec",
        "--agent-cmd",
        "true",
    ]);
    assert!(!agent.status.success());
    assert!(text(&agent.stderr).contains(&format!("{}:4:", file.display())));

    let unknown = a.factory(&["ace", "show", "nobody"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("known roles"));
}
