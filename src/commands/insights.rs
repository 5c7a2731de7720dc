//! `factory insights`: keep rate, mean delta, revert reasons and failing checks
//! across projects.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::insights::{gather, project_list, render};
use factory_runtime::project::registry::user_home;

use super::OK;

#[derive(clap::Args)]
#[command(after_help = "\
Covers every project in the registry ($FACTORY_HOME/registry.json, else
~/.factory/registry.json; a project is registered by its first experiment), after any
given with --project. The keep rate is kept experiments over those with a verdict;
revert reasons are the first line of each reverted experiment's notes; failing checks
are those named in precheck records. The dashboard's insights page shows the same.

Examples:
  factory insights
  factory insights --project . --json")]
pub struct Args {
    /// A project to include besides the registered ones (repeatable).
    #[arg(long = "project", value_name = "DIR")]
    projects: Vec<PathBuf>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    for p in &args.projects {
        if let Err(code) = super::require_dir(p, "factory insights --project .") {
            return code;
        }
    }
    let insights = gather(&project_list(&args.projects, user_home().as_deref()));
    if args.json {
        return super::print_json(&insights).map_or_else(|code| code, |()| ExitCode::from(OK));
    }
    print!("{}", render(&insights));
    ExitCode::from(OK)
}
