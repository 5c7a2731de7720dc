//! The factory runtime.

pub mod discovery;
pub mod eval;
pub mod fsutil;
pub mod guards;
pub mod process;
