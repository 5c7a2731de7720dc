//! First-run project introspection and the eval profile (spec §8.6).
//!
//! [`discover`] introspects a project and writes `.factory/eval_profile.json` awaiting
//! review; [`profile::approve_profile`] records the human review.

mod check;
pub mod eval_spec;
pub mod introspect;
pub mod profile;
pub mod setup;
pub mod test_files;
mod toolchains;
pub mod trial;

use std::path::{Path, PathBuf};

pub use eval_spec::{SpecClass, classify_eval_spec_item};
pub use introspect::{ProjectProfile, introspect};
pub use profile::{
    EvalProfile, ProfileError, approve_profile, build_eval_profile, load_profile, write_profile,
};
pub use setup::{SetupStep, propose_setup};

/// What [`discover`] did.
#[derive(Debug, Clone)]
pub enum Discovered {
    /// A new profile was written, awaiting review.
    Written(EvalProfile),
    /// An approved profile is in place and discovery proposes the same: untouched,
    /// still approved.
    Unchanged(EvalProfile),
    /// An approved profile is in place and discovery proposes something else: the
    /// approved one stays in force; the proposal is written beside it.
    Proposed {
        approved: Box<EvalProfile>,
        proposal: Box<EvalProfile>,
        path: PathBuf,
    },
}

/// `eval_profile.proposed.json`, beside the profile.
pub fn proposal_path(root: &Path) -> PathBuf {
    profile::profile_path(root).with_file_name("eval_profile.proposed.json")
}

/// Introspects `root` and builds a profile (with factory.md's `eval_spec` bullets when
/// given). An approved profile is never replaced unless `replace`: looking again never
/// resets a review. Otherwise the profile is written with `human_reviewed: false`.
pub fn discover(
    root: &Path,
    eval_spec: &[String],
    replace: bool,
) -> Result<Discovered, ProfileError> {
    let proposal = build_eval_profile(&introspect(root), eval_spec);
    if !replace
        && let Ok(approved) = load_profile(root)
        && approved.is_approved()
    {
        if approved.content_hash() == proposal.content_hash() {
            return Ok(Discovered::Unchanged(approved));
        }
        let path = proposal_path(root);
        let text = serde_json::to_string_pretty(&proposal).unwrap_or_default() + "\n";
        crate::sys::files::atomic_write(&path, text.as_bytes()).map_err(|source| {
            ProfileError::Write {
                path: path.clone(),
                source,
            }
        })?;
        return Ok(Discovered::Proposed {
            approved: Box::new(approved),
            proposal: Box::new(proposal),
            path,
        });
    }
    write_profile(root, &proposal)?;
    let _ = std::fs::remove_file(proposal_path(root));
    Ok(Discovered::Written(proposal))
}
