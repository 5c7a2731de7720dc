//! `factory history [PATH] [--json]`: show past experiments in tiers.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::store::ExperimentStore;
use factory_runtime::store::history::format_history;

use super::{OK, USAGE, report};

/// Show the project's experiments: the last 3 in full, the 7 before them one line
/// each, everything older as aggregate numbers; experiments without a verdict first.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  factory history
  factory history ../my-project --json   # every record, for scripts")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print every record and pending experiment as JSON instead.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    let history = match ExperimentStore::open(&args.path).history() {
        Ok(h) => h,
        Err(err) => return report(err, USAGE),
    };
    for w in &history.warnings {
        eprintln!("warning: {w}");
    }
    if args.json {
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
