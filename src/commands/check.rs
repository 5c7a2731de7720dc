//! `factory check`: diagnostics for workflow files.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::driver::{self, Checked};

use super::check_fix;
use super::check_outcome as outcome;

use super::USAGE;

#[derive(clap::Args)]
#[command(
    about = "Check workflow files (.fwf, or IR text .fwir) and print their diagnostics",
    long_about = "Check workflow files and print every diagnostic with its code, the place it \
points at and how to fix it. Directories are searched recursively for *.fwf and *.fwir.\n\n\
Exit status: 0 no errors, 1 errors found (or warnings with --deny-warnings, or no workflow \
file in the paths), 2 a file could not be read or the arguments are wrong.",
    after_help = "Examples:\n  factory check                      # the current directory\n  factory check workflows/ stdlib/\n  factory check improve.fwf --deny-warnings\n  factory check evolved.fwir --format json\n  factory check --fix improve.fwf      # apply the fixes, then report the rest"
)]
pub struct Args {
    /// Files or directories to check (default: the current directory).
    #[arg(value_name = "PATH", default_value = ".")]
    paths: Vec<PathBuf>,
    /// Treat warnings as errors (exit 1 when there are any).
    #[arg(long)]
    deny_warnings: bool,
    /// Apply every machine-applicable fix (bound a reloop, add a join, create a
    /// prompt, remove an unused import or knob or a stray bound), check again, and
    /// report what remains.
    #[arg(long)]
    fix: bool,
    /// Output format: human-readable reports, or one JSON array of diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Human,
    Json,
}

pub fn run(args: Args) -> ExitCode {
    let result = if args.fix {
        check_fix::fix_paths(&args.paths)
    } else {
        driver::check_paths(&args.paths).map(|c| (c, Vec::new()))
    };
    let checked = match result {
        Ok((checked, changes)) => {
            for change in changes {
                eprintln!("fixed {change}");
            }
            checked
        }
        Err(err) => {
            let err = miette::miette!(help = "check that the path exists and is readable", "{err}");
            return super::report(err, USAGE);
        }
    };
    match args.format {
        Format::Json => println!("{}", to_json(&checked)),
        Format::Human => {
            for l in &checked.diagnostics {
                eprintln!("{:?}", l.diagnostic.to_report(l.source.clone()));
            }
            for u in &checked.unreadable {
                eprintln!("{:?}", outcome::unreadable_report(u));
            }
        }
    }
    if checked.files == 0 {
        eprintln!("{}", outcome::no_files_warning(&args.paths));
    }
    eprintln!("{}", outcome::summary(&checked));
    ExitCode::from(outcome::exit_code(&checked, args.deny_warnings))
}

fn to_json(checked: &Checked) -> String {
    let items: Vec<serde_json::Value> = checked
        .diagnostics
        .iter()
        .map(|l| l.to_json())
        .chain(checked.unreadable.iter().map(outcome::unreadable_json))
        .collect();
    serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into())
}
