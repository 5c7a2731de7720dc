//! `factory lsp` driven over stdio exactly as an editor drives it: Content-Length framed
//! JSON-RPC, a real file in a temporary project, diagnostics pushed by the server.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

const UNMATCHED: &str = include_str!("../../compiler/tests/diagnostics/FWF014.fwf");
const FIXED: &str = include_str!("../../compiler/tests/diagnostics/FWF014.fixed.fwf");
const WAIT: Duration = Duration::from_secs(20);

struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start(dir: &std::path::Path) -> Client {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("factory"))
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("factory lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("every message has a Content-Length")];
                reader.read_exact(&mut body).unwrap();
                let msg: Value = serde_json::from_slice(&body).expect("the server sends JSON");
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            next_id: 0,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its response, skipping notifications in between.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self
                .incoming
                .recv_timeout(WAIT)
                .expect("a response in time");
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let msg = self
                .incoming
                .recv_timeout(WAIT)
                .expect("diagnostics in time");
            if msg["method"] == "textDocument/publishDiagnostics" && msg["params"]["uri"] == uri {
                return msg["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }
}

fn pos(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

#[test]
fn an_editor_session_from_initialize_to_exit() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let path = root.join("tiny.fwf");
    std::fs::write(&path, UNMATCHED).unwrap();
    let uri = format!("file://{}", path.display());
    let doc = json!({"uri": uri});

    let mut c = Client::start(&root);
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", root.display()), "capabilities": {}}),
    );
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["textDocumentSync"], 2, "incremental sync: {init}");
    assert_eq!(caps["hoverProvider"], true);
    c.notify("initialized", json!({}));

    // An unmatched fork: FWF014 on the fork's name, branches as related information.
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fwf", "version": 1, "text": UNMATCHED}}),
    );
    let diags = c.diagnostics(&uri);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0]["code"], "FWF014");
    assert_eq!(diags[0]["severity"], 1);
    assert_eq!(
        diags[0]["range"],
        json!({"start": pos(1, 9), "end": pos(1, 17)})
    );
    let related = diags[0]["relatedInformation"].as_array().unwrap();
    assert_eq!(related.len(), 2);
    assert_eq!(related[0]["location"]["range"]["start"], pos(5, 29));

    // Fix it with two incremental edits: declare the join, route the branches into it.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": pos(4, 0), "end": pos(4, 0)}, "text": "    join combined\n"},
            {"range": {"start": pos(6, 45), "end": pos(6, 45)}, "text": "combined -> "},
        ]}),
    );
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());
    let text = FIXED;

    // Hover on `market` in the flow.
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": doc, "position": pos(6, 31)}),
    );
    let md = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        md.contains("**agent** `market`") && md.contains("researcher"),
        "{hover}"
    );

    // Go to the definition of `combined` in the flow: the join's declaration.
    let line = text.lines().nth(6).unwrap();
    let col = line.find("combined").unwrap() as u32;
    let def = c.request(
        "textDocument/definition",
        json!({"textDocument": doc, "position": pos(6, col + 2)}),
    );
    assert_eq!(def["result"]["uri"], uri);
    assert_eq!(def["result"]["range"]["start"], pos(4, 9), "{def}");

    // Rename `market`: its declaration and its use in the flow.
    let rename = c.request(
        "textDocument/rename",
        json!({"textDocument": doc, "position": pos(2, 12), "newName": "shops"}),
    );
    let edits = rename["result"]["changes"][&uri].as_array().unwrap();
    let mut starts: Vec<Value> = edits.iter().map(|e| e["range"]["start"].clone()).collect();
    starts.sort_by_key(|p| (p["line"].as_u64(), p["character"].as_u64()));
    assert_eq!(starts, vec![pos(2, 10), pos(6, 29)], "{rename}");
    assert!(edits.iter().all(|e| e["newText"] == "shops"));
    // A clash is refused with an error, not a broken edit.
    let clash = c.request(
        "textDocument/rename",
        json!({"textDocument": doc, "position": pos(2, 12), "newName": "code"}),
    );
    assert!(
        clash["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already exists"),
        "{clash}"
    );

    // Bad params get an error response and the server keeps serving.
    let bad = c.request("textDocument/hover", json!({"garbage": true}));
    assert!(bad["error"]["code"].is_number(), "{bad}");

    // Replace the whole text with a messy layout and format it.
    let messy = FIXED.replace("    ", "").replace(" -> ", "->");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": messy}]}),
    );
    assert_eq!(
        c.diagnostics(&uri),
        Vec::<Value>::new(),
        "layout does not matter"
    );
    let fmt = c.request(
        "textDocument/formatting",
        json!({"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let edits = fmt["result"].as_array().unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0]["newText"], FIXED);

    let down = c.request("shutdown", Value::Null);
    assert_eq!(down["result"], Value::Null);
    assert!(down.get("error").is_none());
    c.notify("exit", Value::Null);
    drop(c.stdin);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            assert!(status.success(), "the server exits cleanly: {status}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
