//! `factory begin [PATH] --hypothesis TEXT`: start an experiment, print its id.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::store::ExperimentStore;

use super::{OK, USAGE, report};

/// Start an experiment: allocate an id, write .factory/experiments/NNN/hypothesis.md,
/// log an experiment.begin event, and print the id.
#[derive(clap::Args)]
#[command(after_help = "\
Re-running begin with the same hypothesis while that experiment has no verdict yet
(an interrupted run) prints the same id instead of allocating a new one.

Example:
  id=$(factory begin --hypothesis \"Cache parsed ASTs between runs\")")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// What the experiment will change and why.
    #[arg(long, value_name = "TEXT")]
    hypothesis: String,
}

pub fn run(args: Args) -> ExitCode {
    match ExperimentStore::open(&args.path).begin(&args.hypothesis) {
        Ok(begun) => {
            if begun.resumed {
                eprintln!(
                    "note: experiment {} already has this hypothesis and no verdict; reusing it",
                    begun.id
                );
            }
            println!("{}", begun.id);
            ExitCode::from(OK)
        }
        // An empty hypothesis is a usage error; the rest are I/O problems.
        Err(err) => report(err, USAGE),
    }
}
