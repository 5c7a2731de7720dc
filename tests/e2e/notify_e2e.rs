//! Notifications from a real run: a replay run that keeps its experiment tells a
//! webhook (a local HTTP server here) and a command, while a webhook on a closed port
//! fails without failing the run.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{Project, script, text};
use serde_json::Value;

/// Answers every POST with 200 and passes its JSON body on.
fn webhook_server() -> (u16, mpsc::Receiver<Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let _ = reader
                .into_inner()
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            if let Ok(v) = serde_json::from_slice(&body) {
                let _ = tx.send(v);
            }
        }
    });
    (port, rx)
}

#[test]
fn a_kept_experiment_is_announced_and_a_dead_notifier_does_not_fail_the_run() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let (port, received) = webhook_server();
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let told = p.home().join("told.txt");
    std::fs::write(
        p.home().join("config.toml"),
        format!(
            "[[notify]]\nwebhook = \"http://127.0.0.1:{port}/hook\"\n\n\
             [[notify]]\nwebhook = \"http://127.0.0.1:{closed}/hook\"\nformat = \"slack\"\ntimeout = 2\n\n\
             [[notify]]\ncommand = \"cat >> '{}'\"\non = [\"keep\"]\n",
            told.display()
        ),
    )
    .unwrap();

    let out = p.run(&script(&[]));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert_eq!(p.results()[0]["verdict"], "keep", "{said}");

    // The keep, then the run's end, as factory's own JSON.
    let keep = received.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(keep["event"], "keep", "{keep}");
    assert_eq!(keep["exp_id"], 1, "{keep}");
    assert_eq!(keep["details"]["verdict"], "keep", "{keep}");
    assert!(keep["details"]["delta"].is_number(), "{keep}");
    let name = p.path().file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(keep["project_name"], name.as_str());
    assert!(
        keep["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{name}: experiment 1 kept, score ")),
        "{keep}"
    );
    let end = received.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(end["event"], "run_end", "{end}");
    assert_eq!(end["details"]["verdict"], "keep", "{end}");
    assert!(
        end["text"]
            .as_str()
            .unwrap()
            .contains("completed; experiment 1: keep"),
        "{end}"
    );

    // The command heard only the keep, on stdin.
    let heard = std::fs::read_to_string(&told).unwrap();
    assert_eq!(heard.lines().count(), 1, "{heard}");
    assert!(heard.contains("experiment 1 kept"), "{heard}");

    // The closed port: a warning in the run's output and an event, nothing more.
    assert!(said.contains(&format!("127.0.0.1:{closed}")), "{said}");
    let failed: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e.kind() == "notify.failed")
        .collect();
    assert_eq!(
        failed.len(),
        2,
        "keep and run end each failed once: {failed:?}"
    );
}

/// A revert is announced with the reason the gate found (the failing check and its
/// one-line detail), not a fixed note; the run's end says the verdict, and `factory
/// insights` counts that check among the revert reasons.
#[test]
fn a_revert_is_announced_with_its_failing_check() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let (port, received) = webhook_server();
    std::fs::write(
        p.home().join("config.toml"),
        format!("[[notify]]\nwebhook = \"http://127.0.0.1:{port}/hook\"\n"),
    )
    .unwrap();
    let out = p.run(&script(&[("builder", support::OUTSIDE_SCOPE_BUILDER)]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let reason = "scope: README.md: added outside scope";
    let revert = received.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(revert["event"], "revert", "{revert}");
    assert!(
        revert["text"].as_str().unwrap().contains(reason),
        "the revert names its check: {revert}"
    );
    let end = received.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(end["event"], "run_end", "{end}");
    assert_eq!(end["details"]["verdict"], "revert", "{end}");

    let project = p.path().to_str().unwrap();
    let insights = text(&p.factory(&["insights", "--project", project]).stdout);
    let listed = insights
        .split("Most common revert reasons")
        .nth(1)
        .unwrap_or_default();
    // Grouped by check and subject, so the same failure on other lines counts once.
    assert!(listed.contains("1  scope: README.md"), "{insights}");
}
