//! Why a search could not run.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum EvolveError {
    #[error("cannot read the bench suite {dir}: {why}")]
    #[diagnostic(
        code(factory::evolve::no_suite),
        help(
            "pass --bench DIR: a directory of projects, each with project/ and replay.yaml (tests/bench-suite is one)"
        )
    )]
    NoSuite { dir: PathBuf, why: String },
    #[error("the bench suite {dir} has no project to train on")]
    #[diagnostic(
        code(factory::evolve::empty_suite),
        help("add a project directory (project/ and replay.yaml) without a `holdout` file")
    )]
    EmptySuite { dir: PathBuf },
    #[error("{dir} is not a bench project: {why}")]
    #[diagnostic(
        code(factory::evolve::bad_project),
        help(
            "a bench project has project/ (with factory.md) and replay.yaml; move other directories out of the suite"
        )
    )]
    BadProject { dir: PathBuf, why: String },
    #[error("the search state {path} cannot be used: {why}")]
    #[diagnostic(
        code(factory::evolve::state),
        help("it is kept as it is; move .factory/evolve/ aside to start a new search")
    )]
    State { path: PathBuf, why: String },
    #[error("{dir} holds a search with other settings, another seed mode or another suite")]
    #[diagnostic(
        code(factory::evolve::other_search),
        help(
            "run it with the settings it started with to resume it (`factory evolve report` shows them), or move .factory/evolve/ aside"
        )
    )]
    OtherSearch { dir: PathBuf },
    #[error("no candidate could be scored")]
    #[diagnostic(
        code(factory::evolve::nothing_scored),
        help("check that `factory run` works on one bench project by hand")
    )]
    NothingScored,
}
