//! The `parallel` node: reads the strategist's plan, takes its first N hypotheses,
//! groups them into streams with the independence gate, begins one experiment per
//! hypothesis (all from the same base commit, ids in plan order), and runs the node's
//! body once per hypothesis as a branch of its own ([`crate::exec::branch`]): the
//! streams at the same time, the hypotheses of one stream one after another. What
//! happened is kept in a [`ParallelRecord`] for the `select` node.
//!
//! Every step is idempotent, so a resumed run that starts the node again gets the same
//! experiments back (by their run keys) and continues only the unfinished branches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use factory_compiler::ir::{Ir, Node};
use tokio::task::JoinSet;

use super::plan::{Hypothesis, read_plan};
use super::record::{BranchRecord, BranchStatus, ParallelRecord, StreamRecord};
use super::streams::streams;
use crate::exec::branch::{self, BranchRun};
use crate::exec::graph::Graph;
use crate::exec::machine::RunOutcome;
use crate::exec::node::{BranchCx, NodeCx, NodeEnv, NodeReport};
use crate::project::config;
use crate::project::layout::FactoryPaths;
use crate::store::run_key;

/// Where the strategist writes the plan the hypotheses come from.
pub const PLAN: &str = ".factory/strategy/current.md";

/// The variable naming the parallel record, for the `select` node.
pub const RESULTS_VAR: &str = "parallel_results";

/// Runs the `parallel` node `i` of `graph`.
pub async fn run(graph: &Graph, i: usize, cx: &NodeCx<'_>) -> Result<NodeReport, String> {
    let env = cx.env;
    let count = branch_count(cx.node, &cx.env.knobs);
    let job = Setup {
        project: env.project.clone(),
        run_id: env.run_id.clone(),
        node: cx.node.id.clone(),
        count,
        plan: cx.roots.resolve(PLAN),
    };
    let prepared = tokio::task::spawn_blocking(move || job.prepare())
        .await
        .map_err(|e| format!("preparing the branches crashed: {e}"))??;
    if let Some(note) = &prepared.note {
        env.view.note(note);
    }
    let ir = graph.branch_ir(i);
    let path = ParallelRecord::path(&env.project, &env.run_id, &cx.node.id);
    let record = Arc::new(Mutex::new(prepared.record));
    save(&record, &env.project);
    let streams: Vec<Vec<BranchRecord>> = {
        let r = lock(&record);
        r.streams
            .iter()
            .map(|s| {
                s.hypotheses
                    .iter()
                    .filter_map(|h| r.branches.iter().find(|b| b.index == *h).cloned())
                    .collect()
            })
            .collect()
    };
    let mut tasks = JoinSet::new();
    for stream in streams {
        let env = env.clone();
        let ir = ir.clone();
        let record = record.clone();
        let hypotheses = prepared.hypotheses.clone();
        tasks.spawn(async move {
            for b in stream {
                let h = hypotheses.iter().find(|h| h.index == b.index);
                run_branch(&env, &ir, &b, h, &record).await;
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined {
            return Err(format!("a stream of `{}` crashed: {e}", cx.node.id));
        }
    }
    let record = lock(&record).clone();
    for line in table(&record) {
        env.view.note(&line);
    }
    let mut report = NodeReport::done();
    report
        .vars
        .insert(RESULTS_VAR.to_string(), path.display().to_string());
    Ok(report)
}

/// How many branches `node` asks for: its knob's value in `knobs` when it has one,
/// else its count; factory.md's `## Parallel` section overrides it (see
/// [`configured_count`]).
pub(crate) fn branch_count(node: &Node, knobs: &serde_json::Value) -> usize {
    let attrs = &node.attrs;
    let from_knob = attrs
        .count_knob
        .as_ref()
        .and_then(|k| knobs.get(k))
        .and_then(|v| v.as_u64());
    from_knob
        .or(attrs.count.map(u64::from))
        .unwrap_or(1)
        .clamp(1, 8) as usize
}

/// The blocking half: the plan, the streams, the experiments.
struct Setup {
    project: PathBuf,
    run_id: String,
    node: String,
    count: usize,
    plan: PathBuf,
}

struct Prepared {
    record: ParallelRecord,
    hypotheses: Vec<Hypothesis>,
    note: Option<String>,
}

impl Setup {
    fn prepare(self) -> Result<Prepared, String> {
        let config = config::load(&self.project).map_err(|e| e.to_string())?;
        let count = configured_count(&config).unwrap_or(self.count);
        let plan = read_plan(&self.plan).map_err(|e| e.to_string())?;
        let mut note = None;
        let available = plan.hypotheses.len();
        let hypotheses: Vec<Hypothesis> = plan.hypotheses.into_iter().take(count).collect();
        if available < count {
            note = Some(format!(
                "the plan has {available} hypothes{} for {count} branches: running {available}",
                if available == 1 { "is" } else { "es" }
            ));
        }
        let groups = streams(&hypotheses, &config.scope);
        let mut branches = Vec::new();
        let mut base = None;
        for h in &hypotheses {
            let key = run_key(&self.run_id, &self.node, format!("b{}", h.index));
            let started =
                crate::experiment::begin(&self.project, &h.title, Some(&key)).map_err(|e| {
                    format!("cannot begin the experiment of hypothesis {}: {e}", h.index)
                })?;
            let ws = started.workspace().cloned().ok_or_else(|| {
                format!(
                    "experiment {} of hypothesis {} was already finalized without a worktree",
                    started.id, h.index
                )
            })?;
            base.get_or_insert((ws.target_branch.clone(), ws.base_commit.clone()));
            write_branch_plan(&self.project, started.id, h, hypotheses.len())?;
            let stream = groups
                .iter()
                .position(|s| s.hypotheses.contains(&h.index))
                .map_or(1, |p| p + 1);
            branches.push(BranchRecord {
                index: h.index,
                hypothesis: h.title.clone(),
                stream,
                exp_id: started.id,
                branch: ws.branch.clone(),
                worktree: ws.worktree.clone(),
                run_id: format!("{}.{}-{}", self.run_id, self.node, h.index),
                run_key: key,
                status: BranchStatus::Pending,
                reason: None,
                started_at: None,
                ended_at: None,
            });
        }
        let (target_branch, base_commit) = base.unwrap_or_default();
        Ok(Prepared {
            record: ParallelRecord {
                node: self.node,
                run_id: self.run_id,
                plan: PLAN.to_string(),
                target_branch,
                base_commit,
                streams: groups
                    .into_iter()
                    .map(|s| StreamRecord {
                        hypotheses: s.hypotheses,
                        reasons: s.reasons,
                    })
                    .collect(),
                branches,
            },
            hypotheses,
            note,
        })
    }
}

/// factory.md's `parallel_hypotheses`, which overrides the node's count.
pub(crate) fn configured_count(config: &config::FactoryConfig) -> Option<usize> {
    config
        .parallel
        .as_ref()
        .and_then(|p| p.parallel_hypotheses)
        .map(|n| n as usize)
}

/// The branch's own plan: its one hypothesis, where its builder reads the plan.
fn write_branch_plan(project: &Path, exp: u32, h: &Hypothesis, of: usize) -> Result<(), String> {
    let path = FactoryPaths::new(project)
        .experiment_dir(exp)
        .join("strategy")
        .join("current.md");
    let text = format!(
        "# Plan: hypothesis {} of {of} (experiment {exp})\n\n## Hypothesis\n{}\n\n{}\n",
        h.index,
        h.title,
        h.text.trim()
    );
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    crate::sys::files::atomic_write(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs one branch to its end and records how it ended.
async fn run_branch(
    env: &NodeEnv,
    ir: &Ir,
    b: &BranchRecord,
    h: Option<&Hypothesis>,
    record: &Arc<Mutex<ParallelRecord>>,
) {
    update(record, &env.project, b.index, |r| {
        r.status = BranchStatus::Running;
        r.started_at
            .get_or_insert_with(crate::sys::clock::now_iso8601);
    });
    let label = label(b);
    env.view.branch_started(&b.run_id, &label);
    let branch_env = NodeEnv {
        run_id: b.run_id.clone(),
        branch: Some(BranchCx {
            index: b.index,
            hypothesis: h.map_or_else(|| b.hypothesis.clone(), |h| h.title.clone()),
            exp_id: b.exp_id,
            run_key: b.run_key.clone(),
            overlay: FactoryPaths::new(&env.project).experiment_dir(b.exp_id),
        }),
        ..env.clone()
    };
    let initial = BTreeMap::from([
        ("exp_id".to_string(), b.exp_id.to_string()),
        ("branch".to_string(), b.branch.clone()),
        ("worktree".to_string(), b.worktree.display().to_string()),
    ]);
    let ended = branch::run(BranchRun {
        ir: ir.clone(),
        env: branch_env,
        parent_run: env.run_id.clone(),
        settings: Default::default(),
        initial_vars: initial,
    })
    .await;
    let (status, reason) = match ended {
        Ok(end) => match end.outcome {
            Some(RunOutcome::Completed) => (BranchStatus::Completed, None),
            Some(RunOutcome::Halted { node, reason }) => {
                (BranchStatus::Halted, Some(format!("{node}: {reason}")))
            }
            Some(RunOutcome::Failed { node, reason }) => (
                BranchStatus::Failed,
                Some(format!("{node}: {}", reason.lines().next().unwrap_or(""))),
            ),
            None => (BranchStatus::Failed, Some("interrupted".to_string())),
        },
        Err(e) => (BranchStatus::Failed, Some(e.to_string())),
    };
    update(record, &env.project, b.index, |r| {
        r.status = status;
        r.reason = reason.clone();
        r.ended_at = Some(crate::sys::clock::now_iso8601());
    });
    let precheck = crate::experiment::load_precheck(&env.project, b.exp_id)
        .ok()
        .flatten();
    let mut summary = status.as_str().to_string();
    if let Some(p) = precheck {
        summary.push_str(if p.passed {
            " · precheck passed"
        } else {
            " · precheck failed"
        });
        if let Some(s) = p.score_after {
            summary.push_str(&format!(" · score {s:.4}"));
        }
    } else if let Some(r) = &reason {
        summary.push_str(&format!(": {r}"));
    }
    env.view.branch_ended(&b.run_id, &summary);
}

fn label(b: &BranchRecord) -> String {
    let mut title: String = b.hypothesis.chars().take(48).collect();
    if title.len() < b.hypothesis.len() {
        title.push('…');
    }
    format!("h{} exp-{:03} {title}", b.index, b.exp_id)
}

/// The branches as a table, a line each.
pub fn table(record: &ParallelRecord) -> Vec<String> {
    let mut lines = vec![format!(
        "{}: {} branch{} from {} at {}",
        record.node,
        record.branches.len(),
        if record.branches.len() == 1 { "" } else { "es" },
        record.target_branch,
        short(&record.base_commit)
    )];
    for b in &record.branches {
        lines.push(format!(
            "  h{:<2} exp-{:03}  stream {:<2} {:<10} {}",
            b.index,
            b.exp_id,
            b.stream,
            b.status.as_str(),
            b.hypothesis
        ));
    }
    lines
}

pub fn short(commit: &str) -> &str {
    commit.get(..8).unwrap_or(commit)
}

fn lock(record: &Arc<Mutex<ParallelRecord>>) -> std::sync::MutexGuard<'_, ParallelRecord> {
    record.lock().unwrap_or_else(|p| p.into_inner())
}

fn save(record: &Arc<Mutex<ParallelRecord>>, project: &Path) {
    // The record is a report: failing to write it never stops the branches.
    let _ = lock(record).save(project);
}

fn update(
    record: &Arc<Mutex<ParallelRecord>>,
    project: &Path,
    index: usize,
    f: impl FnOnce(&mut BranchRecord),
) {
    let mut r = lock(record);
    if let Some(b) = r.branch_mut(index) {
        f(b);
    }
    let _ = r.save(project);
}
