//! Reflection and curation on disk: crafted `results.tsv` and `events.jsonl` in temp
//! projects, a temp per-user directory.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::events::{AgentEnded, Event, EventData};
use crate::store::{ExperimentRecord, Verdict, tsv};

fn record(id: u32, verdict: Verdict, notes: &str) -> ExperimentRecord {
    ExperimentRecord::sample(id, verdict, "", notes)
}

fn project(root: &Path, name: &str, rows: &[ExperimentRecord], events: &[Event]) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(dir.join(".factory")).unwrap();
    let mut text = tsv::header();
    for r in rows {
        text.push_str(&tsv::encode(r));
    }
    fs::write(dir.join(".factory/results.tsv"), text).unwrap();
    let lines: String = events
        .iter()
        .map(|e| format!("{}\n", serde_json::to_string(e).unwrap()))
        .collect();
    fs::write(dir.join(".factory/events.jsonl"), lines).unwrap();
    // What `factory finalize` chains for each row: a row without it is not a verdict.
    let paths = crate::project::layout::FactoryPaths::new(&dir);
    for r in rows {
        let finalize = EventData::ExperimentFinalize {
            exp_id: r.id,
            verdict: r.verdict.as_str().to_owned(),
            delta: r.delta,
            commit: None,
        };
        crate::events::append(&paths, &Event::new(finalize)).unwrap();
    }
    dir
}

fn timeout(role: &str, id: &str) -> Event {
    Event::new(EventData::AgentTimeout(AgentEnded {
        invocation_id: id.into(),
        role: role.into(),
        ..AgentEnded::default()
    }))
}

#[test]
fn reflect_reads_registered_and_given_projects_and_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let a = project(
        tmp.path(),
        "a",
        &[
            record(1, Verdict::Revert, "scope violation: README.md"),
            record(2, Verdict::Keep, "tests added"),
        ],
        &[timeout("researcher", "i1"), timeout("researcher", "i2")],
    );
    let b = project(
        tmp.path(),
        "b",
        &[record(
            1,
            Verdict::Quarantined,
            "quarantined: merge conflict in src/x.rs",
        )],
        &[],
    );
    registry::register_project(&home, &a).unwrap();
    registry::register_project(&home, &tmp.path().join("gone")).unwrap();

    let dry = run_reflect(&home, std::slice::from_ref(&b), true).unwrap();
    assert!(!dry.written);
    assert!(!candidates_path(&home).exists(), "a dry run writes nothing");
    assert_eq!(dry.missing, vec![tmp.path().join("gone")]);

    let first = run_reflect(&home, &[b.clone(), a.clone()], false).unwrap();
    assert!(first.written);
    let texts: Vec<String> = first
        .file
        .candidates
        .iter()
        .map(|c| format!("{} {} {}/{}", c.role, c.kind, c.helpful, c.harmful))
        .collect();
    assert_eq!(
        texts,
        vec![
            "builder DO 1/0",
            "builder DON'T 1/0",
            "builder DON'T 1/0",
            "researcher DO 2/0"
        ]
    );
    assert_eq!(load_candidates(&home).unwrap(), first.file);
    let bytes = fs::read(candidates_path(&home)).unwrap();
    let again = run_reflect(&home, &[b.clone(), a.clone()], false).unwrap();
    assert!(!again.written, "same inputs, same file");
    assert_eq!(fs::read(candidates_path(&home)).unwrap(), bytes);

    // Unreadable lines are skipped and said, never fatal.
    let mut rows = fs::read_to_string(a.join(".factory/results.tsv")).unwrap();
    rows.push_str("garbage\n");
    fs::write(a.join(".factory/results.tsv"), rows).unwrap();
    let mut log = fs::read_to_string(a.join(".factory/events.jsonl")).unwrap();
    log.push_str("{not json\n");
    fs::write(a.join(".factory/events.jsonl"), log).unwrap();
    let warned = run_reflect(&home, &[b], true).unwrap();
    assert_eq!(warned.file.candidates, first.file.candidates);
    // A torn last line also leaves the log unverifiable: its rows are read as written.
    assert_eq!(warned.warnings.len(), 3, "{:?}", warned.warnings);
    assert!(warned.warnings[0].ends_with("results.tsv:4: unreadable row skipped"));
    assert!(warned.warnings[1].contains("the event log cannot be verified"));
    assert!(warned.warnings[2].contains("events.jsonl: lines 5 are not events"));

    let err = run_reflect(&home, &[tmp.path().join("nope")], false).unwrap_err();
    assert!(matches!(err, AceError::NotADirectory { .. }), "{err}");
}

#[test]
fn curate_writes_the_evolved_playbook_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let rows = [
        record(1, Verdict::Revert, "scope violation: README.md"),
        record(2, Verdict::Revert, "scope violation: docs/a.md"),
        // A DO pattern seen in three failures and no keep: net-negative, removed.
        record(3, Verdict::Revert, "small change, score regressed"),
        record(4, Verdict::Error, "small change"),
        record(5, Verdict::Revert, "small change"),
    ];
    let p = project(tmp.path(), "p", &rows, &[timeout("builder", "i1")]);
    run_reflect(&home, &[p], false).unwrap();

    let dry = run_curate(&home, true).unwrap();
    assert!(dry.iter().all(|r| !r.written));
    assert!(!home.join("playbooks/builder.md").exists());

    let done = run_curate(&home, false).unwrap();
    let builder = done.iter().find(|r| r.role == "builder").unwrap();
    assert!(builder.written);
    assert_eq!(builder.curation.removed.len(), 1);
    assert!(
        builder.curation.removed[0]
            .text
            .starts_with("Keep the change small")
    );
    assert_eq!(
        builder.curation.merged.len(),
        1,
        "the two scope bullets are one"
    );
    let book = playbook::load(&home.join("playbooks/builder.md"))
        .unwrap()
        .unwrap();
    let lines: Vec<String> = book.bullets.iter().map(|b| b.line()).collect();
    // Ids continue after the default playbook's (builder-00010).
    assert_eq!(
        lines,
        vec![
            "[builder-00011] helpful=1 harmful=0 :: Finish within the time limit: split the work into small steps and commit as you go.",
            "[builder-00012] helpful=2 harmful=0 :: Don't change files outside the scope (README.md); check `git diff --name-only` against factory.md's Scope globs before reporting.",
            "[builder-00013] helpful=1 harmful=0 :: Don't finish with a lower composite score; run `factory eval` before reporting and fix what dropped.",
        ]
    );
    let text = fs::read_to_string(home.join("playbooks/builder.md")).unwrap();
    let again = run_curate(&home, false).unwrap();
    assert!(
        again.iter().all(|r| !r.written),
        "nothing new: nothing written"
    );
    assert_eq!(
        fs::read_to_string(home.join("playbooks/builder.md")).unwrap(),
        text
    );
}

#[test]
fn a_broken_playbook_stops_curation_and_is_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let p = project(
        tmp.path(),
        "p",
        &[record(1, Verdict::Revert, "scope violation: x")],
        &[],
    );
    run_reflect(&home, &[p], false).unwrap();
    let path = home.join("playbooks/builder.md");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let broken = "## Playbook: builder\n### DO\n- [builder-00011] helpful=one harmful=0 :: x\n";
    fs::write(&path, broken).unwrap();
    let err = run_curate(&home, false).unwrap_err();
    assert!(
        err.to_string().contains(&format!("{}:3:", path.display())),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), broken);

    fs::remove_file(candidates_path(&home)).unwrap();
    let err = run_curate(&home, false).unwrap_err();
    assert!(matches!(err, AceError::NoCandidates { .. }), "{err}");
    fs::write(candidates_path(&home), "{\n  \"projects\": 3\n}\n").unwrap();
    let err = run_curate(&home, false).unwrap_err();
    assert!(err.to_string().contains("candidates.json:2:"), "{err}");
}
