//! Where an operator's choices come from: a seeded generator, so a run is reproducible
//! from `--seed`, and an optional hook that may ask an agent for new text.

use factory_compiler::ir::{Knob, Literal, Node};

/// Proposals an agent can make where a fixed list runs out. Every method may decline
/// (`None`); the operators then fall back to their offline behaviour, which is what
/// tests and offline runs use.
pub trait Suggest {
    /// A rewrite of `node`'s task text.
    fn rewrite_task(&self, node: &Node, task: &str) -> Option<String>;
    /// A new value for an `expandable` knob that sits at its bound.
    fn expand_knob(&self, knob: &Knob) -> Option<Literal>;
}

/// The random source of one mutation run: a PCG generator (oorandom) whose sequence is
/// fixed by the seed on every platform and version, plus the optional [`Suggest`] hook.
pub struct Source<'a> {
    rng: oorandom::Rand64,
    hook: Option<&'a dyn Suggest>,
}

/// A seed from text: a number is itself; any other text (a run id, a word) is its
/// FNV-1a hash, so `--seed {{run_id}}` gives each run its own, repeatable draw.
pub fn seed_from(text: &str) -> u64 {
    text.trim().parse().unwrap_or_else(|_| {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    })
}

impl<'a> Source<'a> {
    pub fn new(seed: u64) -> Source<'a> {
        Source {
            rng: oorandom::Rand64::new(u128::from(seed)),
            hook: None,
        }
    }

    /// The same source, asking `hook` before falling back to the offline lists.
    pub fn with_hook(mut self, hook: &'a dyn Suggest) -> Source<'a> {
        self.hook = Some(hook);
        self
    }

    pub fn hook(&self) -> Option<&'a dyn Suggest> {
        self.hook
    }

    /// A number in `0..n`; `n` must not be 0.
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.rand_range(0..n as u64) as usize
    }

    /// One item of `items`, or `None` when it is empty.
    pub fn pick<'b, T>(&mut self, items: &'b [T]) -> Option<&'b T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len()))
        }
    }

    /// True with probability one half.
    pub fn coin(&mut self) -> bool {
        self.below(2) == 1
    }
}
