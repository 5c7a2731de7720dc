//! The proposed profile tried once at HEAD, in a clean checkout set up as the gate
//! sets up each side: a dimension that fails there for a reason of this machine (an
//! old formatter, a nightly-only flag, a plugin only tox installs) would fail at every
//! base too, so the user sees it, with its first useful error line, before approving.

use std::path::Path;

use serde::Serialize;

use super::EvalProfile;
use crate::eval::{self, EvalSettings};
use crate::worktrees::pristine;
use crate::worktrees::setup::{self, Checkout};

/// One dimension's result at HEAD.
#[derive(Debug, Clone, Serialize)]
pub struct TriedDimension {
    pub name: String,
    pub passed: bool,
    /// What it said: the first lines that say what went wrong when it failed.
    pub details: String,
}

/// What trying the profile at HEAD found.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub commit: String,
    /// The `## Setup` commands run first (factory.md's at HEAD, else the proposal).
    pub setup: Vec<String>,
    pub dimensions: Vec<TriedDimension>,
    /// The composite is saturated, or only growth can move it.
    pub saturation: Option<String>,
}

impl Trial {
    pub fn failing(&self) -> impl Iterator<Item = &TriedDimension> {
        self.dimensions.iter().filter(|d| !d.passed)
    }
}

/// Writes HEAD of the project at `root` into a scratch directory, runs `## Setup`
/// there (factory.md's as committed, else `proposed_setup`) and the provenance probe,
/// then measures `profile` once. An error names what could not be done and the fix.
pub fn try_at_head(
    root: &Path,
    profile: &EvalProfile,
    proposed_setup: &[String],
) -> Result<Trial, String> {
    let head = pristine::write_head(root).map_err(|e| format!("{} ({})", e.problem, e.fix))?;
    let _isolated = crate::sys::process::IsolatedBuilds::enter();
    let commands: Vec<String> = if head.setup().is_empty() {
        proposed_setup.to_vec()
    } else {
        head.setup().to_vec()
    };
    let checkout = Checkout {
        side: "HEAD",
        code: &head.code,
        root: head.dir.path(),
    };
    setup::prepare(
        &checkout,
        &commands,
        head.timeout(),
        &crate::sys::progress::Progress::none(),
    )
    .map_err(|e| format!("a clean checkout of HEAD ({}): {e}", head.short()))?;
    let mut settings = head
        .config
        .as_ref()
        .map(EvalSettings::from_config)
        .unwrap_or_default();
    settings.profile = Some(profile.clone());
    let report = {
        let _env = setup::enter(&head.code);
        eval::measure(&head.code, &settings).score(None, &settings)
    };
    let mut dimensions: Vec<TriedDimension> = report
        .composite
        .results
        .iter()
        .map(|r| TriedDimension {
            name: r.name.clone(),
            passed: r.passed,
            details: r.details.clone(),
        })
        .collect();
    // A profile dimension that measured nothing (coverage without a total) failed too.
    dimensions.extend(
        report
            .skipped
            .iter()
            .filter(|s| profile.dimensions.iter().any(|d| d.name == s.name))
            .map(|s| TriedDimension {
                name: s.name.clone(),
                passed: false,
                details: s.reason.clone(),
            }),
    );
    Ok(Trial {
        commit: head.commit.to_string(),
        setup: commands,
        dimensions,
        saturation: report.saturation(),
    })
}

/// `profile` without the dimensions named in `drop`, each recorded as unavailable with
/// `why`. Names not in the profile are returned as the error.
pub fn drop_dimensions(
    profile: &mut EvalProfile,
    drop: &[(String, String)],
) -> Result<(), Vec<String>> {
    let unknown: Vec<String> = drop
        .iter()
        .filter(|(n, _)| !profile.dimensions.iter().any(|d| &d.name == n))
        .map(|(n, _)| n.clone())
        .collect();
    if !unknown.is_empty() {
        return Err(unknown);
    }
    for (name, why) in drop {
        profile.dimensions.retain(|d| &d.name != name);
        profile.unavailable.push(super::profile::Unavailable {
            name: name.clone(),
            reason: why.clone(),
        });
    }
    Ok(())
}
