//! The executor: runs a workflow's IR to an outcome.
//!
//! - [`graph`]: the IR indexed for walking.
//! - [`machine`]: the pure state machine (what runs next), no I/O.

pub mod graph;
pub mod machine;

#[cfg(test)]
mod machine_tests;
