//! The `.fwf` workflow language: parser, salsa database, diagnostics, IR and emitters.
//!
//! Its rooms, each using only the rooms listed before it (`tests/e2e/layering.rs` checks
//! this order; tests may use anything):
//!
//! - [`paths`]: lexical path normalisation, the one rule for when two spellings name
//!   one file.
//! - [`lexical`]: the lexical rules every room shares (what an identifier is).
//! - [`ir`]: the flat, versioned IR — the contract with everything downstream — its
//!   text and JSON forms and its content hash.
//! - [`diagnostic`]: findings and diagnostics as data, fixes as data and as edits,
//!   a diagnostic with the text it indexes.
//! - [`syntax`]: the grammar, the position-free tree, the parser that recovers.
//! - [`db`]: the salsa database; source files are inputs, everything else a query.
//! - [`builtin`]: the modes, standard library and role prompts shipped in the binary.
//! - [`host`]: reading sources from disk and finding the roles that have prompts.
//! - [`format`]: the canonical formatter for `.fwf` files.
//! - [`validate`]: the graph rules, run on the IR.
//! - [`lower`]: a workflow and the subgraphs it uses become one flat IR.
//! - [`check`]: the checking pipeline — imports, lowering, validation, positions —
//!   for `.fwf` files and bare IR text.
//! - [`resolve`]: name resolution for the language server.
//! - [`ide`]: the rest of what an editor reads — a file's tree, the language's words,
//!   the attributes of each kind — in front of the private `syntax`, `lower` and
//!   `validate`.
//! - [`driver`]: compile a file or a mode from disk, with its diagnostics located.
//! - [`emit`]: the IR as dot, Mermaid, SKILL.md and `.fwf`.
//! - [`skills`]: exported skills, rendered, placed and checked.
//! - [`testgen`]: generated workflows for benches and tests (feature `testgen`).

pub mod builtin;
pub mod check;
pub mod db;
pub mod diagnostic;
pub mod driver;
pub mod emit;
pub mod format;
pub mod host;
pub mod ide;
pub mod ir;
pub mod lexical;
pub(crate) mod lower;
pub mod paths;
pub mod resolve;
pub mod skills;
pub(crate) mod syntax;
#[cfg(feature = "testgen")]
pub mod testgen;
pub(crate) mod validate;
