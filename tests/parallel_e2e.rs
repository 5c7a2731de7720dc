//! Parallel improve end to end: the built binary runs `workflows/parallel-improve.fwf`
//! with the replay runner on a small project of three counter files (eval.sh sums
//! them), in real git repositories in temp dirs. Each hypothesis raises a different
//! counter, so the branches make different real changes with different scores.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use factory_runtime::events::{Event, EventData};
use git2::Repository;
use serde_json::Value;
use support::{Project, script_from, text};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parallel");
const MODE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/workflows/parallel-improve.fwf");

struct Setup {
    p: Project,
    _target: tempfile::TempDir,
}

fn project() -> Setup {
    let target = tempfile::tempdir().unwrap();
    let p = Project::fixture(&Path::new(FIXTURE).join("project"), target.path());
    Setup { p, _target: target }
}

fn script(overrides: &[(&str, &str)]) -> String {
    script_from(&Path::new(FIXTURE).join("replay.yaml"), overrides)
}

fn write_script(p: &Project, script: &str) -> PathBuf {
    let path = p.path().join(".factory/script.yaml");
    fs::write(&path, script).unwrap();
    path
}

fn run(p: &Project, script: &str) -> Output {
    let path = write_script(p, script);
    p.factory(&[
        "run",
        MODE,
        "--runner",
        "replay",
        "--script",
        path.to_str().unwrap(),
    ])
}

fn output(o: &Output) -> String {
    format!("{}\n{}", text(&o.stdout), text(&o.stderr))
}

/// The verdict of each experiment, by the hypothesis it tested.
fn verdicts(p: &Project) -> BTreeMap<String, String> {
    p.results()
        .into_iter()
        .map(|r| (r["hypothesis"].clone(), r["verdict"].clone()))
        .collect()
}

/// When each branch's nodes ran: (first node.started, last node.finished), by the
/// branch's hypothesis index.
fn intervals(p: &Project) -> BTreeMap<usize, (String, String)> {
    let mut out: BTreeMap<usize, (String, String)> = BTreeMap::new();
    for e in p.events() {
        let (run_id, started) = match &e.data {
            EventData::NodeStarted { run_id, .. } => (run_id, true),
            EventData::NodeFinished { run_id, .. } => (run_id, false),
            _ => continue,
        };
        let Some(i) = run_id
            .rsplit_once(".branches-")
            .and_then(|(_, i)| i.parse::<usize>().ok())
        else {
            continue;
        };
        let entry = out
            .entry(i)
            .or_insert_with(|| (e.timestamp.clone(), e.timestamp.clone()));
        if started && e.timestamp < entry.0 {
            entry.0 = e.timestamp.clone();
        }
        if !started && e.timestamp > entry.1 {
            entry.1 = e.timestamp.clone();
        }
    }
    out
}

fn overlap(a: &(String, String), b: &(String, String)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

fn tree_listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            out.push(path.display().to_string());
            if path.is_dir() {
                out.extend(tree_listing(&path));
            }
        }
    }
    out.sort();
    out
}

fn refs(p: &Project) -> Vec<String> {
    let repo = Repository::open(p.path()).unwrap();
    let mut out: Vec<String> = repo
        .references()
        .unwrap()
        .flatten()
        .map(|r| format!("{} {:?}", r.name().unwrap_or(""), r.target()))
        .collect();
    out.sort();
    out
}

fn file_at(p: &Project, branch: &str, file: &str) -> String {
    let repo = Repository::open(p.path()).unwrap();
    let commit = repo
        .revparse_single(branch)
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let entry = commit.tree().unwrap().get_path(Path::new(file)).unwrap();
    let blob = repo.find_blob(entry.id()).unwrap();
    String::from_utf8_lossy(blob.content()).into_owned()
}

fn no_symlinks_under(dir: &Path) {
    for path in tree_listing(dir) {
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(!meta.file_type().is_symlink(), "{path} is a symlink");
    }
}

#[test]
fn three_hypotheses_run_at_once_and_the_best_is_rechecked_and_kept() {
    let s = project();
    let p = &s.p;
    fs::write(p.path().join("NOTES.txt"), "my notes\n").unwrap();
    let main_before = Repository::open(p.path())
        .unwrap()
        .head()
        .unwrap()
        .target();

    let out = run(p, &script(&[]));
    assert!(out.status.success(), "{}", output(&out));

    let rows = p.results();
    assert_eq!(rows.len(), 3, "{}", output(&out));
    let v = verdicts(p);
    assert_eq!(v["Raise counter a to 9"], "keep", "{v:?}\n{}", output(&out));
    assert_eq!(v["Raise counter b to 5"], "superseded");
    assert_eq!(v["Raise counter c to 3"], "superseded");
    let keep = rows.iter().find(|r| r["verdict"] == "keep").unwrap();
    assert_eq!(keep["score_after"], "0.3667");
    for r in rows.iter().filter(|r| r["verdict"] == "superseded") {
        assert!(
            r["notes"].contains(&format!("superseded by exp {}", keep["id"])),
            "{r:?}"
        );
    }

    // The kept branch is left for a human; nothing was merged into main.
    let repo = Repository::open(p.path()).unwrap();
    assert_eq!(repo.head().unwrap().target(), main_before);
    assert_eq!(file_at(p, "main", "src/a.txt"), "1\n");
    let kept = format!("factory/exp-{:03}", keep["id"].parse::<u32>().unwrap());
    assert_eq!(file_at(p, &kept, "src/a.txt"), "9\n");
    assert_eq!(fs::read_to_string(p.path().join("NOTES.txt")).unwrap(), "my notes\n");
    assert_eq!(fs::read_to_string(p.path().join("src/a.txt")).unwrap(), "1\n");

    // Each branch kept its reviews, verdicts and state in its own experiment directory.
    for id in ["001", "002", "003"] {
        let dir = p.path().join(".factory/experiments").join(id);
        assert!(dir.join("reviews/ceo-verdict-build.md").is_file(), "{id}");
        assert!(dir.join("reviews/builder-latest.md").is_file(), "{id}");
        assert!(dir.join("state/run.json").is_file(), "{id}");
        assert!(dir.join("strategy/current.md").is_file(), "{id}");
    }
    no_symlinks_under(&p.path().join(".factory"));

    // The branches ran at the same time.
    let when = intervals(p);
    assert_eq!(when.len(), 3, "{when:?}");
    assert!(overlap(&when[&1], &when[&2]), "{when:?}");
    assert!(overlap(&when[&1], &when[&3]), "{when:?}");

    let selection: Value = serde_json::from_slice(
        &fs::read(p.path().join(".factory/selection_result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(selection["winner"]["exp_id"].to_string(), keep["id"]);
}
