//! The steps of the experiment lifecycle that span the store and the eval: a kept
//! experiment moves the growth baseline, so the next experiment's growth is measured
//! from what was kept (spec §8.5), not from the first eval ever run.

use std::path::Path;

use crate::eval::{self, Baseline, BaselineError};
use crate::store::{ExperimentRecord, ExperimentStore, Outcome, StoreError, Verdict};

/// What finalizing did to the growth baseline.
#[derive(Debug)]
pub enum BaselineUpdate {
    /// The verdict was not `keep`: the baseline stays where it was.
    Unchanged,
    /// Recorded from `.factory/last_eval.json`.
    Recorded(Baseline),
    /// A keep, but no eval result to record (no `factory eval` ran since begin).
    NoEval,
    /// A keep whose baseline could not be written; the verdict itself is recorded.
    Failed(BaselineError),
}

/// Records an experiment's verdict (see [`ExperimentStore::finalize`]) and, for a
/// `keep`, records the latest eval as the new growth baseline. The verdict is the
/// record that matters: a baseline that cannot be written is reported, not fatal.
pub fn finalize(
    root: &Path,
    id: u32,
    outcome: Outcome,
) -> Result<(ExperimentRecord, BaselineUpdate), StoreError> {
    let keep = outcome.verdict == Verdict::Keep;
    let record = ExperimentStore::open(root).finalize(id, outcome)?;
    if !keep {
        return Ok((record, BaselineUpdate::Unchanged));
    }
    let update = match eval::load_last_eval(root) {
        None => BaselineUpdate::NoEval,
        Some(report) => {
            match eval::record_baseline(root, &report, &format!("kept experiment {id}")) {
                Ok(b) => BaselineUpdate::Recorded(b),
                Err(e) => BaselineUpdate::Failed(e),
            }
        }
    };
    Ok((record, update))
}
