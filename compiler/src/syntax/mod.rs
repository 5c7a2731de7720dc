//! Syntax: the grammar, the position-free tree, and the parser that recovers.

pub mod ast;
mod convert;
mod parser;
mod recover;
pub mod vocabulary;

pub use ast::*;
pub use convert::unquote;
pub use parser::{Parsed, SourceMap, SyntaxError, parse};
