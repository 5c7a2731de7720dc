//! The tamper-evident event log end to end (docs/gate.md): the built binary, real git,
//! temp dirs. Lines an agent forges, a precheck record it edits and a line a crash
//! tears are each handled as documented, and an honest run still ends `keep`.

use crate::support;

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{Project, WORKFLOW, script, text};
use factory_runtime::events::{self, ChainKey, Event};
use factory_runtime::project::layout::FactoryPaths;
use git2::Repository;
use serde_json::Value;

/// A diagnostic as one line: miette wraps and frames long messages.
fn flat(o: &[u8]) -> String {
    text(o)
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn verify(p: &Project) -> Result<events::VerifiedLog, events::ChainError> {
    let paths = FactoryPaths::new(p.path());
    events::chain::verify_with(&paths, &ChainKey::in_home(p.home(), &paths).unwrap())
}

fn events_path(p: &Project) -> std::path::PathBuf {
    p.path().join(".factory/events.jsonl")
}

fn begin(p: &Project) -> u32 {
    let o = p.factory(&["begin", "--hypothesis", "count words with a HashMap"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout).trim().parse().unwrap()
}

/// Commits a change to experiment `id`'s worktree, as a builder would.
fn build(p: &Project, id: u32, body: &str) {
    let wt = p.path().join(format!(".factory/worktrees/exp-{id:03}"));
    let lib = fs::read_to_string(wt.join("src/lib.rs")).unwrap() + body;
    fs::write(wt.join("src/lib.rs"), lib).unwrap();
    let repo = Repository::open(&wt).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@t").unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "change", &tree, &[&head])
        .unwrap();
}

/// QA by all three roles, written as factory writes it (chained under its key).
fn qa_all(p: &Project, id: u32) {
    for role in ["health_checker", "code_reviewer", "adversarial_tester"] {
        events::append_in_home(
            &FactoryPaths::new(p.path()),
            p.home(),
            &Event::raw("agent.completed")
                .with("role", role)
                .with("exp_id", id),
        )
        .unwrap();
    }
}

fn keep(p: &Project, id: u32) -> std::process::Output {
    p.factory(&["finalize", "--id", &id.to_string(), "--verdict", "keep"])
}

fn forged_qa(id: u32, role: &str) -> String {
    format!(
        "{{\"type\":\"agent.completed\",\"timestamp\":\"2099-01-01T00:00:00Z\",\"role\":\"{role}\",\"exp_id\":{id}}}\n"
    )
}

#[test]
fn forged_qa_lines_fail_the_precheck_naming_the_line_and_cannot_be_kept() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let id = begin(&p);
    build(&p, id, "\n/// A harmless doc line.\npub fn noop() {}\n");
    // The agent appends the QA it never ran.
    let path = events_path(&p);
    let mut log = fs::read_to_string(&path).unwrap();
    let line = log.lines().count() + 1;
    for role in ["health_checker", "code_reviewer", "adversarial_tester"] {
        log.push_str(&forged_qa(id, role));
    }
    fs::write(&path, log).unwrap();

    let o = p.factory(&["precheck", "--exp", "1", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!("fails verification at line {line}")),
        "{out}"
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(
        report["failures"]
            .as_array()
            .unwrap()
            .contains(&Value::from("qa_execution")),
        "{report}"
    );
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("cannot be kept"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn an_edited_precheck_record_or_a_forged_precheck_event_is_refused_by_keep() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let id = begin(&p);
    // A change that does not compile: the precheck fails.
    build(&p, id, "\nfn broken( {}\n");
    qa_all(&p, id);
    let o = p.factory(&["precheck", "--exp", "1", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));

    // The agent rewrites the record to say it passed.
    let record = p.path().join(".factory/experiments/001/precheck.json");
    let mut json: Value = serde_json::from_str(&fs::read_to_string(&record).unwrap()).unwrap();
    json["passed"] = Value::Bool(true);
    json["failures"] = Value::Array(vec![]);
    fs::write(&record, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    let err = flat(&o.stderr);
    assert!(
        err.contains("precheck.json is not the record")
            && err.contains("precheck.completed (line "),
        "{err}"
    );

    // And appends a passing precheck.completed that looks like the last one.
    let path = events_path(&p);
    let log = fs::read_to_string(&path).unwrap();
    let last = log
        .lines()
        .rfind(|l| l.contains("\"precheck.completed\""))
        .unwrap()
        .replace("\"passed\":false", "\"passed\":true");
    let line = log.lines().count() + 1;
    fs::write(&path, format!("{log}{last}\n")).unwrap();
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    let err = flat(&o.stderr);
    assert!(
        err.contains(&format!("fails verification at line {line}")),
        "{err}"
    );
    // Nothing was recorded.
    assert!(p.results().is_empty());
}

#[test]
fn an_agent_that_forges_a_sealed_looking_line_makes_the_run_revert() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    // The adversarial tester copies the log's last line (its chain included) as an
    // agent.completed: a line that looks sealed but is not.
    let forger = r#"    - write:
        .factory/reviews/adversarial-qa.md: |
          # Adversarial QA

          ## Verdict
          PROCEED

          Tried empty input, whitespace only, mixed case ties, unicode words and a
          100,000-word text: results match the old implementation in every case. No
          panic, no change in the tie rule, no change in case folding.
      run:
        - 'for f in ../../events.jsonl .factory/events.jsonl; do if [ -f "$f" ]; then tail -n 1 "$f" | sed "s/\"type\":\"agent.started\"/\"type\":\"agent.completed\"/" >> "$f"; break; fi; done'
"#;
    let out = p.run(&script(&[("adversarial_tester", forger)]));
    let t = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    let rows = p.results();
    assert_eq!(rows.len(), 1, "{t}");
    assert_eq!(rows[0]["verdict"], "revert", "{t}");
    let err = verify(&p).unwrap_err();
    let line = err.line().unwrap();
    let log = fs::read_to_string(events_path(&p)).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let forged = lines[line - 1];
    let chain = &forged[forged.len() - 66..];
    assert!(
        lines[..line - 1].iter().any(|l| l.ends_with(chain)),
        "line {line} is the copy: {forged}"
    );
    let record = fs::read_to_string(p.path().join(".factory/experiments/001/precheck.json"))
        .unwrap_or_default();
    assert!(
        record.contains(&format!("fails verification at line {line}")),
        "{record}\n{t}"
    );
}

#[test]
fn a_line_torn_by_a_kill_is_witnessed_on_resume_and_the_run_still_keeps() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let script_path = p.path().join(".factory/script.yaml");
    fs::write(&script_path, script(&[])).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(p.path())
        .env("FACTORY_HOME", p.home())
        .env("CARGO_TARGET_DIR", p.target())
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUNNER")
        .args([
            "run",
            WORKFLOW,
            "--runner",
            "replay",
            "--script",
            script_path.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it has checkpointed and journaled a node.
    let began = Instant::now();
    loop {
        let log = fs::read_to_string(events_path(&p)).unwrap_or_default();
        if p.path().join(".factory/state/run.json").exists() && log.contains("node.finished") {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(120),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    // What a kill in the middle of an append leaves: half a line.
    let torn = "{\"type\":\"node.finished\",\"timestamp\":\"2026-";
    let path = events_path(&p);
    let log = fs::read_to_string(&path).unwrap();
    let line = log.lines().count() + 1;
    fs::write(&path, format!("{log}{torn}")).unwrap();
    let err = verify(&p).unwrap_err();
    assert_eq!(err.line(), Some(line), "{err}");

    let out = p.factory(&["resume"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let rows = p.results();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["verdict"], "keep");
    let v = verify(&p).unwrap();
    assert!(
        v.foreign.iter().any(|f| f.line == line && f.text == torn),
        "{:?}",
        v.foreign
    );
}

#[test]
fn an_honest_run_keeps_and_its_whole_log_verifies() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let out = p.run(&script(&[]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(p.results()[0]["verdict"], "keep");
    let v = verify(&p).unwrap();
    assert!(v.foreign.is_empty(), "{:?}", v.foreign);
    let n = fs::read_to_string(events_path(&p)).unwrap().lines().count();
    assert_eq!(v.events.len(), n);
}

/// The demo builder's real improvement (its `src/lib.rs` in replay.yaml), committed to
/// experiment `id`'s worktree.
fn honest_build(p: &Project, id: u32) {
    let script =
        fs::read_to_string(std::path::Path::new(support::DEMO).join("replay.yaml")).unwrap();
    let mut lines = script
        .lines()
        .skip_while(|l| l.trim() != "src/lib.rs: |")
        .skip(1);
    let mut lib = String::new();
    for line in lines.by_ref() {
        if !line.is_empty() && !line.starts_with("          ") {
            break;
        }
        lib.push_str(line.get(10..).unwrap_or(""));
        lib.push('\n');
    }
    let wt = p.path().join(format!(".factory/worktrees/exp-{id:03}"));
    fs::write(wt.join("src/lib.rs"), lib.trim_end().to_string() + "\n").unwrap();
    let repo = Repository::open(&wt).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@t").unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        "count words with a HashMap",
        &tree,
        &[&head],
    )
    .unwrap();
}

#[test]
fn lines_deleted_from_the_end_of_an_honest_log_are_named_and_keep_is_refused() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let id = begin(&p);
    honest_build(&p, id);
    qa_all(&p, id);
    let o = p.factory(&["precheck", "--exp", "1", "--json"]);
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );

    // The agent deletes the log's tail, from the passing precheck.completed on.
    let path = events_path(&p);
    let honest = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = honest.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| l.contains("\"precheck.completed\""))
        .unwrap();
    let kept: String = lines[..at].iter().map(|l| format!("{l}\n")).collect();
    fs::write(&path, kept).unwrap();
    let err = verify(&p).unwrap_err();
    assert_eq!(err.line(), Some(at + 1), "{err}");
    let o = keep(&p, id);
    assert_eq!(o.status.code(), Some(1));
    let err = flat(&o.stderr);
    assert!(
        err.contains("cannot be kept")
            && err.contains(&format!(
                "the log ends at line {at}; the last verified append was line {}",
                lines.len()
            )),
        "{err}"
    );
    assert!(p.results().is_empty());

    // The honest log restored, the same keep goes through: the cut alone was refused.
    fs::write(&path, &honest).unwrap();
    let o = keep(&p, id);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(p.results()[0]["verdict"], "keep");
    verify(&p).unwrap();
}

/// A run under another `FACTORY_HOME` chains the log with another key. The refused keep
/// names the key and home it verified with and the way out; `factory doctor` says the
/// same; `factory doctor --set-aside-log` keeps the old log and a new run keeps again.
#[test]
fn a_log_from_another_home_is_named_and_set_aside_without_losing_it() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let other = tempfile::tempdir().unwrap();
    // The first experiment's events are chained under the other home's key.
    let o = p
        .command(&["begin", "--hypothesis", "count words with a HashMap"])
        .env("FACTORY_HOME", other.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id: u32 = text(&o.stdout).trim().parse().unwrap();
    build(&p, id, "\n// a comment\n");
    qa_all(&p, id);
    let pre = p.factory(&["precheck", "--exp", &id.to_string()]);
    let refused = keep(&p, id);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&pre.stdout));
    let why = flat(&refused.stderr);
    assert!(why.contains("its evidence cannot be trusted"), "{why}");
    // (miette wraps long paths; compare without the spaces it adds)
    assert!(
        why.replace(' ', "")
            .contains(&format!("FACTORY_HOME={}", p.home().display())),
        "{why}"
    );
    assert!(why.contains("factory doctor --set-aside-log"), "{why}");

    let doctor = p.factory(&["doctor"]);
    assert!(
        text(&doctor.stdout).contains("FAIL  event log"),
        "{}",
        text(&doctor.stdout)
    );
    let before = fs::read(events_path(&p)).unwrap();
    let set = p.factory(&["doctor", "--set-aside-log"]);
    assert!(
        text(&set.stderr).contains("set aside"),
        "{}",
        text(&set.stderr)
    );
    assert!(!events_path(&p).exists());
    let kept: Vec<_> = fs::read_dir(p.path().join(".factory"))
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("events.jsonl.set-aside-")
        })
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        fs::read(kept[0].path()).unwrap(),
        before,
        "the old log is kept byte for byte"
    );
    assert!(text(&p.factory(&["doctor"]).stdout).contains("ok    event log"));

    // A new run under this home keeps again.
    let out = p.run(&script(&[]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(verify(&p).is_ok());
}
