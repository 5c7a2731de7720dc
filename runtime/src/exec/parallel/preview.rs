//! `factory run MODE --preview`: for each `parallel` node of a workflow, what it would
//! do with the plan as it stands — the hypotheses, the streams the independence gate
//! makes and why, the experiments, branches and worktrees it would create, and the git
//! commands equivalent to what factory does through git2. Reads only; writes nothing.

use std::fmt::Write as _;
use std::path::Path;

use factory_compiler::ir::{Ir, NodeKind};
use serde_json::Value;

use super::fanout::{PLAN, short};
use super::plan::read_plan;
use super::streams::streams;
use crate::project::config;
use crate::store::ExperimentStore;
use crate::worktrees;

/// The preview of every parallel node of `ir` on `project`, as text.
pub fn render(ir: &Ir, project: &Path, knobs: &Value) -> String {
    let mut out = String::new();
    let parallel: Vec<_> = ir
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Parallel)
        .collect();
    if parallel.is_empty() {
        let _ = writeln!(
            out,
            "`{}` has no parallel node: every experiment runs alone (`--dry-run` shows the plan)",
            ir.workflow.name
        );
        return out;
    }
    let config = config::load(project);
    let scope = config.as_ref().map(|c| c.scope.clone()).unwrap_or_default();
    let target = config
        .as_ref()
        .map(|c| c.target_branch.clone())
        .unwrap_or_else(|_| config::default_target_branch());
    let configured = config
        .as_ref()
        .ok()
        .and_then(super::fanout::configured_count);
    let base = worktrees::resolve_base(project, &target);
    let mut next = ExperimentStore::open(project).next_id().unwrap_or(1);
    for node in parallel {
        let count = configured.unwrap_or_else(|| super::fanout::branch_count(node, knobs));
        let _ = writeln!(out, "parallel node `{}`: up to {count} branches", node.id);
        match &base {
            Ok(b) => {
                let _ = writeln!(
                    out,
                    "  base: {} at {}{}",
                    b.branch,
                    short(&b.commit.to_string()),
                    b.note
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                );
            }
            Err(e) => {
                let _ = writeln!(out, "  base: unknown ({e})");
            }
        }
        let plan_path = project.join(PLAN);
        let plan = match read_plan(&plan_path) {
            Ok(p) => p,
            Err(e) => {
                let _ = writeln!(
                    out,
                    "  no hypotheses yet: {e}\n  (the strategist writes the plan during the run; streams are decided then)"
                );
                continue;
            }
        };
        for d in &plan.dropped {
            let _ = writeln!(out, "  dropped: {d}");
        }
        let hypotheses: Vec<_> = plan.hypotheses.into_iter().take(count).collect();
        let groups = streams(&hypotheses, &scope);
        let _ = writeln!(
            out,
            "  {} hypothes{} from {PLAN}, in {} stream{}:",
            hypotheses.len(),
            if hypotheses.len() == 1 { "is" } else { "es" },
            groups.len(),
            if groups.len() == 1 { "" } else { "s" }
        );
        let mut ids = std::collections::BTreeMap::new();
        for h in &hypotheses {
            ids.insert(h.index, next);
            next += 1;
        }
        for (s, group) in groups.iter().enumerate() {
            let how = if group.hypotheses.len() > 1 {
                "one after another"
            } else {
                "alone"
            };
            let _ = writeln!(out, "  stream {} ({how}):", s + 1);
            for i in &group.hypotheses {
                let Some(h) = hypotheses.iter().find(|h| h.index == *i) else {
                    continue;
                };
                let id = ids.get(i).copied().unwrap_or_default();
                let files = if h.files.is_empty() {
                    "no files named: the whole scope".to_string()
                } else {
                    h.files.join(", ")
                };
                let _ = writeln!(
                    out,
                    "    h{i} → experiment {id}, branch {}, worktree {}\n       {}\n       files: {files}",
                    worktrees::branch_name(id),
                    rel(project, &worktrees::worktree_path(project, id)),
                    h.title
                );
            }
            for r in &group.reasons {
                let _ = writeln!(out, "    why together: {r}");
            }
        }
        let _ = writeln!(out, "  git commands (factory does the same through git2):");
        let base_ref = base
            .as_ref()
            .map(|b| short(&b.commit.to_string()).to_string())
            .unwrap_or_else(|_| target.clone());
        for id in ids.values() {
            let _ = writeln!(
                out,
                "    git branch {} {base_ref}\n    git worktree add {} {}",
                worktrees::branch_name(*id),
                rel(project, &worktrees::worktree_path(project, *id)),
                worktrees::branch_name(*id)
            );
        }
    }
    let _ = writeln!(out, "preview only: nothing was created or changed");
    out
}

fn rel(project: &Path, path: &Path) -> String {
    path.strip_prefix(project)
        .unwrap_or(path)
        .display()
        .to_string()
}
