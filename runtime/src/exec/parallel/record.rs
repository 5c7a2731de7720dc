//! `.factory/runs/<run>/parallel/<node>.json`: what a parallel node did — the streams
//! the independence gate made, and each branch's hypothesis, experiment and end. The
//! `select` node reads it; `factory runs` and the end-of-run table show it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::exec::checkpoint::run_dir;
use crate::project::layout::FactoryPaths;
use crate::sys::files::atomic_write;

/// How far a branch got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchStatus {
    /// Waiting for its stream (or for the run to start it).
    Pending,
    Running,
    /// Its walk reached the end of the body (whatever its precheck said).
    Completed,
    /// A gate halted it, or a node failed with nowhere to go.
    Halted,
    Failed,
}

impl BranchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Halted => "halted",
            Self::Failed => "failed",
        }
    }
}

/// One branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchRecord {
    /// 1-based position of its hypothesis in the plan.
    pub index: usize,
    /// The hypothesis, on one line.
    pub hypothesis: String,
    /// 1-based stream it ran in.
    pub stream: usize,
    pub exp_id: u32,
    pub branch: String,
    pub worktree: PathBuf,
    /// The branch's own run id (its events in `events.jsonl` carry it).
    pub run_id: String,
    /// The key its experiment was begun with (`factory begin` in the branch uses it).
    pub run_key: String,
    pub status: BranchStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

/// One stream: hypotheses that run one after another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamRecord {
    /// Plan positions (1-based), in the order they run.
    pub hypotheses: Vec<usize>,
    /// Why they share a stream (empty for a stream of one).
    pub reasons: Vec<String>,
}

/// The whole record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParallelRecord {
    /// The parallel node.
    pub node: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The plan the hypotheses came from (relative to the project).
    pub plan: String,
    /// Branch they all started from, and its commit.
    pub target_branch: String,
    pub base_commit: String,
    pub streams: Vec<StreamRecord>,
    pub branches: Vec<BranchRecord>,
}

impl ParallelRecord {
    /// Where the record of `node` in `run_id` lives.
    pub fn path(project: &Path, run_id: &str, node: &str) -> PathBuf {
        run_dir(&FactoryPaths::new(project), run_id)
            .join("parallel")
            .join(format!("{node}.json"))
    }

    pub fn save(&self, project: &Path) -> std::io::Result<()> {
        let path = Self::path(project, &self.run_id, &self.node);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        json.push(b'\n');
        atomic_write(&path, &json)
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is not a parallel record: {e}", path.display()))
    }

    pub fn branch_mut(&mut self, index: usize) -> Option<&mut BranchRecord> {
        self.branches.iter_mut().find(|b| b.index == index)
    }
}

/// The parallel records of run `run_id`, one per parallel node that ran.
pub fn records_of_run(project: &Path, run_id: &str) -> Vec<ParallelRecord> {
    let dir = run_dir(&FactoryPaths::new(project), run_id).join("parallel");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<ParallelRecord> = entries
        .flatten()
        .filter_map(|e| ParallelRecord::load(&e.path()).ok())
        .collect();
    out.sort_by(|a, b| a.node.cmp(&b.node));
    out
}

/// The end-of-run table of a parallel run: each branch with its hypothesis, how its
/// walk ended, its experiment's verdict and scores, and the branch left to merge.
pub fn final_table(project: &Path, run_id: &str) -> Vec<String> {
    let history = crate::store::load_history(project).ok();
    let mut lines = Vec::new();
    for record in records_of_run(project, run_id) {
        lines.push(format!(
            "  {}: {} branch{} from {} at {}",
            record.node,
            record.branches.len(),
            if record.branches.len() == 1 { "" } else { "es" },
            record.target_branch,
            record.base_commit.get(..8).unwrap_or(&record.base_commit)
        ));
        lines.push(format!(
            "    {:<4}{:<9}{:<7}{:<11}{:<11}{:<17}hypothesis",
            "", "exp", "stream", "branch run", "verdict", "score"
        ));
        for b in &record.branches {
            let r = history
                .as_ref()
                .and_then(|h| h.records.iter().find(|r| r.id == b.exp_id));
            let verdict = r.map_or("open".to_string(), |r| r.verdict.to_string());
            let score = match r.map(|r| (r.score_before, r.score_after)) {
                Some((Some(before), Some(after))) => format!("{before:.4} → {after:.4}"),
                _ => crate::experiment::load_precheck(project, b.exp_id)
                    .ok()
                    .flatten()
                    .and_then(|p| p.score_after)
                    .map_or("-".to_string(), |s| format!("{s:.4}")),
            };
            let kept = if verdict == "keep" {
                format!("  ← kept on {}", b.branch)
            } else {
                String::new()
            };
            lines.push(format!(
                "    h{:<3}exp-{:03}  {:<7}{:<11}{:<11}{:<17}{}{kept}",
                b.index,
                b.exp_id,
                b.stream,
                b.status.as_str(),
                verdict,
                score,
                b.hypothesis
            ));
        }
    }
    lines
}
