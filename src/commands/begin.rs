//! `factory begin [PATH] --hypothesis TEXT`: start an experiment on its own branch and
//! worktree, print its id.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::experiment::{self, ExperimentError};

use super::{OK, USAGE, report};

/// Start an experiment: allocate an id, write .factory/experiments/NNN/, create the
/// branch factory/exp-NNN from the target branch's tip with a git worktree at
/// .factory/worktrees/exp-NNN, log an experiment.begin event, and print the id.
#[derive(clap::Args)]
#[command(after_help = "\
The project must be a git repository with at least one commit. The branch starts at
the tip of factory.md's target_branch (default main), or at the current branch when
that does not exist. Your checkout, index and uncommitted files are never touched.

Re-running begin with the same --run-key (or, in a run, the same FACTORY_RUN_KEY, else
the same FACTORY_RUN_ID, FACTORY_NODE and FACTORY_VISIT) prints the same id; so does re-running it with the
same hypothesis while that experiment has no verdict yet.

Example:
  id=$(factory begin --hypothesis \"Cache parsed ASTs between runs\")
  factory begin --hypothesis \"Cache parsed ASTs\" --run-key run-7/build/1 --json")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// What the experiment will change and why.
    #[arg(long, value_name = "TEXT")]
    hypothesis: String,
    /// Return the experiment begun with this key instead of a new one (default:
    /// FACTORY_RUN_ID/FACTORY_NODE/FACTORY_VISIT when FACTORY_RUN_ID is set).
    #[arg(long, value_name = "KEY")]
    run_key: Option<String>,
    /// Print id, branch, worktree and base commit as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    let child = factory_runtime::project::child::ChildEnv::current();
    let key = args.run_key.clone().or_else(|| child.begin_key());
    let started = match experiment::begin(&args.path, &args.hypothesis, key.as_deref()) {
        Ok(s) => s,
        // An empty hypothesis, no git repository: the command could not run; a
        // broken factory.md is for the user to fix, as everywhere.
        Err(err) => {
            let code = match &err {
                ExperimentError::Config(c) => super::config_exit_code(c),
                _ => USAGE,
            };
            return report(err, code);
        }
    };
    let ws = started.workspace();
    if started.resumed {
        eprintln!(
            "note: experiment {} was already begun ({}); reusing it",
            started.id,
            if key.is_some() {
                "same run key"
            } else {
                "same hypothesis, no verdict yet"
            }
        );
    }
    if let Some(note) = ws.and_then(|w| w.note.as_deref()) {
        eprintln!("note: {note}");
    }
    // Inside `factory run`, later nodes learn the experiment from here.
    let mut published = vec![("exp_id", started.id.to_string())];
    if let Some(w) = ws {
        published.push(("branch", w.branch.clone()));
        published.push(("worktree", w.worktree.display().to_string()));
    }
    if let Err(e) = child.publish(&published) {
        eprintln!(
            "warning: cannot tell the run about experiment {}: {e}",
            started.id
        );
    }
    if args.json {
        let value = serde_json::json!({
            "id": started.id,
            "resumed": started.resumed,
            "run_key": started.info.run_key,
            "branch": ws.map(|w| w.branch.clone()),
            "worktree": ws.map(|w| w.worktree.clone()),
            "base_commit": ws.map(|w| w.base_commit.clone()),
            "target_branch": ws.map(|w| w.target_branch.clone()),
            "verdict": started.info.verdict.map(|v| v.as_str()),
        });
        if let Err(code) = super::print_json(&value) {
            return code;
        }
    } else {
        if let Some(w) = ws {
            eprintln!("branch {} in {}", w.branch, w.worktree.display());
        }
        println!("{}", started.id);
    }
    ExitCode::from(OK)
}
