//! `factory history [PATH] [--json]`: show past experiments in tiers;
//! `factory history forget N [PATH]`: clear one from anti-pattern matching.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::store::ExperimentStore;
use factory_runtime::store::history::format_history;

use super::{OK, USAGE, report};

/// Show the project's experiments: the last 3 in full, the 7 before them one line
/// each, everything older as aggregate numbers; experiments without a verdict first.
#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "\
A reverted experiment counts against a similar hypothesis (precheck's anti_patterns)
only when the gate measured it failing under the same factory.md and eval profile;
`factory history forget N` clears one that should not count any more. The record
stays; history shows it as forgotten.

Examples:
  factory history
  factory history ../my-project --json   # every record, for scripts
  factory history forget 3               # experiment 3 no longer blocks a retry"
)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print every record and pending experiment as JSON instead.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Clear experiment N from anti-pattern matching: a similar hypothesis is no
    /// longer refused because of it. The record is kept and marked forgotten.
    #[command(after_help = "\
Writes .factory/experiments/NNN/forgotten.json (when it was forgotten) and logs an
experiment.forgotten event; results.tsv and verdict.json are not changed. Forgetting
again changes nothing. N must be a finalized experiment (`factory history` lists them).

Example:
  factory history forget 3")]
    Forget {
        /// The experiment's id, as `factory history` shows it.
        #[arg(value_name = "N")]
        id: u32,
        /// Project root.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print the record as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> ExitCode {
    match args.action {
        Some(Action::Forget { id, path, json }) => forget(id, path, json),
        None => show(args.path, args.json),
    }
}

fn show(path: PathBuf, json: bool) -> ExitCode {
    let history = match ExperimentStore::open(&path).history() {
        Ok(h) => h,
        Err(err) => return report(err, USAGE),
    };
    for w in &history.warnings {
        eprintln!("warning: {w}");
    }
    if json {
        let pending: Vec<_> = history
            .pending
            .iter()
            .map(|p| serde_json::json!({"id": p.id, "hypothesis": p.hypothesis}))
            .collect();
        let value = serde_json::json!({"records": history.records, "pending": pending});
        match serde_json::to_string_pretty(&value) {
            Ok(j) => println!("{j}"),
            Err(e) => return report(miette::miette!("cannot encode the history: {e}"), USAGE),
        }
    } else {
        print!("{}", format_history(&history));
    }
    ExitCode::from(OK)
}

fn forget(id: u32, path: PathBuf, json: bool) -> ExitCode {
    let forgot = match ExperimentStore::open(&path).forget(id) {
        Ok(f) => f,
        Err(err) => return report(err, USAGE),
    };
    if json {
        match serde_json::to_string_pretty(&forgot.record) {
            Ok(j) => println!("{j}"),
            Err(e) => return report(miette::miette!("cannot encode the record: {e}"), USAGE),
        }
    } else {
        print!("{}", forgot.render());
    }
    ExitCode::from(OK)
}
