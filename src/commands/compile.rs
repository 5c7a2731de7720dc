//! `factory compile`: a workflow to IR, JSON, dot or mermaid.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::driver::{self, CompileError};
use factory_compiler::{emit, ir};

use super::{FAILED, OK, USAGE};

#[derive(clap::Args)]
#[command(
    about = "Compile a workflow (.fwf or IR text .fwir) to IR, JSON, graphviz dot or mermaid",
    long_about = "Compile a workflow and print it in the chosen form. The input is a .fwf file \
(its first workflow, or the one named by --workflow) or an IR text file (.fwir). The file \
must check without errors; warnings are printed on stderr.\n\n\
Exit status: 0 compiled, 1 the workflow has errors, 2 a file could not be read or written.",
    after_help = "Examples:\n  factory compile workflows/improve.fwf --emit ir > improve.fwir\n  factory compile improve.fwir --emit ir        # the same text, byte for byte\n  factory compile improve.fwf --emit dot | dot -Tsvg > improve.svg\n  factory compile improve.fwf --emit mermaid -o improve.mmd"
)]
pub struct Args {
    /// The workflow: a .fwf or .fwir file, or a mode name (`improve`), which resolves to
    /// the project's .factory/workflows/<name>.fwf or else the built-in mode.
    #[arg(value_name = "FILE|MODE")]
    file: PathBuf,
    /// What to produce.
    #[arg(long, value_enum, default_value_t = Emit::Ir)]
    emit: Emit,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Which workflow of the file, when it declares several.
    #[arg(long)]
    workflow: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Emit {
    /// Canonical IR text: one knob, node or edge a line.
    Ir,
    /// The IR as JSON.
    IrJson,
    /// A graphviz digraph (`dot -Tsvg`).
    Dot,
    /// A mermaid flowchart.
    Mermaid,
}

pub fn run(args: Args) -> ExitCode {
    let project = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let arg = args.file.to_string_lossy();
    let (ir, warnings) = match driver::compile(&arg, &project, args.workflow.as_deref()) {
        Ok(done) => (done.ir, done.warnings),
        Err(CompileError::Io(err)) => {
            let err = miette::miette!(help = "check that the file exists and is readable", "{err}");
            return super::report(err, USAGE);
        }
        Err(CompileError::Invalid(diags)) => {
            for l in &diags {
                eprintln!("{:?}", l.diagnostic.to_report(l.source.clone()));
            }
            let errors = diags.iter().filter(|l| l.diagnostic.is_error()).count();
            eprintln!(
                "{} has {errors} error(s); nothing was emitted",
                args.file.display()
            );
            return ExitCode::from(FAILED);
        }
        Err(CompileError::NoWorkflow(msg)) => {
            let err = miette::miette!(
                help = "pass --workflow NAME, or compile a file that declares a `workflow`",
                "{msg}"
            );
            return super::report(err, FAILED);
        }
    };
    for l in &warnings {
        eprintln!("{:?}", l.diagnostic.to_report(l.source.clone()));
    }
    let text = match args.emit {
        Emit::Ir => ir::to_text(&ir),
        Emit::IrJson => ir::to_json(&ir),
        Emit::Dot => emit::to_dot(&ir),
        Emit::Mermaid => emit::to_mermaid(&ir),
    };
    match &args.output {
        Some(path) => {
            if let Err(err) = std::fs::write(path, text) {
                let err = miette::miette!(
                    help = "check that the directory exists and is writable",
                    "cannot write {}: {err}",
                    path.display()
                );
                return super::report(err, USAGE);
            }
        }
        None => print!("{text}"),
    }
    ExitCode::from(OK)
}
