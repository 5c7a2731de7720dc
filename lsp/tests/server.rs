//! The server loop in-process over an in-memory connection: which files get fresh
//! diagnostics when an open file, an imported file on disk, or a prompt changes.

use std::fs;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

const QA: &str = "subgraph qa(fix: node) {\n    agent tester { role: adversarial_tester }\n    flow {\n        start -> tester -> end\n    }\n}\n";
const MAIN: &str = "import ./lib/qa\n\nworkflow main {\n    agent builder { role: builder }\n    use qa(fix: builder) as qa\n    flow {\n        start -> builder -> qa -> end\n    }\n}\n";

struct Client {
    conn: Connection,
    server: Option<std::thread::JoinHandle<Result<(), factory_lsp::ServerError>>>,
}

impl Client {
    fn notify(&self, method: &str, params: Value) {
        self.conn
            .sender
            .send(Notification::new(method.into(), params).into())
            .unwrap();
    }

    fn next(&self) -> Message {
        self.conn
            .receiver
            .recv_timeout(Duration::from_secs(20))
            .expect("a message in time")
    }

    /// Diagnostic codes of the next publication for `uri`.
    fn codes(&self, uri: &str) -> Vec<String> {
        loop {
            if let Message::Notification(n) = self.next()
                && n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == uri
            {
                return n.params["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d["code"].as_str().unwrap_or_default().to_string())
                    .collect();
            }
        }
    }

    fn shutdown(mut self) {
        let req = Request::new(RequestId::from(99), "shutdown".into(), Value::Null);
        self.conn.sender.send(req.into()).unwrap();
        loop {
            if let Message::Response(r) = self.next()
                && r.id == RequestId::from(99)
            {
                break;
            }
        }
        self.notify("exit", Value::Null);
        self.server.take().unwrap().join().unwrap().unwrap();
    }
}

fn start(root: &std::path::Path) -> Client {
    let (server, conn) = Connection::memory();
    let handle = std::thread::spawn(move || factory_lsp::serve(&server));
    let init = Request::new(
        RequestId::from(1),
        "initialize".into(),
        json!({
            "processId": null,
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
        }),
    );
    conn.sender.send(init.into()).unwrap();
    let client = Client {
        conn,
        server: Some(handle),
    };
    match client.next() {
        Message::Response(r) => assert!(r.response_result.is_ok()),
        other => panic!("expected the initialize response, got {other:?}"),
    }
    client.notify("initialized", json!({}));
    // The server asks to watch workflow files and prompts.
    match client.next() {
        Message::Request(r) => {
            assert_eq!(r.method, "client/registerCapability");
            let globs = r.params["registrations"][0]["registerOptions"]["watchers"].to_string();
            assert!(
                globs.contains("**/*.fwf") && globs.contains("prompts/*.md"),
                "{globs}"
            );
        }
        other => panic!("expected a watch registration, got {other:?}"),
    }
    client
}

fn open(c: &Client, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fwf", "version": 1, "text": text}}),
    );
}

/// A project of `main.fwf` importing `lib/qa.fwf`: the temp dir (kept alive), its root
/// and the two files' URIs.
fn main_importing_qa() -> (tempfile::TempDir, std::path::PathBuf, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(root.join("lib")).unwrap();
    fs::write(root.join("lib/qa.fwf"), QA).unwrap();
    fs::write(root.join("main.fwf"), MAIN).unwrap();
    let main = format!("file://{}/main.fwf", root.display());
    let qa = format!("file://{}/lib/qa.fwf", root.display());
    (dir, root, main, qa)
}

#[test]
fn importers_are_rechecked_when_an_imported_file_changes_on_disk_or_in_the_editor() {
    let (_dir, root, main, qa) = main_importing_qa();

    let c = start(&root);
    open(&c, &main, MAIN);
    assert_eq!(c.codes(&main), Vec::<String>::new());

    // The imported file changes on disk: the subgraph is renamed, so `use qa` breaks.
    fs::write(
        root.join("lib/qa.fwf"),
        QA.replace("subgraph qa", "subgraph review"),
    )
    .unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": qa, "type": 2}]}),
    );
    assert!(c.codes(&main).contains(&"FWF006".to_string()));

    // Opened and fixed in the editor: both files are re-published, main clean again.
    open(&c, &qa, &QA.replace("subgraph qa", "subgraph review"));
    assert_eq!(c.codes(&qa), Vec::<String>::new());
    assert!(
        c.codes(&main).contains(&"FWF006".to_string()),
        "the importer is re-published too"
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": qa, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 15}}, "text": "qa"}
        ]}),
    );
    assert_eq!(c.codes(&qa), Vec::<String>::new());
    assert_eq!(c.codes(&main), Vec::<String>::new());
    c.shutdown();
}

#[test]
fn a_new_prompt_file_makes_its_role_known() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let text = "workflow w {\n    agent a { role: poet }\n    flow {\n        start -> a -> end\n    }\n}\n";
    fs::write(root.join("w.fwf"), text).unwrap();
    let uri = format!("file://{}/w.fwf", root.display());
    let c = start(&root);
    open(&c, &uri, text);
    assert_eq!(c.codes(&uri), ["FWF010"]);
    fs::create_dir_all(root.join("prompts")).unwrap();
    fs::write(root.join("prompts/poet.md"), "# Poet\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("file://{}/prompts/poet.md", root.display()), "type": 1}]}),
    );
    assert_eq!(c.codes(&uri), Vec::<String>::new());
    c.shutdown();
}

#[test]
fn closing_a_file_clears_its_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let text = "workflow w {\n    flow {\n        start -> nowhere -> end\n    }\n}\n";
    let uri = format!("file://{}/w.fwf", root.display());
    let c = start(&root);
    open(&c, &uri, text);
    assert_eq!(c.codes(&uri), ["FWF003"]);
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(c.codes(&uri), Vec::<String>::new());
    c.shutdown();
}

#[test]
fn an_unsaved_buffer_is_checked_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = start(&root);
    let uri = "untitled:Untitled-1";
    open(
        &c,
        uri,
        "workflow w {\n    flow {\n        start -> nowhere -> end\n    }\n}\n",
    );
    assert_eq!(c.codes(uri), ["FWF003"]);
    c.shutdown();
}

#[test]
fn a_malformed_notification_is_logged_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = start(&root);
    c.notify("textDocument/didOpen", json!({"textDocument": {"uri": 42}}));
    loop {
        if let Message::Notification(n) = c.next()
            && n.method == "window/logMessage"
        {
            assert!(
                n.params["message"].as_str().unwrap().contains("bad params"),
                "{n:?}"
            );
            break;
        }
    }
    let uri = format!("file://{}/w.fwf", root.display());
    open(
        &c,
        &uri,
        "workflow w {\n    flow {\n        start -> nowhere -> end\n    }\n}\n",
    );
    assert_eq!(c.codes(&uri), ["FWF003"]);
    c.shutdown();
}

/// A deleted import is reported by a long-running server exactly as by a fresh one
/// (missing, not an empty file whose import is "unused").
#[test]
fn a_deleted_import_is_missing_as_a_fresh_server_sees_it() {
    let (_dir, root, main, qa) = main_importing_qa();

    let long = start(&root);
    open(&long, &main, MAIN);
    assert_eq!(long.codes(&main), Vec::<String>::new());
    fs::remove_file(root.join("lib/qa.fwf")).unwrap();
    long.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": qa, "type": 3}]}),
    );
    let after_delete = long.codes(&main);
    long.shutdown();

    let fresh = start(&root);
    open(&fresh, &main, MAIN);
    let from_scratch = fresh.codes(&main);
    fresh.shutdown();
    assert!(!from_scratch.is_empty(), "a missing import is an error");
    assert_eq!(after_delete, from_scratch);
}
