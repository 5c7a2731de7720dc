//! `factory run --dry-run`: the plan of a run, read off the IR, with nothing changed:
//! the nodes in reading order (an exported skill's), the command each runs (values the run
//! would only learn later shown as `<exp_id>`), the agent command each runner would
//! start, and the branch and worktree an experiment would get.

use std::fmt::Write as _;
use std::path::Path;

use factory_compiler::ir::{Evaluator, Ir, NodeKind, conventions};

use super::template::{self, TemplateContext};
use crate::runners::{AgentRequest, Runner};

/// The plan as text.
pub fn render(
    ir: &Ir,
    project: &Path,
    runner: Option<&dyn Runner>,
    knobs: serde_json::Value,
    placement: crate::placement::Placement,
) -> String {
    let mut cx = TemplateContext::default();
    cx.set("project_path", project.display().to_string());
    cx.set("knobs", knobs);
    for var in conventions::RUNTIME_VARS {
        if !cx.values.contains_key(*var) {
            cx.set(var, format!("<{var}>"));
        }
    }
    let next_exp = next_experiment_id(project);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "plan of `{}` on {} (dry run: nothing is changed)",
        ir.workflow.name,
        project.display()
    );
    let _ = writeln!(
        out,
        "runner: {}",
        runner.map_or(
            "none (agent nodes would fail: pass --runner)".to_string(),
            |r| r.meta().name.to_string()
        )
    );
    let _ = writeln!(
        out,
        "placement: {placement}{}",
        match placement {
            crate::placement::Placement::Host =>
                " (agents and the gate's commands run with your rights; --placement sandbox confines them: docs/sandbox.md)",
            crate::placement::Placement::Sandbox =>
                " (bubblewrap, once its probe passes; each node's policy below: docs/sandbox.md)",
        }
    );
    // The order a reader follows (the exported skill's too): the main path first,
    // each branch together, never a step before the steps that lead to it.
    let mut step = 0;
    for node in factory_compiler::ir::execution_order(ir) {
        step += 1;
        let asynchronous = if node.attrs.is_async { " async" } else { "" };
        let _ = writeln!(
            out,
            "\n{step:>3}. {} ({}{asynchronous})",
            node.id, node.kind
        );
        let a = &node.attrs;
        if let Some(run) = &a.run {
            match template::render_command(run, &cx) {
                Ok(c) => {
                    let mut shown = c.script.clone();
                    for (k, v) in c.env.iter().rev() {
                        shown = shown.replace(&format!("${{{k}}}"), v);
                    }
                    let _ = writeln!(out, "     $ {shown}");
                }
                Err(e) => {
                    let _ = writeln!(out, "     ! {e}");
                }
            }
            if run.contains("factory begin") {
                let _ = writeln!(
                    out,
                    "     creates branch factory/exp-{next_exp:03} and worktree .factory/worktrees/exp-{next_exp:03} from the target branch's tip"
                );
            }
        }
        let role = match (node.kind, a.evaluator) {
            (NodeKind::Agent, _) => a.role.clone(),
            (NodeKind::Gate, Some(Evaluator::Agent) | None) => {
                Some(conventions::gate_role(node).to_string())
            }
            _ => None,
        };
        if let Some(role) = role {
            let task = a.task.as_deref().or(a.question.as_deref()).unwrap_or("");
            let task = template::render_text(task, &cx).unwrap_or_else(|_| task.to_string());
            let _ = writeln!(out, "     agent {role}: {task}");
            if let Some(r) = runner {
                let req = AgentRequest {
                    role: role.clone(),
                    prompt: String::new(),
                    task,
                    cwd: project.to_path_buf(),
                    project: project.to_path_buf(),
                    node: Some(node.id.clone()),
                    visit: 1,
                    ..Default::default()
                };
                match r.command(&req) {
                    Ok(cmd) => {
                        let _ = writeln!(out, "     runs: {cmd}");
                    }
                    Err(e) => {
                        let _ = writeln!(out, "     ! {e}");
                    }
                }
            }
        }
        if let Some(line) = crate::placement::describe(node, placement) {
            let _ = writeln!(out, "     {line}");
        }
        if let Some(v) = conventions::verdict_file(node) {
            let _ = writeln!(out, "     verdict: {v}");
        }
        if node.kind == NodeKind::Gate && a.evaluator == Some(Evaluator::User) {
            let _ = writeln!(
                out,
                "     asks a person: {}",
                a.question.as_deref().unwrap_or("proceed?")
            );
        }
        if node.kind == NodeKind::Parallel {
            let n = a.count.unwrap_or(1);
            let _ = writeln!(out, "     {n} branches, each in its own worktree:");
            for b in 0..n {
                let id = next_exp + b;
                let _ = writeln!(
                    out,
                    "       git worktree add -b factory/exp-{id:03} .factory/worktrees/exp-{id:03} <target tip>"
                );
            }
        }
        for w in &a.writes {
            let _ = writeln!(out, "     writes {}", w.path);
        }
        // Each verdict in the order a reader expects: proceed, reloop, halt, fail.
        let mut labelled: Vec<&factory_compiler::ir::Edge> = ir
            .edges
            .iter()
            .filter(|e| e.from == node.id && e.label.is_some())
            .collect();
        labelled.sort_by_key(|e| e.label);
        for e in labelled {
            let label = e.label.map(|l| l.as_str()).unwrap_or("");
            let bound = e
                .max
                .map(|m| format!(" (at most {m} times)"))
                .unwrap_or_default();
            let _ = writeln!(out, "     on {label} → {}{bound}", e.to);
        }
    }
    out
}

fn next_experiment_id(project: &Path) -> u32 {
    let dir = project.join(".factory/experiments");
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
        + 1
}
