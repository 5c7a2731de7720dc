//! One candidate against its parent on a bench suite (`factory evolve trial`), and the
//! decision read back from that record (`factory evolve compare`): the pair of steps
//! the `evolve` mode runs in place of a whole search. Both sides are scored by really
//! running them ([`super::evaluate`]) on the training projects and on the held-out
//! ones; results are cached by canonical hash per suite, so the parent of the next
//! trial (often this trial's candidate) is not run again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use factory_compiler::ir::Ir;
use serde::{Deserialize, Serialize};

use super::bench::Suite;
use super::evaluate::ProjectResult;
use super::search::{Cache, Store, Tools, fitness, merge, score_all};
use super::{EvolveError, canonical_hash};

/// One side of a trial: its hash and mean gain on each split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub hash: String,
    pub train: f64,
    /// `None` when the suite holds no held-out project.
    pub holdout: Option<f64>,
}

/// The record `factory evolve trial -o FILE` writes and `compare` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub suite: PathBuf,
    pub candidate: Side,
    pub parent: Side,
    /// Each side's result on each project, keyed `candidate` / `parent`.
    pub results: BTreeMap<String, Vec<ProjectResult>>,
    /// What the agents of the runs made for this trial cost, in US dollars.
    pub spent_usd: f64,
}

/// What `compare` decides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub better: bool,
    pub reason: String,
}

/// The cache file of trials on one suite: results are only comparable on one suite.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrialCache {
    suite: String,
    cache: Cache,
}

/// Scores `candidate` and `parent` on every project of `suite` (cached results reused),
/// `tools.jobs` runs at a time, keeping the cache in the project's `.factory/evolve/`.
pub fn run(
    project: &Path,
    candidate: &Ir,
    parent: &Ir,
    suite: &Suite,
    tools: &Tools,
) -> Result<Trial, EvolveError> {
    let Tools {
        factory, jobs, say, ..
    } = *tools;
    let store = Store::new(project);
    let mut cached: TrialCache = store
        .load("trials.json")?
        .filter(|c: &TrialCache| c.suite == suite.signature())
        .unwrap_or_else(|| TrialCache {
            suite: suite.signature(),
            cache: Cache::new(),
        });
    let scratch = store.dir.join("scratch-trial");
    std::fs::create_dir_all(&scratch).map_err(|e| EvolveError::State {
        path: scratch.clone(),
        why: e.to_string(),
    })?;
    let pairs = [
        (canonical_hash(candidate), candidate.clone()),
        (canonical_hash(parent), parent.clone()),
    ];
    let all: Vec<_> = suite.projects.iter().collect();
    let fresh = score_all(&pairs, &all, &cached.cache, jobs, factory, &scratch, say);
    let _ = std::fs::remove_dir_all(&scratch);
    let spent_usd = fresh
        .iter()
        .filter_map(|(_, r)| r.cycle.usage.cost_usd)
        .sum::<f64>()
        + 0.0; // an empty sum is -0.0
    merge(&mut cached.cache, fresh);
    store.save("trials.json", &cached)?;
    let (train, holdout) = (suite.train(), suite.holdout());
    let side = |hash: &str| Side {
        hash: hash.to_string(),
        train: fitness(&cached.cache, hash, &train),
        holdout: (!holdout.is_empty()).then(|| fitness(&cached.cache, hash, &holdout)),
    };
    let results_of = |hash: &str| -> Vec<ProjectResult> {
        suite
            .projects
            .iter()
            .filter_map(|p| cached.cache.get(hash).and_then(|r| r.get(&p.name)).cloned())
            .collect()
    };
    Ok(Trial {
        suite: suite.dir.clone(),
        candidate: side(&pairs[0].0),
        parent: side(&pairs[1].0),
        results: BTreeMap::from([
            ("candidate".to_string(), results_of(&pairs[0].0)),
            ("parent".to_string(), results_of(&pairs[1].0)),
        ]),
        spent_usd,
    })
}

/// The candidate is better when it gains more than its parent on the training projects
/// and no less on the held-out ones; an isomorphic copy of the parent never is.
pub fn decide(t: &Trial) -> Decision {
    let (c, p) = (&t.candidate, &t.parent);
    if c.hash == p.hash {
        return Decision {
            better: false,
            reason: "the candidate is the parent's graph (same canonical hash)".into(),
        };
    }
    if c.train <= p.train {
        return Decision {
            better: false,
            reason: format!(
                "no gain on training: candidate {:.4}, parent {:.4}",
                c.train, p.train
            ),
        };
    }
    match (c.holdout, p.holdout) {
        (Some(ch), Some(ph)) if ch < ph => Decision {
            better: false,
            reason: format!(
                "wins on training ({:.4} > {:.4}) but loses on the held-out projects ({ch:.4} < {ph:.4}): overfit",
                c.train, p.train
            ),
        },
        (Some(ch), Some(ph)) => Decision {
            better: true,
            reason: format!(
                "better on training ({:.4} > {:.4}), held out {ch:.4} ≥ {ph:.4}",
                c.train, p.train
            ),
        },
        _ => Decision {
            better: true,
            reason: format!(
                "better on training ({:.4} > {:.4}); no held-out projects, generalization unchecked",
                c.train, p.train
            ),
        },
    }
}
