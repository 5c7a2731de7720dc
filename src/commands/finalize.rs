//! `factory finalize [PATH] --id N --verdict V ...`: record how an experiment ended.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::experiment::{self, BaselineUpdate};
use factory_runtime::store::{Outcome, StoreError, Verdict};

use super::{FAILED, OK, USAGE, report};

/// Record an experiment's verdict: write experiments/NNN/verdict.json, append one row
/// to .factory/results.tsv and update the user's project registry.
#[derive(clap::Args)]
#[command(after_help = "\
The delta is round(score-after - score-before, 6) unless --delta is given.
`superseded` is only for an experiment whose hypothesis a later experiment took
over; use `revert` for a change that did not work.

Example:
  factory finalize --id 3 --verdict keep --score-before 0.61 --score-after 0.64 \\
      --notes \"p50 latency down 12%\"")]
pub struct Args {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The id `factory begin` printed.
    #[arg(long)]
    id: u32,
    /// keep, revert, error or superseded.
    #[arg(long, value_parser = parse_verdict)]
    verdict: Verdict,
    /// Composite score before the change.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    score_before: Option<f64>,
    /// Composite score after the change.
    #[arg(long, value_name = "Y", allow_negative_numbers = true)]
    score_after: Option<f64>,
    /// Record this delta instead of deriving it from the scores.
    #[arg(long, allow_negative_numbers = true)]
    delta: Option<f64>,
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
    outcome.change_summary = args.change_summary;
    outcome.pr_number = args.pr;
    outcome.issue_number = args.issue;
    outcome.cost_usd = args.cost_usd;
    match experiment::finalize(&args.path, args.id, outcome) {
        Ok((record, baseline)) => {
            match baseline {
                BaselineUpdate::Recorded(b) => eprintln!(
                    "growth baseline moved to this keep ({} tests{})",
                    b.test_count.map_or("?".to_string(), |n| n.to_string()),
                    b.composite
                        .map_or(String::new(), |c| format!(", composite {c:.3}"))
                ),
                BaselineUpdate::NoEval => eprintln!(
                    "note: no .factory/last_eval.json, so the growth baseline did not move; run `factory eval --record-baseline`"
                ),
                BaselineUpdate::Failed(err) => eprintln!("{:?}", miette::Report::new(err)),
                BaselineUpdate::Unchanged => {}
            }
            if args.json {
                match serde_json::to_string_pretty(&record) {
                    Ok(j) => println!("{j}"),
                    Err(e) => {
                        return report(miette::miette!("cannot encode the record: {e}"), USAGE);
                    }
                }
            } else {
                let delta = record
                    .delta
                    .map(|d| format!(" (delta {}{d})", if d > 0.0 { "+" } else { "" }))
                    .unwrap_or_default();
                println!("experiment {}: {}{delta}", record.id, record.verdict);
            }
            ExitCode::from(OK)
        }
        Err(
            err @ (StoreError::UnknownExperiment { .. }
            | StoreError::AlreadyFinalized { .. }
            | StoreError::SupersededWithoutSuccessor { .. }),
        ) => report(err, FAILED),
        Err(err) => report(err, USAGE),
    }
}
