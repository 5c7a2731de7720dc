//! `factory history forget N`: an experiment cleared from anti-pattern matching. The
//! record stays; `experiments/NNN/forgotten.json` and an `experiment.forgotten` event
//! say when.

use std::collections::BTreeSet;
use std::fs;
use std::io;

use super::{ExperimentRecord, ExperimentStore, Scan, StoreError, Verdict, io_at};
use crate::events::{Event, EventData};
use crate::project::layout::LayoutError;
use crate::sys::files::atomic_write;

impl ExperimentStore {
    /// `factory history forget N`: clears finalized experiment `id` from anti-pattern
    /// matching. The record stays as it is; `experiments/NNN/forgotten.json` says when
    /// it was forgotten, and an `experiment.forgotten` event is logged. Forgetting again
    /// changes nothing and returns the first time.
    ///
    /// Errors: `id` was never begun ([`StoreError::NothingToForget`]) or has no verdict
    /// yet ([`StoreError::ForgetUnfinalized`]).
    pub fn forget(&self, id: u32) -> Result<Forgot, StoreError> {
        if !self.paths.project().is_dir() {
            return Err(LayoutError::NoProject(self.paths.project().to_path_buf()).into());
        }
        if !self.paths.dir().is_dir() {
            // No store: nothing was ever recorded, and nothing is created here.
            return Err(StoreError::NothingToForget {
                id,
                known: describe_ids(&Scan::default()),
            });
        }
        let _lock = self.lock()?;
        let scan = self.scan()?;
        let finalized = scan.finalized.contains_key(&id) || scan.verdict_files.contains(&id);
        let record = self
            .history()?
            .records
            .into_iter()
            .find(|r| r.id == id && finalized);
        let Some(mut record) = record else {
            return Err(if scan.known.contains(&id) && !finalized {
                StoreError::ForgetUnfinalized { id }
            } else {
                StoreError::NothingToForget {
                    id,
                    known: describe_ids(&scan),
                }
            });
        };
        if record.forgotten_at.is_some() {
            return Ok(Forgot {
                record,
                repeated: true,
            });
        }
        let dir = self.paths.experiment_dir(id);
        let file = dir.join(FORGOTTEN_FILE);
        let marker = Forgotten {
            exp_id: id,
            forgotten_at: crate::sys::clock::now_iso8601(),
        };
        fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        let mut json =
            serde_json::to_string_pretty(&marker).map_err(|e| io_at(&file)(io::Error::other(e)))?;
        json.push('\n');
        atomic_write(&file, json.as_bytes()).map_err(io_at(&file))?;
        self.log(&Event::new(EventData::ExperimentForgotten { exp_id: id }))?;
        record.forgotten_at = Some(marker.forgotten_at);
        Ok(Forgot {
            record,
            repeated: false,
        })
    }

    /// `experiments/NNN/forgotten.json`, if there is one; `Err` names a file that is
    /// there but unreadable.
    pub(super) fn read_forgotten(&self, id: u32) -> Result<Option<Forgotten>, String> {
        let file = self.paths.experiment_dir(id).join(FORGOTTEN_FILE);
        match fs::read_to_string(&file) {
            Ok(text) => match serde_json::from_str::<Forgotten>(&text) {
                Ok(f) if f.exp_id == id => Ok(Some(f)),
                Ok(f) => Err(format!(
                    "{}: names experiment {}, not {id}",
                    file.display(),
                    f.exp_id
                )),
                Err(e) => Err(format!("{}: {e}", file.display())),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", file.display())),
        }
    }
}

/// The file that marks an experiment forgotten by `factory history forget`.
const FORGOTTEN_FILE: &str = "forgotten.json";

/// `experiments/NNN/forgotten.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Forgotten {
    exp_id: u32,
    pub(super) forgotten_at: String,
}

/// The result of [`ExperimentStore::forget`].
#[derive(Debug, Clone, PartialEq)]
pub struct Forgot {
    /// The record, with `forgotten_at` set.
    pub record: ExperimentRecord,
    /// True when it had been forgotten before (nothing was written).
    pub repeated: bool,
}

impl Forgot {
    /// What happened, for a person: when, and what it means for precheck.
    pub fn render(&self) -> String {
        let r = &self.record;
        let at = r.forgotten_at.as_deref().unwrap_or("?");
        let mut out = if self.repeated {
            format!(
                "experiment {} was already forgotten at {at}; nothing changed\n",
                r.id
            )
        } else {
            format!(
                "experiment {} forgotten at {at}: a similar hypothesis is no longer refused because of it; its record stays (`factory history` shows it)\n",
                r.id
            )
        };
        if r.verdict != Verdict::Revert {
            out.push_str(&format!(
                "note: experiment {} is a {}, and only reverts are matched as anti-patterns\n",
                r.id, r.verdict
            ));
        }
        out
    }
}

/// "finalized experiments are 1-4, 7" or "no experiment is finalized yet".
fn describe_ids(scan: &Scan) -> String {
    let ids: BTreeSet<u32> = scan
        .finalized
        .keys()
        .copied()
        .chain(scan.verdict_files.iter().copied())
        .collect();
    if ids.is_empty() {
        return "no experiment is finalized here yet".to_owned();
    }
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for id in ids {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == id => *end = id,
            _ => ranges.push((id, id)),
        }
    }
    let text: Vec<String> = ranges
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    format!("the finalized experiments here are {}", text.join(", "))
}
