//! The experiment store (spec §7.2, §8.7): `begin` allocates an experiment and writes
//! its hypothesis, `finalize` records its verdict; both hold `.factory/.store.lock`
//! for everything they change, so parallel hypotheses never share an id or tear a
//! `results.tsv` row.
//!
//! ```no_run
//! use factory_runtime::store::{ExperimentStore, Outcome, Verdict};
//! let store = ExperimentStore::open("/path/to/project");
//! let begun = store.begin("Cache parsed ASTs between runs")?;
//! let record = store.finalize(begun.id, Outcome::new(Verdict::Keep).scores(0.61, 0.64))?;
//! assert_eq!(record.delta, Some(0.03));
//! # Ok::<(), factory_runtime::store::StoreError>(())
//! ```

mod error;
mod forget;
pub mod history;
mod info;
mod record;
pub mod tsv;

pub use crate::project::child::{run_key, run_of_key};
pub use error::StoreError;
pub use forget::Forgot;
pub use info::{ExperimentInfo, Workspace};
pub use record::{ExperimentRecord, GateConfig, Outcome, RevertCause, Verdict, round6};

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::events::{self, Event, EventData, kinds};
use crate::project::layout::{FactoryPaths, LayoutError, ensure_factory_dir};
use crate::project::registry;
use crate::sys::files::{self, FileLock, atomic_write};

/// The result of [`ExperimentStore::begin`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Begun {
    /// The experiment's id.
    pub id: u32,
    /// True when an unfinalized experiment with the same hypothesis already existed
    /// and its id was returned instead of allocating a new one.
    pub resumed: bool,
}

/// A begun experiment that has no verdict yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingExperiment {
    /// The experiment's id.
    pub id: u32,
    /// Its hypothesis (from `hypothesis.md`).
    pub hypothesis: String,
}

/// Everything recorded about past experiments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// Finalized experiments, ascending by id.
    pub records: Vec<ExperimentRecord>,
    /// Begun but not finalized, ascending by id.
    pub pending: Vec<PendingExperiment>,
    /// Problems met while reading (bad `results.tsv` lines, unreadable verdict files).
    /// Reading never fails on these; they are reported so a caller can warn.
    pub warnings: Vec<String>,
}

impl History {
    /// Finalized experiments with the given verdict (e.g. reverts, for anti-pattern
    /// checks), ascending by id.
    pub fn with_verdict(&self, verdict: Verdict) -> impl Iterator<Item = &ExperimentRecord> {
        self.records.iter().filter(move |r| r.verdict == verdict)
    }
}

/// One project's experiment store.
#[derive(Debug, Clone)]
pub struct ExperimentStore {
    paths: FactoryPaths,
    registry_home: Option<PathBuf>,
}

impl ExperimentStore {
    /// The store of the project at `project`, using the user registry under
    /// `$FACTORY_HOME` (else `~/.factory`).
    pub fn open(project: impl Into<PathBuf>) -> Self {
        Self {
            paths: FactoryPaths::new(project),
            registry_home: registry::user_home(),
        }
    }

    /// Appends `event` to the project's log, chained with the key under this store's
    /// factory home (the environment's when none was given).
    fn log(&self, event: &Event) -> Result<(), events::EventsError> {
        match &self.registry_home {
            Some(home) => events::append_in_home(&self.paths, home, event),
            None => events::append(&self.paths, event),
        }
    }

    /// Same as [`open`](Self::open) with an explicit factory home for the registry and
    /// the event log's key (`None`: no registry updates, the environment's home for the
    /// key). Tests use this to stay out of the real home.
    pub fn with_registry(project: impl Into<PathBuf>, registry_home: Option<PathBuf>) -> Self {
        Self {
            paths: FactoryPaths::new(project),
            registry_home,
        }
    }

    /// The project's `.factory/` layout.
    pub fn paths(&self) -> &FactoryPaths {
        &self.paths
    }

    /// Starts an experiment: writes `experiments/NNN/hypothesis.md` and
    /// `experiment.json`, logs an `experiment.begin` event carrying `exp_id`, and
    /// registers the project.
    ///
    /// Idempotent: if an experiment with exactly this hypothesis (whitespace-trimmed)
    /// was begun and never finalized — an interrupted run being retried — its id is
    /// returned and nothing new is allocated. Otherwise the id is one more than the
    /// highest id ever seen in `experiments/`, `results.tsv` or the begin events, so
    /// an id is never reused even after `git clean` removed a directory.
    pub fn begin(&self, hypothesis: &str) -> Result<Begun, StoreError> {
        self.begin_keyed(hypothesis, None)
    }

    /// [`begin`](Self::begin) for a run: an experiment already begun with `run_key`
    /// (finalized or not) is returned as it is, so a resumed run never allocates a
    /// second experiment for one `begin` node visit. Without a match, an unfinalized
    /// experiment with the same hypothesis and no run key of its own is adopted.
    pub fn begin_keyed(
        &self,
        hypothesis: &str,
        run_key: Option<&str>,
    ) -> Result<Begun, StoreError> {
        self.begin_avoiding(hypothesis, run_key, |_| false)
    }

    /// [`begin_keyed`](Self::begin_keyed), where a new experiment never takes an id
    /// for which `taken` holds (a branch an earlier `.factory/` left behind): the next
    /// free one instead.
    pub fn begin_avoiding(
        &self,
        hypothesis: &str,
        run_key: Option<&str>,
        taken: impl Fn(u32) -> bool,
    ) -> Result<Begun, StoreError> {
        let hypothesis = hypothesis.trim();
        if hypothesis.is_empty() {
            return Err(StoreError::EmptyHypothesis);
        }
        let run_key = run_key.map(str::trim).filter(|k| !k.is_empty());
        ensure_factory_dir(self.paths.project())?;
        // The event is written while the lock is held, so every allocated id is on
        // disk (directory and event) before another process scans for the next one.
        let begun = {
            let _lock = self.lock()?;
            let scan = self.scan()?;
            let by_key = run_key.and_then(|k| scan.run_keys.get(k).copied());
            let by_hypothesis = || {
                scan.pending
                    .iter()
                    .find(|p| {
                        p.hypothesis == hypothesis
                            && (run_key.is_none() || !scan.keyed.contains(&p.id))
                    })
                    .map(|p| p.id)
            };
            let begun = if let Some(id) = by_key {
                Begun { id, resumed: true }
            } else if let Some(id) = by_hypothesis() {
                if run_key.is_some() {
                    let mut info = self.read_info(id)?.unwrap_or_else(|| ExperimentInfo {
                        id,
                        hypothesis: hypothesis.to_owned(),
                        run_key: None,
                        begun_at: crate::sys::clock::now_iso8601(),
                        workspace: None,
                        verdict: None,
                    });
                    info.run_key = run_key.map(str::to_owned);
                    self.write_info(&info)?;
                }
                Begun { id, resumed: true }
            } else {
                let next = scan.max_id.saturating_add(1);
                let id = (next..=u32::MAX).find(|id| !taken(*id)).unwrap_or(next);
                self.create_experiment_dir(&ExperimentInfo {
                    id,
                    hypothesis: hypothesis.to_owned(),
                    run_key: run_key.map(str::to_owned),
                    begun_at: crate::sys::clock::now_iso8601(),
                    workspace: None,
                    verdict: None,
                })?;
                Begun { id, resumed: false }
            };
            // An experiment whose first begin was killed before its event was logged
            // (adopted now by its hypothesis) gets its first begin event now: QA is
            // proven against the first one, and there would be none.
            let logged = scan.begin_hypotheses.contains_key(&begun.id);
            let event = Event::new(EventData::ExperimentBegin {
                exp_id: begun.id,
                hypothesis: hypothesis.to_owned(),
                resumed: begun.resumed && logged,
                run_key: run_key.map(str::to_owned),
            });
            self.log(&event)?;
            begun
        };
        if let Some(home) = &self.registry_home
            && let Err(err) = registry::register_project(home, self.paths.project())
        {
            tracing::warn!(%err, "could not register the project (continuing)");
        }
        Ok(begun)
    }

    /// What is recorded about experiment `id` while it runs (`experiment.json`, with
    /// the verdict filled in when there is one); `None` for an id never begun or begun
    /// before `experiment.json` existed.
    pub fn info(&self, id: u32) -> Result<Option<ExperimentInfo>, StoreError> {
        let Some(mut info) = self.read_info(id)? else {
            return Ok(None);
        };
        info.verdict = self.scan()?.finalized.get(&id).copied();
        Ok(Some(info))
    }

    /// The experiment begun with `key` (see [`run_key`]), if any.
    pub fn find_by_run_key(&self, key: &str) -> Result<Option<ExperimentInfo>, StoreError> {
        let scan = self.scan()?;
        let Some(&id) = scan.run_keys.get(key.trim()) else {
            return Ok(None);
        };
        let mut info = match self.read_info(id)? {
            Some(info) => info,
            // experiment.json removed by hand: the begin event still names the key.
            None => ExperimentInfo {
                id,
                hypothesis: scan.begin_hypotheses.get(&id).cloned().unwrap_or_default(),
                run_key: Some(key.trim().to_owned()),
                begun_at: String::new(),
                workspace: None,
                verdict: None,
            },
        };
        info.verdict = scan.finalized.get(&id).copied();
        Ok(Some(info))
    }

    /// Records where experiment `id`'s work lives.
    pub fn set_workspace(
        &self,
        id: u32,
        workspace: Workspace,
    ) -> Result<ExperimentInfo, StoreError> {
        let _lock = self.lock()?;
        let scan = self.scan()?;
        if !scan.known.contains(&id) {
            return Err(StoreError::UnknownExperiment { id });
        }
        let mut info = match self.read_info(id)? {
            Some(info) => info,
            None => ExperimentInfo {
                id,
                hypothesis: self.hypothesis_of(id, &scan.begin_hypotheses),
                run_key: None,
                begun_at: crate::sys::clock::now_iso8601(),
                workspace: None,
                verdict: None,
            },
        };
        // The base the experiment is measured against, chained: experiment.json is a
        // file anything can rewrite, the event is not.
        self.log(
            &Event::raw(kinds::EXPERIMENT_WORKSPACE)
                .with("exp_id", id)
                .with("base_commit", workspace.base_commit.clone())
                .with("target_branch", workspace.target_branch.clone()),
        )?;
        info.workspace = Some(workspace);
        self.write_info(&info)?;
        info.verdict = scan.finalized.get(&id).copied();
        Ok(info)
    }

    /// The id the next `begin` would allocate (read only: a preview's guess, which a
    /// concurrent begin may take first).
    pub fn next_id(&self) -> Result<u32, StoreError> {
        Ok(self.scan()?.max_id + 1)
    }

    /// Whether experiment `id` was ever begun here.
    pub fn is_known(&self, id: u32) -> Result<bool, StoreError> {
        Ok(self.scan()?.known.contains(&id))
    }

    /// The finalized record of experiment `id`, if it has one.
    pub fn record(&self, id: u32) -> Result<Option<ExperimentRecord>, StoreError> {
        Ok(self.history()?.records.into_iter().find(|r| r.id == id))
    }

    fn read_info(&self, id: u32) -> Result<Option<ExperimentInfo>, StoreError> {
        let file = self.paths.experiment_dir(id).join("experiment.json");
        use crate::sys::files::{JsonFileError, read_json};
        read_json(&file).map_err(|e| match e {
            JsonFileError::Io(e) => io_at(&file)(e),
            JsonFileError::Invalid(e) => StoreError::CorruptInfo {
                path: file.clone(),
                problem: e.to_string(),
            },
        })
    }

    /// `experiments/NNN/` with `hypothesis.md` and `experiment.json`, all at once: they
    /// are written into a hidden directory that is then renamed into place, so a
    /// begin killed half-way leaves no experiment behind (the next begin takes the
    /// same id) rather than one without its key.
    fn create_experiment_dir(&self, info: &ExperimentInfo) -> Result<(), StoreError> {
        let dir = self.paths.experiment_dir(info.id);
        let parent = self.paths.experiments_dir();
        let staging = parent.join(format!(".begin-{:03}-{}", info.id, std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging).map_err(io_at(&staging))?;
        let file = staging.join("hypothesis.md");
        atomic_write(&file, format!("{}\n", info.hypothesis).as_bytes()).map_err(io_at(&file))?;
        let file = staging.join("experiment.json");
        let mut json =
            serde_json::to_string_pretty(info).map_err(|e| io_at(&file)(io::Error::other(e)))?;
        json.push('\n');
        atomic_write(&file, json.as_bytes()).map_err(io_at(&file))?;
        match fs::rename(&staging, &dir) {
            Ok(()) => Ok(()),
            // An empty directory of that name (a begin killed by an older version):
            // replace it; one with files in it is never touched.
            Err(_) if fs::remove_dir(&dir).is_ok() => {
                fs::rename(&staging, &dir).map_err(io_at(&dir))
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&staging);
                Err(io_at(&dir)(e))
            }
        }
    }

    fn write_info(&self, info: &ExperimentInfo) -> Result<(), StoreError> {
        let dir = self.paths.experiment_dir(info.id);
        fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        let file = dir.join("experiment.json");
        let mut json =
            serde_json::to_string_pretty(info).map_err(|e| io_at(&file)(io::Error::other(e)))?;
        json.push('\n');
        atomic_write(&file, json.as_bytes()).map_err(io_at(&file))
    }

    /// Records how experiment `id` ended: writes `experiments/NNN/verdict.json`
    /// (recreating the directory if something removed it), appends one row to
    /// `results.tsv`, logs `experiment.finalize`, and updates the user registry
    /// best-effort. The delta is `round(after - before, 6)` unless given.
    ///
    /// Errors: `id` was never begun; it already has a `results.tsv` row; the verdict
    /// is `superseded` but names no successor and no later experiment exists; or the
    /// successor named is this experiment, unknown, or given with another verdict.
    /// A named successor is prepended to the notes ("superseded by exp N").
    pub fn finalize(&self, id: u32, outcome: Outcome) -> Result<ExperimentRecord, StoreError> {
        for (name, value) in [
            ("score_before", outcome.score_before),
            ("score_after", outcome.score_after),
            ("delta", outcome.delta),
            ("cost_usd", outcome.cost_usd),
        ] {
            if let Some(v) = value
                && !v.is_finite()
            {
                return Err(StoreError::NotFinite {
                    field: name,
                    value: v,
                });
            }
        }
        ensure_factory_dir(self.paths.project())?;
        let record = {
            let _lock = self.lock()?;
            let scan = self.scan()?;
            if let Some(done) = scan.finalized.get(&id) {
                if let Some(row) = self.unbound_row(&scan, id, outcome.verdict) {
                    // A finalize killed between its row and its event: the event is
                    // written now, so the record it wrote stands.
                    self.log(&Event::new(EventData::ExperimentFinalize {
                        exp_id: id,
                        verdict: row.verdict.as_str().to_owned(),
                        delta: row.delta,
                        commit: row.commit.clone(),
                    }))?;
                    return Ok(row);
                }
                return Err(StoreError::AlreadyFinalized { id, verdict: *done });
            }
            if !scan.known.contains(&id) {
                return Err(StoreError::UnknownExperiment { id });
            }
            check_successor(id, &outcome, &scan)?;
            let dir = self.paths.experiment_dir(id);
            fs::create_dir_all(&dir).map_err(io_at(&dir))?;
            let hypothesis = self.hypothesis_of(id, &scan.begin_hypotheses);
            let record = ExperimentRecord {
                id,
                timestamp: crate::sys::clock::now_iso8601(),
                hypothesis,
                change_summary: outcome.change_summary.clone(),
                issue_number: outcome.issue_number,
                pr_number: outcome.pr_number,
                score_before: outcome.score_before,
                score_after: outcome.score_after,
                delta: outcome.effective_delta(),
                verdict: outcome.verdict,
                cost_usd: outcome.cost_usd,
                notes: outcome.recorded_notes(),
                research_citations: outcome.research_citations.clone(),
                gate: outcome.gate.clone(),
                revert_cause: (outcome.verdict == Verdict::Revert)
                    .then_some(outcome.revert_cause)
                    .flatten(),
                commit: (outcome.verdict == Verdict::Keep)
                    .then(|| outcome.commit.clone())
                    .flatten(),
                forgotten_at: None,
            };
            let verdict_file = dir.join("verdict.json");
            let mut json = serde_json::to_string_pretty(&record)
                .map_err(|e| io_at(&verdict_file)(io::Error::other(e)))?;
            json.push('\n');
            atomic_write(&verdict_file, json.as_bytes()).map_err(io_at(&verdict_file))?;
            let tsv_path = self.paths.results_tsv();
            let mut row = match last_byte(&tsv_path).map_err(io_at(&tsv_path))? {
                None => tsv::header(),
                // A row torn by a crash must not swallow the new one.
                Some(b) if b != b'\n' => "\n".to_owned(),
                Some(_) => String::new(),
            };
            row.push_str(&tsv::encode(&record));
            files::append(&tsv_path, row.as_bytes()).map_err(io_at(&tsv_path))?;
            self.log(&Event::new(EventData::ExperimentFinalize {
                exp_id: id,
                verdict: record.verdict.as_str().to_owned(),
                delta: record.delta,
                commit: record.commit.clone(),
            }))?;
            record
        };
        if let Some(home) = &self.registry_home
            && let Err(err) =
                registry::update_project_stats(home, self.paths.project(), record.score_after)
        {
            tracing::warn!(%err, "could not update registry stats (continuing)");
        }
        Ok(record)
    }

    /// Every experiment on record: finalized ones from `results.tsv` (plus any whose
    /// `verdict.json` exists without a row, e.g. after a crash between the two
    /// writes) and begun-but-unfinalized ones. Corrupt lines become warnings.
    pub fn history(&self) -> Result<History, StoreError> {
        if !self.paths.project().is_dir() {
            return Err(LayoutError::NoProject(self.paths.project().to_path_buf()).into());
        }
        let scan = self.scan()?;
        let mut records: BTreeMap<u32, ExperimentRecord> =
            scan.rows.into_iter().map(|r| (r.id, r)).collect();
        let mut warnings = scan.warnings;
        for id in scan.verdict_files {
            let file = self.paths.experiment_dir(id).join("verdict.json");
            let read = fs::read_to_string(&file)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    serde_json::from_str::<ExperimentRecord>(&t).map_err(|e| e.to_string())
                });
            match (records.get_mut(&id), read) {
                // The row is the record; verdict.json adds what results.tsv has no
                // column for.
                (Some(row), Ok(r)) if r.id == id => {
                    row.gate = r.gate;
                    row.revert_cause = r.revert_cause;
                    row.commit = r.commit;
                }
                (Some(_), Ok(_)) => warnings.push(format!(
                    "{}: names another experiment; its gate configuration is unknown, so it blocks no hypothesis",
                    file.display()
                )),
                (Some(_), Err(e)) => warnings.push(format!(
                    "{}: {e}; its gate configuration is unknown, so it blocks no hypothesis",
                    file.display()
                )),
                (None, Ok(r)) => {
                    records.insert(id, r);
                }
                (None, Err(e)) => warnings.push(format!("{}: {e}", file.display())),
            }
        }
        bind_to_chain(
            &self.paths,
            self.registry_home.as_deref(),
            &mut records,
            &mut warnings,
        );
        for (id, record) in records.iter_mut() {
            match self.read_forgotten(*id) {
                Ok(Some(f)) => record.forgotten_at = Some(f.forgotten_at),
                Ok(None) => {}
                Err(problem) => warnings.push(format!(
                    "{problem}; experiment {id} is not treated as forgotten (run `factory history forget {id}` again)"
                )),
            }
        }
        Ok(History {
            records: records.into_values().collect(),
            pending: scan.pending,
            warnings,
        })
    }

    /// Experiment `id`'s row, when it has `verdict` and a log that verifies holds no
    /// finalize event for it (with `verdict.json`'s kept commit, when it has one).
    fn unbound_row(&self, scan: &Scan, id: u32, verdict: Verdict) -> Option<ExperimentRecord> {
        let mut row = scan
            .rows
            .iter()
            .find(|r| r.id == id && r.verdict == verdict)?
            .clone();
        let finalized = verified_finalizes(&self.paths, self.registry_home.as_deref()).ok()??;
        if finalized.contains_key(&id) {
            return None;
        }
        row.commit = fs::read_to_string(self.paths.experiment_dir(id).join("verdict.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<ExperimentRecord>(&t).ok())
            .and_then(|r| r.commit);
        Some(row)
    }

    fn lock(&self) -> Result<FileLock, StoreError> {
        let path = self.paths.store_lock();
        FileLock::acquire(&path).map_err(io_at(&path))
    }

    fn hypothesis_of(&self, id: u32, from_events: &BTreeMap<u32, String>) -> String {
        let file = self.paths.experiment_dir(id).join("hypothesis.md");
        match fs::read_to_string(&file) {
            Ok(text) => text.trim().to_owned(),
            Err(_) => from_events.get(&id).cloned().unwrap_or_default(),
        }
    }

    /// Reads everything that bears on ids: directories, rows, verdict files, begin
    /// events. Callers that mutate hold the store lock around it.
    fn scan(&self) -> Result<Scan, StoreError> {
        let mut scan = Scan::default();
        let tsv_path = self.paths.results_tsv();
        match fs::read(&tsv_path) {
            Ok(bytes) => {
                let decoded = tsv::decode_bytes(&bytes);
                for line in decoded.bad_lines {
                    scan.warnings.push(format!(
                        "{}:{line}: unreadable row skipped",
                        tsv_path.display()
                    ));
                }
                scan.rows = decoded.records;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_at(&tsv_path)(e)),
        }
        for r in &scan.rows {
            scan.finalized.insert(r.id, r.verdict);
            scan.known.insert(r.id);
        }
        for e in events::read_kind(&self.paths, kinds::EXPERIMENT_BEGIN)? {
            if let EventData::ExperimentBegin {
                exp_id: id,
                hypothesis,
                run_key,
                ..
            } = e.data
            {
                scan.known.insert(id);
                scan.begin_hypotheses.insert(id, hypothesis);
                if let Some(k) = run_key {
                    scan.run_keys.entry(k).or_insert(id);
                    scan.keyed.insert(id);
                }
            }
        }
        let exp_dir = self.paths.experiments_dir();
        let entries = match fs::read_dir(&exp_dir) {
            Ok(entries) => entries.filter_map(Result::ok).collect::<Vec<_>>(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_at(&exp_dir)(e)),
        };
        let mut dirs: Vec<u32> = entries
            .iter()
            // An empty directory (left by a begin killed before this version made
            // them atomically) holds no experiment.
            .filter(|e| fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some()))
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .collect();
        dirs.sort_unstable();
        for id in dirs {
            scan.known.insert(id);
            let dir = self.paths.experiment_dir(id);
            // A key adopted after begin is only in experiment.json; a corrupt file is
            // reported by `info`, not here, so scanning never fails on it.
            if let Ok(text) = fs::read_to_string(dir.join("experiment.json"))
                && let Ok(info) = serde_json::from_str::<ExperimentInfo>(&text)
                && let Some(k) = info.run_key
            {
                scan.run_keys.entry(k).or_insert(id);
                scan.keyed.insert(id);
            }
            if dir.join("verdict.json").is_file() {
                scan.verdict_files.push(id);
                continue;
            }
            if scan.finalized.contains_key(&id) {
                continue;
            }
            if let Ok(text) = fs::read_to_string(dir.join("hypothesis.md")) {
                scan.pending.push(PendingExperiment {
                    id,
                    hypothesis: text.trim().to_owned(),
                });
            }
        }
        scan.max_id = scan.known.iter().next_back().copied().unwrap_or(0);
        Ok(scan)
    }
}

/// The experiment begun with run key `key` in the project at `project` (see
/// [`run_key`]); what the executor calls before `begin` on resume. Does not touch the
/// user registry.
pub fn find_by_run_key(project: &Path, key: &str) -> Result<Option<ExperimentInfo>, StoreError> {
    ExperimentStore::with_registry(project, None).find_by_run_key(key)
}

/// Every experiment on record for the project at `project` (see
/// [`ExperimentStore::history`]); e.g. `load_history(root)?.with_verdict(Verdict::Revert)`
/// for anti-pattern checks. Does not touch the user registry.
pub fn load_history(project: &Path) -> Result<History, StoreError> {
    ExperimentStore::with_registry(project, None).history()
}

/// The verdict of each verified `experiment.finalize`, by experiment (the last one
/// wins), verified under the key the store's events were chained with. `Ok(None)`: the
/// project never wrote a log (records from before the chain), nothing to bind to;
/// `Err`: the log does not verify.
fn verified_finalizes(
    paths: &FactoryPaths,
    home: Option<&Path>,
) -> Result<Option<BTreeMap<u32, String>>, String> {
    let verified = match home {
        Some(home) => events::chain::ChainKey::in_home(home, paths)
            .map_err(events::chain::ChainError::Events)
            .and_then(|key| events::chain::verify_with(paths, &key)),
        None => events::chain::verify(paths),
    };
    let log = verified.map_err(|e| e.to_string())?;
    if log.events.is_empty() && !paths.events_jsonl().exists() {
        return Ok(None);
    }
    let mut finalized = BTreeMap::new();
    for v in log.of_kind(kinds::EXPERIMENT_FINALIZE) {
        if let EventData::ExperimentFinalize {
            exp_id, verdict, ..
        } = &v.event.data
        {
            finalized.insert(*exp_id, verdict.clone());
        }
    }
    Ok(Some(finalized))
}

/// Keeps only the records a verified `experiment.finalize` of the same verdict
/// stands behind: a row or `verdict.json` something other than `factory finalize`
/// wrote is ignored, with a warning. A log that cannot be verified binds nothing (the
/// records are shown as written, and the keep rule refuses on its own); a project
/// that never wrote a log has nothing to bind to.
fn bind_to_chain(
    paths: &FactoryPaths,
    home: Option<&Path>,
    records: &mut BTreeMap<u32, ExperimentRecord>,
    warnings: &mut Vec<String>,
) {
    if records.is_empty() {
        return;
    }
    let finalized = match verified_finalizes(paths, home) {
        Ok(Some(f)) => f,
        Ok(None) => return,
        Err(e) => {
            warnings.push(format!(
                "the event log cannot be verified, so results.tsv is shown as written and bound to nothing: {e}"
            ));
            return;
        }
    };
    records.retain(|id, r| {
        let bound = finalized.get(id).map(String::as_str) == Some(r.verdict.as_str());
        if !bound {
            warnings.push(format!(
                "experiment {id}'s `{}` in results.tsv has no verified experiment.finalize event: ignored (only `factory finalize` records a verdict)",
                r.verdict
            ));
        }
        bound
    });
}

#[derive(Default)]
struct Scan {
    rows: Vec<ExperimentRecord>,
    finalized: BTreeMap<u32, Verdict>,
    known: BTreeSet<u32>,
    begin_hypotheses: BTreeMap<u32, String>,
    verdict_files: Vec<u32>,
    pending: Vec<PendingExperiment>,
    max_id: u32,
    warnings: Vec<String>,
    /// Run key → the first experiment begun with it.
    run_keys: BTreeMap<String, u32>,
    /// Experiments that carry a run key.
    keyed: BTreeSet<u32>,
}

/// `superseded` needs a successor: the experiment `superseded_by` names (any other
/// known one: parallel branches are begun together, so the winner may have a lower
/// id), else some later experiment. A successor with another verdict is a mistake.
fn check_successor(id: u32, outcome: &Outcome, scan: &Scan) -> Result<(), StoreError> {
    let bad = |by: u32, problem: String| StoreError::BadSuccessor { id, by, problem };
    match (outcome.verdict, outcome.superseded_by) {
        (Verdict::Superseded, None) if scan.max_id <= id => {
            Err(StoreError::SupersededWithoutSuccessor { id })
        }
        (Verdict::Superseded, Some(by)) if by == id => {
            Err(bad(by, "an experiment cannot supersede itself".to_owned()))
        }
        (Verdict::Superseded, Some(by)) if !scan.known.contains(&by) => Err(bad(
            by,
            format!("experiment {by} was never begun in this project"),
        )),
        (verdict, Some(by)) if verdict != Verdict::Superseded => Err(bad(
            by,
            format!("only a `superseded` verdict names a successor, not `{verdict}`"),
        )),
        _ => Ok(()),
    }
}

/// The file's last byte, `None` when it is missing or empty.
fn last_byte(path: &Path) -> io::Result<Option<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if file.metadata()?.len() == 0 {
        return Ok(None);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut b = [0u8; 1];
    file.read_exact(&mut b)?;
    Ok(Some(b[0]))
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests;
