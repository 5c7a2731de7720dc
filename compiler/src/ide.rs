//! What editors read of the compiler besides diagnostics ([`crate::check`]) and names
//! ([`crate::resolve`]): a file's position-free tree, for hovers, outlines and
//! completions; its tokens (the one lexer), for semantic tokens and folding; the words of the language; which attributes each node kind accepts;
//! the variables a template may name. The rooms these come from (`syntax`, `lower`,
//! `validate`) are private to the compiler: this is the whole of them an editor sees,
//! as rust-analyzer's `ide` and ty's `ty_ide` are of theirs.

pub use crate::lexical::line_start;
pub use crate::lower::ALLOWED_ATTRS;
pub use crate::syntax::lex::{Lexer, Token, TokenKind, lex, significant};
pub use crate::syntax::vocabulary::{self, LABELS, TYPE_NAMES, keywords};
pub use crate::syntax::{
    ArgValue, Ast, Body, Bounds, Decl, DeclKind, GateBy, Loc, NodeDecl, Param, Parsed, SourceMap,
    Value, parse,
};
pub use crate::validate::RUNTIME_VARS;
