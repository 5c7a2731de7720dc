//! Parallel improve end to end: the built binary runs `workflows/parallel-improve.fwf`
//! with the replay runner on a small project of three counter files (eval.sh sums
//! them), in real git repositories in temp dirs. Each hypothesis raises a different
//! counter, so the branches make different real changes with different scores.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{Project, script_from, text};
use factory_runtime::events::EventData;
use git2::Repository;
use serde_json::Value;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parallel");
const MODE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/workflows/parallel-improve.fwf"
);

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
    let main_before = Repository::open(p.path()).unwrap().head().unwrap().target();

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
    assert_eq!(
        fs::read_to_string(p.path().join("NOTES.txt")).unwrap(),
        "my notes\n"
    );
    assert_eq!(
        fs::read_to_string(p.path().join("src/a.txt")).unwrap(),
        "1\n"
    );

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

    let selection: Value =
        serde_json::from_slice(&fs::read(p.path().join(".factory/selection_result.json")).unwrap())
            .unwrap();
    assert_eq!(selection["winner"]["exp_id"].to_string(), keep["id"]);
}

const SAME_FILE_PLAN: &str = r#"    - write:
        .factory/strategy/current.md: |
          # Plan

          ## Hypothesis 1: Raise counter a to 9
          The biggest lever.
          Files: `src/a.txt`
          Success: the score rises to 0.3667.

          ## Hypothesis 2: Raise counter a to 5 instead
          A smaller step on the same counter.
          Files: `src/a.txt`
          Success: the score rises to 0.2333.

          ## Hypothesis 3: Raise counter c to 3
          Another file.
          Files: `src/c.txt`
          Success: the score rises to 0.1667.
      print: "Wrote .factory/strategy/current.md"
"#;

fn builder(file: &str, value: &str, extra_run: &str) -> String {
    format!(
        r#"    - sleep_ms: 300
      write:
        {file}: "{value}\n"
      run:
        - git add -A
        - git diff --cached --quiet || git -c user.name=factory-test -c user.email=t@factory.invalid commit -qm "Set {file} to {value}"
{extra_run}      print: |
        # Build report

        ## Commits
        - Set {file} to {value}, as the hypothesis of this branch says, in that file only.

        ## Changes
        - One counter file under src/ holds another number; nothing else changed, and
          the other counters are untouched by this branch.

        ## Tests
        eval.sh prints the new score; the guard still finds src/a.txt non-empty.
"#
    )
}

#[test]
fn hypotheses_on_the_same_file_run_in_one_stream_one_after_another() {
    let s = project();
    let p = &s.p;
    // The plan as the strategist will write it, there for the preview to read.
    let plan: String = SAME_FILE_PLAN
        .lines()
        .skip(3)
        .take_while(|l| !l.contains("print:"))
        .map(|l| format!("{}\n", l.get(10..).unwrap_or("")))
        .collect();
    fs::create_dir_all(p.path().join(".factory/strategy")).unwrap();
    fs::write(p.path().join(".factory/strategy/current.md"), &plan).unwrap();

    let files_before = tree_listing(p.path());
    let refs_before = refs(p);
    let out = p.factory(&["run", MODE, "--preview"]);
    let preview = output(&out);
    assert!(out.status.success(), "{preview}");
    assert!(preview.contains("in 2 streams"), "{preview}");
    assert!(
        preview.contains("stream 1 (one after another)"),
        "{preview}"
    );
    assert!(preview.contains("why together"), "{preview}");
    assert!(preview.contains("src/a.txt"), "{preview}");
    assert!(
        preview.contains("git worktree add .factory/worktrees/exp-001 factory/exp-001"),
        "{preview}"
    );
    assert!(
        preview.contains("nothing was created or changed"),
        "{preview}"
    );
    assert_eq!(
        tree_listing(p.path()),
        files_before,
        "the preview wrote nothing"
    );
    assert_eq!(refs(p), refs_before, "the preview made no branch");

    let out = run(
        p,
        &script(&[
            ("strategist", SAME_FILE_PLAN),
            ("builder#2", &builder("src/a.txt", "5", "")),
        ]),
    );
    assert!(out.status.success(), "{}", output(&out));
    let when = intervals(p);
    assert!(
        when[&1].1 <= when[&2].0,
        "hypothesis 2 starts after hypothesis 1 ends: {when:?}"
    );
    assert!(
        overlap(&when[&3], &when[&1]) || overlap(&when[&3], &when[&2]),
        "the other stream ran alongside: {when:?}"
    );
    let v = verdicts(p);
    assert_eq!(v["Raise counter a to 9"], "keep", "{v:?}\n{}", output(&out));
    assert_eq!(v["Raise counter a to 5 instead"], "superseded");
}

#[test]
fn the_best_branch_conflicting_with_a_new_commit_on_main_is_quarantined_and_the_next_is_kept() {
    let s = project();
    let p = &s.p;
    // While the branches run, a colleague's commit lands on main and changes the
    // counter hypothesis 1 raises.
    let colleague = r#"        - cd "$FACTORY_PROJECT" && printf '2\n' > src/a.txt && git -c user.name=colleague -c user.email=c@example.com commit -qam "A colleague sets counter a to 2"
"#;
    let out = run(
        p,
        &script(&[("builder#2", &builder("src/b.txt", "5", colleague))]),
    );
    assert!(out.status.success(), "{}", output(&out));
    let v = verdicts(p);
    assert_eq!(
        v["Raise counter a to 9"],
        "quarantined",
        "{:?}\n{}",
        p.results(),
        output(&out)
    );
    assert_eq!(v["Raise counter b to 5"], "keep", "{v:?}");
    assert_eq!(v["Raise counter c to 3"], "superseded", "{v:?}");
    let rows = p.results();
    let q = rows.iter().find(|r| r["verdict"] == "quarantined").unwrap();
    assert!(q["notes"].contains("conflicts with main"), "{q:?}");
    assert!(q["notes"].contains("src/a.txt"), "{q:?}");
    // The quarantined branch is left as it passed; the kept one sits on the new tip.
    assert_eq!(file_at(p, "factory/exp-001", "src/a.txt"), "9\n");
    let keep = rows.iter().find(|r| r["verdict"] == "keep").unwrap();
    let kept = format!("factory/exp-{:03}", keep["id"].parse::<u32>().unwrap());
    assert_eq!(
        file_at(p, &kept, "src/a.txt"),
        "2\n",
        "re-checked on the new tip"
    );
    assert_eq!(file_at(p, &kept, "src/b.txt"), "5\n");
    let repo = Repository::open(p.path()).unwrap();
    let main = repo.revparse_single("main").unwrap().id();
    let kept_commit = repo
        .revparse_single(&kept)
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert_eq!(
        kept_commit.parent_id(0).unwrap(),
        main,
        "one commit on main's tip"
    );
    // Scores are the re-check's: 0.1333 (a=2) → 0.2667.
    assert_eq!(keep["score_before"], "0.1333");
    assert_eq!(keep["score_after"], "0.2667");
}

fn branch_of(run_id: &str) -> Option<usize> {
    run_id.rsplit_once(".branches-")?.1.parse().ok()
}

#[test]
fn a_run_killed_during_the_branches_resumes_to_the_same_result_without_duplicate_rows() {
    let s = project();
    let p = &s.p;
    // Hypothesis 2's builder takes its time: the kill lands while it works, after the
    // other two branches have finished.
    let slow = builder("src/b.txt", "5", "").replace("sleep_ms: 300", "sleep_ms: 6000");
    let path = write_script(p, &script(&[("builder#2", &slow)]));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(p.path())
        .env("FACTORY_HOME", p.home())
        .env("CARGO_TARGET_DIR", p.target())
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUNNER")
        .args(["run", MODE, "--runner", "replay", "--script"])
        .arg(&path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the branches never got there"
        );
        let events = factory_runtime::events::read(
            &factory_runtime::project::layout::FactoryPaths::new(p.path()),
        )
        .map(|l| l.events)
        .unwrap_or_default();
        let finished: Vec<usize> = events
            .iter()
            .filter_map(|e| match &e.data {
                EventData::RunFinished { run_id, .. } => branch_of(run_id),
                _ => None,
            })
            .collect();
        let building = events.iter().any(|e| {
            matches!(&e.data, EventData::NodeStarted { run_id, node, .. }
                if branch_of(run_id) == Some(2) && node.ends_with("builder"))
        });
        if finished.contains(&1) && finished.contains(&3) && building {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    assert!(
        p.results().is_empty(),
        "nothing was decided before the kill"
    );

    let out = p.factory(&["resume"]);
    assert!(out.status.success(), "{}", output(&out));
    let rows = p.results();
    let mut ids: Vec<&String> = rows.iter().map(|r| &r["id"]).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3, "one row per experiment: {rows:?}");
    let v = verdicts(p);
    assert_eq!(v["Raise counter a to 9"], "keep", "{v:?}\n{}", output(&out));
    assert_eq!(v["Raise counter b to 5"], "superseded");
    assert_eq!(v["Raise counter c to 3"], "superseded");
    // Only the unfinished branch ran again: the finished ones' builders ran once.
    let builders = |i: usize| {
        p.events()
            .iter()
            .filter(|e| {
                matches!(&e.data, EventData::NodeStarted { run_id, node, .. }
                    if branch_of(run_id) == Some(i) && node.ends_with("builder"))
            })
            .count()
    };
    assert_eq!(builders(1), 1);
    assert_eq!(builders(3), 1);
    assert_eq!(
        builders(2),
        2,
        "hypothesis 2's builder was cut off and ran again"
    );
}

#[test]
fn with_gh_signed_in_the_kept_branch_is_pushed_and_proposed_never_merged() {
    let s = project();
    let p = &s.p;
    let origin = tempfile::tempdir().unwrap();
    Repository::init_bare(origin.path()).unwrap();
    Repository::open(p.path())
        .unwrap()
        .remote("origin", origin.path().to_str().unwrap())
        .unwrap();
    // A stand-in for gh: signed in, and it records the pull request it is asked for.
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("gh.log");
    let gh = bin.path().join("gh");
    fs::write(
        &gh,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\n[ \"$1\" = pr ] && echo https://example.invalid/pull/7\nexit 0\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&gh, fs::Permissions::from_mode(0o755)).unwrap();
    let path = write_script(p, &script(&[]));
    let out = p
        .command(&[
            "run",
            MODE,
            "--runner",
            "replay",
            "--script",
            path.to_str().unwrap(),
        ])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", output(&out));
    let calls = fs::read_to_string(&log).unwrap();
    assert!(calls.contains("auth status"), "{calls}");
    assert!(
        calls.contains("pr create --base main --head factory/exp-001 --title Raise counter a to 9"),
        "{calls}"
    );
    let pushed = Repository::open(origin.path()).unwrap();
    assert!(
        pushed
            .find_branch("factory/exp-001", git2::BranchType::Local)
            .is_ok()
    );
    assert!(
        pushed.find_branch("main", git2::BranchType::Local).is_err(),
        "only the kept branch is pushed"
    );
    assert!(
        p.events()
            .iter()
            .any(|e| e.kind() == "experiment.pull_request")
    );
}
