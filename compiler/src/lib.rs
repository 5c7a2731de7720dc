//! The `.fwf` workflow language: parser, salsa database, diagnostics, IR and emitters.

pub mod emit;
pub mod ir;
