//! `factory study [PATH]`: write .factory/strategy/observations.md.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::study;

use super::{OK, USAGE, report};

/// Write .factory/strategy/observations.md: the project's shape, hot spots, recent
/// git history, past experiments and their lessons, reverted hypotheses to avoid, and
/// the eval's weakest dimensions. Deterministic; no model is called.
#[derive(clap::Args)]
#[command(after_help = "\
Study keeps the code graph current first (`factory graph update`, or `extract` when
there is none). A project without a graph (not a git repository), experiments or an
eval still gets a report that says what is missing.

Examples:
  factory study
  factory study ../my-project --json")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print what was written as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    match study::study(&args.path) {
        Ok(done) => {
            if args.json {
                if let Err(code) = super::print_json(&done) {
                    return code;
                }
            } else {
                println!(
                    "wrote {} ({} bytes; graph {}; {} experiments)",
                    done.path.display(),
                    done.bytes,
                    done.graph,
                    done.experiments
                );
            }
            ExitCode::from(OK)
        }
        Err(err) => report(err, USAGE),
    }
}
