//! `factory doctor [PATH]`: checks a project's set-up and says what to do.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::project::doctor;

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args)]
#[command(after_help = "\
Checks, in order: a git repository with a commit; factory.md present, valid and
committed; .factory/ ignored (and .gitignore committed); the eval profile approved;
the project's toolchain (a test command is available); a clean checkout of HEAD, set up
by factory.md's `## Setup` and proven by the provenance probe to run its own code (what
the keep gate does to each side); an agent runner (configured, or an agent CLI on PATH).
Changes nothing in the project (the set-up runs in a scratch checkout). Exit 0 when
ready, 1 when something needs fixing.")]
pub struct Args {
    /// The project.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory doctor .") {
        return code;
    }
    let findings = doctor::diagnose(&args.path);
    if args.json {
        match serde_json::to_string_pretty(&findings) {
            Ok(j) => println!("{j}"),
            Err(e) => return report(miette::miette!("cannot encode the findings: {e}"), USAGE),
        }
    } else {
        print!("{}", doctor::render(&findings));
    }
    ExitCode::from(if findings.iter().all(|f| f.ok) {
        OK
    } else {
        FAILED
    })
}
