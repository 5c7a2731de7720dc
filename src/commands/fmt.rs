//! `factory fmt`: the canonical layout for workflow files.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::host;

use super::{FAILED, OK, USAGE};

#[derive(clap::Args)]
#[command(
    about = "Format workflow files (.fwf) in place, or check that they are formatted",
    long_about = "Rewrite .fwf files in the canonical layout: 4-space indentation by brace \
depth, one space around `->` and after `:` and `,`, no trailing whitespace, at most one blank \
line, a final newline. Comments and strings are kept exactly. Directories are searched \
recursively.\n\nExit status: 0 all files formatted (or rewritten), 1 with --check: some file \
would change, 2 a file could not be read or written.",
    after_help = "Examples:\n  factory fmt workflows/ stdlib/\n  factory fmt --check improve.fwf"
)]
pub struct Args {
    /// Files or directories to format (default: the current directory).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Write nothing; list the files that would change and exit 1 if there are any.
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> ExitCode {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    };
    let files = match host::collect_sources(&paths) {
        Ok(files) => files,
        Err(err) => {
            let err = miette::miette!(help = "check that the path exists and is readable", "{err}");
            return super::report(err, USAGE);
        }
    };
    let mut changed = 0;
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "fwf"))
    {
        match host::format_file(file, args.check) {
            Ok(true) => {
                changed += 1;
                if args.check {
                    println!("{}", file.display());
                } else {
                    eprintln!("formatted {}", file.display());
                }
            }
            Ok(false) => {}
            Err(err) => {
                let err = miette::miette!(
                    help = "check that the file is readable and its directory writable",
                    "{err}"
                );
                return super::report(err, USAGE);
            }
        }
    }
    if args.check && changed > 0 {
        eprintln!("{changed} file(s) would be reformatted; run `factory fmt` to fix");
        return ExitCode::from(FAILED);
    }
    ExitCode::from(OK)
}
