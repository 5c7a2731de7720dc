//! The `.fwf` workflow language: parser, salsa database, diagnostics, IR and emitters.

pub mod builtin;
pub mod check;
pub mod db;
pub mod diagnostic;
pub mod driver;
pub mod emit;
pub mod format;
pub mod host;
pub mod ir;
pub mod ir_check;
pub mod lower;
pub mod paths;
pub mod resolve;
pub mod skills;
pub mod syntax;
#[cfg(feature = "testgen")]
pub mod testgen;
pub mod validate;
