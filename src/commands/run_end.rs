//! How `factory run` and `factory resume` end: the outcome, the experiment's verdict
//! and why, the score before → after, the branch, where the reviews are, and an exit
//! code a script can tell a keep from a revert by.

use std::path::Path;
use std::process::ExitCode;

use factory_runtime::exec::driver::RunEnd;
use factory_runtime::exec::machine::RunOutcome;
use factory_runtime::store::{Verdict, load_history};

use super::{FAILED, NOT_KEPT, OK, USAGE};

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
    for why in &end.halts {
        lines.push(format!("  {why}"));
    }
    lines.extend(factory_runtime::exec::parallel::record::final_table(
        project,
        &end.run_id,
    ));
    for f in &end.async_failures {
        lines.push(format!("  background node failed: {f}"));
    }
    let history = load_history(project).ok();
    let verdict_of = |id: u32| {
        history
            .as_ref()
            .and_then(|h| h.records.iter().find(|r| r.id == id))
            .map(|r| r.verdict)
    };
    let exp_id = end.vars.get("exp_id").and_then(|v| v.parse::<u32>().ok());
    if let Some(id) = exp_id {
        let record = history
            .as_ref()
            .and_then(|h| h.records.iter().find(|r| r.id == id));
        match record {
            Some(r) => {
                let score = match (r.score_before, r.score_after) {
                    (Some(b), Some(a)) => format!(", score {b:.3} → {a:.3}"),
                    _ => String::new(),
                };
                lines.push(format!("  experiment {id}: {}{score}", r.verdict));
                if r.verdict != Verdict::Keep {
                    lines.extend(why_lines(project, id, &r.notes));
                }
                if r.verdict == Verdict::Keep {
                    // A keep the eval could not score says so here, not only in history.
                    if let Some(first) = r.notes.lines().next().filter(|l| l.starts_with("neutral"))
                    {
                        lines.push(format!("  {first}"));
                    }
                    match factory_runtime::experiment::kept::KeptBranch::of(project, r) {
                        Some(kept) => lines.push(format!("  {}", kept.describe())),
                        None => lines.push(format!("  branch factory/exp-{id:03} is ready to review and merge (factory never merges it)")),
                    }
                }
                if r.verdict == Verdict::Error
                    && let Some(branch) = factory_runtime::worktrees::set_aside_branch(project, id)
                {
                    lines.push(format!(
                        "  the experiment's commits are kept on branch {branch} (an error never deletes work)"
                    ));
                }
            }
            None if end.retry.is_some() => lines.push(format!(
                "  experiment {id} stays open (its worktree and branch are kept); \
                 `factory finalize --id {id} --verdict error` closes it"
            )),
            None => lines.push(format!("  experiment {id}: no verdict recorded")),
        }
    }
    if let Some(node) = &end.retry {
        lines.push(format!(
            "  the agent of `{node}` did not finish: fix the cause, then `factory resume --project {}` runs it again",
            project.display()
        ));
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
    // Every experiment the run judged: its own, or each parallel branch's.
    let mut judged: Vec<Option<Verdict>> = exp_id.map(verdict_of).into_iter().collect();
    for record in factory_runtime::exec::parallel::record::records_of_run(project, &end.run_id) {
        judged.extend(record.branches.iter().map(|b| verdict_of(b.exp_id)));
    }
    ExitCode::from(exit_code(end.outcome.as_ref(), &judged))
}

/// `0` the run completed and kept an experiment (or judged none); `3` it completed and
/// kept none (each was reverted, superseded or quarantined); `1` it halted or failed, or
/// an experiment ended in `error` or without a verdict.
fn exit_code(outcome: Option<&RunOutcome>, judged: &[Option<Verdict>]) -> u8 {
    if !matches!(outcome, Some(RunOutcome::Completed)) {
        return FAILED;
    }
    if judged.contains(&Some(Verdict::Keep)) || judged.is_empty() {
        return OK;
    }
    if judged
        .iter()
        .any(|v| matches!(v, None | Some(Verdict::Error)))
    {
        return FAILED;
    }
    NOT_KEPT
}

/// Why an experiment was not kept: its precheck's failing checks, one per line, then
/// the notes it was recorded with when they add something.
fn why_lines(project: &Path, id: u32, notes: &str) -> Vec<String> {
    let reasons = factory_runtime::experiment::load_precheck(project, id)
        .ok()
        .flatten()
        .map(|p| p.reasons())
        .unwrap_or_default();
    let mut lines: Vec<String> = reasons.iter().map(|r| format!("    {r}")).collect();
    if reasons.is_empty() && !notes.trim().is_empty() {
        lines.push(format!("    {}", notes.trim()));
    }
    if !lines.is_empty() {
        lines.insert(0, "  why:".to_string());
    }
    lines
}
