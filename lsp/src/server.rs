//! The main loop: reads messages from the client, keeps the world up to date and
//! answers requests. A panic in a handler becomes an error response, never a dead server.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentHighlightRequest, DocumentSymbolRequest,
    FoldingRangeRequest, Formatting, GotoDefinition, HoverRequest, PrepareRenameRequest,
    References, Rename, Request as _, SemanticTokensFullRequest, Shutdown,
};
use lsp_types::{
    CompletionOptions, InitializeParams, OneOf, PublishDiagnosticsParams, RenameOptions,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};

use crate::handlers::{self, HandlerError};
use crate::paths::uri_to_key;
use crate::world::{Doc, World};

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("the LSP connection failed: {0}")]
    Protocol(#[from] lsp_server::ProtocolError),
    #[error("the client sent bad initialize params: {0}")]
    Init(#[from] serde_json::Error),
    #[error("bad params: {0}")]
    BadParams(String),
    #[error("cannot write to the client: the connection is closed")]
    Disconnected,
    #[error("reading or writing stdio failed: {0}")]
    Io(#[from] std::io::Error),
}

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Simple(true)),
        folding_range_provider: Some(lsp_types::FoldingRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(
            lsp_types::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp_types::SemanticTokensOptions {
                    legend: handlers::semantic::legend(),
                    full: Some(lsp_types::SemanticTokensFullOptions::Bool(true)),
                    ..Default::default()
                },
            ),
        ),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), ":".into(), "(".into()]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Serves one client on stdin/stdout until it sends `exit`.
pub fn run_stdio() -> Result<(), ServerError> {
    let (connection, io_threads) = crate::transport::stdio();
    serve(&connection)?;
    drop(connection);
    io_threads.join()?;
    Ok(())
}

/// Serves one client over a byte stream pair (what [`run_stdio`] does on stdio), until
/// `exit` or the end of `input`.
pub fn run_io(
    input: impl std::io::BufRead + Send + 'static,
    output: impl std::io::Write + Send + 'static,
) -> Result<(), ServerError> {
    let (connection, io_threads) = crate::transport::io(input, output);
    serve(&connection)?;
    drop(connection);
    io_threads.join()?;
    Ok(())
}

/// Serves one client over `connection`: the handshake, then the main loop.
pub fn serve(connection: &Connection) -> Result<(), ServerError> {
    let caps = serde_json::to_value(capabilities())?;
    let init = serde_json::json!({
        "capabilities": caps,
        "serverInfo": { "name": "factory-lsp", "version": env!("CARGO_PKG_VERSION") },
    });
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params)?;
    connection.initialize_finish(id, init)?;
    #[allow(deprecated)] // root_uri is what older clients send
    let root = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .map(|f| f.uri.clone())
        .or(params.root_uri.clone())
        .and_then(|u| uri_to_key(&u));
    if params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        == Some(true)
    {
        connection
            .sender
            .send(watch_request().into())
            .map_err(|_| ServerError::Disconnected)?;
    }
    let mut server = Server {
        world: World::new(root.as_deref().map(std::path::Path::new)),
        connection,
        pending: BTreeSet::new(),
        unpublished: Arc::default(),
        shutting_down: false,
        last_change: None,
        in_burst: false,
    };
    server.main_loop()
}

/// How long the server waits, inside a burst of edits, for the next one before it
/// checks: a burst of keystrokes is checked once, at its last version. An edit that
/// follows a pause, or the publication of the edit before it, is checked at once (a
/// newer edit cancels that check anyway).
const DEBOUNCE: Duration = Duration::from_millis(10);

struct Server<'c> {
    world: World,
    connection: &'c Connection,
    /// Files changed since the last check started.
    pending: BTreeSet<String>,
    /// Changed files whose check was cancelled by a newer edit: checked next time.
    unpublished: Arc<Mutex<BTreeSet<String>>>,
    /// After `shutdown`, requests are refused until `exit`.
    shutting_down: bool,
    /// When the last change arrived, and whether it came within [`DEBOUNCE`] of the
    /// change before it while that one was not yet checked (a burst).
    last_change: Option<Instant>,
    in_burst: bool,
}

impl Server<'_> {
    fn main_loop(&mut self) -> Result<(), ServerError> {
        loop {
            let next = if self.pending.is_empty() {
                self.connection
                    .receiver
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                let wait = if self.in_burst {
                    DEBOUNCE
                } else {
                    Duration::ZERO
                };
                self.connection.receiver.recv_timeout(wait)
            };
            let msg = match next {
                Ok(msg) => msg,
                Err(RecvTimeoutError::Timeout) => {
                    self.start_check();
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            };
            match msg {
                Message::Request(req) if self.shutting_down => {
                    self.send(
                        Response::new_err(
                            req.id,
                            ErrorCode::InvalidRequest as i32,
                            format!("{} after shutdown: the server is shutting down", req.method),
                        )
                        .into(),
                    )?;
                }
                Message::Request(req) if req.method == Shutdown::METHOD => {
                    self.shutting_down = true;
                    self.send(Response::new_ok(req.id, ()).into())?;
                }
                Message::Request(req) => {
                    let resp = self.request(req);
                    self.send(resp.into())?;
                }
                Message::Notification(n) if n.method == Exit::METHOD => return Ok(()),
                Message::Notification(_) if self.shutting_down => {}
                Message::Notification(n) => {
                    let method = n.method.clone();
                    let outcome = catch_unwind(AssertUnwindSafe(|| self.notification(n)));
                    match outcome {
                        // A malformed notification is the client's bug: say so, keep serving.
                        Ok(Err(ServerError::BadParams(e))) => {
                            self.log(&format!("ignored {method} with bad params: {e}"))?
                        }
                        Ok(result) => result?,
                        Err(_) => self.log(&format!(
                            "internal error while handling {method}; the server keeps running"
                        ))?,
                    }
                }
                Message::Response(_) => {}
            }
        }
    }

    /// Checks the pending files, and the open files importing them, on a snapshot of the
    /// database in a thread of its own, publishing as each file is done. The next edit
    /// cancels it (salsa unwinds a snapshot's queries when its database is written), so
    /// a stale version is never finished.
    fn start_check(&mut self) {
        let mut changed = std::mem::take(&mut self.pending);
        if let Ok(mut left) = self.unpublished.lock() {
            changed.append(&mut left);
        }
        let changed: Vec<String> = changed.into_iter().collect();
        let open: Vec<(String, Doc)> = self
            .world
            .open
            .iter()
            .map(|(k, d)| (k.clone(), d.clone()))
            .collect();
        let mut changed_keys = changed.clone();
        changed_keys.extend(changed.iter().filter_map(|k| self.world.alias(k)));
        let db = self.world.db.clone();
        let sender = self.connection.sender.clone();
        let unpublished = self.unpublished.clone();
        std::thread::spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let keys: Vec<&String> = open.iter().map(|(k, _)| k).collect();
                for key in crate::world::affected(&db, &keys, &changed_keys) {
                    let Some((_, doc)) = open.iter().find(|(k, _)| *k == key) else {
                        continue;
                    };
                    let diagnostics = crate::world::lsp_diagnostics(&db, &key, &doc.uri);
                    let _ = sender.send(publication(&doc.uri, diagnostics, Some(doc.version)));
                }
            }));
            match outcome {
                Ok(()) => {}
                Err(payload) if payload.is::<salsa::Cancelled>() => {
                    // A newer edit is waiting to be written: check these files with it.
                    // (Recorded before `db` is dropped, which is what the writer waits for.)
                    if let Ok(mut left) = unpublished.lock() {
                        left.extend(changed);
                    }
                }
                Err(_) => {
                    let _ = sender.send(log_message(
                        "internal error while checking; this is a bug in factory-lsp, the server keeps running",
                    ));
                }
            }
            drop(db);
        });
    }

    fn send(&self, msg: Message) -> Result<(), ServerError> {
        self.connection
            .sender
            .send(msg)
            .map_err(|_| ServerError::Disconnected)
    }

    fn log(&self, message: &str) -> Result<(), ServerError> {
        self.send(log_message(message))
    }

    fn request(&mut self, req: Request) -> Response {
        let world = &mut self.world;
        guarded(req.id.clone(), &req.method.clone(), || dispatch(world, req))
    }

    fn notification(&mut self, n: Notification) -> Result<(), ServerError> {
        let changed: Option<String> = match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams = parse(n.params)?;
                let doc = p.text_document;
                self.world.open_doc(doc.uri, doc.text, doc.version)
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams = parse(n.params)?;
                let Some(key) = uri_to_key(&p.text_document.uri) else {
                    return Ok(());
                };
                if !self.world.open.contains_key(&key) {
                    // Its text is the file on disk; an edit against text the client
                    // never sent would corrupt it. The client must open it first.
                    return self.log(&format!(
                        "ignored didChange for {}: the document is not open (send didOpen first)",
                        p.text_document.uri.as_str()
                    ));
                }
                let mut text = self.world.text(&key).to_string();
                for change in p.content_changes {
                    crate::position::apply_change(&mut text, change.range, &change.text);
                }
                self.world.set_text(&key, text);
                if let Some(doc) = self.world.open.get_mut(&key) {
                    doc.version = p.text_document.version;
                }
                Some(key)
            }
            DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams = parse(n.params)?;
                let Some(key) = uri_to_key(&p.text_document.uri) else {
                    return Ok(());
                };
                self.world.open.remove(&key);
                // The file on disk is the truth again for files that import it.
                self.world.reload_from_disk(&key);
                self.publish(&p.text_document.uri, Vec::new(), None)?;
                Some(key)
            }
            DidSaveTextDocument::METHOD => None,
            DidChangeWatchedFiles::METHOD => {
                let p: lsp_types::DidChangeWatchedFilesParams = parse(n.params)?;
                let mut prompts_changed = false;
                for change in p.changes {
                    let Some(key) = uri_to_key(&change.uri) else {
                        continue;
                    };
                    if key.ends_with(".md") {
                        prompts_changed = true;
                    } else {
                        self.world.reload_from_disk(&key);
                        self.republish(&key)?;
                    }
                }
                if prompts_changed {
                    self.world.refresh_roles();
                    let open: Vec<String> = self.world.open.keys().cloned().collect();
                    for key in open {
                        self.republish(&key)?;
                    }
                }
                None
            }
            _ => None,
        };
        if let Some(key) = changed {
            self.republish(&key)?;
        }
        Ok(())
    }

    /// Schedules fresh diagnostics for every open file `key` can affect.
    fn republish(&mut self, key: &str) -> Result<(), ServerError> {
        let now = Instant::now();
        let recent = self
            .last_change
            .is_some_and(|t| now.duration_since(t) < DEBOUNCE);
        // Edits outrun the checks when the edit before this one is still waiting to be
        // checked, or its check was cancelled by this one (the writer waits for the
        // cancelled check, which records its files first). An edit that comes after
        // the previous one was published is checked at once, however soon after.
        let behind =
            !self.pending.is_empty() || self.unpublished.lock().is_ok_and(|left| !left.is_empty());
        self.in_burst = recent && behind;
        self.last_change = Some(now);
        self.pending.insert(key.to_string());
        Ok(())
    }

    fn publish(
        &self,
        uri: &Uri,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) -> Result<(), ServerError> {
        self.send(publication(uri, diagnostics, version))
    }
}

fn publication(
    uri: &Uri,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) -> Message {
    let params = PublishDiagnosticsParams {
        uri: uri.clone(),
        diagnostics,
        version,
    };
    Notification::new(PublishDiagnostics::METHOD.into(), params).into()
}

fn log_message(message: &str) -> Message {
    let params = lsp_types::LogMessageParams {
        typ: lsp_types::MessageType::ERROR,
        message: message.to_string(),
    };
    Notification::new(lsp_types::notification::LogMessage::METHOD.into(), params).into()
}

/// Asks the client to tell the server about changes on disk to workflow files (imported
/// files are read from disk) and to prompts (they decide which roles are known).
fn watch_request() -> Request {
    let watchers: Vec<serde_json::Value> =
        ["**/*.fwf", "**/prompts/*.md", "**/.factory/agents/*.md"]
            .iter()
            .map(|g| serde_json::json!({ "globPattern": g }))
            .collect();
    Request::new(
        RequestId::from("factory-watch".to_string()),
        "client/registerCapability".into(),
        serde_json::json!({ "registrations": [{
            "id": "factory-watch",
            "method": DidChangeWatchedFiles::METHOD,
            "registerOptions": { "watchers": watchers },
        }]}),
    )
}

/// Runs a request handler so that a panic becomes an error response: one bad request
/// must not take the editor's diagnostics down with it.
pub fn guarded(
    id: RequestId,
    method: &str,
    handler: impl FnOnce() -> Option<Response>,
) -> Response {
    match catch_unwind(AssertUnwindSafe(handler)) {
        Ok(Some(resp)) => resp,
        Ok(None) => Response::new_err(
            id,
            ErrorCode::MethodNotFound as i32,
            format!("unsupported request {method}"),
        ),
        Err(_) => Response::new_err(
            id,
            ErrorCode::InternalError as i32,
            format!(
                "internal error while handling {method}; this is a bug in factory-lsp, the server keeps running"
            ),
        ),
    }
}

fn parse<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, ServerError> {
    serde_json::from_value(v).map_err(|e| ServerError::BadParams(e.to_string()))
}

/// Routes a request to its handler; `None` for a method the server does not know.
pub fn dispatch(world: &mut World, req: Request) -> Option<Response> {
    let r = Route { world, req };
    r.on::<HoverRequest>(handlers::hover::hover)
        .or_else(|r| r.on::<GotoDefinition>(handlers::definition::definition))
        .or_else(|r| r.on::<References>(handlers::definition::references))
        .or_else(|r| r.on::<DocumentHighlightRequest>(handlers::definition::highlights))
        .or_else(|r| r.on::<PrepareRenameRequest>(handlers::rename::prepare))
        .or_else(|r| r.on::<Rename>(handlers::rename::rename))
        .or_else(|r| r.on::<DocumentSymbolRequest>(handlers::symbols::document_symbols))
        .or_else(|r| r.on::<Formatting>(handlers::formatting::formatting))
        .or_else(|r| r.on::<Completion>(handlers::completion::completion))
        .or_else(|r| r.on_mut::<CodeActionRequest>(handlers::code_action::code_actions))
        .or_else(|r| r.on::<FoldingRangeRequest>(handlers::folding::folding_ranges))
        .or_else(|r| r.on::<SemanticTokensFullRequest>(handlers::semantic::semantic_tokens))
        .ok()
}

struct Route<'w> {
    world: &'w mut World,
    req: Request,
}

impl<'w> Route<'w> {
    /// A handler that only reads the world (all but one).
    fn on<R: lsp_types::request::Request>(
        self,
        handler: fn(&World, R::Params) -> handlers::Result<R::Result>,
    ) -> Result<Response, Route<'w>> {
        self.on_mut::<R>(|world, params| handler(world, params))
    }

    fn on_mut<R: lsp_types::request::Request>(
        self,
        handler: impl FnOnce(&mut World, R::Params) -> handlers::Result<R::Result>,
    ) -> Result<Response, Route<'w>> {
        if self.req.method != R::METHOD {
            return Err(self);
        }
        let id = self.req.id.clone();
        let params: R::Params = match serde_json::from_value(self.req.params) {
            Ok(p) => p,
            Err(e) => {
                return Ok(Response::new_err(
                    id,
                    ErrorCode::InvalidParams as i32,
                    format!("bad params for {}: {e}", R::METHOD),
                ));
            }
        };
        Ok(match handler(self.world, params) {
            Ok(result) => Response::new_ok(id, result),
            Err(HandlerError { code, message }) => Response::new_err(id, code, message),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_handler_becomes_an_internal_error_response() {
        let resp = guarded(RequestId::from(7), "textDocument/hover", || panic!("boom"));
        let err = resp.response_result.expect_err("an error response");
        assert_eq!(err.code, ErrorCode::InternalError as i32);
        assert!(err.message.contains("textDocument/hover"));
        assert_eq!(resp.id, RequestId::from(7));
    }

    #[test]
    fn unknown_methods_are_method_not_found() {
        let dir = std::env::temp_dir();
        let mut world = World::new(Some(&dir));
        let req = Request::new(
            RequestId::from(1),
            "textDocument/nonsense".into(),
            serde_json::json!({}),
        );
        let resp = guarded(RequestId::from(1), "textDocument/nonsense", || {
            dispatch(&mut world, req)
        });
        assert_eq!(
            resp.response_result.err().map(|e| e.code),
            Some(ErrorCode::MethodNotFound as i32)
        );
    }

    #[test]
    fn bad_params_are_invalid_params_not_a_crash() {
        let dir = std::env::temp_dir();
        let mut world = World::new(Some(&dir));
        let req = Request::new(
            RequestId::from(2),
            "textDocument/hover".into(),
            serde_json::json!({"nope": 1}),
        );
        let resp = dispatch(&mut world, req).expect("hover is routed");
        assert_eq!(
            resp.response_result.err().map(|e| e.code),
            Some(ErrorCode::InvalidParams as i32)
        );
    }
}
