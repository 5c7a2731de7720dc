//! Research plateau detection (spec §8.8): has the metric stopped improving?

/// Which way the metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Higher is better.
    #[default]
    Maximize,
    /// Lower is better.
    Minimize,
}

impl Direction {
    fn better(self, a: f64, b: f64) -> bool {
        match self {
            Self::Maximize => a > b,
            Self::Minimize => a < b,
        }
    }

    fn best(self, values: &[f64]) -> Option<f64> {
        values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .reduce(|a, b| if self.better(b, a) { b } else { a })
    }
}

/// True when the best metric value in the most recent `threshold` runs is no better
/// than the best value in every run before them.
///
/// At least `threshold + 1` runs are required: an under-populated history is never a
/// plateau, and neither is a `threshold` of 0. Non-finite values (a failed run
/// recorded as NaN) are ignored; a recent window with no finite value at all is a
/// plateau when the earlier runs did measure something.
pub fn detect_research_plateau(values: &[f64], threshold: usize, direction: Direction) -> bool {
    if threshold == 0 || values.len() < threshold + 1 {
        return false;
    }
    let (before, recent) = values.split_at(values.len() - threshold);
    match (direction.best(before), direction.best(recent)) {
        (Some(old), Some(new)) => !direction.better(new, old),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn needs_threshold_plus_one_runs() {
        assert!(!detect_research_plateau(&[0.5, 0.5, 0.5], 3, Maximize));
        assert!(detect_research_plateau(&[0.5, 0.5, 0.5, 0.5], 3, Maximize));
        assert!(!detect_research_plateau(&[0.5, 0.4], 0, Maximize));
    }

    #[test]
    fn compares_best_of_recent_window_with_best_before() {
        // An early peak that the last three runs never beat: plateau.
        assert!(detect_research_plateau(
            &[0.1, 0.9, 0.5, 0.6, 0.7],
            3,
            Maximize
        ));
        // One improvement anywhere in the window is progress.
        assert!(!detect_research_plateau(
            &[0.1, 0.9, 0.5, 0.95, 0.7],
            3,
            Maximize
        ));
        // Only the window counts as recent: an old improvement does not help.
        assert!(detect_research_plateau(&[0.1, 0.8, 0.8, 0.8], 2, Maximize));
    }

    #[test]
    fn minimize_flips_the_comparison() {
        assert!(!detect_research_plateau(&[5.0, 4.0, 3.0], 2, Minimize));
        assert!(detect_research_plateau(&[1.0, 4.0, 3.0], 2, Minimize));
    }

    #[test]
    fn failed_runs_are_ignored() {
        assert!(detect_research_plateau(
            &[0.5, f64::NAN, f64::NAN],
            2,
            Maximize
        ));
        assert!(!detect_research_plateau(&[f64::NAN, 0.1, 0.2], 2, Maximize));
        assert!(!detect_research_plateau(&[0.5, f64::NAN, 0.6], 2, Maximize));
    }
}
