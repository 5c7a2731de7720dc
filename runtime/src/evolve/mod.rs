//! The outer loop's building blocks: mutation operators on a workflow's IR, and a hash
//! that graph-isomorphic candidates share.
//!
//! - [`operators`]: the eight operators (`NODE_INSERT` … `KNOB_MUTATE`), each a
//!   function `(&Ir, &mut Source) -> Option<Ir>`; `None` means "does not apply here".
//! - [`source`]: the seeded random source an operator draws from, and the optional
//!   [`Suggest`] hook through which an agent may propose task texts and knob values.
//! - [`suggest`]: the hook as a command (`--suggest CMD`), e.g. an agent CLI.
//! - [`rules`]: every candidate is judged by the compiler's own IR check (the one
//!   `factory check FILE.fwir` runs), so a mutant passes exactly the rules a
//!   hand-written mode passes.
//! - [`generate`]: draws candidates until enough valid, distinct ones exist, counting
//!   per operator what was tried, produced and discarded.
//! - [`output`]: writing candidates to a file or a directory of `cand-NNN.fwir`.
//! - [`hash`]: [`canonical_hash`], invariant under renaming node ids and reordering —
//!   the key of a fitness cache.
//!
//! The search on top of them:
//!
//! - [`bench`]: a bench suite of small projects with scripted agents, and its split.
//! - [`evaluate`]: a candidate scored by really running it on a bench project.
//! - [`cycle`]: the CycleAnalyzer, a run's record rebuilt from `.factory/` alone.
//! - [`archive`]: the MAP-Elites grid (depth, fork degree, agents, gates, knobs).
//! - [`trial`]: one candidate against its parent, and the decision `factory evolve
//!   compare` reads from it (the `evolve` mode's steps).
//! - [`search`]: generations of tournament selection, weighted operators, a fitness
//!   cache by canonical hash, stopping rules, resumable state in `.factory/evolve/`.
//!
//! docs/evolve.md describes the operators and the hash for users.

pub mod archive;
pub mod bench;
pub mod cycle;
mod error;
pub mod evaluate;
pub mod modes;
pub mod report;
pub mod search;
pub mod trial;

pub use error::EvolveError;

mod edit;
pub mod generate;
pub mod hash;
pub mod operators;
pub mod output;
pub mod rules;
pub mod source;
pub mod suggest;

mod forks;
mod params;
mod structure;

#[cfg(test)]
mod tests;

pub use generate::{Candidate, Generated, Stats, generate, generate_composed};
pub use hash::canonical_hash;
pub use operators::Op;
pub use rules::Rules;
pub use source::{Source, Suggest, seed_from};
