//! Opening a pull request for a kept experiment, when `gh` is installed and signed in
//! and the repository has an `origin` remote: its branch is pushed to `origin` and
//! `gh pr create` opens the request against the target branch. Nothing is merged; a
//! human reviews and merges. Without `gh`, its sign-in or a remote, the branch is left
//! as it is and the reason is said — never an error: the keep already stands.

use std::path::Path;
use std::time::Duration;

use super::kept::KeptBranch;
use super::{ExperimentError, workspace_of};
use crate::events::{self, Event, EventData};
use crate::project::layout::FactoryPaths;
use crate::store::{ExperimentStore, Verdict};
use crate::sys::process::{run_program, which};

/// How long `git push` and `gh` may take.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(120);

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullRequest {
    /// Opened: its address as `gh` printed it.
    Opened { url: String },
    /// Not opened, and why (the branch stays for a human to merge).
    Skipped { reason: String },
}

/// Opens a pull request for kept experiment `id` (see the module doc).
pub fn open(project: &Path, id: u32) -> Result<PullRequest, ExperimentError> {
    let record = ExperimentStore::open(project).record(id)?;
    if record.as_ref().map(|r| r.verdict) != Some(Verdict::Keep) {
        return Ok(skipped(format!(
            "experiment {id} is not kept, so there is nothing to propose"
        )));
    }
    let (info, ws) = workspace_of(project, id)?;
    if which("gh").is_none() {
        return Ok(skipped(format!(
            "gh is not installed: {} is left for you to merge",
            ws.branch
        )));
    }
    let run = |program: &str, args: &[&str]| run_program(program, args, project, NETWORK_TIMEOUT);
    match run("gh", &["auth", "status"]) {
        Ok(out) if out.success() => {}
        _ => {
            return Ok(skipped(format!(
                "gh is not signed in (`gh auth login`): {} is left for you to merge",
                ws.branch
            )));
        }
    }
    match run("git", &["remote", "get-url", "origin"]) {
        Ok(out) if out.success() => {}
        _ => {
            return Ok(skipped(format!(
                "the repository has no `origin` remote: {} is left for you to merge",
                ws.branch
            )));
        }
    }
    // Only the commit the keep measured is delivered, wherever the branch is now.
    let kept = record.as_ref().and_then(|r| KeptBranch::of(project, r));
    if let Some(kept) = kept.as_ref().filter(|k| k.moved()) {
        eprintln!("{}", kept.describe());
    }
    let refspec = match &kept {
        Some(k) => format!("{}:refs/heads/{}", k.commit, ws.branch),
        None => ws.branch.clone(),
    };
    let push = run("git", &["push", "--quiet", "origin", &refspec])
        .map_err(|e| io_error(project, e.to_string()))?;
    if !push.success() {
        return Ok(skipped(format!(
            "`git push origin {refspec}` failed ({}): {}",
            push.exit_text(),
            push.tail(3)
        )));
    }
    let title = info
        .hypothesis
        .lines()
        .next()
        .unwrap_or("factory experiment");
    let body = body(id, record.as_ref());
    let created = run(
        "gh",
        &[
            "pr",
            "create",
            "--base",
            &ws.target_branch,
            "--head",
            &ws.branch,
            "--title",
            title,
            "--body",
            &body,
        ],
    )
    .map_err(|e| io_error(project, e.to_string()))?;
    if !created.success() {
        return Ok(skipped(format!(
            "`gh pr create` failed ({}): {}",
            created.exit_text(),
            created.tail(3)
        )));
    }
    let url = created
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim().starts_with("http"))
        .unwrap_or(created.stdout.trim())
        .trim()
        .to_string();
    let mut fields = serde_json::Map::new();
    fields.insert("exp_id".into(), id.into());
    fields.insert("url".into(), url.clone().into());
    fields.insert("branch".into(), ws.branch.clone().into());
    if let Some(k) = &kept {
        fields.insert("commit".into(), k.commit.clone().into());
    }
    events::append(
        &FactoryPaths::new(project),
        &Event::new(EventData::Other {
            kind: "experiment.pull_request".into(),
            fields,
        }),
    )?;
    Ok(PullRequest::Opened { url })
}

fn skipped(reason: String) -> PullRequest {
    PullRequest::Skipped { reason }
}

fn body(id: u32, record: Option<&crate::store::ExperimentRecord>) -> String {
    let mut body =
        format!("Experiment {id}, kept by factory: its precheck passed on the target's tip.\n");
    if let Some(r) = record {
        if let (Some(b), Some(a)) = (r.score_before, r.score_after) {
            body.push_str(&format!("\nComposite score: {b:.4} → {a:.4}\n"));
        }
        if !r.notes.is_empty() {
            body.push_str(&format!("\nNotes: {}\n", r.notes));
        }
    }
    body.push_str("\nReview it and merge it yourself; factory never merges.\n");
    body
}

fn io_error(project: &Path, message: String) -> ExperimentError {
    ExperimentError::Io {
        path: project.to_path_buf(),
        source: std::io::Error::other(message),
    }
}
