//! `factory modes`: the modes available here and where each comes from.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::host::{self, ModeSource};

use super::OK;

#[derive(clap::Args)]
#[command(
    about = "List the modes available in a project and where each comes from",
    long_about = "List the modes `factory compile MODE` (and the runtime) can run here: the \
built-in modes embedded in factory, and the project's own .factory/workflows/<name>.fwf, \
which override a built-in mode of the same name.",
    after_help = "Example:\n  factory modes\n  factory modes path/to/project"
)]
pub struct Args {
    /// The project (default: the current directory).
    #[arg(value_name = "PATH", default_value = ".")]
    path: PathBuf,
}

pub fn run(args: Args) -> ExitCode {
    // A mistyped path would otherwise list only the built-in modes, hiding the
    // project's overrides without a word.
    if let Err(code) = super::require_dir(&args.path, "factory modes .") {
        return code;
    }
    let modes = host::modes(&args.path);
    let width = modes.iter().map(|m| m.name.len()).max().unwrap_or(0);
    for m in modes {
        let from = match &m.source {
            ModeSource::BuiltIn => "built-in".to_string(),
            ModeSource::Project(path) if m.overrides => {
                format!("{} (overrides the built-in mode)", path.display())
            }
            ModeSource::Project(path) => path.display().to_string(),
            ModeSource::Evolved(path) => format!(
                "{} (a candidate of `factory evolve`; `factory evolve promote` keeps it)",
                path.display()
            ),
        };
        let description = factory_compiler::driver::describe_mode(&m.key).unwrap_or_default();
        println!("{:width$}  {from}", m.name);
        if !description.is_empty() {
            println!("{:width$}  {description}", "");
        }
    }
    ExitCode::from(OK)
}
