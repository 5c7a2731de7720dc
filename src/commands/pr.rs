//! `factory pr [PATH] --id N`: open a pull request for a kept experiment.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::experiment::pull_request::{self, PullRequest};

use super::{OK, USAGE, report};

/// Open a pull request for a kept experiment (when gh is installed and signed in).
#[derive(clap::Args)]
#[command(after_help = "\
Pushes the experiment's branch factory/exp-NNN to the `origin` remote and opens a pull
request against its target branch with `gh pr create`. Nothing is merged. Without gh, its
sign-in or an `origin` remote, the branch is left as it is and the reason is printed
(exit 0: the keep already stands). parallel-improve runs it after its keep.

Example:
  factory pr --id 3")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The kept experiment.
    #[arg(long, value_name = "N")]
    id: u32,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory pr . --id N") {
        return code;
    }
    match pull_request::open(&args.path, args.id) {
        Ok(PullRequest::Opened { url }) => {
            println!("opened {url}");
            ExitCode::from(OK)
        }
        Ok(PullRequest::Skipped { reason }) => {
            println!("no pull request: {reason}");
            ExitCode::from(OK)
        }
        Err(e) => report(e, USAGE),
    }
}
