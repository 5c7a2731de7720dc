//! `factory runs`: past runs of the project with their outcome.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::exec::checkpoint::list_runs;
use factory_runtime::exec::parallel::record::records_of_run;

use super::OK;

#[derive(clap::Args)]
#[command(after_help = "\
One line per run, oldest first: id, mode, status (`killed` for a run whose process is
gone, with the nodes its journal shows finished), nodes run, experiment and its
verdict, start time, and the tokens and cost its agents reported (when they reported
any); an experiment not kept adds a line saying why. A parallel run adds a line per
parallel node: each branch's hypothesis, experiment and status.

Example:
  factory runs --json")]
pub struct Args {
    #[arg(default_value = ".")]
    path: PathBuf,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory runs .") {
        return code;
    }
    let runs = list_runs(&args.path);
    if args.json {
        return super::print_json(&runs).map_or_else(|code| code, |()| ExitCode::from(OK));
    }
    if runs.is_empty() {
        println!("no runs yet; start one with `factory run MODE`");
    }
    let paths = factory_runtime::project::layout::FactoryPaths::new(&args.path);
    for mut r in runs {
        if r.was_killed() {
            r.status = "killed".into();
            r.nodes_run = factory_runtime::exec::checkpoint::journaled_nodes(&paths, &r.run_id);
        }
        let usage = r
            .usage
            .map(|u| format!("  {}", u.summary()))
            .unwrap_or_default();
        let exp = match (&r.exp_id, &r.verdict) {
            (Some(id), Some(v)) => format!("{id} {v}"),
            (Some(id), None) => id.clone(),
            _ => "-".to_string(),
        };
        println!(
            "{}  {:<18} {:<11} {:>4} nodes  exp {:<11} {}{usage}",
            r.run_id, r.workflow, r.status, r.nodes_run, exp, r.started_at
        );
        if let Some(why) = &r.reason {
            println!("    why: {why}");
        }
        if r.status == "killed" {
            println!("    stopped before it finished: `factory resume` continues it");
        } else if let Some(node) = &r.retry {
            println!("    the agent of `{node}` did not finish: `factory resume` runs it again");
        }
        for record in records_of_run(&args.path, &r.run_id) {
            let branches: Vec<String> = record
                .branches
                .iter()
                .map(|b| format!("h{} exp-{:03} {}", b.index, b.exp_id, b.status.as_str()))
                .collect();
            println!("    {}: {}", record.node, branches.join(" · "));
        }
    }
    ExitCode::from(OK)
}
