//! FEEC hypothesis categorisation (Fix > Exploit > Explore > Combine) and anti-pattern
//! detection against reverted history (spec §8.8, Appendix A.2).

pub mod adversarial;
pub mod plateau;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::store::{ExperimentRecord, Verdict};

/// Default Jaccard similarity at or above which a hypothesis repeats a reverted one.
pub const ANTI_PATTERN_THRESHOLD: f64 = 0.6;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Fix,
    Exploit,
    Explore,
    Combine,
}

// Stems: a word matches when it starts with one ("fix" matches "fixes", "fixing").
const FIX: &[&str] = &[
    "fix",
    "bug",
    "broken",
    "crash",
    "error",
    "fail",
    "regress",
    "repair",
    "flak",
    "incorrect",
    "wrong",
    "panic",
];
const EXPLOIT: &[&str] = &[
    "improv",
    "optimi",
    "tune",
    "tuning",
    "refin",
    "increas",
    "extend",
    "enhanc",
    "faster",
    "speed",
    "boost",
    "strengthen",
];
const COMBINE: &[&str] = &[
    "combin", "merg", "integrat", "hybrid", "unif", "together", "fuse", "fusion",
];

/// Lower-cased alphanumeric words.
pub fn tokenize(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// FIX keywords first, then EXPLOIT, then COMBINE; EXPLORE is the catch-all.
pub fn categorize_hypothesis(text: &str) -> Category {
    let words = tokenize(text);
    let any = |stems: &[&str]| words.iter().any(|w| stems.iter().any(|s| w.starts_with(s)));
    if any(FIX) {
        Category::Fix
    } else if any(EXPLOIT) {
        Category::Exploit
    } else if any(COMBINE) {
        Category::Combine
    } else {
        Category::Explore
    }
}

/// |A ∩ B| / |A ∪ B|; two empty sets are not similar.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// A reverted experiment the new hypothesis resembles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AntiPattern {
    pub id: u32,
    pub hypothesis: String,
    pub similarity: f64,
}

/// Reverted experiments whose hypothesis is at least `threshold` similar. Keep, error,
/// superseded and quarantined entries are never matched: retrying a kept idea is not an
/// anti-pattern, and a quarantined one passed its own precheck (it only collided with
/// the target branch's tip).
pub fn find_anti_patterns(
    hypothesis: &str,
    history: &[ExperimentRecord],
    threshold: f64,
) -> Vec<AntiPattern> {
    let tokens = tokenize(hypothesis);
    history
        .iter()
        .filter(|r| r.verdict == Verdict::Revert)
        .filter_map(|r| {
            let similarity = jaccard(&tokens, &tokenize(&r.hypothesis));
            (similarity >= threshold).then(|| AntiPattern {
                id: r.id,
                hypothesis: r.hypothesis.clone(),
                similarity,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: u32, hypothesis: &str, verdict: Verdict) -> ExperimentRecord {
        ExperimentRecord::sample(id, verdict, hypothesis, "")
    }

    #[test]
    fn categories_follow_feec_priority() {
        assert_eq!(
            categorize_hypothesis("Fix the flaky parser test"),
            Category::Fix
        );
        // FIX wins over EXPLOIT when both appear.
        assert_eq!(
            categorize_hypothesis("Optimize the cache and fix its crash"),
            Category::Fix
        );
        assert_eq!(
            categorize_hypothesis("Improve cache hit rate"),
            Category::Exploit
        );
        assert_eq!(
            categorize_hypothesis("Combine the two tokenizers"),
            Category::Combine
        );
        assert_eq!(
            categorize_hypothesis("Try a trie for lookups"),
            Category::Explore
        );
        // Whole-word stems: "prefix" is not "fix".
        assert_eq!(
            categorize_hypothesis("Add a prefix index"),
            Category::Explore
        );
    }

    #[test]
    fn only_reverted_history_is_an_anti_pattern() {
        let text = "add caching to the parser for speed";
        let history = vec![
            record(1, "add caching to the parser for speed", Verdict::Keep),
            record(2, "add caching to the parser for speed", Verdict::Error),
            record(
                3,
                "add caching to the parser for more speed",
                Verdict::Revert,
            ),
            record(4, "rewrite the lexer in assembly", Verdict::Revert),
            record(
                5,
                "add caching to the parser for speed",
                Verdict::Superseded,
            ),
            record(
                6,
                "add caching to the parser for speed",
                Verdict::Quarantined,
            ),
        ];
        let found = find_anti_patterns(text, &history, ANTI_PATTERN_THRESHOLD);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, 3);
        assert!((found[0].similarity - 7.0 / 8.0).abs() < 1e-9);
    }

    #[test]
    fn threshold_is_inclusive() {
        // 3 shared of 5 distinct words: exactly 0.6.
        let history = vec![record(1, "a b c d", Verdict::Revert)];
        assert_eq!(jaccard(&tokenize("a b c e"), &tokenize("a b c d")), 0.6);
        assert_eq!(find_anti_patterns("a b c e", &history, 0.6).len(), 1);
        assert!(find_anti_patterns("a b x y", &history, 0.6).is_empty());
    }
}
