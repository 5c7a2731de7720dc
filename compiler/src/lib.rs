//! The `.fwf` workflow language: parser, salsa database, diagnostics, IR and emitters.

pub mod emit;
pub mod ir;
pub mod syntax;
pub mod diagnostic;
pub mod validate;
pub mod lower;
pub mod db;
pub mod check;
pub mod host;
pub mod driver;
mod ir_check;
