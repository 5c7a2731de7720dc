//! `factory resume`: continue the project's last run from its checkpoint.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::exec::{self, view::View};

use super::run::{tokio_runtime, view_mode};

#[derive(clap::Args)]
#[command(after_help = "\
Loads .factory/state/run.json and the node results journaled after it in events.jsonl, then
runs again only the nodes that had not finished. Runs the same workflow with the same runner.
A checkpoint older than 24 hours is refused unless --force; a run resumed 5 times is refused
(FACTORY_MAX_RESPAWNS changes the limit).

Example:
  factory resume --project ../app")]
pub struct Args {
    /// The project whose run to continue.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Resume a checkpoint older than 24 hours.
    #[arg(long)]
    force: bool,
    /// Stream the events as JSON lines on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    let project = std::path::absolute(&args.project).unwrap_or(args.project.clone());
    let view = View::new(view_mode(args.json));
    let ended = tokio_runtime().and_then(|rt| {
        rt.block_on(exec::resume(&project, args.force, &view))
            .map_err(Into::into)
    });
    super::run_end::finish(&project, ended, args.json)
}
