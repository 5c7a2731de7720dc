//! Parallel improve (issue 14): several different hypotheses tested at once, each in
//! its own experiment. So far: the strategist's plan of N hypotheses ([`plan`]).

pub mod plan;
