//! The webhook notifier: one JSON POST with a short timeout.

use std::time::Duration;

use super::{Notification, Notifier, WebhookFormat};

pub(super) struct Webhook {
    pub url: String,
    pub format: WebhookFormat,
    pub timeout: Duration,
    pub name: String,
}

impl Notifier for Webhook {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn send(&self, n: &Notification) -> Result<(), String> {
        let body = n.payload(self.format).to_string();
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            // A status of 400 and up is our error, not ureq's, so its body can be read.
            .http_status_as_error(false)
            .build()
            .new_agent();
        let mut response = agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .send(body.as_bytes())
            .map_err(|e| e.to_string())?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let said = response
            .body_mut()
            .with_config()
            .limit(500)
            .read_to_string()
            .unwrap_or_default();
        Err(format!(
            "the server answered {status}{}",
            if said.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", said.trim())
            }
        ))
    }
}
