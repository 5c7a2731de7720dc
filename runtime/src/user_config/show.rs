//! `factory config show` and `factory config validate`: the effective settings with
//! their sources, and the profiles with every secret-looking value masked.

use std::fmt::Write;

use super::UserConfig;
use super::profile::EnvOverlay;
use super::resolve::{Layers, Setting};
use crate::sys::redact::{is_secret_name, looks_secret, mask_value};

fn setting(out: &mut String, name: &str, s: Option<Setting<String>>, none: &str) {
    let _ = match s {
        Some(s) => writeln!(out, "  {name:<14} {:<24} ({})", s.value, s.source),
        None => writeln!(out, "  {name:<14} {none}"),
    };
}

/// The text of `factory config show`.
pub fn render(layers: &Layers, profile: Option<&EnvOverlay>, reveal: bool) -> String {
    let cfg = &layers.user;
    let mut out = String::new();
    let exists = cfg.path.is_file();
    let _ = writeln!(
        out,
        "config file: {}{}",
        cfg.path.display(),
        if exists {
            ""
        } else {
            " (not present: defaults apply)"
        }
    );
    let _ = writeln!(out, "\neffective settings:");
    setting(
        &mut out,
        "runner",
        layers.runner(None),
        "first agent CLI found on PATH (built-in default)",
    );
    setting(
        &mut out,
        "model",
        layers.model("default", None, None),
        "the runner's own default",
    );
    let t = layers.agent_timeout(None, None, super::resolve::DEFAULT_NODE_TIMEOUT.as_secs());
    let _ = writeln!(
        out,
        "  {:<14} {:<24} ({})",
        "agent_timeout",
        format!("{}s", t.value),
        t.source
    );
    if !cfg.models.is_empty() {
        let _ = writeln!(out, "\nmodels by role:");
        for (role, model) in &cfg.models {
            let _ = writeln!(out, "  {role:<14} {model}");
        }
    }
    let _ = writeln!(out, "\nprofiles:");
    if cfg.credentials.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for (name, p) in &cfg.credentials {
        let active = profile.is_some_and(|o| &o.profile == name);
        let _ = writeln!(out, "  [{name}]{}", if active { " (active)" } else { "" });
        for (k, v) in &p.set {
            let shown = if reveal || !(is_secret_name(k) || looks_secret(v)) {
                v.clone()
            } else {
                mask_value(v)
            };
            let _ = writeln!(out, "    {k} = {shown}");
        }
        if !p.unset.is_empty() {
            let _ = writeln!(out, "    unset: {}", p.unset.join(", "));
        }
    }
    if !cfg.unknown.is_empty() {
        let _ = writeln!(out, "\nwarnings:");
        for u in &cfg.unknown {
            let _ = writeln!(out, "  {u}");
        }
    }
    out
}

/// The problems `factory config validate` reports (empty: valid).
pub fn problems(cfg: &UserConfig) -> Vec<String> {
    cfg.unknown
        .iter()
        .map(|u| format!("{}: {u}", cfg.path.display()))
        .collect()
}
