//! `factory skills`: export every workflow's SKILL.md where Claude Code finds project
//! skills, and check that exported skills still match their sources.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use factory_compiler::skills::{self, Drift, SkillsError};
use factory_runtime::sys::files::atomic_write;

use super::{FAILED, OK, USAGE};

#[derive(clap::Args)]
#[command(
    about = "Export the workflows as Agent Skills (SKILL.md) and check exported skills for drift",
    long_about = "Every workflow has a second surface: a SKILL.md that an interactive agent \
(Claude Code, or any agent that reads Agent Skills) follows step by step, rendered from the \
same graph the executor runs. `export` writes them; `check` fails when one on disk no longer \
matches its source. See docs/skills.md.",
    after_help = "Examples:\n  factory skills export                       # every mode into .claude/skills/\n  factory skills export --workflows workflows --out skills\n  factory skills check --workflows workflows --dir skills   # in CI"
)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Write the skill of every workflow into a directory.
    #[command(
        long_about = "Write DIR/workflow-<name>/SKILL.md and SKILL.annotations.yaml for every \
workflow: each .fwf file in --workflows (its first workflow; files with only subgraphs are \
skipped), or by default every mode of the current project (the built-in ones and \
.factory/workflows/). Generated skills whose workflow is gone are removed; hand-written \
skills are never touched.\n\n\
Exit status: 0 written, 1 a workflow has errors (nothing is written), 2 a directory could not \
be read or written.",
        after_help = "Examples:\n  factory skills export\n  factory skills export --workflows workflows --out .claude/skills"
    )]
    Export {
        /// Directory of .fwf workflows (default: the built-in modes and .factory/workflows/).
        #[arg(long, value_name = "DIR")]
        workflows: Option<PathBuf>,
        /// Where the skills go (default: .claude/skills/ of the current project).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Fail, with a diff, when an exported skill differs from what its source produces.
    #[command(
        long_about = "Render every workflow again (as `export` would) and compare with the \
skills in --dir. Prints a unified diff for each file that changed, and names each skill that \
is missing or no longer has a source.\n\n\
Exit status: 0 every skill matches, 1 some differ, are missing or are extra (or a workflow \
has errors), 2 a directory could not be read.",
        after_help = "Examples:\n  factory skills check\n  factory skills check --workflows workflows --dir .claude/skills"
    )]
    Check {
        /// Directory of .fwf workflows (default: the built-in modes and .factory/workflows/).
        #[arg(long, value_name = "DIR")]
        workflows: Option<PathBuf>,
        /// Where the exported skills are (default: .claude/skills/ of the current project).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> ExitCode {
    let project = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let default_dir = || project.join(".claude").join("skills");
    match args.command {
        Sub::Export { workflows, out } => {
            let out = out.unwrap_or_else(default_dir);
            let generated = match generate(workflows.as_deref(), &project) {
                Ok(g) => g,
                Err(code) => return code,
            };
            let plan = match skills::plan_export(&generated, &out) {
                Ok(plan) => plan,
                Err(err) => return io_error(err),
            };
            if let Err(err) = carry_out(&plan) {
                return super::report(err, USAGE);
            }
            for dir in &plan.written {
                println!("wrote {}", dir.join(skills::SKILL_FILE).display());
            }
            for dir in &plan.stale {
                println!("removed {} (its workflow is gone)", dir.display());
            }
            ExitCode::from(OK)
        }
        Sub::Check { workflows, dir } => {
            let dir = dir.unwrap_or_else(default_dir);
            let generated = match generate(workflows.as_deref(), &project) {
                Ok(g) => g,
                Err(code) => return code,
            };
            if !dir.is_dir() {
                // Nothing exported there: a mistyped --dir, or export never ran.
                return super::report(
                    miette::miette!(
                        help = format!(
                            "check the path, or create the skills with `factory skills export{}`",
                            export_flags(workflows.as_deref(), &dir, &default_dir())
                        ),
                        "{} is not a directory",
                        dir.display(),
                    ),
                    USAGE,
                );
            }
            match skills::check(&generated, &dir) {
                Ok(drift) if drift.is_empty() => {
                    println!(
                        "{} skill(s) in {} match their sources",
                        generated.len(),
                        dir.display()
                    );
                    ExitCode::from(OK)
                }
                Ok(drift) => {
                    for d in &drift {
                        match d {
                            Drift::Changed { diff, .. } => print!("{diff}"),
                            Drift::Missing { path } => println!("missing: {}", path.display()),
                            Drift::Extra { path } => {
                                println!("extra: {} (no workflow produces it)", path.display())
                            }
                        }
                    }
                    eprintln!(
                        "{} file(s) in {} differ from their sources; run `factory skills export{}` and commit the result",
                        drift.len(),
                        dir.display(),
                        export_flags(workflows.as_deref(), &dir, &default_dir())
                    );
                    ExitCode::from(FAILED)
                }
                Err(err) => io_error(err),
            }
        }
    }
}

/// The flags that make `export` write what `check` compared against.
fn export_flags(workflows: Option<&Path>, dir: &Path, default: &Path) -> String {
    let mut flags = String::new();
    if let Some(w) = workflows {
        flags.push_str(&format!(" --workflows {}", w.display()));
    }
    if dir != default {
        flags.push_str(&format!(" --out {}", dir.display()));
    }
    flags
}

fn generate(workflows: Option<&Path>, project: &Path) -> Result<Vec<skills::Generated>, ExitCode> {
    match skills::generate(workflows, project) {
        Ok(g) => Ok(g),
        Err(SkillsError::Compile { failures }) => {
            for (source, err) in failures.iter() {
                for l in err.located() {
                    eprintln!("{:?}", l.diagnostic.to_report(l.source.clone()));
                }
                eprintln!("{source}: {err}; no skill was written");
            }
            Err(super::report(
                miette::miette!(
                    help = "fix the errors above (`factory check FILE` shows them), then run this again",
                    "{} workflow(s) do not compile",
                    failures.len()
                ),
                FAILED,
            ))
        }
        Err(err) => Err(io_error(err)),
    }
}

/// Writes the plan's files (atomically, directories made) and retires its stale skills:
/// their two generated files go, and the directory only when nothing else is left in it.
fn carry_out(plan: &skills::ExportPlan) -> Result<(), miette::Report> {
    let failed = |path: &Path, e: std::io::Error| {
        miette::miette!(
            help = "check that the directory is writable",
            "cannot write {}: {e}",
            path.display()
        )
    };
    for (path, text) in &plan.files {
        atomic_write(path, text.as_bytes()).map_err(|e| failed(path, e))?;
    }
    for stale in &plan.stale {
        for file in [skills::SKILL_FILE, skills::ANNOTATIONS_FILE] {
            let path = stale.join(file);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(&path, e)),
                _ => {}
            }
        }
        // Only succeeds when nothing of the user's is left inside.
        let _ = std::fs::remove_dir(stale);
    }
    Ok(())
}

fn io_error(err: SkillsError) -> ExitCode {
    let help = match &err {
        SkillsError::Duplicate { .. } => "rename one of the workflows; skill names must be unique",
        _ => "check that the directory exists and is readable and writable",
    };
    super::report(miette::miette!(help = help, "{err}"), USAGE)
}
