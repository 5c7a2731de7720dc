//! Regexes written in factory's own code.

use regex::Regex;

/// A built-in regex. One that does not compile is a bug in factory, not bad input: it
/// panics, naming the pattern, in the first test that reaches it.
pub fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("invalid built-in regex {pattern}: {e}"))
}
