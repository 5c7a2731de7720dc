//! First-run project introspection and the eval profile (spec §8.6).
//!
//! [`discover`] introspects a project and writes `.factory/eval_profile.json` awaiting
//! review; [`profile::approve_profile`] records the human review.

pub mod eval_spec;
pub mod introspect;
pub mod profile;
mod toolchains;

use std::path::{Path, PathBuf};

pub use eval_spec::{SpecClass, classify_eval_spec_item};
pub use introspect::{ProjectProfile, introspect};
pub use profile::{
    EvalProfile, ProfileError, approve_profile, build_eval_profile, load_profile, write_profile,
};

/// Introspects `root`, builds a profile (with factory.md's `eval_spec` bullets when
/// given) and writes it with `human_reviewed: false`.
pub fn discover(root: &Path, eval_spec: &[String]) -> Result<(EvalProfile, PathBuf), ProfileError> {
    let profile = build_eval_profile(&introspect(root), eval_spec);
    let path = write_profile(root, &profile)?;
    Ok((profile, path))
}
