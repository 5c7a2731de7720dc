//! Notifications: run ends and verdicts reported outside the terminal (spec §8.17,
//! §15 "Notifier protocol"). The user's `~/.factory/config.toml` lists the notifiers
//! (`[[notify]]`, read by [`crate::user_config::notify`]); [`announce`] sends one
//! [`Notification`] to each that wants its event. Sending is best effort: a notifier
//! that fails is logged — a warning on stderr, a `notify.failed` event in the
//! project's `events.jsonl`, and the returned message for the caller to show — and
//! never fails the run or the verdict that caused it.
//!
//! Sent from two places only: [`crate::experiment::finalize`] (keep, revert, error
//! verdicts) and the end of a run in [`crate::exec`] (run end, halt, error).

mod command;
pub mod message;
mod webhook;

use std::path::Path;

pub use crate::user_config::notify::{NotifierConfig, NotifyEvent, NotifyTarget, WebhookFormat};
pub use message::Notification;

use crate::events::{self, Event};

/// The `events.jsonl` type of a notifier's failure.
pub const NOTIFY_FAILED: &str = "notify.failed";

/// Something that delivers a notification.
pub trait Notifier {
    /// How it is named in a failure message.
    fn describe(&self) -> String;
    /// Delivers `n`; the error says why it could not.
    fn send(&self, n: &Notification) -> Result<(), String>;
}

/// The notifier a `[[notify]]` table configures.
pub fn notifier(config: &NotifierConfig) -> Box<dyn Notifier> {
    match &config.target {
        NotifyTarget::Webhook { url, format } => Box::new(webhook::Webhook {
            url: url.clone(),
            format: *format,
            timeout: config.timeout,
            name: config.describe(),
        }),
        NotifyTarget::Command(cmd) => Box::new(command::CommandNotifier {
            command: cmd.clone(),
            timeout: config.timeout,
            name: config.describe(),
        }),
    }
}

/// Sends `n` to every notifier of the user's config that wants its event. Returns
/// the failures, each already logged (stderr and `events.jsonl` of `n.project`).
pub fn announce(n: &Notification) -> Vec<String> {
    let configs = match crate::user_config::load() {
        Ok(cfg) => cfg.notifiers,
        Err(e) => {
            return vec![log_failure(
                &n.project,
                n,
                format!("notifiers not loaded: {e}"),
            )];
        }
    };
    send_to(&configs, n)
}

/// Sends `n` to each of `configs` that wants its event; the failures, logged.
pub fn send_to(configs: &[NotifierConfig], n: &Notification) -> Vec<String> {
    configs
        .iter()
        .filter(|c| c.wants(n.event))
        .filter_map(|c| {
            let notifier = notifier(c);
            notifier
                .send(n)
                .err()
                .map(|e| log_failure(&n.project, n, format!("{}: {e}", notifier.describe())))
        })
        .collect()
}

fn log_failure(project: &Path, n: &Notification, message: String) -> String {
    let message = format!("notification `{}` not sent: {message}", n.event.as_str());
    eprintln!("warning: {message}");
    tracing::warn!("{message}");
    let event = Event::raw(NOTIFY_FAILED)
        .with("event", n.event.as_str())
        .with("message", message.as_str());
    // Only where a project's log already exists: a notification about a project never
    // creates its .factory/.
    if project.join(".factory").is_dir() {
        let _ = events::append_to(project, &event);
    }
    message
}

#[cfg(test)]
mod tests;
