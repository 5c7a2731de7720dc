//! `factory finalize [PATH] --id N --verdict V ...`: record how an experiment ended.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::experiment::{self, BaselineUpdate, Cleanup, ExperimentError};
use factory_runtime::store::{Outcome, StoreError, Verdict};

use super::{FAILED, OK, USAGE, report};

/// Record an experiment's verdict: write experiments/NNN/verdict.json, append one row
/// to .factory/results.tsv, update the user's project registry, and remove the
/// experiment's worktree.
#[derive(clap::Args)]
#[command(after_help = "\
keep is refused (exit 1) unless `factory precheck --exp N` recorded a passing result
at the commit the branch factory/exp-NNN points at now, after the experiment's last QA
completion. A keep's scores and delta come from that precheck; --score-before,
--score-after and --delta are an error with keep. A keep removes the worktree and
leaves the branch for you to merge (factory never merges). revert and error remove the
worktree and delete the branch; superseded and quarantined remove the worktree only.
The record is always kept. Finalizing again with the same verdict prints the existing
record; another verdict is an error.

For other verdicts the delta is round(score-after - score-before, 6) unless --delta
is given. `superseded` is only for an experiment whose hypothesis another experiment
took over: a later one, or the one --superseded-by names (any other experiment begun
here, e.g. the kept branch of a parallel run; \"superseded by exp N\" is prepended to
the notes). Use `revert` for a change that did not work. `quarantined` is for a
branch that passed its own precheck but conflicted with, or failed the re-check on,
the target branch's current tip.

Example:
  factory precheck --exp 3 && factory finalize --id 3 --verdict keep \\
      --notes \"p50 latency down 12%\"")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The id `factory begin` printed.
    #[arg(long)]
    id: u32,
    /// keep, revert, error, superseded or quarantined.
    #[arg(long, value_parser = parse_verdict)]
    verdict: Verdict,
    /// Composite score before the change (not with keep).
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    score_before: Option<f64>,
    /// Composite score after the change (not with keep).
    #[arg(long, value_name = "Y", allow_negative_numbers = true)]
    score_after: Option<f64>,
    /// Record this delta instead of deriving it from the scores (not with keep).
    #[arg(long, allow_negative_numbers = true)]
    delta: Option<f64>,
    /// With --verdict superseded: the experiment that took over (may have a lower id).
    #[arg(long, value_name = "N")]
    superseded_by: Option<u32>,
    /// Free-form notes.
    #[arg(long, value_name = "TEXT", default_value = "")]
    notes: String,
    /// What the change did, in a sentence.
    #[arg(long, value_name = "TEXT", default_value = "")]
    change_summary: String,
    /// Pull request number.
    #[arg(long)]
    pr: Option<u64>,
    /// Backlog issue number.
    #[arg(long)]
    issue: Option<u64>,
    /// Agent spend in US dollars.
    #[arg(long)]
    cost_usd: Option<f64>,
    /// Print the recorded experiment as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_verdict(s: &str) -> Result<Verdict, String> {
    s.parse()
}

pub fn run(args: Args) -> ExitCode {
    let mut outcome = Outcome::new(args.verdict);
    outcome.score_before = args.score_before;
    outcome.score_after = args.score_after;
    outcome.delta = args.delta;
    outcome.notes = args.notes;
    outcome.superseded_by = args.superseded_by;
    outcome.change_summary = args.change_summary;
    outcome.pr_number = args.pr;
    outcome.issue_number = args.issue;
    outcome.cost_usd = args.cost_usd;
    let done = match experiment::finalize(&args.path, args.id, outcome) {
        Ok(done) => done,
        Err(
            err @ (ExperimentError::KeepRefused { .. }
            | ExperimentError::Store(
                StoreError::UnknownExperiment { .. }
                | StoreError::AlreadyFinalized { .. }
                | StoreError::SupersededWithoutSuccessor { .. }
                | StoreError::BadSuccessor { .. },
            )),
        ) => return report(err, FAILED),
        Err(err) => return report(err, USAGE),
    };
    if done.repeated {
        eprintln!(
            "note: experiment {} was already finalized as {}; nothing new recorded",
            done.record.id, done.record.verdict
        );
    }
    match done.baseline {
        BaselineUpdate::Recorded(b) => eprintln!(
            "growth baseline moved to this keep ({} tests{})",
            b.test_count.map_or("?".to_string(), |n| n.to_string()),
            b.composite
                .map_or(String::new(), |c| format!(", composite {c:.3}"))
        ),
        BaselineUpdate::NoEval => eprintln!(
            "note: no eval result to record, so the growth baseline did not move; run `factory eval --record-baseline`"
        ),
        BaselineUpdate::Failed(err) => eprintln!("{:?}", miette::Report::new(err)),
        BaselineUpdate::Unchanged => {}
    }
    match done.cleanup {
        Cleanup::Done {
            branch_kept: Some(branch),
            ..
        } if done.record.verdict == Verdict::Keep => {
            match factory_runtime::experiment::kept::KeptBranch::of(&args.path, &done.record) {
                Some(kept) => eprintln!("{}", kept.describe()),
                None => eprintln!("branch {branch} is ready for you to review and merge"),
            }
        }
        Cleanup::Done {
            branch_kept: Some(branch),
            ..
        } if done.record.verdict == Verdict::Error => {
            eprintln!(
                "the experiment's commits are kept on branch {branch} (an error never deletes work)"
            )
        }
        Cleanup::Failed(err) => {
            eprintln!(
                "warning: the verdict is recorded but the worktree could not be removed; finalize again to retry"
            );
            eprintln!("{:?}", miette::Report::new(err));
        }
        _ => {}
    }
    if args.json {
        if let Err(code) = super::print_json(&done.record) {
            return code;
        }
    } else {
        let record = &done.record;
        let delta = record
            .delta
            .map(|d| format!(" (delta {}{d})", if d > 0.0 { "+" } else { "" }))
            .unwrap_or_default();
        println!("experiment {}: {}{delta}", record.id, record.verdict);
    }
    ExitCode::from(OK)
}
