//! `factory fmt`: the canonical layout for workflow files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use factory_compiler::host;

use super::{FAILED, OK, USAGE};

#[derive(clap::Args)]
#[command(
    about = "Format workflow files (.fwf) in place, or check that they are formatted",
    long_about = "Rewrite .fwf files in the canonical layout: 4-space indentation by brace \
depth, one space around `->` and after `:` and `,`, no trailing whitespace, at most one blank \
line, a final newline. Comments and strings are kept exactly. Directories are searched \
recursively. Parts of a file that do not parse are left exactly as they are and the file's \
syntax errors are counted; a summary line ends the output.\n\nExit status: 0 all files \
formatted (or rewritten), 1 a file has syntax errors or, with --check, some file would \
change, 2 a file could not be read or written.",
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
    let (mut total, mut changed, mut broken) = (0, 0, 0);
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "fwf"))
    {
        total += 1;
        match format_file(file, args.check) {
            Ok(outcome) => {
                if outcome.syntax_errors > 0 {
                    broken += 1;
                    eprintln!(
                        "{}: {} syntax error(s); the parts that do not parse were left as they \
                         are (see `factory check {}`)",
                        file.display(),
                        outcome.syntax_errors,
                        file.display()
                    );
                }
                if outcome.changed {
                    changed += 1;
                    if args.check {
                        println!("{}", file.display());
                    } else {
                        eprintln!("formatted {}", file.display());
                    }
                }
            }
            Err(err) => {
                let err = miette::miette!(
                    help = "check that the file is readable and its directory writable",
                    "{err}"
                );
                return super::report(err, USAGE);
            }
        }
    }
    let verb = if args.check {
        "would be reformatted"
    } else {
        "reformatted"
    };
    eprintln!(
        "{total} file(s): {changed} {verb}, {} unchanged, {broken} with syntax errors",
        total - changed
    );
    if args.check && changed > 0 {
        eprintln!("run `factory fmt` to fix the layout");
    }
    ExitCode::from(if (args.check && changed > 0) || broken > 0 {
        FAILED
    } else {
        OK
    })
}

/// What formatting one file did.
struct Formatted {
    /// The layout changed (written, or with `check` would be).
    changed: bool,
    /// Syntax errors in the file: the parts that do not parse were left as they are.
    syntax_errors: usize,
}

/// Formats one file in place (atomically: an interrupted run never leaves half a file);
/// with `check`, nothing is written.
fn format_file(path: &Path, check: bool) -> std::io::Result<Formatted> {
    let with_path =
        |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(with_path)?;
    let (formatted, syntax_errors) = factory_compiler::format::format_reporting(&text);
    let changed = formatted != text;
    if changed && !check {
        factory_runtime::sys::files::atomic_write(path, formatted.as_bytes()).map_err(with_path)?;
    }
    Ok(Formatted {
        changed,
        syntax_errors,
    })
}
