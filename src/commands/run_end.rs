//! How `factory run` and `factory resume` end: the outcome, the experiment's verdict,
//! the score before → after, the branch, and where the reviews are.

use std::path::Path;
use std::process::ExitCode;

use factory_runtime::exec::driver::RunEnd;
use factory_runtime::exec::machine::RunOutcome;
use factory_runtime::store::load_history;

use super::{FAILED, OK, USAGE};

pub fn finish(project: &Path, ended: Result<RunEnd, miette::Report>, json: bool) -> ExitCode {
    let end = match ended {
        Ok(end) => end,
        Err(e) => {
            eprintln!("{e:?}");
            return ExitCode::from(USAGE);
        }
    };
    if end.interrupted {
        eprintln!(
            "\nrun {} stopped; continue it with `factory resume --project {}`",
            end.run_id,
            project.display()
        );
        return ExitCode::from(130);
    }
    let mut lines = Vec::new();
    match &end.outcome {
        Some(RunOutcome::Completed) => lines.push(format!("run {} completed", end.run_id)),
        Some(RunOutcome::Halted { node, reason }) => {
            lines.push(format!("run {} halted at {node}: {reason}", end.run_id))
        }
        Some(RunOutcome::Failed { node, reason }) => {
            lines.push(format!("run {} FAILED at {node}: {reason}", end.run_id))
        }
        None => {}
    }
    for h in &end.halts {
        lines.push(format!("  gate {h} said halt"));
    }
    lines.extend(factory_runtime::parallel::record::final_table(
        project,
        &end.run_id,
    ));
    for f in &end.async_failures {
        lines.push(format!("  background node failed: {f}"));
    }
    if let Some(id) = end.vars.get("exp_id").and_then(|v| v.parse::<u32>().ok()) {
        let record = load_history(project)
            .ok()
            .and_then(|h| h.records.into_iter().find(|r| r.id == id));
        match record {
            Some(r) => {
                let score = match (r.score_before, r.score_after) {
                    (Some(b), Some(a)) => format!(", score {b:.3} → {a:.3}"),
                    _ => String::new(),
                };
                lines.push(format!("  experiment {id}: {}{score}", r.verdict));
                if r.verdict.to_string() == "keep" {
                    lines.push(format!("  branch factory/exp-{id:03} is ready to review and merge (factory never merges it)"));
                }
                if r.verdict.to_string() == "error"
                    && let Some(branch) = factory_runtime::worktrees::set_aside_branch(project, id)
                {
                    lines.push(format!(
                        "  the experiment's commits are kept on branch {branch} (an error never deletes work)"
                    ));
                }
            }
            None => lines.push(format!("  experiment {id}: no verdict recorded")),
        }
    }
    if let Some(u) = &end.usage {
        lines.push(format!("  agents used {}", u.summary()));
    }
    lines.push(format!(
        "  reviews: {}",
        project.join(".factory/reviews").display()
    ));
    let joined = lines.join("\n");
    let text = factory_runtime::sys::redact::redact(&joined);
    if json {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
    ExitCode::from(match end.outcome {
        Some(RunOutcome::Completed) => OK,
        _ => FAILED,
    })
}
