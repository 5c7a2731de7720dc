//! The dashboard watching a real run: `factory dashboard` serves while `factory run …
//! --runner replay` runs a slow scripted workflow. A headless Chromium on the run's
//! page sees nodes change state without a reload (and a screenshot of every view is
//! saved under target/dashboard-shots/); 50 concurrent event-stream clients each get
//! every event of the run.

use crate::cdp;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Dashboard, Project};
use factory_runtime::events::tail::Tail;
use factory_runtime::exec::progress::RunProgress;
use factory_runtime::store::{ExperimentStore, Outcome, Verdict};

const WORKFLOW: &str = r#"//! A small scripted mode for the dashboard tests.
workflow live {
    fn prep "sleep 1"
    agent build {
        role: builder
        task: "Make the change."
    }
    gate review by agent(ceo) "Is the change good enough to keep?" {
        writes: ".factory/reviews/ceo-verdict-review.md"
    }
    flow {
        start -> prep -> build -> review
        review.proceed -> end
        review.reloop(max 2) -> build
        review.halt -> end
    }
}
"#;

/// Each agent step takes `ms`; the gate sends the run back once.
fn script(ms: u64) -> String {
    format!(
        "agents:\n  builder:\n    - sleep_ms: {ms}\n      print: \"## Commits\\n- made the change\\n\"\n  \
         review:\n    - verdict: reloop\n      rationale: the tests do not cover ties\n      sleep_ms: {ms}\n    \
         - verdict: proceed\n      rationale: ties are covered now\n      sleep_ms: {ms}\n"
    )
}

/// Starts the scripted run and returns it with its run id once its directory exists.
fn start_run(p: &Project, ms: u64) -> (Child, String) {
    let mut child = spawn_run(p, ms);
    let id = run_id(p, &mut child);
    (child, id)
}

fn spawn_run(p: &Project, ms: u64) -> Child {
    fs::write(p.path().join("live.fwf"), WORKFLOW).unwrap();
    fs::write(p.path().join("script.yaml"), script(ms)).unwrap();
    Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(p.path())
        .args([
            "run",
            "live.fwf",
            "--runner",
            "replay",
            "--script",
            "script.yaml",
        ])
        .env("FACTORY_HOME", p.home())
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUNNER")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The id of the project's run, once its directory exists (the run is stopped if it
/// never appears).
fn run_id(p: &Project, child: &mut Child) -> String {
    let runs = p.path().join(".factory/runs");
    let start = Instant::now();
    loop {
        let found = fs::read_dir(&runs)
            .into_iter()
            .flatten()
            .flatten()
            .find(|e| e.path().join("workflow.fwir").is_file());
        if let Some(e) = found {
            return e.file_name().to_string_lossy().into_owned();
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn shots_dir() -> PathBuf {
    // target/debug/deps/<this test> → target/
    std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .join("dashboard-shots")
}

#[test]
fn a_browser_sees_nodes_change_state_without_a_reload() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let dash = Dashboard::start(&p);
    let mut browser = cdp::Browser::launch();
    let tab = browser.open(&format!("{}/", dash.url));
    let (mut run, run_id) = start_run(&p, 2500);

    browser.navigate(&tab, &format!("{}/p/0/run/{run_id}", dash.url));
    let states = "JSON.stringify([...document.querySelectorAll('g[data-node]')].map(g => [g.dataset.node, g.dataset.state]))";
    // Marks this very document: a reload would lose it.
    browser.eval(&tab, "window.sameDocument = 'yes'");
    // The run's first event may land after the page loaded (a busy machine): the page
    // shows it running without a reload.
    assert!(
        browser.wait_for(
            &tab,
            "window.sameDocument === 'yes' && document.getElementById('run-status').textContent === 'running'",
            60
        ),
        "the page shows the run running"
    );
    let initial = browser.eval(&tab, states);
    let changed = browser.wait_for(
        &tab,
        &format!("window.sameDocument === 'yes' && {states} !== {initial}"),
        60,
    );
    assert!(
        changed,
        "no node changed state on the page; it showed {initial}"
    );
    assert_eq!(browser.eval(&tab, "window.sameDocument"), "yes");
    assert_eq!(
        browser.eval(&tab, "performance.getEntriesByType('navigation').length"),
        1
    );
    let shots = shots_dir();
    browser.screenshot(&tab, &shots.join("run.png"));

    assert!(run.wait().unwrap().success(), "the scripted run completes");
    assert!(
        browser.wait_for(
            &tab,
            "document.getElementById('run-status').textContent === 'completed' && document.body.dataset.ended === 'true' && window.sameDocument === 'yes'",
            60
        ),
        "the page shows the run completed, still without a reload"
    );
    assert_eq!(
        browser.eval(
            &tab,
            "document.querySelector('g[data-node=\"review\"] .badge').textContent"
        ),
        "↻1",
        "the gate's reloop is counted"
    );
    assert_eq!(
        browser.eval(
            &tab,
            "document.querySelector('#gate .g-question').textContent"
        ),
        "Is the change good enough to keep?"
    );
    browser.screenshot(&tab, &shots.join("run-completed.png"));

    // History for the other views: the run's own experiment with its reviews, and a
    // few more around it.
    let store = ExperimentStore::with_registry(p.path(), Some(p.home().to_path_buf()));
    for (h, verdict, before, after, notes) in [
        (
            "Cache the parsed config",
            Verdict::Revert,
            0.50,
            0.48,
            "the tests got slower",
        ),
        ("Count words with a HashMap", Verdict::Keep, 0.50, 0.56, ""),
        (
            "Inline the tokenizer",
            Verdict::Revert,
            0.56,
            0.55,
            "the tests got slower",
        ),
    ] {
        let id = store.begin(h).unwrap().id;
        store
            .finalize(id, Outcome::new(verdict).scores(before, after).notes(notes))
            .unwrap();
    }
    let key = format!("{run_id}/build/1");
    let id = store
        .begin_keyed(
            "Avoid the to_lowercase allocation for ASCII words",
            Some(&key),
        )
        .unwrap()
        .id;
    store
        .finalize(id, Outcome::new(Verdict::Keep).scores(0.56, 0.61))
        .unwrap();
    // An open experiment on its own branch, with a committed change: its diff stat.
    let begun = p.factory(&[
        "begin",
        ".",
        "--hypothesis",
        "Return early from word_count on empty input",
    ]);
    assert!(begun.status.success(), "{begun:?}");
    let open: u32 = String::from_utf8_lossy(&begun.stdout)
        .trim()
        .parse()
        .unwrap();
    let tree = factory_runtime::worktrees::worktree_path(p.path(), open);
    let lib = tree.join("src/lib.rs");
    let text = fs::read_to_string(&lib).unwrap();
    fs::write(&lib, format!("{text}\n// Empty input has no words.\n")).unwrap();
    let repo = git2::Repository::open(&tree).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("src/lib.rs")).unwrap();
    index.write().unwrap();
    let new_tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    let sig = git2::Signature::now("t", "t@t").unwrap();
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        "early return",
        &new_tree,
        &[&head],
    )
    .unwrap();
    for (page, file, expect) in [
        ("/".to_string(), "projects.png", "has_factory".to_string()),
        (
            "/p/0/".into(),
            "project.png",
            "composite score over experiments".into(),
        ),
        (
            format!("/p/0/exp/{id}"),
            "experiment.png",
            "ceo-verdict-review.md".into(),
        ),
        (
            format!("/p/0/exp/{open}"),
            "experiment-open.png",
            "src/lib.rs</code></td><td class=\"pass\">+2".into(),
        ),
        (
            "/insights".into(),
            "insights.png",
            "the tests got slower".into(),
        ),
    ] {
        browser.navigate(&tab, &format!("{}{page}", dash.url));
        let html = browser.eval(&tab, "document.documentElement.outerHTML");
        assert!(
            html.as_str().unwrap().contains(&expect),
            "{page} shows {expect}: {html}"
        );
        browser.screenshot(&tab, &shots.join(file));
    }
}

/// Reads one event stream to its `end` event: the ids of its `update` messages.
fn stream_ids(port: u16, path: &str) -> Vec<u64> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        assert!(!line.is_empty(), "the stream's headers ended early");
    }
    // The body is chunked: collect chunk payloads, handle whole lines only.
    let mut text = String::new();
    let mut ids = Vec::new();
    let mut kind = String::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let size = usize::from_str_radix(line.trim(), 16)
            .unwrap_or_else(|_| panic!("a chunk size: {line:?}"));
        if size == 0 {
            panic!("the stream ended without an `end` event");
        }
        let mut chunk = vec![0u8; size + 2];
        r.read_exact(&mut chunk).unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk[..size]));
        while let Some(nl) = text.find('\n') {
            let l: String = text.drain(..=nl).collect();
            let l = l.trim_end();
            if let Some(k) = l.strip_prefix("event: ") {
                kind = k.to_string();
                if kind == "end" {
                    return ids;
                }
            } else if let Some(id) = l.strip_prefix("id: ")
                && kind == "update"
            {
                ids.push(id.parse().unwrap());
            }
        }
    }
}

/// The offsets of every event of `run_id` that changes its progress, as the log holds them.
fn expected_ids(project: &Path, run_id: &str) -> Vec<u64> {
    let mut tail = Tail::new(project.join(".factory/events.jsonl"), 0);
    let mut progress = RunProgress::new(run_id);
    tail.read_new(Some(run_id))
        .unwrap()
        .events
        .into_iter()
        .filter(|(_, e)| progress.apply(e).is_some())
        .map(|(offset, _)| offset)
        .collect()
}

#[test]
fn fifty_event_stream_clients_each_get_every_event_of_a_run() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::committed(target.path());
    let dash = Dashboard::start(&p);
    let (mut run, run_id) = start_run(&p, 400);
    let port = dash.port();
    let clients: Vec<_> = (0..50)
        .map(|_| {
            let path = format!("/p/0/run/{run_id}/events?from=0");
            std::thread::spawn(move || stream_ids(port, &path))
        })
        .collect();
    assert!(run.wait().unwrap().success(), "the scripted run completes");
    let expected = expected_ids(p.path(), &run_id);
    // start, prep ×2, build ×2 ×2, review ×3 ×2, finish
    assert!(expected.len() >= 14, "{expected:?}");
    for (i, c) in clients.into_iter().enumerate() {
        let got = c.join().expect("a client thread");
        assert_eq!(got, expected, "client {i} missed or repeated events");
    }
}
