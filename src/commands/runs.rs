//! `factory runs`: past runs of the project with their outcome.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::exec::checkpoint::list_runs;

use super::{OK, USAGE, report};

#[derive(clap::Args)]
#[command(after_help = "\
One line per run, oldest first: id, workflow, status, nodes run, experiment, start time,
and the tokens and cost its agents reported (when they reported any).

Example:
  factory runs --json")]
pub struct Args {
    #[arg(default_value = ".")]
    path: PathBuf,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory runs .") {
        return code;
    }
    let runs = list_runs(&args.path);
    if args.json {
        return match serde_json::to_string_pretty(&runs) {
            Ok(j) => {
                println!("{j}");
                ExitCode::from(OK)
            }
            Err(e) => report(miette::miette!("cannot encode the runs: {e}"), USAGE),
        };
    }
    if runs.is_empty() {
        println!("no runs yet; start one with `factory run MODE`");
    }
    for r in runs {
        let usage = r
            .usage
            .map(|u| format!("  {}", u.summary()))
            .unwrap_or_default();
        println!(
            "{}  {:<18} {:<11} {:>4} nodes  exp {:<4} {}{usage}",
            r.run_id,
            r.workflow,
            r.status,
            r.nodes_run,
            r.exp_id.as_deref().unwrap_or("-"),
            r.started_at
        );
    }
    ExitCode::from(OK)
}
