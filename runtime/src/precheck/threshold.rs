//! The experiment gate's `threshold` check: the head's mean against factory.md's
//! `Eval threshold` (a score, or the base's own mean less a tolerance and the noise),
//! and each dimension against its `Dimension thresholds` floor.

use super::{CheckOutcome, Comparison, SCORE_EPSILON};
use crate::project::config::Threshold;

pub(super) fn threshold_check(
    threshold: Threshold,
    cmp: &Comparison,
    below_floors: &[String],
) -> CheckOutcome {
    const NAME: &str = "threshold";
    let head = cmp.head.mean;
    let (floor, what) = match threshold {
        Threshold::Score(t) => (t, format!("threshold {t:.4}")),
        Threshold::Base { .. } => {
            let floor = threshold.floor(Some(cmp.base.mean)).unwrap_or(0.0) - cmp.noise;
            (
                floor,
                format!(
                    "threshold {floor:.4} (`{threshold}`: the base's mean {:.4}, less the noise {:.4})",
                    cmp.base.mean, cmp.noise
                ),
            )
        }
    };
    let mut failures = Vec::new();
    if head + SCORE_EPSILON < floor {
        failures.push(format!("head mean {head:.4} is below the {what}"));
    }
    failures.extend(below_floors.iter().map(|b| format!("dimension {b}")));
    if failures.is_empty() {
        CheckOutcome::pass(NAME, format!("head mean {head:.4} ≥ {what}"))
    } else {
        CheckOutcome::fail(NAME, failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precheck::SideStats;

    fn cmp(base: f64, head: f64) -> Comparison {
        Comparison::new(
            1,
            SideStats::new("b", vec![base]),
            SideStats::new("h", vec![head]),
        )
    }

    #[test]
    fn a_relative_threshold_follows_the_base_and_a_fixed_one_does_not() {
        // A project dimension on its own scale pulls both sides to 0.40: a fixed 0.7
        // fails a change that regressed nothing; `base` passes it.
        assert!(!threshold_check(Threshold::Score(0.7), &cmp(0.40, 0.40), &[]).passed);
        let base = Threshold::Base { tolerance: 0.0 };
        assert!(threshold_check(base, &cmp(0.40, 0.40), &[]).passed);
        let drop = threshold_check(base, &cmp(0.40, 0.35), &[]);
        assert!(!drop.passed);
        assert!(drop.details[0].contains("`base`"), "{:?}", drop.details);
        let tolerant = Threshold::Base { tolerance: 0.1 };
        assert!(threshold_check(tolerant, &cmp(0.40, 0.35), &[]).passed);
    }

    #[test]
    fn a_dimension_below_its_floor_fails_whatever_the_composite() {
        let c = threshold_check(
            Threshold::Score(0.0),
            &cmp(0.5, 0.9),
            &["coverage: 0.8000 is below its threshold 0.9000 (0.9000)".into()],
        );
        assert!(!c.passed);
        assert_eq!(c.details.len(), 1);
        assert!(c.details[0].starts_with("dimension coverage"));
    }
}
