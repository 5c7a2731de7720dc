//! Agent nodes and agent gates: the role's prompt, the node's task and paths, one
//! invocation through the run's runner, then the node's checks and (for a gate) its
//! verdict file.

use std::path::PathBuf;

use factory_compiler::ir::conventions;

use super::artifacts;
use super::failure::NodeFailure;
use super::machine::NodeResult;
use super::node::{NodeCx, NodeReport};
use crate::agents::{self, AgentError};
use crate::runners::AgentRequest;

/// Runs an `agent` node.
pub async fn run_agent(cx: &NodeCx<'_>) -> Result<NodeReport, NodeFailure> {
    let role = cx
        .node
        .attrs
        .role
        .clone()
        .ok_or_else(|| NodeFailure::NoRole {
            node: cx.node.id.clone(),
        })?;
    invoke(cx, &role, None).await
}

/// Runs an agent gate: the reviewing role writes a verdict file, which decides.
pub async fn run_gate(cx: &NodeCx<'_>) -> Result<NodeReport, NodeFailure> {
    let role = conventions::gate_role(cx.node).to_string();
    let shown = conventions::verdict_file(cx.node).unwrap_or_default();
    let shown = cx.render("writes", &shown)?;
    let verdict_path = cx.roots.resolve_write(&shown);
    // A verdict left by an earlier visit must not decide this one.
    let _ = std::fs::remove_file(&verdict_path);
    let report = invoke(cx, &role, Some(verdict_path.clone())).await?;
    if let NodeResult::Failed { .. } = report.result {
        return Ok(report);
    }
    let node = || cx.node.id.clone();
    let text = std::fs::read_to_string(&verdict_path).map_err(|_| NodeFailure::NoVerdictFile {
        node: node(),
        role: role.clone(),
        path: shown.clone(),
    })?;
    let label = artifacts::parse_verdict(&text).map_err(|why| NodeFailure::BadVerdict {
        node: node(),
        path: shown.clone(),
        why,
    })?;
    let allowed = &cx.node.attrs.outcomes;
    if !allowed.is_empty() && !allowed.contains(&label) {
        return Err(NodeFailure::VerdictNotAllowed {
            node: node(),
            allowed: allowed.clone(),
            verdict: label,
        });
    }
    Ok(NodeReport {
        result: NodeResult::Verdict { verdict: label },
        ..report
    })
}

/// The sandbox of this agent node, when it runs in one: its worktree (in an experiment)
/// and the directories of its writes and verdict file writable, nothing else.
fn confinement(cx: &NodeCx<'_>, req: &AgentRequest) -> Option<crate::placement::Confinement> {
    use crate::placement::{self, Placement, policy::AgentScope};
    if placement::for_node(cx.node, cx.env.placement) != Placement::Sandbox {
        return None;
    }
    let sandbox = cx.env.sandbox.as_deref()?;
    let mut outputs = req.outputs.clone();
    outputs.extend(req.verdict_file.clone());
    let scope = AgentScope {
        cwd: &req.cwd,
        project: &req.project,
        in_experiment: cx.roots.worktree.is_some(),
        outputs: &outputs,
    };
    Some(sandbox.confine(sandbox.agent_policy(&scope)))
}

async fn invoke(
    cx: &NodeCx<'_>,
    role: &str,
    verdict_file: Option<PathBuf>,
) -> Result<NodeReport, NodeFailure> {
    let Some(runner) = cx.env.runner.as_deref() else {
        return Err(NodeFailure::NoRunner {
            node: cx.node.id.clone(),
            role: role.to_string(),
        });
    };
    let a = &cx.node.attrs;
    let mut task = match &a.task {
        Some(t) => cx.render("task", t)?,
        None => String::new(),
    };
    if let Some(q) = &a.question {
        task = format!(
            "Review checkpoint `{}`: {}\n{task}",
            cx.node.id,
            cx.render("question", q)?
        );
    }
    let mut reads = Vec::new();
    for r in &a.reads {
        reads.push(cx.roots.resolve(&cx.render("reads", &r.path)?));
    }
    task.push_str(&agents::reads_section(&reads));
    task.push_str(&whereabouts(cx));
    let mut outputs = Vec::new();
    if verdict_file.is_none() {
        for w in &a.writes {
            outputs.push(cx.roots.resolve_write(&cx.render("writes", &w.path)?));
        }
    }
    let resolved =
        agents::resolve_prompt(&cx.env.project, role).map_err(|e| NodeFailure::AgentSetup {
            message: e.to_string(),
        })?;
    let prompt = agents::compose_prompt(&resolved, &task, &outputs, verdict_file.as_deref());
    let node_model = match &a.model {
        Some(m) => Some(cx.render("model", m)?),
        None => None,
    };
    let selects = runner.meta().capabilities.model_selection;
    let model = crate::user_config::resolve::model_for_runner(
        cx.env.layers.model(role, None, node_model.as_deref()),
        selects,
    );
    let req = AgentRequest {
        role: role.to_string(),
        prompt,
        task,
        cwd: cx.roots.work_dir().to_path_buf(),
        project: cx.env.project.clone(),
        outputs: outputs.clone(),
        timeout: Some(cx.agent_timeout()),
        model,
        node: Some(cx.node.id.clone()),
        visit: cx.visit,
        verdict_file,
        env: cx.base_env(),
        confinement: None,
    };
    let req = AgentRequest {
        confinement: confinement(cx, &req),
        ..req
    };
    let outcome = match &cx.env.branch {
        // A branch's agents capture their output in its own reviews, tagged in events.
        Some(b) => {
            let review = b.overlay.join("reviews").join(format!("{role}-latest.md"));
            let tag = format!("exp-{:03}", b.exp_id);
            agents::invoke_capturing(&cx.env.project, &req, runner, Some(&tag), review, &|_| {})
                .await
        }
        None => agents::invoke(&cx.env.project, &req, runner, None).await,
    };
    import_commits(cx);
    let mut report = NodeReport::done();
    report.agent = Some(role.to_string());
    match outcome {
        Ok(result) => {
            let review = cx.env.project.join(".factory/reviews");
            let missing: Vec<String> = result
                .missing_outputs
                .iter()
                .map(|p| {
                    p.strip_prefix(&cx.env.project)
                        .unwrap_or(p)
                        .display()
                        .to_string()
                })
                .collect();
            if !missing.is_empty() && !missing.iter().all(|m| review.join(m).exists()) {
                report.result = NodeResult::failed(NodeFailure::MissingOutputs {
                    node: cx.node.id.clone(),
                    role: role.to_string(),
                    paths: missing,
                });
            }
        }
        Err(e) => {
            report.spawn_failure = e.is_agent_failure();
            // Nothing was judged: `factory resume` may run the agent again.
            let message = describe(&e);
            report.result = NodeResult::failed(if e.is_agent_failure() {
                NodeFailure::AgentRun { message }
            } else {
                NodeFailure::AgentSetup { message }
            });
        }
    }
    Ok(report)
}

/// Brings the commits an agent made in its experiment's repository into the project's
/// branch, so what the project shows is its work. A failure is left for the precheck,
/// which imports again and fails closed.
fn import_commits(cx: &NodeCx<'_>) {
    if cx.roots.worktree.is_none() {
        return;
    }
    let id = cx
        .env
        .branch
        .as_ref()
        .map(|b| b.exp_id)
        .or_else(|| cx.vars.get("exp_id").and_then(|v| v.parse().ok()));
    if let Some(id) = id
        && let Err(e) = crate::worktrees::repo::import(&cx.env.project, id)
    {
        tracing::warn!(exp = id, error = %e, "could not import the experiment's commits");
    }
}

/// The task's `## Where you are` for a node's agent ([`agents::whereabouts`]).
fn whereabouts(cx: &NodeCx<'_>) -> String {
    agents::whereabouts(&agents::Whereabouts {
        project: &cx.env.project,
        node: Some(&cx.node.id),
        visit: cx.visit,
        work_dir: cx.roots.work_dir(),
        in_worktree: cx.roots.worktree.is_some(),
        exp_id: cx.vars.get("exp_id").and_then(|v| v.parse().ok()),
        branch: cx.vars.get("branch").map(String::as_str),
    })
}

fn describe(e: &AgentError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}
