//! What can go wrong in the experiment store, each with the fix.

use std::io;
use std::path::PathBuf;

use super::Verdict;
use crate::events::EventsError;
use crate::project::layout::LayoutError;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum StoreError {
    /// `begin` was given nothing to test.
    #[error("the hypothesis is empty")]
    #[diagnostic(
        code(factory::store::empty_hypothesis),
        help(
            "say what the experiment will change and why, e.g. --hypothesis \"Cache parsed ASTs\""
        )
    )]
    EmptyHypothesis,
    /// `finalize` named an id that no `begin` produced.
    #[error("experiment {id} was never begun in this project")]
    #[diagnostic(
        code(factory::store::unknown_experiment),
        help(
            "run `factory begin --hypothesis TEXT` first and finalize the id it prints; `factory history` lists existing ids"
        )
    )]
    UnknownExperiment {
        /// The id given.
        id: u32,
    },
    /// `history forget` named an id with no record.
    #[error("experiment {id} is not on record in this project ({known})")]
    #[diagnostic(
        code(factory::store::nothing_to_forget),
        help(
            "`factory history` lists the experiments; forget a finalized one by its id: `factory history forget N`"
        )
    )]
    NothingToForget {
        /// The id given.
        id: u32,
        /// Which ids there are.
        known: String,
    },
    /// `history forget` named an experiment without a verdict.
    #[error("experiment {id} has no verdict yet, so there is nothing to forget")]
    #[diagnostic(
        code(factory::store::forget_unfinalized),
        help(
            "only a finalized experiment can block a hypothesis; finalize it first (`factory finalize --id N --verdict revert`), then forget it if it should not count"
        )
    )]
    ForgetUnfinalized {
        /// The id given.
        id: u32,
    },
    /// `finalize` was called twice for one experiment.
    #[error("experiment {id} is already finalized with verdict `{verdict}`")]
    #[diagnostic(
        code(factory::store::already_finalized),
        help("a verdict is recorded once; begin a new experiment to try again")
    )]
    AlreadyFinalized {
        /// The id given.
        id: u32,
        /// The verdict already on record.
        verdict: Verdict,
    },
    /// `superseded` without a named successor where no later experiment exists.
    #[error("experiment {id} cannot be superseded: no later experiment exists")]
    #[diagnostic(
        code(factory::store::superseded_without_successor),
        help(
            "`superseded` means another experiment took over this hypothesis: name it with --superseded-by N (a parallel branch's winner may have a lower id); use `revert` for a change that did not work"
        )
    )]
    SupersededWithoutSuccessor {
        /// The id given.
        id: u32,
    },
    /// `superseded_by` names no usable successor.
    #[error("experiment {id} cannot be superseded by experiment {by}: {problem}")]
    #[diagnostic(
        code(factory::store::bad_successor),
        help(
            "--superseded-by N names the experiment that took over this one's hypothesis (e.g. the kept parallel branch): another experiment begun in this project, with --verdict superseded; `factory history` lists ids"
        )
    )]
    BadSuccessor {
        /// The experiment being finalized.
        id: u32,
        /// The successor named.
        by: u32,
        /// What is wrong with it.
        problem: String,
    },
    /// A score, delta or cost that is NaN or infinite.
    #[error("{field} is {value}, not a finite number")]
    #[diagnostic(
        code(factory::store::not_finite),
        help(
            "pass real numbers for scores, e.g. --score-after 0.64; leave a score out if it was not measured"
        )
    )]
    NotFinite {
        /// The field.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// `.factory/` could not be prepared.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Layout(#[from] LayoutError),
    /// The event log could not be read or appended to.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] EventsError),
    /// `experiment.json` is not what the store wrote.
    #[error("{path} is unreadable: {problem}")]
    #[diagnostic(
        code(factory::store::corrupt_info),
        help("restore the file from a backup, or delete it and begin a new experiment")
    )]
    CorruptInfo {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The file system refused an operation.
    #[error("cannot access {path}: {source}")]
    #[diagnostic(
        code(factory::store::io),
        help("check that the project's .factory/ directory exists and is writable")
    )]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}
