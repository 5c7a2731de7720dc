//! `factory detect [PATH] [--json]`: print the project's state.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use factory_runtime::detect::{self, DetectOptions};

use super::{OK, USAGE, report};

/// Print which state a project is in: no_repo, incomplete, no_factory,
/// evals_pending_review or has_factory.
#[derive(clap::Args)]
#[command(after_help = "\
Checks, in order: not a git repo -> no_repo; .factory/eval_profile.json not
human-reviewed -> evals_pending_review; .factory/config.json exists -> has_factory;
an open GitHub issue labelled `plan` (asked via `gh`) -> incomplete; else no_factory.
A missing, failing or hanging gh counts as no plan issues.

Examples:
  factory detect
  factory detect ../my-project --json")]
pub struct Args {
    /// Project directory.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print a JSON object (state, path, reason, gh) instead of the bare state.
    #[arg(long)]
    json: bool,
    /// Seconds to wait for `gh` before treating it as "no plan issues".
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    gh_timeout: f64,
}

pub fn run(args: Args) -> ExitCode {
    let Ok(gh_timeout) = Duration::try_from_secs_f64(args.gh_timeout) else {
        return report(
            miette::miette!(
                help = "give a non-negative number of seconds, e.g. --gh-timeout 10",
                "--gh-timeout {} is not a valid duration",
                args.gh_timeout
            ),
            USAGE,
        );
    };
    let options = DetectOptions {
        gh_timeout,
        ..DetectOptions::default()
    };
    let detection = detect::detect(&args.path, &options);
    if args.json {
        if let Err(code) = super::print_json(&detection) {
            return code;
        }
    } else {
        println!("{}", detection.state);
    }
    ExitCode::from(OK)
}
