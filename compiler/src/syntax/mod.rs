//! Syntax: the grammar, the position-free tree, and the parser that recovers.

pub mod ast;
mod parser;

pub use ast::*;
pub use parser::{Parsed, SourceMap, SyntaxError, parse, unquote};
