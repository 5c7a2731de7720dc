//! `factory compile`: a workflow to IR, JSON, dot, mermaid, flat .fwf or an Agent Skills
//! SKILL.md.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::driver;
use factory_compiler::{emit, ir, skills};

use super::{FAILED, OK, USAGE};

#[derive(clap::Args)]
#[command(
    about = "Compile a workflow (.fwf or IR text .fwir) to IR, JSON, graphviz dot, mermaid, flat .fwf or a SKILL.md",
    long_about = "Compile a workflow and print it in the chosen form. The input is a .fwf file \
(its first workflow, or the one named by --workflow) or an IR text file (.fwir). The file \
must check without errors; warnings are printed on stderr.\n\n\
With --emit skill, -o names a directory (default: the current one) and the command writes \
DIR/workflow-<name>/SKILL.md and SKILL.annotations.yaml there (see docs/skills.md).\n\n\
With --emit fwf, the output is one flat .fwf file (no imports) that compiles back to the \
same IR text; an IR that has no such file (e.g. a parallel body with two ways out) is an \
error that says why.\n\n\
Exit status: 0 compiled, 1 the workflow has errors (or, with --emit fwf, no faithful .fwf), \
2 a file could not be read or written.",
    after_help = "Examples:\n  factory compile workflows/improve.fwf --emit ir > improve.fwir\n  factory compile improve.fwir --emit ir        # the same text, byte for byte\n  factory compile improve.fwf --emit dot | dot -Tsvg > improve.svg\n  factory compile improve.fwf --emit mermaid -o improve.mmd\n  factory compile improve.fwir --emit fwf -o improve-flat.fwf   # compiles back to the same IR\n  factory compile improve --emit skill -o .claude/skills   # .claude/skills/workflow-improve/SKILL.md"
)]
pub struct Args {
    /// The workflow: a .fwf or .fwir file, or a mode name (`improve`), which resolves to
    /// the project's .factory/workflows/<name>.fwf or else the built-in mode.
    #[arg(value_name = "FILE|MODE")]
    file: PathBuf,
    /// What to produce.
    #[arg(long, value_enum, default_value_t = Emit::Ir)]
    emit: Emit,
    /// Write to this file instead of standard output (with --emit skill: the directory
    /// that gets workflow-<name>/, default the current one).
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
    /// A flat .fwf file that compiles back to the same IR (no imports; inlined ids keep their dots).
    Fwf,
    /// An Agent Skills SKILL.md and its SKILL.annotations.yaml, in workflow-<name>/.
    Skill,
}

pub fn run(args: Args) -> ExitCode {
    let project = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let arg = args.file.to_string_lossy();
    let compiled = match driver::compile(&arg, &project, args.workflow.as_deref()) {
        Ok(done) => done,
        Err(e) => return super::compile_failed(e, FAILED),
    };
    for l in &compiled.warnings {
        eprintln!("{:?}", l.diagnostic.to_report(l.source.clone()));
    }
    let ir = &compiled.ir;
    let text = match args.emit {
        Emit::Ir => ir::to_text(ir),
        Emit::IrJson => ir::to_json(ir),
        Emit::Dot => emit::to_dot(ir),
        Emit::Mermaid => emit::to_mermaid(ir),
        Emit::Fwf => match emit::to_fwf(ir) {
            Ok(text) => text,
            Err(err) => {
                let err = miette::miette!(
                    help = "keep the workflow as IR text (--emit ir); `factory run` takes .fwir files too",
                    "{err}"
                );
                return super::report(err, FAILED);
            }
        },
        Emit::Skill => {
            let skill = skills::skill_of(&compiled, &project);
            let dir = args.output.unwrap_or_else(|| PathBuf::from("."));
            for (path, text) in skills::files_of(&skill, &dir) {
                if let Err(err) = factory_runtime::sys::files::atomic_write(&path, text.as_bytes())
                {
                    return super::report(
                        miette::miette!(
                            help = "check that the directory is writable",
                            "cannot write {}: {err}",
                            path.display()
                        ),
                        USAGE,
                    );
                }
            }
            println!(
                "wrote {}",
                dir.join(&skill.dir_name).join(skills::SKILL_FILE).display()
            );
            return ExitCode::from(OK);
        }
    };
    match &args.output {
        Some(path) => {
            // Parent directories are made (`-o .factory/evolve/parent.fwir` in a new project).
            if let Err(err) = factory_runtime::sys::files::atomic_write(path, text.as_bytes()) {
                let err = miette::miette!(
                    help = "check that the directory is writable",
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
