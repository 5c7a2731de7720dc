//! What the tests share: a client for the real server over OS pipes (raw bytes in,
//! framed messages out, the way an editor talks to `factory lsp`), and the data-driven
//! harness — fixtures with `$0` cursors, served by the handlers or the stdio server, the
//! answers rendered as text for snapshots (see [`Fixture`] and [`Session`]).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufReader, PipeWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use factory_lsp::frames::{Frame, FrameReader};
use factory_lsp::world::World;
use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentHighlightRequest, DocumentSymbolRequest,
    FoldingRangeRequest, Formatting, GotoDefinition, HoverRequest, PrepareRenameRequest,
    References, Rename, SemanticTokensFullRequest,
};
use lsp_types::*;
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

// ---------------------------------------------------------------------------------------
// Fixtures: the data-driven harness.
//
// A fixture is one or more files — `//- name` on a line of its own starts a file (a path
// relative to the project: `lib/qa.fwf`, `prompts/custom_role.md`); text before the
// first such line is `main.fwf` — with `$0` markers: one is the cursor; several are as
// many cursors, each asked in turn (or, for a code action, a pair is a range). Every file
// is written to a temporary project; the files holding a marker (else `main.fwf`, or the
// fixture's only `.fwf` file) are opened in the server. Answers are rendered as text:
// places as `file:line:column` (1-based, columns in UTF-16 units) and the text there.
// ---------------------------------------------------------------------------------------

/// The marker for a cursor in a fixture text.
pub const CURSOR: &str = "$0";

/// A marker: its file and byte offset in the file's text (the markers removed).
#[derive(Debug, Clone)]
pub struct Mark {
    pub file: String,
    pub offset: usize,
}

/// A parsed fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The files (name, text without markers), in the fixture's order.
    pub files: Vec<(String, String)>,
    /// The markers, in the fixture's order.
    pub marks: Vec<Mark>,
}

impl Fixture {
    pub fn parse(fixture: &str) -> Fixture {
        let mut raw: Vec<(String, String)> = Vec::new();
        let mut name = "main.fwf".to_string();
        let mut text = String::new();
        for line in fixture
            .strip_prefix('\n')
            .unwrap_or(fixture)
            .split_inclusive('\n')
        {
            if let Some(next) = line.strip_prefix("//- ") {
                if !text.is_empty() {
                    raw.push((name, std::mem::take(&mut text)));
                }
                name = next.trim().to_string();
            } else {
                text.push_str(line);
            }
        }
        raw.push((name, text));
        let mut files = Vec::new();
        let mut marks = Vec::new();
        for (name, text) in raw {
            let mut clean = String::new();
            for (i, piece) in text.split(CURSOR).enumerate() {
                if i > 0 {
                    marks.push(Mark {
                        file: name.clone(),
                        offset: clean.len(),
                    });
                }
                clean.push_str(piece);
            }
            assert!(
                files.iter().all(|(n, _)| *n != name),
                "{name} twice in the fixture"
            );
            files.push((name, clean));
        }
        Fixture { files, marks }
    }

    pub fn text(&self, name: &str) -> &str {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("no {name} in the fixture"))
    }

    /// The one cursor's file and LSP position.
    pub fn cursor(&self) -> (&str, Position) {
        let [mark] = self.marks.as_slice() else {
            panic!("the fixture needs exactly one $0, not {}", self.marks.len());
        };
        (&mark.file, position_of(self.text(&mark.file), mark.offset))
    }

    /// The files opened in the server: those holding a marker (else `main.fwf`, or the
    /// only `.fwf` file).
    pub fn focus(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in &self.marks {
            if !out.contains(&m.file) {
                out.push(m.file.clone());
            }
        }
        if out.is_empty() {
            let fwf: Vec<&String> = self
                .files
                .iter()
                .map(|(n, _)| n)
                .filter(|n| n.ends_with(".fwf"))
                .collect();
            let main = fwf.iter().find(|n| n.as_str() == "main.fwf");
            match (main, fwf.as_slice()) {
                (Some(m), _) => out.push(m.to_string()),
                (None, [only]) => out.push(only.to_string()),
                _ => panic!("which file to open? mark one with $0"),
            }
        }
        out
    }
}

/// The LSP position of a byte offset (UTF-16 columns).
pub fn position_of(text: &str, offset: usize) -> Position {
    let line = text[..offset].matches('\n').count();
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    Position::new(
        line as u32,
        text[start..offset].encode_utf16().count() as u32,
    )
}

/// The byte offset of an LSP position (clamped to its line).
pub fn offset_of(text: &str, p: Position) -> usize {
    let mut start = 0;
    for _ in 0..p.line {
        start = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
    }
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let mut units = 0;
    for (i, ch) in text[start..end].char_indices() {
        if units >= p.character {
            return start + i;
        }
        units += ch.len_utf16() as u32;
    }
    end
}

/// `text` with the edits applied.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> String {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset_of(text, e.range.start),
                offset_of(text, e.range.end),
                e.new_text.as_str(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (a, b, new) in spans {
        out.replace_range(a..b, new);
    }
    out
}

// The params of each request (the handlers' and the wire's types are the same).

pub fn document(uri: &Uri) -> TextDocumentIdentifier {
    TextDocumentIdentifier::new(uri.clone())
}

pub fn at(uri: &Uri, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams::new(document(uri), position)
}

pub fn hover_params(p: TextDocumentPositionParams) -> HoverParams {
    HoverParams {
        text_document_position_params: p,
        work_done_progress_params: Default::default(),
    }
}

pub fn definition_params(p: TextDocumentPositionParams) -> GotoDefinitionParams {
    GotoDefinitionParams {
        text_document_position_params: p,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

pub fn references_params(
    p: TextDocumentPositionParams,
    include_declaration: bool,
) -> ReferenceParams {
    ReferenceParams {
        text_document_position: p,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: ReferenceContext {
            include_declaration,
        },
    }
}

pub fn highlight_params(p: TextDocumentPositionParams) -> DocumentHighlightParams {
    DocumentHighlightParams {
        text_document_position_params: p,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

pub fn completion_params(p: TextDocumentPositionParams) -> CompletionParams {
    CompletionParams {
        text_document_position: p,
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    }
}

pub fn rename_params(p: TextDocumentPositionParams, new_name: &str) -> RenameParams {
    RenameParams {
        text_document_position: p,
        new_name: new_name.to_string(),
        work_done_progress_params: Default::default(),
    }
}

pub fn code_action_params(
    uri: &Uri,
    range: Range,
    diagnostics: Vec<Diagnostic>,
) -> CodeActionParams {
    CodeActionParams {
        text_document: document(uri),
        range,
        context: CodeActionContext {
            diagnostics,
            only: None,
            trigger_kind: None,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

pub fn symbols_params(uri: &Uri) -> DocumentSymbolParams {
    DocumentSymbolParams {
        text_document: document(uri),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

pub fn formatting_params(uri: &Uri) -> DocumentFormattingParams {
    DocumentFormattingParams {
        text_document: document(uri),
        options: FormattingOptions {
            tab_size: 4,
            insert_spaces: true,
            ..Default::default()
        },
        work_done_progress_params: Default::default(),
    }
}

pub fn folding_params(uri: &Uri) -> FoldingRangeParams {
    FoldingRangeParams {
        text_document: document(uri),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

pub fn semantic_tokens_params(uri: &Uri) -> SemanticTokensParams {
    SemanticTokensParams {
        text_document: document(uri),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}

/// Which diagnostics a code action request names in its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// Those overlapping the requested range, as an editor sends.
    Overlapping,
    /// Every published diagnostic of the file.
    All,
    /// None.
    Nothing,
}

enum Backend {
    /// The handlers, called through the server's router on a world of our own.
    Handlers(World),
    /// The real server over OS pipes.
    Stdio(Option<Client>),
}

/// A fixture's project with its files open in a server.
pub struct Session {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub fixture: Fixture,
    /// Current texts by name: the fixture's, then as edits leave them.
    texts: BTreeMap<String, String>,
    /// Open files and their versions.
    versions: BTreeMap<String, i32>,
    /// The last diagnostics published for each open file (stdio).
    published: BTreeMap<String, Vec<Diagnostic>>,
    backend: Backend,
}

/// The answer of the handlers at the fixture's cursor(s), rendered.
pub fn check_hover(fixture: &str) -> String {
    Session::handlers(fixture).hover()
}

pub fn check_definition(fixture: &str) -> String {
    Session::handlers(fixture).definition()
}

/// References, the declaration included.
pub fn check_references(fixture: &str) -> String {
    Session::handlers(fixture).references(true)
}

pub fn check_highlights(fixture: &str) -> String {
    Session::handlers(fixture).highlights()
}

pub fn check_prepare_rename(fixture: &str) -> String {
    Session::handlers(fixture).prepare_rename()
}

pub fn check_rename(fixture: &str, new_name: &str) -> String {
    Session::handlers(fixture).rename(new_name)
}

pub fn check_completion(fixture: &str) -> String {
    Session::handlers(fixture).completion()
}

pub fn check_symbols(fixture: &str) -> String {
    Session::handlers(fixture).symbols()
}

pub fn check_formatting(fixture: &str) -> String {
    Session::handlers(fixture).formatting()
}

/// Code actions at the cursor (or range), naming the overlapping diagnostics.
pub fn check_code_actions(fixture: &str) -> String {
    Session::handlers(fixture).code_actions(Named::Overlapping)
}

pub fn check_folding(fixture: &str) -> String {
    Session::handlers(fixture).folding()
}

pub fn check_semantic_tokens(fixture: &str) -> String {
    Session::handlers(fixture).semantic_tokens()
}

pub fn check_diagnostics(fixture: &str) -> String {
    Session::handlers(fixture).diagnostics()
}

impl Session {
    /// The fixture served by the handlers, in process.
    pub fn handlers(fixture: &str) -> Session {
        Session::new(fixture, false)
    }

    /// The fixture served by the real server over pipes.
    pub fn stdio(fixture: &str) -> Session {
        Session::new(fixture, true)
    }

    fn new(fixture: &str, stdio: bool) -> Session {
        let fixture = Fixture::parse(fixture);
        let (dir, root) = project();
        for (name, text) in &fixture.files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().expect("a directory")).expect("a directory");
            std::fs::write(&path, text).expect("the file is written");
        }
        let backend = if stdio {
            Backend::Stdio(Some(Client::start(&root)))
        } else {
            Backend::Handlers(World::new(Some(&root)))
        };
        let mut s = Session {
            _dir: dir,
            texts: fixture.files.iter().cloned().collect(),
            root,
            fixture,
            versions: BTreeMap::new(),
            published: BTreeMap::new(),
            backend,
        };
        for name in s.fixture.focus() {
            let text = s.texts[&name].clone();
            s.set_text(&name, text);
        }
        s
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub fn uri(&self, name: &str) -> Uri {
        factory_lsp::paths::path_to_uri(&self.path(name)).expect("a file URI")
    }

    /// How a URI is shown: relative to the project, `<builtin>/…` for a copy of an
    /// embedded file, else its path.
    pub fn name(&self, uri: &Uri) -> String {
        let key = factory_lsp::paths::uri_to_key(uri).unwrap_or_else(|| uri.as_str().to_string());
        if let Some(rel) = key.strip_prefix(&format!("{}/", self.root.display())) {
            return rel.to_string();
        }
        match key.split_once("/factory-builtin-") {
            Some((_, rest)) => format!("<builtin>{}", &rest[rest.find('/').unwrap_or(0)..]),
            None => key,
        }
    }

    /// The current text of a file, from the session or the disk.
    fn text_at(&self, uri: &Uri) -> Option<String> {
        let name = self.name(uri);
        self.texts.get(&name).cloned().or_else(|| {
            let key = factory_lsp::paths::uri_to_key(uri)?;
            std::fs::read_to_string(key).ok()
        })
    }

    /// Opens `name` with `text`, or changes its text if it is open, and waits for its
    /// diagnostics (stdio).
    pub fn set_text(&mut self, name: &str, text: String) {
        let uri = self.uri(name);
        let version = self.versions.get(name).map_or(1, |v| v + 1);
        self.versions.insert(name.to_string(), version);
        self.texts.insert(name.to_string(), text.clone());
        let path = self.path(name);
        match &mut self.backend {
            Backend::Handlers(world) => {
                world.open_doc(uri, text, version).expect("a key");
            }
            Backend::Stdio(client) => {
                let client = client.as_mut().expect("running");
                let u = if version == 1 {
                    client.open(&path, &text)
                } else {
                    let u = uri.as_str().to_string();
                    client.change(&u, version, &text);
                    u
                };
                let (_, diags) = client.diagnostics(&u, version);
                let diags = serde_json::from_value(Value::Array(diags)).expect("diagnostics");
                self.published.insert(name.to_string(), diags);
            }
        }
    }

    /// The diagnostics of an open file.
    pub fn diagnostics_of(&self, name: &str) -> Vec<Diagnostic> {
        match &self.backend {
            Backend::Handlers(world) => world.lsp_diagnostics(&self.path(name).to_string_lossy()),
            Backend::Stdio(_) => self.published.get(name).cloned().unwrap_or_default(),
        }
    }

    /// Sends a request; an error response is its message.
    pub fn request<R: lsp_types::request::Request>(
        &mut self,
        params: R::Params,
    ) -> Result<R::Result, String> {
        let params = serde_json::to_value(params).expect("params serialize");
        let resp = match &mut self.backend {
            Backend::Handlers(world) => {
                let req = Request::new(RequestId::from(0), R::METHOD.into(), params);
                factory_lsp::server::dispatch(world, req)
                    .unwrap_or_else(|| panic!("{} is not routed", R::METHOD))
            }
            Backend::Stdio(client) => client.as_mut().expect("running").request(R::METHOD, params),
        };
        match resp.response_result {
            Ok(v) => Ok(serde_json::from_value(v).expect("the result deserializes")),
            Err(e) => Err(self.scrub(&e.message)),
        }
    }

    /// `text` with the project's path shown as `<root>`.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.root.display().to_string(), "<root>")
    }

    /// The one cursor, as request params.
    pub fn cursor_params(&self) -> TextDocumentPositionParams {
        let (file, position) = self.fixture.cursor();
        at(&self.uri(file), position)
    }

    /// Tells the server files changed on disk (a watched-file change).
    pub fn files_changed(&mut self, uris: Vec<Uri>) {
        match &mut self.backend {
            Backend::Handlers(world) => {
                for uri in &uris {
                    let key = factory_lsp::paths::uri_to_key(uri).expect("a key");
                    if key.ends_with(".md") {
                        world.refresh_roles();
                    } else {
                        world.reload_from_disk(&key);
                    }
                }
            }
            Backend::Stdio(client) => {
                // Only prompts: a changed `.fwf` file rechecks only its importers.
                assert!(
                    uris.iter().all(|u| u.as_str().ends_with(".md")),
                    "only prompt changes are supported over stdio: {uris:?}"
                );
                let client = client.as_mut().expect("running");
                let changes: Vec<Value> = uris
                    .iter()
                    .map(|u| json!({"uri": u.as_str(), "type": 1}))
                    .collect();
                client.notify(
                    "workspace/didChangeWatchedFiles",
                    json!({ "changes": changes }),
                );
                // The open files are checked again.
                let open: Vec<(String, i32)> =
                    self.versions.iter().map(|(n, v)| (n.clone(), *v)).collect();
                for (name, version) in open {
                    let u = uri(&self.root.join(&name));
                    let (_, diags) = client.diagnostics(&u, version);
                    let diags = serde_json::from_value(Value::Array(diags)).expect("diagnostics");
                    self.published.insert(name, diags);
                }
            }
        }
    }

    // Rendering.

    /// `file:line:col` and the text of the range (when not empty).
    pub fn place(&self, loc: &Location) -> String {
        let s = loc.range.start;
        let mut out = format!("{}:{}:{}", self.name(&loc.uri), s.line + 1, s.character + 1);
        if let Some(text) = self.text_at(&loc.uri) {
            let (a, b) = (
                offset_of(&text, loc.range.start),
                offset_of(&text, loc.range.end),
            );
            if a < b {
                out.push_str(&format!(" `{}`", &text[a..b]));
            }
        }
        out
    }

    fn place_in(&self, uri: &Uri, range: Range) -> String {
        self.place(&Location::new(uri.clone(), range))
    }

    /// A cursor: its place and the word it is in, the cursor shown as `$0`.
    fn cursor_label(&self, mark: &Mark) -> String {
        let text = &self.fixture.text(&mark.file);
        let word = |c: char| c.is_alphanumeric() || "_./".contains(c);
        let start = text[..mark.offset]
            .rfind(|c: char| !word(c))
            .map_or(0, |i| i + 1);
        let end = text[mark.offset..]
            .find(|c: char| !word(c))
            .map_or(text.len(), |i| mark.offset + i);
        let p = position_of(text, mark.offset);
        format!(
            "{}:{}:{} `{}{CURSOR}{}`",
            mark.file,
            p.line + 1,
            p.character + 1,
            &text[start..mark.offset],
            &text[mark.offset..end]
        )
    }

    pub fn show_diagnostic(&self, uri: &Uri, d: &Diagnostic) -> String {
        let severity = match d.severity {
            Some(DiagnosticSeverity::ERROR) => "error",
            Some(DiagnosticSeverity::WARNING) => "warning",
            Some(DiagnosticSeverity::INFORMATION) => "info",
            Some(DiagnosticSeverity::HINT) => "hint",
            _ => "(no severity)",
        };
        let code = match &d.code {
            Some(NumberOrString::String(c)) => c.clone(),
            Some(NumberOrString::Number(n)) => n.to_string(),
            None => "(no code)".into(),
        };
        let mut out = format!(
            "{} {severity} {code}: {}",
            self.place_in(uri, d.range),
            self.scrub(&d.message).replace('\n', "\n  ")
        );
        for r in d.related_information.iter().flatten() {
            out.push_str(&format!(
                "\n  related: {}: {}",
                self.place(&r.location),
                r.message
            ));
        }
        out
    }

    /// The diagnostics of the open files, each shown.
    fn diagnostic_lines(&self) -> Vec<String> {
        let mut shown = Vec::new();
        for name in self.versions.keys() {
            let uri = self.uri(name);
            for d in self.diagnostics_of(name) {
                shown.push(self.show_diagnostic(&uri, &d));
            }
        }
        shown
    }

    /// The diagnostics of the open files, when there are any, before an answer.
    fn with_diagnostics(&self, answer: String) -> String {
        let shown = self.diagnostic_lines();
        if shown.is_empty() {
            return answer;
        }
        format!("diagnostics:\n{}\n---\n{answer}", indent(&shown.join("\n")))
    }

    /// `ask` at each cursor: the answer, or, for several cursors, each answer under
    /// its cursor.
    fn at_each(
        &mut self,
        mut ask: impl FnMut(&mut Session, TextDocumentPositionParams) -> String,
    ) -> String {
        let marks = self.fixture.marks.clone();
        assert!(!marks.is_empty(), "the fixture needs a $0 cursor");
        let mut out = Vec::new();
        for m in &marks {
            let p = at(
                &self.uri(&m.file),
                position_of(self.fixture.text(&m.file), m.offset),
            );
            let answer = ask(self, p);
            if marks.len() == 1 {
                out.push(answer);
            } else {
                out.push(format!("{}:\n{}", self.cursor_label(m), indent(&answer)));
            }
        }
        out.join("\n")
    }

    fn locations(&self, locs: &[Location]) -> String {
        if locs.is_empty() {
            return "(none)".into();
        }
        locs.iter()
            .map(|l| self.place(l))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Hover markdown verbatim (the project's path shown as `<root>`).
    pub fn hover(&mut self) -> String {
        let out = self.at_each(|s, p| match s.request::<HoverRequest>(hover_params(p)) {
            Ok(Some(h)) => match h.contents {
                HoverContents::Markup(m) => s.scrub(&m.value),
                other => format!("(not markdown: {other:?})"),
            },
            Ok(None) => "(no hover)".into(),
            Err(e) => format!("error: {e}"),
        });
        self.with_diagnostics(out)
    }

    pub fn definition(&mut self) -> String {
        let out = self.at_each(
            |s, p| match s.request::<GotoDefinition>(definition_params(p)) {
                Ok(Some(GotoDefinitionResponse::Scalar(l))) => s.place(&l),
                Ok(Some(GotoDefinitionResponse::Array(ls))) => s.locations(&ls),
                Ok(Some(GotoDefinitionResponse::Link(ls))) => ls
                    .iter()
                    .map(|l| s.place_in(&l.target_uri, l.target_selection_range))
                    .collect::<Vec<_>>()
                    .join("\n"),
                Ok(None) => "(no definition)".into(),
                Err(e) => format!("error: {e}"),
            },
        );
        self.with_diagnostics(out)
    }

    /// References in the server's order.
    pub fn references(&mut self, include_declaration: bool) -> String {
        let out = self.at_each(|s, p| {
            match s.request::<References>(references_params(p, include_declaration)) {
                Ok(Some(ls)) => s.locations(&ls),
                Ok(None) => "(no references)".into(),
                Err(e) => format!("error: {e}"),
            }
        });
        self.with_diagnostics(out)
    }

    pub fn highlights(&mut self) -> String {
        let out = self.at_each(|s, p| {
            let uri = p.text_document.uri.clone();
            match s.request::<DocumentHighlightRequest>(highlight_params(p)) {
                Ok(Some(hs)) if hs.is_empty() => "(none)".into(),
                Ok(Some(hs)) => hs
                    .iter()
                    .map(|h| {
                        let kind = h.kind.map(|k| format!(" ({k:?})")).unwrap_or_default();
                        format!("{}{kind}", s.place_in(&uri, h.range))
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                Ok(None) => "(no highlights)".into(),
                Err(e) => format!("error: {e}"),
            }
        });
        self.with_diagnostics(out)
    }

    pub fn prepare_rename(&mut self) -> String {
        let out = self.at_each(|s, p| {
            let uri = p.text_document.uri.clone();
            match s.request::<PrepareRenameRequest>(p) {
                Ok(Some(PrepareRenameResponse::Range(r))) => s.place_in(&uri, r),
                Ok(Some(PrepareRenameResponse::RangeWithPlaceholder { range, placeholder })) => {
                    format!("{} placeholder `{placeholder}`", s.place_in(&uri, range))
                }
                Ok(Some(other)) => format!("{other:?}"),
                Ok(None) => "(not renamable)".into(),
                Err(e) => format!("error: {e}"),
            }
        });
        self.with_diagnostics(out)
    }

    /// The edits of a rename (each place and the text it replaces, by file), then the
    /// diagnostics of the open files once the edits are applied (an edited file is
    /// opened with its new text).
    pub fn rename(&mut self, new_name: &str) -> String {
        let before = self.with_diagnostics(String::new());
        let p = self.cursor_params();
        let edit = match self.request::<Rename>(rename_params(p, new_name)) {
            Ok(Some(edit)) => edit,
            Ok(None) => return format!("{before}(no edit)"),
            Err(e) => return format!("{before}error: {e}"),
        };
        assert!(edit.document_changes.is_none(), "{edit:?}");
        let mut by_file: Vec<(String, Uri, Vec<TextEdit>)> = edit
            .changes
            .unwrap_or_default()
            .into_iter()
            .map(|(uri, mut edits)| {
                edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
                (self.name(&uri), uri, edits)
            })
            .collect();
        by_file.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::new();
        for (_, uri, edits) in &by_file {
            for e in edits {
                let mut line = self.place_in(uri, e.range);
                if e.new_text != new_name {
                    line.push_str(&format!(" -> `{}`", e.new_text));
                }
                out.push(line);
            }
        }
        for (name, uri, edits) in by_file {
            let text = self.text_at(&uri).expect("an edited file has a text");
            self.set_text(&name, apply_edits(&text, &edits));
        }
        out.push(self.after());
        format!("{before}{}", out.join("\n"))
    }

    /// The diagnostics of the open files now: `after: clean` or each one.
    fn after(&self) -> String {
        let shown = self.diagnostic_lines();
        if shown.is_empty() {
            "after: clean".into()
        } else {
            format!("after:\n{}", indent(&shown.join("\n")))
        }
    }

    /// Completion items as `label (kind) — detail`, in the server's order.
    pub fn completion(&mut self) -> String {
        self.at_each(|s, p| match s.request::<Completion>(completion_params(p)) {
            Ok(Some(r)) => {
                let items = match r {
                    CompletionResponse::Array(items) => items,
                    CompletionResponse::List(list) => list.items,
                };
                if items.is_empty() {
                    return "(no items)".into();
                }
                items
                    .iter()
                    .map(|i| {
                        let kind = i.kind.map(|k| format!(" ({k:?})")).unwrap_or_default();
                        let detail = i
                            .detail
                            .as_ref()
                            .map(|d| format!(" — {d}"))
                            .unwrap_or_default();
                        format!("{}{kind}{detail}", i.label)
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            Ok(None) => "(no completion)".into(),
            Err(e) => format!("error: {e}"),
        })
    }

    fn focus_uri(&self) -> Uri {
        let focus = self.fixture.focus();
        let [name] = focus.as_slice() else {
            panic!("one file to ask about, not {focus:?}");
        };
        self.uri(name)
    }

    /// The outline, nested: `name (kind) — detail at place, lines a-b`.
    pub fn symbols(&mut self) -> String {
        let uri = self.focus_uri();
        let out = match self.request::<DocumentSymbolRequest>(symbols_params(&uri)) {
            Ok(Some(DocumentSymbolResponse::Nested(syms))) => {
                let mut lines = Vec::new();
                self.outline(&uri, &syms, 0, &mut lines);
                lines.join("\n")
            }
            Ok(Some(DocumentSymbolResponse::Flat(syms))) => syms
                .iter()
                .map(|s| format!("{} ({:?}) {}", s.name, s.kind, self.place(&s.location)))
                .collect::<Vec<_>>()
                .join("\n"),
            Ok(None) => "(no symbols)".into(),
            Err(e) => format!("error: {e}"),
        };
        self.with_diagnostics(out)
    }

    fn outline(&self, uri: &Uri, syms: &[DocumentSymbol], depth: usize, out: &mut Vec<String>) {
        for s in syms {
            let detail = s
                .detail
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default();
            out.push(format!(
                "{}{} ({:?}){detail} at {}, lines {}-{}",
                "  ".repeat(depth),
                s.name,
                s.kind,
                self.place_in(uri, s.selection_range),
                s.range.start.line + 1,
                s.range.end.line + 1
            ));
            self.outline(
                uri,
                s.children.as_deref().unwrap_or_default(),
                depth + 1,
                out,
            );
        }
    }

    /// Each edit's range, then its new text verbatim.
    pub fn formatting(&mut self) -> String {
        let uri = self.focus_uri();
        let out = match self.request::<Formatting>(formatting_params(&uri)) {
            Ok(Some(edits)) if edits.is_empty() => "(no edits)".into(),
            Ok(Some(edits)) => edits
                .iter()
                .map(|e| {
                    format!(
                        "edit {}:{}-{}:{}:\n{}",
                        e.range.start.line + 1,
                        e.range.start.character + 1,
                        e.range.end.line + 1,
                        e.range.end.character + 1,
                        e.new_text
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Ok(None) => "(no formatting)".into(),
            Err(e) => format!("error: {e}"),
        };
        self.with_diagnostics(out)
    }

    /// Folding ranges: `start-end (kind)` and the first line, lines 1-based.
    pub fn folding(&mut self) -> String {
        let uri = self.focus_uri();
        let text = self.text_at(&uri).expect("the file's text");
        let lines: Vec<&str> = text.lines().collect();
        let out = match self.request::<FoldingRangeRequest>(folding_params(&uri)) {
            Ok(Some(ranges)) if ranges.is_empty() => "(no ranges)".into(),
            Ok(Some(ranges)) => ranges
                .iter()
                .map(|r| {
                    let kind = r
                        .kind
                        .as_ref()
                        .map(|k| format!(" ({k:?})"))
                        .unwrap_or_default();
                    format!(
                        "{}-{}{kind}: {}",
                        r.start_line + 1,
                        r.end_line + 1,
                        lines.get(r.start_line as usize).map_or("", |l| l.trim())
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Ok(None) => "(no folding)".into(),
            Err(e) => format!("error: {e}"),
        };
        self.with_diagnostics(out)
    }

    /// Every token, decoded with the server's legend: `line:col `text` type [modifiers]`.
    pub fn semantic_tokens(&mut self) -> String {
        let uri = self.focus_uri();
        let text = self.text_at(&uri).expect("the file's text");
        let legend = factory_lsp::handlers::semantic::legend();
        let tokens = match self.request::<SemanticTokensFullRequest>(semantic_tokens_params(&uri)) {
            Ok(Some(SemanticTokensResult::Tokens(t))) => t.data,
            other => return format!("{other:?}"),
        };
        let (mut line, mut col) = (0u32, 0u32);
        let mut out = Vec::new();
        for t in &tokens {
            if t.delta_line > 0 {
                line += t.delta_line;
                col = t.delta_start;
            } else {
                col += t.delta_start;
            }
            let start = offset_of(&text, Position::new(line, col));
            let end = offset_of(&text, Position::new(line, col + t.length));
            let ty = legend
                .token_types
                .get(t.token_type as usize)
                .map_or("(unknown)", |t| t.as_str());
            let modifiers: Vec<&str> = legend
                .token_modifiers
                .iter()
                .enumerate()
                .filter(|(i, _)| t.token_modifiers_bitset & (1 << i) != 0)
                .map(|(_, m)| m.as_str())
                .collect();
            let modifiers = if modifiers.is_empty() {
                String::new()
            } else {
                format!(" [{}]", modifiers.join(", "))
            };
            out.push(format!(
                "{}:{} `{}` {ty}{modifiers}",
                line + 1,
                col + 1,
                &text[start..end]
            ));
        }
        self.with_diagnostics(out.join("\n"))
    }

    /// The diagnostics of the open files (`clean` without any).
    pub fn diagnostics(&mut self) -> String {
        let shown = self.diagnostic_lines();
        if shown.is_empty() {
            "clean".into()
        } else {
            shown.join("\n")
        }
    }

    /// The code actions at the cursor (one marker) or range (two), naming `named`
    /// diagnostics: each title and kind, then its edits — the files it edits shown
    /// whole once edited, the files it creates — and, when it is the only one, the
    /// diagnostics once it is applied.
    pub fn code_actions(&mut self, named: Named) -> String {
        let (file, range) = match self.fixture.marks.as_slice() {
            [m] => {
                let p = position_of(self.fixture.text(&m.file), m.offset);
                (m.file.clone(), Range::new(p, p))
            }
            [a, b] if a.file == b.file => {
                let text = self.fixture.text(&a.file);
                (
                    a.file.clone(),
                    Range::new(position_of(text, a.offset), position_of(text, b.offset)),
                )
            }
            other => panic!("a cursor or a range, not {other:?}"),
        };
        let before = self.with_diagnostics(String::new());
        let diagnostics: Vec<Diagnostic> = self
            .diagnostics_of(&file)
            .into_iter()
            .filter(|d| match named {
                Named::All => true,
                Named::Nothing => false,
                Named::Overlapping => {
                    let key = |p: Position| (p.line, p.character);
                    key(d.range.start) <= key(range.end) && key(range.start) <= key(d.range.end)
                }
            })
            .collect();
        let uri = self.uri(&file);
        let actions =
            match self.request::<CodeActionRequest>(code_action_params(&uri, range, diagnostics)) {
                Ok(Some(actions)) => actions,
                Ok(None) => return format!("{before}(no code actions)"),
                Err(e) => return format!("{before}error: {e}"),
            };
        if actions.is_empty() {
            return format!("{before}(no code actions)");
        }
        let mut out = Vec::new();
        let only = actions.len() == 1;
        for a in actions {
            let a = match a {
                CodeActionOrCommand::CodeAction(a) => a,
                CodeActionOrCommand::Command(c) => {
                    out.push(format!("command {c:?}"));
                    continue;
                }
            };
            let kind = a
                .kind
                .as_ref()
                .map(|k| format!(" ({})", k.as_str()))
                .unwrap_or_default();
            out.push(format!("{}{kind}", self.scrub(&a.title)));
            if let Some(edit) = &a.edit {
                out.push(indent(&self.workspace_edit(edit, only)));
                if only {
                    out.push(self.after());
                }
            }
        }
        format!("{before}{}", out.join("\n"))
    }

    /// A workspace edit shown (and applied when `apply`): the files it creates, and
    /// those it edits, whole once edited.
    fn workspace_edit(&mut self, edit: &WorkspaceEdit, apply: bool) -> String {
        let mut shown = Vec::new();
        let mut on_disk = Vec::new();
        let mut text_edit =
            |s: &mut Session, uri: &Uri, edits: &[TextEdit], shown: &mut Vec<String>| {
                let name = s.name(uri);
                let text = apply_edits(&s.text_at(uri).unwrap_or_default(), edits);
                shown.push(format!("--- {name}\n{text}"));
                if apply {
                    if s.texts.contains_key(&name) && s.versions.contains_key(&name) {
                        s.set_text(&name, text);
                    } else {
                        let path = factory_lsp::paths::uri_to_key(uri).expect("a file");
                        std::fs::write(&path, &text).expect("the file is written");
                        if s.texts.contains_key(&name) {
                            s.texts.insert(name, text);
                        }
                        on_disk.push(uri.clone());
                    }
                }
            };
        let mut changes: Vec<(String, &Uri, &Vec<TextEdit>)> = edit
            .changes
            .iter()
            .flatten()
            .map(|(u, e)| (self.name(u), u, e))
            .collect();
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, uri, edits) in changes {
            text_edit(self, uri, edits, &mut shown);
        }
        match &edit.document_changes {
            None => {}
            Some(DocumentChanges::Edits(edits)) => {
                for e in edits {
                    let edits = left_edits(&e.edits);
                    text_edit(self, &e.text_document.uri, &edits, &mut shown);
                }
            }
            Some(DocumentChanges::Operations(ops)) => {
                for op in ops {
                    match op {
                        DocumentChangeOperation::Op(ResourceOp::Create(c)) => {
                            shown.push(format!("create {}", self.name(&c.uri)));
                            if apply {
                                let path = PathBuf::from(
                                    factory_lsp::paths::uri_to_key(&c.uri).expect("a file"),
                                );
                                std::fs::create_dir_all(path.parent().expect("a directory"))
                                    .expect("a directory");
                                if !path.exists() {
                                    std::fs::write(&path, "").expect("the file is created");
                                }
                            }
                        }
                        DocumentChangeOperation::Op(other) => shown.push(format!("{other:?}")),
                        DocumentChangeOperation::Edit(e) => {
                            let edits = left_edits(&e.edits);
                            text_edit(self, &e.text_document.uri, &edits, &mut shown);
                        }
                    }
                }
            }
        }
        if !on_disk.is_empty() {
            self.files_changed(on_disk);
        }
        shown.join("\n")
    }
}

fn left_edits(edits: &[OneOf<TextEdit, AnnotatedTextEdit>]) -> Vec<TextEdit> {
    edits
        .iter()
        .map(|e| match e {
            OneOf::Left(e) => e.clone(),
            OneOf::Right(a) => a.text_edit.clone(),
        })
        .collect()
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("  {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Backend::Stdio(client) = &mut self.backend
            && let Some(c) = client.take()
            && !std::thread::panicking()
        {
            c.stop();
        }
    }
}
