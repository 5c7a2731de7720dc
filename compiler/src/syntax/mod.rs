//! Syntax: the grammar, the position-free tree, and the parser that recovers.

pub mod ast;
mod convert;
pub mod lex;
pub mod outline;
mod parser;
pub mod pieces;
mod recover;
pub mod vocabulary;

pub use ast::*;
pub use outline::{ItemId, Level, outline};
pub use parser::{Chunks, Parsed, SourceMap, parse, parse_with};
pub use pieces::{ParsedChunk, parse_chunk};
