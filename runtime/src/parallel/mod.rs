//! Parallel improve (issue 14): several different hypotheses tested at once, each in
//! its own experiment. So far: the strategist's plan of N hypotheses ([`plan`]) and the
//! independence gate that groups them into streams ([`streams`]).

pub mod plan;
pub mod streams;
