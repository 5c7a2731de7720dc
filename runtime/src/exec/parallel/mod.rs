//! Parallel improve (issue 14): several different hypotheses tested at once, each in
//! its own experiment, and the best one re-verified on the target's tip and kept.
//!
//! - [`plan`]: the strategist's plan of N hypotheses.
//! - [`streams`]: the independence gate that groups them into streams.
//! - [`fanout`]: the `parallel` node, which runs one branch per hypothesis.
//! - [`select`]: the `select` node, which picks, re-verifies and supersedes.
//! - [`record`]: what a parallel node did, for `select` and the reports.
//! - [`preview`]: `factory run --preview`.
//!
//! The executor calls [`fanout`] and [`select`] for those node kinds; they run
//! branches through the executor in turn ([`crate::exec::branch`]).

pub mod fanout;
pub mod plan;
pub mod preview;
pub mod record;
pub mod select;
pub mod streams;
