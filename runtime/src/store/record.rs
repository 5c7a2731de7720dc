//! The experiment record (spec §6.5): one row of `results.tsv` and the content of
//! `experiments/NNN/verdict.json`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How an experiment ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The change measurably helped and passed every guard: it stays.
    Keep,
    /// The score regressed or a guard/precheck failed: the change is undone.
    Revert,
    /// The agent or the eval crashed; nothing was measured.
    Error,
    /// Another experiment took over this one's hypothesis: a later one, or the winner
    /// of the parallel branches it ran beside. Never a stand-in for revert.
    Superseded,
    /// Passed its own precheck but could not be applied onto the target branch's
    /// current tip (a conflict) or failed the re-check there; its branch is left to
    /// look at.
    Quarantined,
}

impl Verdict {
    /// Every verdict, in the order they are documented.
    pub const ALL: [Verdict; 5] = [
        Self::Keep,
        Self::Revert,
        Self::Error,
        Self::Superseded,
        Self::Quarantined,
    ];

    /// The lowercase name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keep => "keep",
            Self::Revert => "revert",
            Self::Error => "error",
            Self::Superseded => "superseded",
            Self::Quarantined => "quarantined",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                format!(
                    "unknown verdict `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// One finished experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentRecord {
    /// The experiment number (directory `experiments/NNN`).
    pub id: u32,
    /// When it was finalized (ISO-8601, UTC).
    pub timestamp: String,
    /// The hypothesis given to `begin`.
    pub hypothesis: String,
    /// What the change did, in a sentence.
    #[serde(default)]
    pub change_summary: String,
    /// The backlog issue it worked on, if any.
    #[serde(default)]
    pub issue_number: Option<u64>,
    /// The pull request that carried the change, if any.
    #[serde(default)]
    pub pr_number: Option<u64>,
    /// Composite score before the change.
    #[serde(default)]
    pub score_before: Option<f64>,
    /// Composite score after the change.
    #[serde(default)]
    pub score_after: Option<f64>,
    /// `round(score_after - score_before, 6)` unless given explicitly.
    #[serde(default)]
    pub delta: Option<f64>,
    /// How it ended.
    pub verdict: Verdict,
    /// Agent spend in US dollars, if known.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Free-form notes.
    #[serde(default)]
    pub notes: String,
    /// Sources a research-mode hypothesis cited.
    #[serde(default)]
    pub research_citations: Vec<String>,
    /// The gate configuration the experiment's last precheck judged it under; `None`
    /// for a record written before fingerprints existed, or without a precheck. Only
    /// in `verdict.json` (results.tsv keeps its columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateConfig>,
    /// For a revert: whether its cause was measured (and so can recur under the same
    /// configuration) or not. `None` for other verdicts and for older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revert_cause: Option<RevertCause>,
    /// For a keep: the commit its precheck measured — what was kept, what `factory pr`
    /// delivers, and what the kept branch must still point at. Only in `verdict.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// When `factory history forget` cleared it from anti-pattern matching (ISO-8601,
    /// UTC). Read from `experiments/NNN/forgotten.json`, never from `verdict.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten_at: Option<String>,
}

/// What a precheck judged an experiment under: factory.md as committed at its base,
/// and the eval profile its sides were measured with. Two experiments with equal
/// values were judged by the same gate.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// SHA-256 (hex) of factory.md's bytes as committed at the experiment's base.
    pub factory_md: String,
    /// The eval profile: `approved:<content hash>`, `pending:<content hash>`, or
    /// `none` (introspection chose the checks).
    pub eval_profile: String,
}

/// Why a revert happened, as far as its recorded precheck tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevertCause {
    /// The gate measured the change and it failed: score, threshold, guards, tests,
    /// hard constraints. The same change under the same configuration fails again.
    Measured,
    /// The gate could not measure: the eval could not run, a tool was missing, the
    /// disk was full, the profile awaited review. Fixing the environment may pass it.
    Environment,
    /// What failed was reported flaky: it may pass on a rerun.
    Flaky,
    /// No failed measurement on record: no precheck, a precheck that passed, or one
    /// that failed only because QA had not run or the hypothesis resembled an earlier
    /// revert.
    Unmeasured,
}

impl RevertCause {
    /// The snake_case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Measured => "measured",
            Self::Environment => "environment",
            Self::Flaky => "flaky",
            Self::Unmeasured => "unmeasured",
        }
    }
}

impl fmt::Display for RevertCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the caller of `finalize` knows about an experiment's end. Everything but the
/// verdict is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// How it ended.
    pub verdict: Verdict,
    /// Composite score before the change.
    pub score_before: Option<f64>,
    /// Composite score after the change.
    pub score_after: Option<f64>,
    /// An explicit delta; when `None` it is derived from the two scores.
    pub delta: Option<f64>,
    /// What the change did.
    pub change_summary: String,
    /// The backlog issue, if any.
    pub issue_number: Option<u64>,
    /// The pull request, if any.
    pub pr_number: Option<u64>,
    /// Agent spend in US dollars.
    pub cost_usd: Option<f64>,
    /// Free-form notes.
    pub notes: String,
    /// Research sources.
    pub research_citations: Vec<String>,
    /// For `superseded`: the experiment that took over. Parallel branches are begun
    /// together, so the winner may have a lower id than this one; naming it lifts the
    /// "a later experiment exists" rule.
    pub superseded_by: Option<u32>,
    /// The gate configuration of the experiment's last precheck, if it had one.
    pub gate: Option<GateConfig>,
    /// For a revert: what its recorded precheck says caused it (ignored for other
    /// verdicts).
    pub revert_cause: Option<RevertCause>,
    /// For a keep: the commit its precheck measured (set by finalize's keep rule).
    pub commit: Option<String>,
}

#[cfg(test)]
impl ExperimentRecord {
    /// A record with only an id, a verdict, a hypothesis and notes: what tests build on.
    pub fn sample(id: u32, verdict: Verdict, hypothesis: &str, notes: &str) -> Self {
        ExperimentRecord {
            id,
            timestamp: "2026-12-01T00:00:00Z".into(),
            hypothesis: hypothesis.into(),
            change_summary: String::new(),
            issue_number: None,
            pr_number: None,
            score_before: None,
            score_after: None,
            delta: None,
            verdict,
            cost_usd: None,
            notes: notes.into(),
            research_citations: Vec::new(),
            gate: None,
            revert_cause: None,
            commit: None,
            forgotten_at: None,
        }
    }
}

impl Outcome {
    /// An outcome with only a verdict.
    pub fn new(verdict: Verdict) -> Self {
        Self {
            verdict,
            score_before: None,
            score_after: None,
            delta: None,
            change_summary: String::new(),
            issue_number: None,
            pr_number: None,
            cost_usd: None,
            notes: String::new(),
            research_citations: Vec::new(),
            superseded_by: None,
            gate: None,
            revert_cause: None,
            commit: None,
        }
    }

    /// Sets both scores.
    pub fn scores(mut self, before: f64, after: f64) -> Self {
        self.score_before = Some(before);
        self.score_after = Some(after);
        self
    }

    /// Sets the notes.
    pub fn notes(mut self, notes: impl Into<String>) -> Self {
        self.notes = notes.into();
        self
    }

    /// Marks a `superseded` outcome as taken over by experiment `by`.
    pub fn superseded_by(mut self, by: u32) -> Self {
        self.superseded_by = Some(by);
        self
    }

    /// The notes to record: for an outcome superseded by a named experiment, they
    /// say so first (once, whatever the caller wrote).
    pub fn recorded_notes(&self) -> String {
        let Some(by) = self.superseded_by else {
            return self.notes.clone();
        };
        let phrase = format!("superseded by exp {by}");
        let lower = self.notes.to_lowercase();
        // "superseded by exp 12" does not name exp 1.
        let mentioned = lower
            .match_indices(&phrase)
            .any(|(at, _)| !lower[at + phrase.len()..].starts_with(|c: char| c.is_ascii_digit()));
        if mentioned {
            self.notes.clone()
        } else if self.notes.trim().is_empty() {
            phrase
        } else {
            format!("{phrase}; {}", self.notes)
        }
    }

    /// The delta to record: the explicit one, else `round(after - before, 6)` when
    /// both scores are known.
    pub fn effective_delta(&self) -> Option<f64> {
        self.delta.or(match (self.score_before, self.score_after) {
            (Some(b), Some(a)) => Some(round6(a - b)),
            _ => None,
        })
    }
}

/// Rounds to six decimal places, so `0.3 - 0.1` records as `0.2`, not
/// `0.19999999999999998`.
pub fn round6(x: f64) -> f64 {
    let r = (x * 1e6).round() / 1e6;
    // Avoid recording "-0" for tiny negative differences.
    if r == 0.0 { 0.0 } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_is_rounded_to_six_places() {
        assert_eq!(
            Outcome::new(Verdict::Keep)
                .scores(0.1, 0.3)
                .effective_delta(),
            Some(0.2)
        );
        assert_eq!(
            Outcome::new(Verdict::Keep)
                .scores(0.5, 0.123_456_789)
                .effective_delta(),
            Some(-0.376543)
        );
        assert_eq!(
            Outcome::new(Verdict::Keep)
                .scores(0.7, 0.700_000_000_1)
                .effective_delta(),
            Some(0.0)
        );
        assert!(round6(-1e-9).is_sign_positive());
        assert_eq!(Outcome::new(Verdict::Error).effective_delta(), None);
        let mut explicit = Outcome::new(Verdict::Keep).scores(0.0, 1.0);
        explicit.delta = Some(0.25);
        assert_eq!(explicit.effective_delta(), Some(0.25));
    }

    #[test]
    fn a_named_successor_is_prepended_to_the_notes_once() {
        let notes = |n: &str| {
            Outcome::new(Verdict::Superseded)
                .superseded_by(1)
                .notes(n)
                .recorded_notes()
        };
        assert_eq!(notes(""), "superseded by exp 1");
        assert_eq!(notes("lower score"), "superseded by exp 1; lower score");
        assert_eq!(notes("Superseded by exp 1."), "Superseded by exp 1.");
        assert_eq!(
            notes("superseded by exp 12"),
            "superseded by exp 1; superseded by exp 12"
        );
        assert_eq!(
            Outcome::new(Verdict::Revert).notes("x").recorded_notes(),
            "x"
        );
    }

    #[test]
    fn verdict_round_trips_and_rejects_unknown_names() {
        for v in Verdict::ALL {
            assert_eq!(v.as_str().parse::<Verdict>(), Ok(v));
        }
        let err = "kept".parse::<Verdict>().unwrap_err();
        assert!(err.contains("superseded"), "{err}");
    }
}
