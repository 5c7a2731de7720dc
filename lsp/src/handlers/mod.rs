//! Request handlers, one feature per module. Each takes the world and the request's
//! params and returns the result or a [`HandlerError`] for the client.

pub mod code_action;
pub mod completion;
pub mod definition;
pub mod folding;
pub mod formatting;
pub mod hover;
pub mod rename;
pub mod semantic;
pub mod symbols;

use factory_compiler::db::{Database, Db, SourceFile};
use factory_compiler::ide::Parsed;
use lsp_types::{Position, Uri};

use crate::paths::uri_to_key;
use crate::position::LineIndex;
use crate::world::World;

/// A request that cannot be answered, sent back as an LSP error response.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct HandlerError {
    pub code: i32,
    pub message: String,
}

impl HandlerError {
    /// The request was understood but cannot be carried out (e.g. a rename clash).
    pub fn failed(message: impl Into<String>) -> HandlerError {
        HandlerError {
            code: lsp_server::ErrorCode::RequestFailed as i32,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> HandlerError {
        HandlerError {
            code: lsp_server::ErrorCode::InvalidParams as i32,
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, HandlerError>;

/// One document as the handlers see it.
pub struct DocView<'w> {
    pub key: String,
    pub db: &'w Database,
    pub file: SourceFile,
    pub text: &'w str,
    pub parsed: &'w Parsed,
    pub index: LineIndex<'w>,
}

impl<'w> DocView<'w> {
    pub fn new(world: &'w World, uri: &Uri) -> Result<DocView<'w>> {
        let key = uri_to_key(uri)
            .ok_or_else(|| HandlerError::invalid(format!("not a file URI: {}", uri.as_str())))?;
        let text = world.text(&key);
        Ok(DocView {
            db: &world.db,
            file: world.db.file(&key),
            parsed: world.parsed(&key),
            index: LineIndex::new(text),
            key,
            text,
        })
    }

    pub fn offset(&self, pos: Position) -> usize {
        self.index.offset(pos)
    }

    pub fn range(&self, span: &std::ops::Range<usize>) -> lsp_types::Range {
        self.index.range(span)
    }
}
