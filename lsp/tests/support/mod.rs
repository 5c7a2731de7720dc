//! A client for the real server over OS pipes: raw bytes in, framed messages out, the
//! way an editor talks to `factory lsp`.

#![allow(dead_code)]

use std::io::{BufReader, PipeWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use factory_lsp::frames::{Frame, FrameReader};
use lsp_server::{Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

/// How long to wait for a message before the test fails (not a timing assertion: a
/// generous bound so a hung server fails instead of hanging the suite).
const PATIENCE: Duration = Duration::from_secs(60);

pub struct Client {
    to_server: Option<PipeWriter>,
    from_server: Receiver<Message>,
    server: Option<JoinHandle<Result<(), factory_lsp::ServerError>>>,
    next_id: i32,
    /// Every message received, in order.
    pub seen: Vec<Message>,
    pub root: PathBuf,
}

pub fn uri(path: &Path) -> String {
    factory_lsp::paths::path_to_uri(path)
        .expect("a file URI")
        .as_str()
        .to_string()
}

impl Client {
    /// Starts a server on `root` and completes the handshake.
    pub fn start(root: &Path) -> Client {
        let (server_in, to_server) = std::io::pipe().expect("a pipe");
        let (from_server_raw, server_out) = std::io::pipe().expect("a pipe");
        let server =
            std::thread::spawn(move || factory_lsp::run_io(BufReader::new(server_in), server_out));
        let (tx, from_server) = channel();
        std::thread::spawn(move || {
            let mut frames = FrameReader::new(BufReader::new(from_server_raw));
            while let Ok(Some(frame)) = frames.next_frame() {
                match frame {
                    Frame::Message(m) => {
                        if tx.send(m).is_err() {
                            return;
                        }
                    }
                    Frame::Malformed(why) => panic!("the server sent a malformed frame: {why}"),
                }
            }
        });
        let mut c = Client {
            to_server: Some(to_server),
            from_server,
            server: Some(server),
            next_id: 1,
            seen: Vec::new(),
            root: root.to_path_buf(),
        };
        let resp = c.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": {}}),
        );
        assert!(resp.response_result.is_ok(), "{resp:?}");
        c.notify("initialized", json!({}));
        c
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        let w = self.to_server.as_mut().expect("the pipe is open");
        w.write_all(bytes).expect("the server reads");
        w.flush().expect("the server reads");
    }

    pub fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    pub fn encode(msg: Message) -> Vec<u8> {
        let mut out = Vec::new();
        msg.write(&mut out).expect("encodes");
        out
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let bytes = Self::encode(Notification::new(method.into(), params).into());
        self.raw(&bytes);
    }

    pub fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        let id = RequestId::from(self.next_id);
        self.next_id += 1;
        let bytes = Self::encode(Request::new(id.clone(), method.into(), params).into());
        self.raw(&bytes);
        id
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Response {
        let id = self.send_request(method, params);
        self.wait(|m| matches!(m, Message::Response(r) if r.id == id))
            .and_then(|m| match m {
                Message::Response(r) => Some(r),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no response to {method}"))
    }

    /// The next message matching `pred` (every message is kept in `seen`).
    pub fn wait(&mut self, pred: impl Fn(&Message) -> bool) -> Option<Message> {
        loop {
            match self.from_server.recv_timeout(PATIENCE) {
                Ok(m) => {
                    self.seen.push(m.clone());
                    if pred(&m) {
                        return Some(m);
                    }
                }
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The next publication for `uri` at `version` or later: (version, diagnostics).
    pub fn diagnostics(&mut self, uri: &str, version: i32) -> (i32, Vec<Value>) {
        let m = self
            .wait(|m| {
                matches!(m, Message::Notification(n)
                    if n.method == "textDocument/publishDiagnostics"
                        && n.params["uri"] == uri
                        && n.params["version"].as_i64().unwrap_or(i64::MAX) >= version as i64)
            })
            .unwrap_or_else(|| panic!("no diagnostics for {uri} v{version}"));
        let Message::Notification(n) = m else {
            unreachable!()
        };
        (
            n.params["version"].as_i64().unwrap_or(-1) as i32,
            n.params["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        )
    }

    /// Every publication for `uri` seen so far, as versions in order of arrival.
    pub fn published_versions(&self, uri: &str) -> Vec<i64> {
        self.seen
            .iter()
            .filter_map(|m| match m {
                Message::Notification(n)
                    if n.method == "textDocument/publishDiagnostics" && n.params["uri"] == uri =>
                {
                    Some(n.params["version"].as_i64().unwrap_or(-1))
                }
                _ => None,
            })
            .collect()
    }

    /// Messages logged to the client (window/logMessage) so far.
    pub fn logs(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == "window/logMessage" => {
                    n.params["message"].as_str().map(str::to_string)
                }
                _ => None,
            })
            .collect()
    }

    /// Waits for a logged message containing `needle`.
    pub fn wait_log(&mut self, needle: &str) -> String {
        if let Some(l) = self.logs().into_iter().find(|l| l.contains(needle)) {
            return l;
        }
        let m = self
            .wait(|m| {
                matches!(m, Message::Notification(n)
                    if n.method == "window/logMessage"
                        && n.params["message"].as_str().is_some_and(|s| s.contains(needle)))
            })
            .unwrap_or_else(|| panic!("nothing logged about {needle:?}; saw {:?}", self.seen));
        let Message::Notification(n) = m else {
            unreachable!()
        };
        n.params["message"].as_str().unwrap_or_default().to_string()
    }

    pub fn open(&mut self, path: &Path, text: &str) -> String {
        let u = uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "fwf", "version": 1, "text": text}}),
        );
        u
    }

    /// Replaces the whole text of an open document.
    pub fn change(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    /// `shutdown`, `exit`, and the server's own result.
    pub fn stop(mut self) {
        let resp = self.request("shutdown", Value::Null);
        assert!(resp.response_result.is_ok(), "{resp:?}");
        self.notify("exit", Value::Null);
        let server = self.server.take().expect("running");
        server
            .join()
            .expect("the server thread does not panic")
            .expect("the server ends cleanly");
    }
}

/// Codes of published diagnostics.
pub fn codes(diags: &[Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A temporary project directory (canonical, so keys and URIs match the server's).
pub fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    (dir, root)
}

/// The marker for the cursor in a fixture text.
pub const CURSOR: &str = "$0";

/// A fixture with one `$0` cursor marker: the text without it, and the cursor as an LSP
/// position (line, UTF-16 column).
pub fn cursor(fixture: &str) -> (String, Value) {
    let at = fixture
        .find(CURSOR)
        .expect("the fixture marks the cursor with $0");
    let text = fixture.replacen(CURSOR, "", 1);
    let line = text[..at].matches('\n').count();
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let col = text[start..at].encode_utf16().count();
    (text, json!({"line": line, "character": col}))
}

/// The LSP position `shift` bytes into the first `needle` of `text` (ASCII text:
/// columns are bytes).
pub fn position(text: &str, needle: &str, shift: usize) -> Value {
    let offset = text.find(needle).expect("needle") + shift;
    let line = text[..offset].matches('\n').count();
    let col = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col})
}

/// A position and what is there, for readable snapshots: `line:col`.
pub fn show_position(p: &Value) -> String {
    format!("{}:{}", p["line"], p["character"])
}
