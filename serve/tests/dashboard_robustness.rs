//! The dashboard never falls over on bad inputs: truncated and garbage event lines, a
//! binary file in place of `events.jsonl`, a 50 MB log, a malformed `last_eval.json`;
//! each page answers with its panel degraded and a message. Also: the token rule
//! beyond 127.0.0.1, and the first page load's weight. A real server on a real port,
//! asked over plain HTTP.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use factory_serve::dashboard::{Options, bind};

const RUN: &str = "20261201T100000-00001";
const IR: &str = include_str!("fixtures/live.fwir");

/// A running dashboard over `projects`; dropped with the runtime at the test's end.
fn serve(
    projects: Vec<std::path::PathBuf>,
    host: Option<&str>,
) -> (tokio::runtime::Runtime, u16, Option<String>) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap().keep();
    let bound = rt
        .block_on(bind(Options {
            projects,
            host: host.map(str::to_string),
            port: 0,
            home: Some(home),
        }))
        .unwrap();
    let port = bound.addr().port();
    let token = bound.token().map(str::to_string);
    rt.spawn(bound.serve(std::future::pending()));
    (rt, port, token)
}

/// `GET path` with extra header lines; the status code, headers and body.
fn get(port: u16, path: &str, headers: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, head.to_string(), body.to_string())
}

/// A project with `.factory/` holding the run's IR and the given log and eval.
fn project(events: &[u8], last_eval: Option<&[u8]>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join(".factory/runs").join(RUN);
    fs::create_dir_all(&run).unwrap();
    fs::write(run.join("workflow.fwir"), IR).unwrap();
    fs::write(dir.path().join(".factory/events.jsonl"), events).unwrap();
    if let Some(e) = last_eval {
        fs::write(dir.path().join(".factory/last_eval.json"), e).unwrap();
    }
    dir
}

fn line(kind: &str, rest: &str) -> String {
    format!(
        "{{\"type\":\"{kind}\",\"timestamp\":\"2026-12-01T10:00:00.000Z\",\"run_id\":\"{RUN}\",{rest}}}\n"
    )
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.display().to_string(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn bad_logs_and_evals_degrade_their_panels_and_the_server_keeps_answering() {
    let good = line("run.started", "\"seq\":1,\"workflow\":\"live\"")
        + &line(
            "node.started",
            "\"node\":\"prep\",\"visit\":1,\"kind\":\"fn\"",
        );
    let truncated = format!("{good}{{\"type\":\"node.finished\",\"timest");
    let garbage = format!(
        "{good}not json at all\n{{\"no\":\"type\"}}\n{{\"type\":\"node.started\",\"run_id\":\"{RUN}\"}}\n"
    );
    let binary: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    // 50 MB: one valid line, then lines of other runs' noise, then the run's node.
    let mut big = good.clone().into_bytes();
    let noise = format!(
        "{{\"type\":\"agent.started\",\"timestamp\":\"2026-12-01T10:00:00.000Z\",\"invocation_id\":\"x\",\"role\":\"r\",\"runner\":\"replay\",\"run_id\":\"other\",\"pad\":\"{}\"}}\n",
        "x".repeat(400)
    );
    while big.len() < 50 * 1024 * 1024 {
        big.extend_from_slice(noise.as_bytes());
    }
    big.extend_from_slice(
        line(
            "node.started",
            "\"node\":\"build\",\"visit\":1,\"kind\":\"agent\"",
        )
        .as_bytes(),
    );
    let projects = [
        project(truncated.as_bytes(), Some(b"{\"composite\": 0.5, trunc")),
        project(garbage.as_bytes(), Some(&binary[..1000])),
        project(&binary, Some(b"[]")),
        project(&big, None),
    ];
    let before: Vec<_> = projects.iter().map(|p| snapshot(p.path())).collect();
    let (_rt, port, _) = serve(
        projects.iter().map(|p| p.path().to_path_buf()).collect(),
        None,
    );

    let (code, _, body) = get(port, "/", "");
    assert_eq!(code, 200, "{body}");
    assert_eq!(body.matches("data-project=").count(), 4, "{body}");

    for i in 0..4 {
        let (code, _, body) = get(port, &format!("/p/{i}/"), "");
        assert_eq!(code, 200, "project {i}: {body}");
        let (code, _, run) = get(port, &format!("/p/{i}/run/{RUN}"), "");
        assert_eq!(code, 200, "run page of project {i}: {run}");
        assert!(
            run.contains("data-node=\"prep\""),
            "the graph is drawn from the IR: {run}"
        );
        match i {
            0 => {
                assert!(
                    body.contains("is not an eval report"),
                    "malformed eval named: {body}"
                );
                assert!(
                    run.contains("data-node=\"prep\" data-kind=\"fn\" data-state=\"running\""),
                    "{run}"
                );
                assert!(
                    !run.contains("unreadable lines"),
                    "a line still being written is not corrupt: {run}"
                );
            }
            1 => {
                assert!(
                    body.contains("is not an eval report"),
                    "binary eval named: {body}"
                );
                assert!(
                    run.contains("unreadable lines in events.jsonl skipped: 2"),
                    "{run}"
                );
            }
            2 => {
                assert!(
                    run.contains("unreadable lines in events.jsonl skipped"),
                    "{run}"
                );
                assert!(run.contains("no gate reached yet"), "{run}");
            }
            _ => {
                assert!(body.contains("No .factory/last_eval.json yet"), "{body}");
                assert!(
                    run.contains("data-node=\"build\" data-kind=\"agent\" data-state=\"running\""),
                    "the run's event after 50 MB of others is found: {run}"
                );
            }
        }
        let (code, _, body) = get(port, &format!("/p/{i}/exp/7"), "");
        assert_eq!(code, 200, "{body}");
        assert!(body.contains("not on record"), "{body}");
    }
    // The stream of a run over the binary log says what it skipped and ends nothing
    // badly; read only its first messages.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET /p/2/run/{RUN}/events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut buf = vec![0u8; 4096];
    let mut seen = String::new();
    while !seen.contains("event: notice") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "stream closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("text/event-stream"), "{seen}");
    assert!(seen.contains("unreadable lines"), "{seen}");

    for bad in [
        "/p/99/",
        "/p/0/run/..%2F..%2Fetc",
        "/p/0/exp/notanumber",
        "/nope",
    ] {
        let (code, _, _) = get(port, bad, "");
        assert!(code == 404 || code == 400, "{bad}: {code}");
    }
    assert_eq!(get(port, "/insights", "").0, 200);
    let after: Vec<_> = projects.iter().map(|p| snapshot(p.path())).collect();
    assert!(before == after, "the dashboard wrote into a project");
}

#[test]
fn beyond_localhost_a_token_is_required_then_kept_in_a_cookie() {
    let p = project(b"", None);
    let (_rt, port, token) = serve(vec![p.path().to_path_buf()], Some("0.0.0.0"));
    let token = token.expect("a token beyond 127.0.0.1");
    assert_eq!(token.len(), 32);
    let (code, _, body) = get(port, "/", "");
    assert_eq!(code, 401);
    assert!(body.contains("access token"), "{body}");
    assert_eq!(get(port, "/?token=wrong", "").0, 401);
    let (code, head, _) = get(port, &format!("/?token={token}"), "");
    assert_eq!(code, 200);
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a cookie is set")
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(
        cookie.contains("HttpOnly") || head.contains("HttpOnly"),
        "{head}"
    );
    assert_eq!(get(port, "/p/0/", &format!("Cookie: {cookie}\r\n")).0, 200);
    assert_eq!(
        get(
            port,
            "/assets/app.js",
            &format!("Authorization: Bearer {token}\r\n")
        )
        .0,
        200
    );
    assert_eq!(
        get(port, "/assets/app.js", "Authorization: Bearer nope\r\n").0,
        401
    );
}

#[test]
fn a_first_page_load_stays_under_one_megabyte() {
    let mut events = line("run.started", "\"seq\":1,\"workflow\":\"live\"");
    for v in 1..=3 {
        events += &line(
            "node.started",
            &format!("\"node\":\"review\",\"visit\":{v},\"kind\":\"gate\""),
        );
        events += &line("node.verdict", "\"node\":\"review\",\"verdict\":\"reloop\"");
    }
    let p = project(events.as_bytes(), None);
    let (_rt, port, _) = serve(vec![p.path().to_path_buf()], None);
    for page in [
        "/".to_string(),
        "/p/0/".into(),
        format!("/p/0/run/{RUN}"),
        "/insights".into(),
    ] {
        let (code, _, html) = get(port, &page, "");
        assert_eq!(code, 200);
        // Everything the page loads is served by the dashboard itself.
        for remote in [
            "src=\"http",
            "href=\"http",
            "src=\"//",
            "href=\"//",
            "url(http",
        ] {
            assert!(
                !html.contains(remote),
                "{page} loads from elsewhere: {html}"
            );
        }
        let mut total = html.len();
        for asset in ["/assets/app.css", "/assets/app.js"] {
            assert!(html.contains(asset), "{page} uses {asset}");
            let (code, _, body) = get(port, asset, "");
            assert_eq!(code, 200);
            total += body.len();
        }
        assert!(total < 1024 * 1024, "{page}: {total} bytes");
    }
    let (_, _, run) = get(port, &format!("/p/0/run/{RUN}"), "");
    assert!(
        run.contains("↻3"),
        "the gate's reloop count is shown: {run}"
    );
    assert!(
        run.contains("Is it good?"),
        "the current gate's question: {run}"
    );
}

/// The projects page's "last verdict" is the verdict recorded last, not the one of the
/// highest id: parallel branches are begun together and finalized in any order.
#[test]
fn the_projects_page_shows_the_verdict_recorded_last() {
    use factory_runtime::store::{ExperimentStore, Outcome, Verdict};
    let dir = tempfile::tempdir().unwrap();
    let store = ExperimentStore::with_registry(dir.path(), None);
    let first = store.begin("branch one").unwrap().id;
    let second = store.begin("branch two").unwrap().id;
    store
        .finalize(second, Outcome::new(Verdict::Revert))
        .unwrap();
    // The second verdict is recorded at a later millisecond: wait for the clock to say so.
    let recorded = factory_runtime::sys::clock::now_iso8601();
    while factory_runtime::sys::clock::now_iso8601() == recorded {
        std::thread::yield_now();
    }
    store
        .finalize(
            first,
            Outcome::new(Verdict::Superseded).superseded_by(second),
        )
        .unwrap();
    let (_rt, port, _) = serve(vec![dir.path().to_path_buf()], None);
    let (code, _, body) = get(port, "/", "");
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("<span class=\"tag v-superseded\">superseded</span>"),
        "the later verdict (experiment {first}) is the last: {body}"
    );
    assert!(!body.contains("<span class=\"tag v-revert\">"), "{body}");
}
