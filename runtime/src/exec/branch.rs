//! A parallel branch as a run of its own: the body of a `parallel` node (see
//! [`Graph::branch_ir`]) with its own machine, its own journal (its run id in
//! `events.jsonl`) and its own checkpoint in its experiment's directory. When the run
//! that started it is resumed, a finished branch is not run again and an unfinished
//! one continues from its checkpoint, as `factory resume` continues a run.

use std::collections::BTreeMap;
use std::sync::Arc;

use factory_compiler::ir::{Ir, content_hash};

use super::checkpoint::{Checkpoint, RunSettings};
use super::driver::{self, RunEnd};
use super::graph::Graph;
use super::machine::{Input, MachineState, RunOutcome};
use super::node::NodeEnv;
use super::{RunError, begin_fresh, caught_up, is_over, settle};
use crate::project::layout::FactoryPaths;

/// What a branch runs, and as what.
pub struct BranchRun {
    /// The body as a workflow.
    pub ir: Ir,
    /// The run's environment with the branch's run id and [`super::node::BranchCx`].
    pub env: NodeEnv,
    /// The run the branch belongs to.
    pub parent_run: String,
    pub settings: RunSettings,
    /// Values its nodes know from the start (its experiment, branch and worktree).
    pub initial_vars: BTreeMap<String, String>,
}

/// Runs (or continues, or only reports) the branch to its end. A branch that failed
/// or halted with its experiment open records it as `error`, as a run does.
///
/// Boxed: a branch's nodes may hold a parallel node of their own, and a recursive
/// future needs a name for its type.
pub fn run(
    b: BranchRun,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunEnd, RunError>> + Send>> {
    Box::pin(run_to_end(b))
}

async fn run_to_end(b: BranchRun) -> Result<RunEnd, RunError> {
    let Some(exp) = b.env.branch.as_ref().map(|c| c.exp_id) else {
        return Err(RunError::Checkpoint(format!(
            "branch run {} has no experiment",
            b.env.run_id
        )));
    };
    let env = Arc::new(b.env);
    let paths = FactoryPaths::new(&env.project);
    let hash = content_hash(&b.ir);
    let graph = Arc::new(Graph::new(b.ir));
    let saved = Checkpoint::load_from(&Checkpoint::branch_path(&paths, exp))
        .map_err(RunError::Checkpoint)?;
    let (mut cp, first) = match saved {
        Some(mut cp) => {
            if cp.ir_hash != hash || cp.run_id != env.run_id {
                return Err(RunError::IrChanged(cp.run_id));
            }
            let mut machine = caught_up(&graph, &mut cp, &paths)?;
            if is_over(&machine) {
                return Ok(finished(&graph, &cp.run_id, &machine.state));
            }
            let first = if machine.state.seq == 0 {
                machine.on_input(Input::Start)
            } else {
                machine.resume()
            };
            cp.state = machine.state;
            (cp, first)
        }
        None => {
            let now = crate::sys::clock::now_iso8601();
            let mut cp = Checkpoint {
                run_id: env.run_id.clone(),
                workflow: graph.ir.workflow.name.clone(),
                ir_hash: hash,
                settings: b.settings,
                started_at: now.clone(),
                saved_at: now,
                respawns: 0,
                parent_run: Some(b.parent_run),
                branch_exp: Some(exp),
                state: MachineState::default(),
            };
            let first = begin_fresh(&graph, &mut cp, &paths, b.initial_vars)?;
            (cp, first)
        }
    };
    cp.save(&paths).map_err(|source| RunError::Io {
        path: cp.own_path(&paths),
        source,
    })?;
    let project = env.project.clone();
    let end = driver::drive(graph, cp, env, first).await?;
    Ok(settle(project, None, end).await)
}

/// The end of a branch that had already finished.
fn finished(graph: &Graph, run_id: &str, state: &MachineState) -> RunEnd {
    let outcome = state
        .outcome
        .clone()
        .or_else(|| state.reached_end.then_some(RunOutcome::Completed));
    driver::end_of(graph, run_id, state, outcome, false)
}
