//! Drawing candidates: apply randomly chosen operators to a parent until enough valid,
//! distinct candidates exist, and count per operator what happened to each try.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use factory_compiler::ir::Ir;
use serde::Serialize;

use super::hash::canonical_hash;
use super::operators::Op;
use super::rules::Rules;
use super::source::Source;

/// Tries per wanted candidate before giving up: operators such as `EDGE_REDIRECT` are
/// blind edits, most of which the rules reject, and a small graph may offer fewer
/// distinct mutants than asked for.
pub const TRIES_PER_CANDIDATE: usize = 50;

/// What happened to one operator's tries. `tried` = `produced` + `discarded_invalid`
/// + `duplicates` + `not_applicable`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub tried: usize,
    /// Valid and new: kept as a candidate.
    pub produced: usize,
    /// Rejected by the compiler's graph rules: an error, or a warning the parent did
    /// not have.
    pub discarded_invalid: usize,
    /// Valid, but isomorphic to the parent or to an earlier candidate.
    pub duplicates: usize,
    /// The operator found nothing to change (no knob, no chain to parallelize).
    pub not_applicable: usize,
}

/// A valid candidate, the operator that made it and its [`canonical_hash`].
#[derive(Debug, Clone)]
pub struct Candidate {
    pub op: Op,
    pub ir: Ir,
    pub hash: String,
}

/// The candidates of one `generate` call, in the order they were found, and the
/// per-operator counts (every operator that was allowed, tried or not).
#[derive(Debug, Clone)]
pub struct Generated {
    pub candidates: Vec<Candidate>,
    pub stats: BTreeMap<Op, Stats>,
}

/// Up to `count` valid candidates from `parent` (valid: see [`Rules::accepts`]), each made by one operator drawn
/// uniformly from `ops`; no two share a [`canonical_hash`] and none shares the
/// parent's. Stops after [`TRIES_PER_CANDIDATE`] × `count` tries. The same parent, ops,
/// count and seed give the same candidates.
pub fn generate(
    parent: &Ir,
    ops: &[Op],
    count: usize,
    rules: &Rules,
    src: &mut Source,
) -> Generated {
    let mut out = Generated {
        candidates: Vec::new(),
        stats: ops.iter().map(|op| (*op, Stats::default())).collect(),
    };
    if ops.is_empty() {
        return out;
    }
    let baseline = rules.warnings(parent);
    let mut seen = BTreeSet::from([canonical_hash(parent)]);
    let mut tries = 0;
    while out.candidates.len() < count && tries < count.saturating_mul(TRIES_PER_CANDIDATE) {
        tries += 1;
        let op = ops[src.below(ops.len())];
        let stats = out.stats.entry(op).or_default();
        stats.tried += 1;
        let Some(ir) = op.apply(parent, src) else {
            stats.not_applicable += 1;
            continue;
        };
        if !rules.accepts(&ir, &baseline) {
            stats.discarded_invalid += 1;
            continue;
        }
        let hash = canonical_hash(&ir);
        if !seen.insert(hash.clone()) {
            stats.duplicates += 1;
            continue;
        }
        stats.produced += 1;
        out.candidates.push(Candidate { op, ir, hash });
    }
    out
}

/// Like [`generate`], but each candidate is made by `steps` operators in a row, each
/// applied to the previous step's (valid) result: a bolder move than one edit, for
/// `factory evolve mutate --steps N`. With `steps` 1 it is [`generate`]. A candidate's
/// `op` is its last step's operator; the counts cover every step.
pub fn generate_composed(
    parent: &Ir,
    ops: &[Op],
    count: usize,
    steps: usize,
    rules: &Rules,
    src: &mut Source,
) -> Generated {
    if steps <= 1 {
        return generate(parent, ops, count, rules, src);
    }
    let mut out = Generated {
        candidates: Vec::new(),
        stats: ops.iter().map(|op| (*op, Stats::default())).collect(),
    };
    let mut seen = BTreeSet::from([canonical_hash(parent)]);
    let mut tries = 0;
    while out.candidates.len() < count && tries < count.saturating_mul(TRIES_PER_CANDIDATE) {
        tries += 1;
        let mut current: Option<Candidate> = None;
        for _ in 0..steps {
            let from = current.as_ref().map_or(parent, |c| &c.ir);
            let mut step = generate(from, ops, 1, rules, src);
            for (op, s) in &step.stats {
                out.stats.entry(*op).or_default().add(s);
            }
            match step.candidates.pop() {
                Some(c) => current = Some(c),
                None => break,
            }
        }
        // A later step may undo an earlier one: the result must still be new.
        if let Some(c) = current
            && seen.insert(c.hash.clone())
        {
            out.candidates.push(c);
        }
    }
    out
}

impl Stats {
    fn add(&mut self, other: &Stats) {
        self.tried += other.tried;
        self.produced += other.produced;
        self.discarded_invalid += other.discarded_invalid;
        self.duplicates += other.duplicates;
        self.not_applicable += other.not_applicable;
    }
}

impl Generated {
    /// One line per operator: tried, produced, discarded (invalid), duplicates, not
    /// applicable.
    pub fn render_stats(&self) -> String {
        let mut text = format!(
            "{:<14} {:>6} {:>9} {:>9} {:>10} {:>15}\n",
            "operator", "tried", "produced", "invalid", "duplicate", "not applicable"
        );
        for (op, s) in &self.stats {
            let _ = writeln!(
                text,
                "{:<14} {:>6} {:>9} {:>9} {:>10} {:>15}",
                op.name(),
                s.tried,
                s.produced,
                s.discarded_invalid,
                s.duplicates,
                s.not_applicable
            );
        }
        text
    }
}
