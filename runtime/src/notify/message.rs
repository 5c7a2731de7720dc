//! What a notification says, and the bodies webhooks are sent.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{NotifyEvent, WebhookFormat};
use crate::store::{ExperimentRecord, Verdict};

/// One notification: the event, where it happened and a one-line message.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub event: NotifyEvent,
    pub project: PathBuf,
    pub run_id: Option<String>,
    pub exp_id: Option<u32>,
    /// One line a person reads: `app: experiment 3 kept, score 0.810 → 0.845 (+0.035)`.
    pub text: String,
    /// Machine-readable facts (verdict, scores, outcome, node, reason).
    pub details: Map<String, Value>,
}

impl Notification {
    /// The notification of a recorded verdict; `None` for verdicts nobody is told
    /// about (superseded, quarantined: a parallel run's end reports those).
    pub fn of_verdict(project: &Path, record: &ExperimentRecord) -> Option<Notification> {
        let (event, said) = match record.verdict {
            Verdict::Keep => (NotifyEvent::Keep, "kept"),
            Verdict::Revert => (NotifyEvent::Revert, "reverted"),
            Verdict::Error => (NotifyEvent::Error, "ended in error"),
            Verdict::Superseded | Verdict::Quarantined => return None,
        };
        let score = match (record.score_before, record.score_after, record.delta) {
            (Some(b), Some(a), Some(d)) => format!(", score {b:.3} → {a:.3} ({d:+.3})"),
            (Some(b), Some(a), None) => format!(", score {b:.3} → {a:.3}"),
            _ => String::new(),
        };
        let mut text = format!(
            "{}: experiment {} {said}{score}",
            project_name(project),
            record.id
        );
        if record.verdict == Verdict::Keep {
            text.push_str(&format!(
                "; branch factory/exp-{:03} is ready to review",
                record.id
            ));
        } else if let Some(first) = record.notes.lines().next().filter(|l| !l.is_empty()) {
            text.push_str(&format!(": {first}"));
        }
        let mut details = Map::new();
        details.insert("verdict".into(), record.verdict.to_string().into());
        details.insert("hypothesis".into(), record.hypothesis.clone().into());
        for (key, value) in [
            ("score_before", record.score_before),
            ("score_after", record.score_after),
            ("delta", record.delta),
        ] {
            if let Some(v) = value {
                details.insert(key.into(), v.into());
            }
        }
        Some(Notification {
            event,
            project: project.to_path_buf(),
            run_id: crate::project::child::ChildEnv::current().run_id,
            exp_id: Some(record.id),
            text,
            details,
        })
    }

    /// factory's own JSON body (also what a command notifier finds in
    /// `FACTORY_NOTIFICATION`).
    pub fn to_json(&self) -> Value {
        json!({
            "event": self.event.as_str(),
            "project": self.project.display().to_string(),
            "project_name": project_name(&self.project),
            "run_id": self.run_id,
            "exp_id": self.exp_id,
            "text": self.text,
            "details": self.details,
        })
    }

    /// The body a webhook of `format` is sent.
    pub fn payload(&self, format: WebhookFormat) -> Value {
        let line = format!("factory · {}", self.text);
        match format {
            WebhookFormat::Json => self.to_json(),
            WebhookFormat::Slack => json!({ "text": line }),
            // Discord refuses content over 2,000 characters.
            WebhookFormat::Discord => json!({
                "content": line.chars().take(2000).collect::<String>(),
                "username": "factory",
            }),
        }
    }
}

/// The project's directory name, how a person knows it.
pub fn project_name(project: &Path) -> String {
    project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| project.display().to_string())
}
