//! FEEC hypothesis categorisation (Fix > Exploit > Explore > Combine) and anti-pattern
//! detection against reverted history (spec §8.8, Appendix A.2).

pub mod adversarial;
pub mod plateau;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::store::{ExperimentRecord, GateConfig, RevertCause, Verdict};

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

/// Why a reverted experiment the hypothesis resembles does not count against it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum SkipReason {
    /// `factory history forget` cleared it.
    Forgotten { at: String },
    /// Its cause cannot recur by itself: the environment, flakiness, or no failed
    /// measurement at all.
    NotMeasured { cause: RevertCause },
    /// Recorded before gate configurations were (or without one): nothing says it was
    /// judged by today's gate.
    OlderRecord,
    /// This check has no gate configuration to compare with (no factory.md).
    NoConfiguration,
    /// Judged under another factory.md.
    OtherFactoryMd,
    /// Judged under another eval profile.
    OtherEvalProfile,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Forgotten { at } => write!(f, "forgotten at {at}"),
            Self::NotMeasured {
                cause: RevertCause::Environment,
            } => f.write_str("reverted for the environment or the eval, not the change"),
            Self::NotMeasured {
                cause: RevertCause::Flaky,
            } => f.write_str("what failed was flaky"),
            Self::NotMeasured { .. } => f.write_str(
                "no failed measurement on record (no failing precheck, or one that failed only on QA or resemblance)",
            ),
            Self::OlderRecord => f.write_str("recorded without a gate configuration"),
            Self::NoConfiguration => {
                f.write_str("this check has no factory.md to compare configurations with")
            }
            Self::OtherFactoryMd => f.write_str("judged under another factory.md"),
            Self::OtherEvalProfile => f.write_str("judged under another eval profile"),
        }
    }
}

/// A reverted experiment the hypothesis resembles that was not counted, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedRevert {
    pub id: u32,
    pub similarity: f64,
    pub reason: SkipReason,
}

/// What [`find_anti_patterns`] found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AntiPatterns {
    /// Reverts that count: the hypothesis repeats them.
    pub matches: Vec<AntiPattern>,
    /// Similar reverts that do not count.
    pub skipped: Vec<SkippedRevert>,
}

impl AntiPatterns {
    /// One line naming each skipped revert and why, `None` when none was skipped.
    pub fn skipped_line(&self) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .skipped
            .iter()
            .map(|s| {
                format!(
                    "experiment {} ({:.2} similar): {}",
                    s.id, s.similarity, s.reason
                )
            })
            .collect();
        Some(format!("similar reverts not counted: {}", each.join("; ")))
    }
}

/// Reverted experiments whose hypothesis is at least `threshold` similar, split into
/// those that count and those that do not. A revert counts only when its cause was
/// measured (score, guards, tests — [`RevertCause::Measured`]) under the same gate
/// configuration as `gate` (factory.md and eval profile) and it was not forgotten; a
/// record without a configuration is older and never counts. Keep, error, superseded
/// and quarantined entries are never considered: retrying a kept idea is not an
/// anti-pattern, and a quarantined one passed its own precheck (it only collided with
/// the target branch's tip).
pub fn find_anti_patterns(
    hypothesis: &str,
    history: &[ExperimentRecord],
    threshold: f64,
    gate: Option<&GateConfig>,
) -> AntiPatterns {
    let tokens = tokenize(hypothesis);
    let mut found = AntiPatterns::default();
    for r in history.iter().filter(|r| r.verdict == Verdict::Revert) {
        let similarity = jaccard(&tokens, &tokenize(&r.hypothesis));
        if similarity < threshold {
            continue;
        }
        let reason = if let Some(at) = &r.forgotten_at {
            Some(SkipReason::Forgotten { at: at.clone() })
        } else {
            match (r.revert_cause, &r.gate, gate) {
                (Some(cause), _, _) if cause != RevertCause::Measured => {
                    Some(SkipReason::NotMeasured { cause })
                }
                (None, _, _) | (_, None, _) => Some(SkipReason::OlderRecord),
                (_, Some(_), None) => Some(SkipReason::NoConfiguration),
                (_, Some(then), Some(now)) if then.factory_md != now.factory_md => {
                    Some(SkipReason::OtherFactoryMd)
                }
                (_, Some(then), Some(now)) if then.eval_profile != now.eval_profile => {
                    Some(SkipReason::OtherEvalProfile)
                }
                _ => None,
            }
        };
        match reason {
            Some(reason) => found.skipped.push(SkippedRevert {
                id: r.id,
                similarity,
                reason,
            }),
            None => found.matches.push(AntiPattern {
                id: r.id,
                hypothesis: r.hypothesis.clone(),
                similarity,
            }),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(md: &str) -> GateConfig {
        GateConfig {
            factory_md: md.into(),
            eval_profile: "none".into(),
        }
    }

    /// A revert measured under configuration `md` (other verdicts as they are).
    fn record(id: u32, hypothesis: &str, verdict: Verdict) -> ExperimentRecord {
        let mut r = ExperimentRecord::sample(id, verdict, hypothesis, "");
        r.gate = Some(gate("md"));
        r.revert_cause = (verdict == Verdict::Revert).then_some(RevertCause::Measured);
        r
    }

    fn ids(found: &AntiPatterns) -> Vec<u32> {
        found.matches.iter().map(|a| a.id).collect()
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
        let found = find_anti_patterns(text, &history, ANTI_PATTERN_THRESHOLD, Some(&gate("md")));
        assert_eq!(ids(&found), vec![3]);
        assert!((found.matches[0].similarity - 7.0 / 8.0).abs() < 1e-9);
        assert!(found.skipped.is_empty(), "{found:?}");
    }

    #[test]
    fn threshold_is_inclusive() {
        // 3 shared of 5 distinct words: exactly 0.6.
        let history = vec![record(1, "a b c d", Verdict::Revert)];
        let now = gate("md");
        assert_eq!(jaccard(&tokenize("a b c e"), &tokenize("a b c d")), 0.6);
        assert_eq!(
            find_anti_patterns("a b c e", &history, 0.6, Some(&now))
                .matches
                .len(),
            1
        );
        let none = find_anti_patterns("a b x y", &history, 0.6, Some(&now));
        assert!(none.matches.is_empty() && none.skipped.is_empty());
    }

    #[test]
    fn only_measured_reverts_under_the_same_configuration_count() {
        let h = "cache the parser";
        let now = gate("md");
        let mut other_md = record(1, h, Verdict::Revert);
        other_md.gate = Some(gate("older"));
        let mut other_profile = record(2, h, Verdict::Revert);
        other_profile.gate = Some(GateConfig {
            factory_md: "md".into(),
            eval_profile: "approved:abc".into(),
        });
        let mut environment = record(3, h, Verdict::Revert);
        environment.revert_cause = Some(RevertCause::Environment);
        let mut flaky = record(4, h, Verdict::Revert);
        flaky.revert_cause = Some(RevertCause::Flaky);
        let mut unmeasured = record(5, h, Verdict::Revert);
        unmeasured.revert_cause = Some(RevertCause::Unmeasured);
        let older = ExperimentRecord::sample(6, Verdict::Revert, h, "");
        let mut forgotten = record(7, h, Verdict::Revert);
        forgotten.forgotten_at = Some("2026-12-01T00:00:00Z".into());
        let same = record(8, h, Verdict::Revert);
        let history = vec![
            other_md,
            other_profile,
            environment,
            flaky,
            unmeasured,
            older,
            forgotten,
            same,
        ];
        let found = find_anti_patterns(h, &history, ANTI_PATTERN_THRESHOLD, Some(&now));
        assert_eq!(ids(&found), vec![8]);
        let reasons: Vec<(u32, SkipReason)> = found
            .skipped
            .iter()
            .map(|s| (s.id, s.reason.clone()))
            .collect();
        assert_eq!(
            reasons,
            vec![
                (1, SkipReason::OtherFactoryMd),
                (2, SkipReason::OtherEvalProfile),
                (
                    3,
                    SkipReason::NotMeasured {
                        cause: RevertCause::Environment
                    }
                ),
                (
                    4,
                    SkipReason::NotMeasured {
                        cause: RevertCause::Flaky
                    }
                ),
                (
                    5,
                    SkipReason::NotMeasured {
                        cause: RevertCause::Unmeasured
                    }
                ),
                (6, SkipReason::OlderRecord),
                (
                    7,
                    SkipReason::Forgotten {
                        at: "2026-12-01T00:00:00Z".into()
                    }
                ),
            ]
        );
        let line = found.skipped_line().unwrap();
        assert!(
            line.contains("experiment 1 (1.00 similar): judged under another factory.md")
                && line.contains("experiment 7 (1.00 similar): forgotten at 2026-12-01T00:00:00Z"),
            "{line}"
        );
        // Without a configuration to compare with, even the same one does not count.
        let blind = find_anti_patterns(h, &history[7..], ANTI_PATTERN_THRESHOLD, None);
        assert!(blind.matches.is_empty());
        assert_eq!(blind.skipped[0].reason, SkipReason::NoConfiguration);
    }
}
