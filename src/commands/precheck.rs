//! `factory precheck [PATH] [--exp N] [--json]`: the gate before any keep verdict.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::experiment;
use factory_runtime::precheck::{self, PrecheckOptions};
use factory_runtime::project::config;
use factory_runtime::sys::progress::Progress;

use super::{FAILED, OK, USAGE, report};

/// Check everything a keep verdict requires; one failing check fails the whole.
#[derive(clap::Args)]
#[command(after_help = "\
With --exp N (the keep gate, docs/gate.md): configuration is factory.md as committed at
the experiment's recorded base commit; the base and HEAD commits are checked out into
scratch directories outside the project (no untracked or ignored files, no .factory/,
fixed surfaces from the base) and each is measured eval_runs times (factory.md `Eval
runs`, default 3), interleaved. score_direction passes only when the head's mean
composite beats the base's by more than the larger spread; the declared Eval command
and Guards run in the scratch checkouts. Before measuring, factory.md's `## Setup` runs
in both checkouts and a provenance probe proves the code under test comes from each. A
side that cannot be measured (the eval command fails, a set-up command fails, the probe
refuses, a check cannot start, the base does not build) is an error: exit 2, and with
--json {exp_id, error} (no `passed`).

Without --exp (configuration: factory.md, refreshing a .factory/config.json that says
something else, as `factory eval` does): the composite meets eval_threshold (threshold) and does not fall below the
baseline of the last keep (score_direction); the guards git_clean, experiment_branch,
scope, fixed_surfaces, eval_immutable and tests_kept (changed files come from git,
diffed against target_branch); no reverted experiment resembles the hypothesis
(anti_patterns); every hard constraint exits 0 (hard_constraints); and, with --exp,
that QA completed after the experiment's experiment.begin event (qa_execution).
The eval is run fresh unless --use-last-eval is given. Exit 1 when any check fails.

With --exp N everything runs on the experiment's worktree (.factory/worktrees/exp-NNN):
its HEAD is what is checked, changed files are its branch's diff against the recorded
base commit, and the configuration is the project's. The result is recorded in
.factory/experiments/NNN/precheck.json (passed, failures, commit, score_before,
score_after, timestamp) with a precheck.completed event: `factory finalize --verdict
keep` requires a passing record at the branch's current commit.

Examples:
  factory precheck
  factory precheck --exp 7 --json")]
pub struct Args {
    /// Project directory.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The experiment being judged: check its worktree and record the result.
    #[arg(long, value_name = "N")]
    exp: Option<u32>,
    /// Hypothesis text for anti-pattern matching (default: the experiment's own).
    #[arg(long)]
    hypothesis: Option<String>,
    /// Score .factory/last_eval.json instead of running the eval again (not with --exp).
    #[arg(long, conflicts_with = "exp")]
    use_last_eval: bool,
    /// Allow uncommitted changes (skips the git_clean guard; not with --exp).
    #[arg(long, conflicts_with = "exp")]
    allow_dirty: bool,
    /// Print the result as JSON: passed, failures, and every check with its details.
    #[arg(long)]
    json: bool,
    /// Where the gate's commands run with --exp: `host`, or `sandbox` (each side
    /// confined to its own scratch checkout, no network; docs/sandbox.md). Default:
    /// the run's (`FACTORY_RUN_PLACEMENT`), else factory.md's `## Placement`, else host.
    #[arg(long, value_name = "PLACE", env = "FACTORY_RUN_PLACEMENT", value_parser = super::run::parse_placement)]
    placement: Option<factory_compiler::ir::Placement>,
}

pub fn run(args: Args) -> ExitCode {
    let opts = PrecheckOptions {
        exp_id: args.exp,
        hypothesis: args.hypothesis,
        use_last_eval: args.use_last_eval,
        allow_dirty: args.allow_dirty,
        progress: Progress::stderr("precheck"),
        placement: args.placement,
        ..PrecheckOptions::default()
    };
    let (result, commit) = match args.exp {
        Some(id) => match experiment::precheck(&args.path, id, opts) {
            Ok((r, record)) => {
                eprintln!(
                    "recorded .factory/experiments/{id:03}/precheck.json at {}",
                    record.commit
                );
                (r, Some(record.commit))
            }
            Err(err) => {
                if args.json {
                    // No `passed` and no `verdict`: a gate reading this must see a broken
                    // precheck (exit 2), not a fail it could route to revert.
                    let value = serde_json::json!({"exp_id": id, "error": err.to_string()});
                    println!("{value}");
                }
                return report(err, USAGE);
            }
        },
        None => {
            let config = match config::load_synced(&args.path) {
                Ok(synced) => {
                    if let Some(path) = synced.refreshed {
                        eprintln!(
                            "refreshed {} from factory.md (it said something else; the old one is config.json.bak)",
                            path.display()
                        );
                    }
                    synced.config
                }
                Err(err) => {
                    let code = super::config_exit_code(&err);
                    return report(err, code);
                }
            };
            match precheck::run_precheck(&args.path, &config, &opts) {
                Ok(r) => (r, None),
                Err(err) => return report(err, USAGE),
            }
        }
    };
    if args.json {
        let mut value = match serde_json::to_value(&result) {
            Ok(v) => v,
            Err(e) => return report(miette::miette!("cannot encode the result: {e}"), USAGE),
        };
        if let (Some(commit), Some(obj)) = (commit, value.as_object_mut()) {
            obj.insert("commit".into(), commit.into());
        }
        if let Err(code) = super::print_json(&value) {
            return code;
        }
    } else {
        print!("{}", result.render());
    }
    ExitCode::from(if result.passed { OK } else { FAILED })
}
