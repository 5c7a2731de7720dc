//! Curation (spec §8.15), in this order: remove net-negative bullets, then merge
//! near-duplicates, then cap the count by net score. The order matters: pruning first
//! keeps a bad bullet from hiding inside a good near-duplicate's counts, and merging
//! before the cap lets two halves of one lesson compete as the whole.

use crate::agents::playbook::Bullet;

/// A bullet is pruned only after this many outcomes (helpful + harmful): one unlucky
/// revert is not yet a pattern.
pub const MIN_OBSERVATIONS: u32 = 3;
/// Bullets of one kind at least this similar are one lesson (spec: 0.75).
pub const SIMILARITY: f64 = 0.75;
/// At most this many evolved bullets per role; the default playbook is not counted.
pub const CAPACITY: usize = 20;

/// What curation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Curation {
    /// The surviving bullets, in their original order.
    pub kept: Vec<Bullet>,
    /// Net-negative with enough observations.
    pub removed: Vec<Bullet>,
    /// (absorbed, into): the first bullet's counts were added to the second's; the
    /// second is shown as it was before the merge.
    pub merged: Vec<(Bullet, Bullet)>,
    /// Over capacity: the lowest net scores, in their original order.
    pub capped: Vec<Bullet>,
}

/// The ratio of two bullets' texts: 1 − Levenshtein distance / longer length, over
/// lowercased text (a SequenceMatcher-like ratio in [0, 1]).
pub fn similarity(a: &str, b: &str) -> f64 {
    strsim::normalized_levenshtein(&a.to_lowercase(), &b.to_lowercase())
}

/// Curates `bullets` (existing playbook bullets first, then new candidates) with a
/// capacity of `capacity`.
pub fn curate(bullets: Vec<Bullet>, capacity: usize) -> Curation {
    let mut out = Curation::default();

    // 1. Remove what the evidence says hurts.
    let (negative, rest): (Vec<Bullet>, Vec<Bullet>) = bullets
        .into_iter()
        .partition(|b| b.harmful > b.helpful && b.observations() >= MIN_OBSERVATIONS);
    out.removed = negative;

    // 2. Merge near-duplicates of the same kind into the first of them.
    let mut unique: Vec<Bullet> = Vec::new();
    for b in rest {
        let twin = unique
            .iter_mut()
            .find(|u| u.kind == b.kind && similarity(&u.text, &b.text) >= SIMILARITY);
        match twin {
            Some(u) => {
                out.merged.push((b.clone(), u.clone()));
                u.helpful = u.helpful.saturating_add(b.helpful);
                u.harmful = u.harmful.saturating_add(b.harmful);
            }
            None => unique.push(b),
        }
    }

    // 3. Cap by net score; ties keep the earlier bullet. Survivors keep their order.
    if unique.len() > capacity {
        let mut rank: Vec<usize> = (0..unique.len()).collect();
        rank.sort_by_key(|&i| (std::cmp::Reverse(unique[i].net()), i));
        let mut cut = vec![false; unique.len()];
        for &i in &rank[capacity..] {
            cut[i] = true;
        }
        for (b, cut) in unique.into_iter().zip(cut) {
            if cut {
                out.capped.push(b);
            } else {
                out.kept.push(b);
            }
        }
    } else {
        out.kept = unique;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::playbook::Kind;

    fn b(text: &str, helpful: u32, harmful: u32) -> Bullet {
        Bullet {
            id: None,
            kind: Kind::Dont,
            helpful,
            harmful,
            text: text.into(),
        }
    }

    fn summary(bs: &[Bullet]) -> Vec<String> {
        bs.iter()
            .map(|b| format!("{} {}/{}", b.text, b.helpful, b.harmful))
            .collect()
    }

    const SCOPE_A: &str = "Don't change files outside the scope (README.md).";
    const SCOPE_B: &str = "Don't change files outside the scope (docs/x.md).";
    const TESTS: &str = "Don't delete, skip or loosen tests to get green.";
    const EVAL: &str = "Don't modify eval/; it is fixed for the whole experiment.";

    #[test]
    fn the_crafted_bullets_are_as_similar_as_the_tests_assume() {
        assert!(similarity(SCOPE_A, SCOPE_B) >= SIMILARITY);
        assert!(similarity(SCOPE_A, TESTS) < SIMILARITY);
        assert!(similarity(TESTS, EVAL) < SIMILARITY);
        assert_eq!(similarity("Same", "same"), 1.0);
    }

    /// Pruning before merging: merged first, the harmful twin's counts would hide in
    /// the helpful one (4/3, net positive, kept) instead of being removed.
    #[test]
    fn prune_runs_before_merge() {
        let got = curate(vec![b(SCOPE_A, 4, 0), b(SCOPE_B, 0, 3)], CAPACITY);
        assert_eq!(summary(&got.removed), vec![format!("{SCOPE_B} 0/3")]);
        assert_eq!(summary(&got.kept), vec![format!("{SCOPE_A} 4/0")]);
        assert!(got.merged.is_empty());
    }

    /// Merging before the cap: capped first, two halves of one lesson (2 + 2) would
    /// each lose to a bullet with net 3; merged, the lesson (4) wins a place.
    #[test]
    fn merge_runs_before_cap() {
        let got = curate(
            vec![
                b(TESTS, 3, 0),
                b(SCOPE_A, 2, 0),
                b(SCOPE_B, 2, 0),
                b(EVAL, 3, 0),
            ],
            2,
        );
        assert_eq!(
            summary(&got.kept),
            vec![format!("{TESTS} 3/0"), format!("{SCOPE_A} 4/0")]
        );
        assert_eq!(summary(&got.capped), vec![format!("{EVAL} 3/0")]);
        assert_eq!(got.merged.len(), 1);
        assert_eq!(got.merged[0].0.text, SCOPE_B);
    }

    /// The three steps on one history: each step's report shows only what that step,
    /// in this order, would do.
    #[test]
    fn the_three_steps_in_order_on_one_history() {
        let got = curate(
            vec![
                b(SCOPE_A, 1, 0),
                b(SCOPE_B, 1, 4), // net-negative: removed before it can merge into SCOPE_A
                b(TESTS, 5, 1),
                b(EVAL, 1, 1),
                b("Don't change files outside the scope (src/a.rs).", 1, 0),
            ],
            2,
        );
        assert_eq!(summary(&got.removed), vec![format!("{SCOPE_B} 1/4")]);
        assert_eq!(got.merged.len(), 1);
        assert_eq!(
            summary(&got.kept),
            vec![format!("{SCOPE_A} 2/0"), format!("{TESTS} 5/1")]
        );
        assert_eq!(summary(&got.capped), vec![format!("{EVAL} 1/1")]);
    }

    #[test]
    fn too_few_observations_are_not_pruned_and_kinds_never_merge() {
        let mut do_twin = b(SCOPE_B, 1, 0);
        do_twin.kind = Kind::Do;
        let got = curate(vec![b(SCOPE_A, 0, 2), do_twin], CAPACITY);
        assert!(got.removed.is_empty());
        assert!(got.merged.is_empty());
        assert_eq!(got.kept.len(), 2);
    }
}
