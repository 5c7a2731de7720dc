//! `factory history [PATH] [--json]`: show past experiments in tiers;
//! `factory history forget N [PATH]`: clear one from anti-pattern matching.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::experiment::evidence;
use factory_runtime::store::ExperimentStore;
use factory_runtime::store::history::format_history_with;

use super::{OK, USAGE, report};

/// Show the project's experiments: the last 3 in full, the 7 before them one line
/// each, everything older as aggregate numbers; experiments without a verdict first.
#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "\
A reverted experiment counts against a similar hypothesis (precheck's anti_patterns)
only when the gate measured it failing under the same factory.md and eval profile;
`factory history forget N` clears one that should not count any more. The record
stays; history shows it as forgotten.

Examples:
  factory history
  factory history ../my-project --json   # every record, for scripts
  factory history forget 3               # experiment 3 no longer blocks a retry"
)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print every record and pending experiment as JSON instead.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Clear experiment N from anti-pattern matching: a similar hypothesis is no
    /// longer refused because of it. The record is kept and marked forgotten.
    #[command(after_help = "\
Writes .factory/experiments/NNN/forgotten.json (when it was forgotten) and logs an
experiment.forgotten event; results.tsv and verdict.json are not changed. Forgetting
again changes nothing. N must be a finalized experiment (`factory history` lists them).

Example:
  factory history forget 3")]
    Forget {
        /// The experiment's id, as `factory history` shows it.
        #[arg(value_name = "N")]
        id: u32,
        /// Project root.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print the record as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> ExitCode {
    match args.action {
        Some(Action::Forget { id, path, json }) => forget(id, path, json),
        None => show(args.path, args.json),
    }
}

fn show(path: PathBuf, json: bool) -> ExitCode {
    let history = match ExperimentStore::open(&path).history() {
        Ok(h) => h,
        Err(err) => return report(err, USAGE),
    };
    for w in &history.warnings {
        eprintln!("warning: {w}");
    }
    if json {
        let pending: Vec<_> = history
            .pending
            .iter()
            .map(|p| serde_json::json!({"id": p.id, "hypothesis": p.hypothesis}))
            .collect();
        let kept: serde_json::Map<String, serde_json::Value> = history
            .records
            .iter()
            .filter_map(|r| {
                let files = evidence::latest(&path, r.id).ok()?;
                (!files.is_empty()).then(|| (r.id.to_string(), serde_json::json!(files)))
            })
            .collect();
        let value =
            serde_json::json!({"records": history.records, "pending": pending, "evidence": kept});
        if let Err(code) = super::print_json(&value) {
            return code;
        }
    } else {
        print!(
            "{}",
            format_history_with(&history, &|id| evidence_lines(&path, id))
        );
    }
    ExitCode::from(OK)
}

fn forget(id: u32, path: PathBuf, json: bool) -> ExitCode {
    let forgot = match ExperimentStore::open(&path).forget(id) {
        Ok(f) => f,
        Err(err) => return report(err, USAGE),
    };
    if json {
        if let Err(code) = super::print_json(&forgot.record) {
            return code;
        }
    } else {
        print!("{}", forgot.render());
    }
    ExitCode::from(OK)
}

/// Where experiment `id`'s own reports and verdicts are kept, and which.
fn evidence_lines(project: &std::path::Path, id: u32) -> Vec<String> {
    let files = evidence::latest(project, id).unwrap_or_default();
    if files.is_empty() {
        return Vec::new();
    }
    let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    vec![format!(
        "evidence: .factory/experiments/{id:03}/evidence.jsonl ({} file{}: {})",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        names.join(", ")
    )]
}
