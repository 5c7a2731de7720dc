//! The factory language server: diagnostics as you type, hover, go to definition,
//! references, rename, outline, completion and formatting for `.fwf` workflows. It
//! reuses the compiler's salsa database and diagnostics unchanged; no rule is
//! implemented twice.

mod builtin_files;
pub mod convert;
pub mod frames;
pub mod handlers;
pub mod lookup;
pub mod paths;
pub mod position;
pub mod server;
pub mod transport;
pub mod workspace;
pub mod world;

pub use server::{ServerError, run_io, run_stdio, serve};
