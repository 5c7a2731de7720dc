//! The composite score: tier weights, within-tier normalisation and the weighted sum
//! (spec Appendix A.1). Pure functions over [`EvalResult`] lists; no I/O.

use serde::{Deserialize, Serialize};

const EPSILON: f64 = 1e-9;

/// Which part of the composite a dimension belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Hygiene,
    Growth,
    Project,
}

/// One scored dimension — the atomic unit every eval produces (spec §6.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    pub name: String,
    pub tier: Tier,
    /// In `0.0..=1.0`.
    pub score: f64,
    /// Raw weight before merging; the weight within the composite after it.
    pub weight: f64,
    pub passed: bool,
    pub details: String,
}

impl EvalResult {
    pub fn new(
        name: &str,
        tier: Tier,
        score: f64,
        weight: f64,
        passed: bool,
        details: impl Into<String>,
    ) -> Self {
        Self {
            name: name.to_string(),
            tier,
            score: if score.is_finite() {
                score.clamp(0.0, 1.0)
            } else {
                0.0
            },
            weight,
            passed,
            details: details.into(),
        }
    }

    /// A dimension that could not be measured (crash, timeout, bad output): scores 0.
    pub fn failed(name: &str, tier: Tier, weight: f64, reason: impl Into<String>) -> Self {
        Self::new(name, tier, 0.0, weight, false, reason)
    }
}

/// The weighted total and whether it clears the threshold with no guard violations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompositeScore {
    pub total: f64,
    pub results: Vec<EvalResult>,
    pub guard_violations: Vec<String>,
    pub threshold: f64,
    pub passed: bool,
    /// Dimensions below their fixed floor in factory.md's `Dimension thresholds`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub below_floors: Vec<String>,
}

pub use crate::project::config::{EvalWeights, Threshold, TierWeights};

/// Weighted sum of `results`, renormalising weights that do not sum to 1.
pub fn compute_composite(
    results: Vec<EvalResult>,
    guard_violations: Vec<String>,
    threshold: f64,
) -> CompositeScore {
    if results.is_empty() {
        let passed = guard_violations.is_empty() && 0.0 >= threshold;
        return CompositeScore {
            total: 0.0,
            results,
            guard_violations,
            threshold,
            passed,
            below_floors: Vec::new(),
        };
    }
    let mut results = results;
    let weight_sum: f64 = results.iter().map(|r| r.weight).sum();
    if weight_sum > 0.0 && (weight_sum - 1.0).abs() > EPSILON {
        for r in &mut results {
            r.weight /= weight_sum;
        }
    }
    // `+ 0.0` turns a negative zero into zero: no composite prints as -0.0.
    let total: f64 = results.iter().map(|r| r.score * r.weight).sum::<f64>() + 0.0;
    let passed = guard_violations.is_empty() && total >= threshold;
    CompositeScore {
        total,
        results,
        guard_violations,
        threshold,
        passed,
        below_floors: Vec::new(),
    }
}

/// Each dimension below its fixed floor (`tests: 1.0`), or declared but not measured.
/// Floors relative to the base are the gate's to judge: only it measures the base.
pub fn below_fixed_floors(
    results: &[EvalResult],
    floors: &std::collections::BTreeMap<String, Threshold>,
) -> Vec<String> {
    floors
        .iter()
        .filter_map(|(name, floor)| {
            let min = floor.score()?;
            match results.iter().find(|r| &r.name == name) {
                None => Some(not_measured(name, results)),
                Some(r) if r.score + EPSILON < min => Some(format!(
                    "{name}: {:.4} is below its threshold {min:.4}",
                    r.score
                )),
                Some(_) => None,
            }
        })
        .collect()
}

/// A declared dimension no check measured: a misspelt name must not pass silently.
pub fn not_measured(name: &str, results: &[EvalResult]) -> String {
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    format!(
        "{name}: has a threshold in factory.md's `Dimension thresholds` but was not measured (measured: {})",
        names.join(", ")
    )
}

/// The (hygiene, growth, project) split actually used.
///
/// No custom project dimensions: 0.5/0.5/0.0. Custom dimensions and an explicit
/// `eval_weights.project > 0`: the user's three weights renormalised proportionally.
/// Custom dimensions and no explicit project weight: 0.30/0.20/0.50.
pub fn effective_weights(weights: &EvalWeights, has_custom: bool) -> (f64, f64, f64) {
    if !has_custom {
        return (0.5, 0.5, 0.0);
    }
    if weights.project > 0.0 {
        let sum = weights.hygiene.max(0.0) + weights.growth.max(0.0) + weights.project;
        return (
            weights.hygiene.max(0.0) / sum,
            weights.growth.max(0.0) / sum,
            weights.project / sum,
        );
    }
    (0.30, 0.20, 0.50)
}

/// Applies sparse overrides, then scales the tier's weights to sum to `tier_weight`.
/// A tier whose raw weights are all zero splits `tier_weight` evenly.
pub fn normalize_tier(
    mut results: Vec<EvalResult>,
    tier_weight: f64,
    overrides: Option<&TierWeights>,
) -> Vec<EvalResult> {
    if let Some(overrides) = overrides {
        for r in &mut results {
            if let Some(w) = overrides.0.get(&r.name) {
                r.weight = w.max(0.0);
            }
        }
    }
    let raw: f64 = results.iter().map(|r| r.weight.max(0.0)).sum();
    let n = results.len() as f64;
    for r in &mut results {
        r.weight = if raw > 0.0 {
            tier_weight * r.weight.max(0.0) / raw
        } else {
            tier_weight / n
        };
    }
    results
}

/// Everything the merge needs besides the results themselves.
#[derive(Debug, Clone, Default)]
pub struct MergeWeights {
    pub eval_weights: EvalWeights,
    pub hygiene_overrides: Option<TierWeights>,
    pub growth_overrides: Option<TierWeights>,
}

/// Merges the tiers into one list whose weights sum to h_w + g_w + p_w (A.1 `merge_all`).
/// `project_additions` (from `eval/score.py`) join hygiene unless they reuse a built-in name.
pub fn merge_all(
    hygiene: Vec<EvalResult>,
    project_additions: Vec<EvalResult>,
    growth: Vec<EvalResult>,
    custom_project: Vec<EvalResult>,
    weights: &MergeWeights,
) -> Vec<EvalResult> {
    let taken: Vec<String> = hygiene
        .iter()
        .chain(&growth)
        .map(|r| r.name.clone())
        .collect();
    let mut all_hygiene = hygiene;
    all_hygiene.extend(
        project_additions
            .into_iter()
            .filter(|p| !taken.contains(&p.name)),
    );
    let (h_w, g_w, p_w) = effective_weights(&weights.eval_weights, !custom_project.is_empty());
    let mut merged = normalize_tier(all_hygiene, h_w, weights.hygiene_overrides.as_ref());
    merged.extend(normalize_tier(
        growth,
        g_w,
        weights.growth_overrides.as_ref(),
    ));
    merged.extend(normalize_tier(custom_project, p_w, None));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, tier: Tier, score: f64, weight: f64) -> EvalResult {
        EvalResult::new(name, tier, score, weight, score >= 1.0, "")
    }

    fn weight_of(results: &[EvalResult], name: &str) -> f64 {
        results.iter().find(|r| r.name == name).unwrap().weight
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn tiers() -> (Vec<EvalResult>, Vec<EvalResult>) {
        (
            vec![
                r("build", Tier::Hygiene, 1.0, 1.0),
                r("lint", Tier::Hygiene, 0.0, 1.0),
            ],
            vec![r("test_count", Tier::Growth, 0.5, 1.0)],
        )
    }

    #[test]
    fn empty_results_score_zero_and_pass_only_at_zero_threshold() {
        let c = compute_composite(vec![], vec![], 0.0);
        assert_eq!(c.total, 0.0);
        assert!(c.passed);
        assert!(!compute_composite(vec![], vec![], 0.1).passed);
        assert!(!compute_composite(vec![], vec!["dirty".into()], 0.0).passed);
    }

    #[test]
    fn composite_renormalises_hand_built_weights() {
        let c = compute_composite(
            vec![
                r("a", Tier::Hygiene, 1.0, 2.0),
                r("b", Tier::Hygiene, 0.0, 2.0),
            ],
            vec![],
            0.5,
        );
        assert!(close(c.total, 0.5));
        assert!(c.passed);
        let c = compute_composite(
            vec![r("a", Tier::Hygiene, 1.0, 1.0)],
            vec!["scope".into()],
            0.0,
        );
        assert!(
            !c.passed,
            "a guard violation fails the composite whatever the score"
        );
    }

    #[test]
    fn default_regime_is_half_hygiene_half_growth() {
        let (h, g) = tiers();
        let merged = merge_all(h, vec![], g, vec![], &MergeWeights::default());
        assert!(close(weight_of(&merged, "build"), 0.25));
        assert!(close(weight_of(&merged, "lint"), 0.25));
        assert!(close(weight_of(&merged, "test_count"), 0.5));
        let c = compute_composite(merged, vec![], 0.0);
        assert!(close(c.total, 0.25 + 0.25));
    }

    #[test]
    fn custom_dimensions_without_explicit_weights_split_30_20_50() {
        let (h, g) = tiers();
        let p = vec![
            r("latency", Tier::Project, 1.0, 1.0),
            r("accuracy", Tier::Project, 1.0, 3.0),
        ];
        let merged = merge_all(h, vec![], g, p, &MergeWeights::default());
        assert!(close(weight_of(&merged, "build"), 0.15));
        assert!(close(weight_of(&merged, "test_count"), 0.20));
        assert!(close(weight_of(&merged, "latency"), 0.125));
        assert!(close(weight_of(&merged, "accuracy"), 0.375));
        assert!(close(merged.iter().map(|r| r.weight).sum::<f64>(), 1.0));
    }

    #[test]
    fn explicit_project_weight_renormalises_proportionally() {
        let (h, g) = tiers();
        let p = vec![r("latency", Tier::Project, 1.0, 1.0)];
        let weights = MergeWeights {
            eval_weights: EvalWeights {
                hygiene: 1.0,
                growth: 1.0,
                project: 2.0,
            },
            ..Default::default()
        };
        let merged = merge_all(h, vec![], g, p, &weights);
        assert!(close(weight_of(&merged, "build"), 0.125));
        assert!(close(weight_of(&merged, "test_count"), 0.25));
        assert!(close(weight_of(&merged, "latency"), 0.5));
    }

    #[test]
    fn explicit_weights_without_custom_dimensions_fall_back_to_half_half() {
        let weights = EvalWeights {
            hygiene: 0.9,
            growth: 0.1,
            project: 0.0,
        };
        assert_eq!(effective_weights(&weights, false), (0.5, 0.5, 0.0));
        let weights = EvalWeights {
            hygiene: 0.2,
            growth: 0.3,
            project: 0.0,
        };
        assert_eq!(effective_weights(&weights, true), (0.30, 0.20, 0.50));
    }

    #[test]
    fn sparse_overrides_change_only_named_dimensions() {
        let h = vec![
            r("build", Tier::Hygiene, 1.0, 1.0),
            r("lint", Tier::Hygiene, 1.0, 1.0),
            r("format", Tier::Hygiene, 1.0, 2.0),
        ];
        let overrides = TierWeights([("lint".to_string(), 3.0)].into_iter().collect());
        let weights = MergeWeights {
            hygiene_overrides: Some(overrides),
            ..Default::default()
        };
        let merged = merge_all(
            h,
            vec![],
            vec![r("test_count", Tier::Growth, 1.0, 1.0)],
            vec![],
            &weights,
        );
        // raw hygiene weights become build 1, lint 3 (override), format 2 (kept, not zeroed)
        assert!(close(weight_of(&merged, "build"), 0.5 * 1.0 / 6.0));
        assert!(close(weight_of(&merged, "lint"), 0.5 * 3.0 / 6.0));
        assert!(close(weight_of(&merged, "format"), 0.5 * 2.0 / 6.0));
    }

    #[test]
    fn score_py_additions_join_hygiene_unless_names_collide() {
        let (h, g) = tiers();
        let additions = vec![
            r("docs", Tier::Hygiene, 1.0, 1.0),
            r("build", Tier::Hygiene, 0.0, 1.0),
        ];
        let merged = merge_all(h, additions, g, vec![], &MergeWeights::default());
        assert_eq!(merged.iter().filter(|r| r.name == "build").count(), 1);
        assert!(close(weight_of(&merged, "docs"), 0.5 / 3.0));
    }
}
