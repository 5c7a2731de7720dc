use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::user_config::{UserConfigError, parse};

fn configs(text: &str) -> Vec<NotifierConfig> {
    parse(Path::new("/home/u/.factory/config.toml"), text)
        .unwrap()
        .notifiers
}

fn keep(project: &Path) -> Notification {
    let mut details = serde_json::Map::new();
    details.insert("verdict".into(), "keep".into());
    Notification {
        event: NotifyEvent::Keep,
        project: project.to_path_buf(),
        run_id: Some("r1".into()),
        exp_id: Some(3),
        text: "app: experiment 3 kept".into(),
        details,
    }
}

/// Accepts one HTTP request, answers `status`, and returns the request's body.
fn one_request(listener: TcpListener, status: &'static str) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let mut stream = reader.into_inner();
        write!(stream, "HTTP/1.1 {status}\r\nContent-Length: 4\r\n\r\nnope").unwrap();
        String::from_utf8(body).unwrap()
    })
}

#[test]
fn notifier_tables_parse_with_defaults() {
    let c = configs(
        "[[notify]]\nwebhook = \"https://hooks.slack.com/services/T/B/X\"\nformat = \"slack\"\n\n\
         [[notify]]\ncommand = \"cat\"\non = [\"keep\", \"halt\"]\ntimeout = 2\n",
    );
    assert_eq!(c.len(), 2);
    assert_eq!(
        c[0].target,
        NotifyTarget::Webhook {
            url: "https://hooks.slack.com/services/T/B/X".into(),
            format: WebhookFormat::Slack
        }
    );
    assert_eq!(c[0].on, NotifyEvent::ALL);
    assert_eq!(c[0].timeout, Duration::from_secs(5));
    assert_eq!(
        c[0].describe(),
        "webhook https://hooks.slack.com/… (config.toml line 1)"
    );
    assert_eq!(c[1].target, NotifyTarget::Command("cat".into()));
    assert_eq!(c[1].on, [NotifyEvent::Keep, NotifyEvent::Halt]);
    assert_eq!(c[1].line, 5);
}

#[test]
fn bad_notifier_tables_name_their_line_and_the_fix() {
    let cases = [
        ("[[notify]]\nformat = \"json\"\n", 1, "needs `webhook"),
        (
            "[[notify]]\nwebhook = \"ftp://x\"\n",
            2,
            "http:// or https://",
        ),
        (
            "\n[[notify]]\nwebhook = \"http://x\"\nformat = \"teams\"\n",
            4,
            "json, slack or discord",
        ),
        (
            "[[notify]]\ncommand = \"cat\"\non = [\"kept\"]\n",
            3,
            "the events are run_end, keep",
        ),
        (
            "[[notify]]\ncommand = \"cat\"\ntimout = 3\n",
            3,
            "did you mean `timeout`",
        ),
        (
            "[[notify]]\ncommand = \"cat\"\nwebhook = \"http://x\"\n",
            1,
            "not both",
        ),
        (
            "[[notify]]\ncommand = \"cat\"\ntimeout = 0\n",
            3,
            "from 1 to 300",
        ),
        ("notify = \"x\"\n", 1, "[[notify]]"),
    ];
    for (text, line, says) in cases {
        match parse(Path::new("/h/config.toml"), text) {
            Err(UserConfigError::Invalid {
                line: got, message, ..
            }) => {
                assert_eq!(got, line, "{text}: {message}");
                assert!(message.contains(says), "{text}: {message}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn payloads_fit_slack_discord_and_our_json() {
    let n = keep(Path::new("/work/app"));
    let json = n.payload(WebhookFormat::Json);
    assert_eq!(json["event"], "keep");
    assert_eq!(json["project_name"], "app");
    assert_eq!(json["exp_id"], 3);
    assert_eq!(json["details"]["verdict"], "keep");
    assert_eq!(
        n.payload(WebhookFormat::Slack),
        serde_json::json!({"text": "factory · app: experiment 3 kept"})
    );
    let discord = n.payload(WebhookFormat::Discord);
    assert_eq!(discord["content"], "factory · app: experiment 3 kept");
    assert_eq!(discord["username"], "factory");
}

#[test]
fn a_webhook_posts_the_json_to_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = one_request(listener, "200 OK");
    let c = configs(&format!(
        "[[notify]]\nwebhook = \"http://127.0.0.1:{port}/hook\"\non = [\"keep\"]\n"
    ));
    assert!(send_to(&c, &keep(dir.path())).is_empty());
    let body: serde_json::Value = serde_json::from_str(&server.join().unwrap()).unwrap();
    assert_eq!(body["event"], "keep");
    assert_eq!(body["text"], "app: experiment 3 kept");
}

#[test]
fn failures_are_returned_and_logged_never_raised() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".factory")).unwrap();
    // A port nobody listens on: bound, then closed.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refusing = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = refusing.local_addr().unwrap().port();
    let server = one_request(refusing, "500 Internal Server Error");
    let c = configs(&format!(
        "[[notify]]\nwebhook = \"http://127.0.0.1:{closed}/x\"\ntimeout = 2\n\
         [[notify]]\nwebhook = \"http://127.0.0.1:{port}/x\"\n\
         [[notify]]\ncommand = \"echo broken >&2; exit 3\"\n\
         [[notify]]\ncommand = \"cat\"\non = [\"halt\"]\n"
    ));
    let failures = send_to(&c, &keep(dir.path()));
    server.join().unwrap();
    assert_eq!(failures.len(), 3, "{failures:?}");
    assert!(
        failures[0].contains(&format!("127.0.0.1:{closed}")),
        "{}",
        failures[0]
    );
    assert!(
        failures[1].contains("500") && failures[1].contains("nope"),
        "{}",
        failures[1]
    );
    assert!(
        failures[2].contains("exit code 3") && failures[2].contains("broken"),
        "{}",
        failures[2]
    );
    let log = crate::events::read(&crate::project::layout::FactoryPaths::new(dir.path())).unwrap();
    assert_eq!(log.of_kind(NOTIFY_FAILED).count(), 3);
}

#[test]
fn a_command_gets_the_message_on_stdin_and_the_json_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let c = configs(
        "[[notify]]\ncommand = \"cat > got.txt; printf %s \\\"$FACTORY_NOTIFY_EVENT\\\" > event.txt\"\n",
    );
    assert_eq!(send_to(&c, &keep(dir.path())), Vec::<String>::new());
    let got = std::fs::read_to_string(dir.path().join("got.txt")).unwrap();
    assert_eq!(got, "app: experiment 3 kept\n");
    let event = std::fs::read_to_string(dir.path().join("event.txt")).unwrap();
    assert_eq!(event, "keep");
}

#[test]
fn a_hanging_command_is_killed_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let c = configs("[[notify]]\ncommand = \"sleep 30\"\ntimeout = 1\n");
    let start = std::time::Instant::now();
    let failures = send_to(&c, &keep(dir.path()));
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(failures[0].contains("within 1s"), "{failures:?}");
}
