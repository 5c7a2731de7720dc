//! `factory config show|validate`, and applying the selected credential profile when
//! factory starts.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use factory_runtime::user_config::{self, profile, resolve::Layers, show};

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Print the effective settings with their sources, and the credential profiles
    /// with secret-looking values masked.
    Show {
        /// Print secret values as they are.
        #[arg(long)]
        reveal: bool,
        /// Project whose factory.md takes part in the settings.
        #[arg(long, default_value = ".")]
        project: PathBuf,
    },
    /// Check ~/.factory/config.toml: syntax, types, protected variables, unknown keys.
    Validate,
}

pub fn run(args: Args, profile_flag: Option<&str>) -> ExitCode {
    match args.action {
        Action::Show { reveal, project } => {
            if let Err(code) = super::require_dir(&project, "factory config show --project .") {
                return code;
            }
            let layers = match Layers::load(Some(&project)) {
                Ok(l) => l,
                Err(e) => return report(e, USAGE),
            };
            let active = profile::selected(profile_flag, &layers.user)
                .and_then(|name| profile::overlay(&name, &layers.user).ok());
            print!("{}", show::render(&layers, active.as_ref(), reveal));
            ExitCode::from(OK)
        }
        Action::Validate => {
            let cfg = match user_config::load() {
                Ok(c) => c,
                Err(e) => return report(e, FAILED),
            };
            let problems = show::problems(&cfg);
            for p in &problems {
                eprintln!("{p}");
            }
            if problems.is_empty() {
                println!("{}: valid", cfg.path.display());
                ExitCode::from(OK)
            } else {
                ExitCode::from(FAILED)
            }
        }
    }
}

/// Applies the selected profile to this process's environment, so every agent, check
/// and command factory starts sees it; each overridden key is named on stderr (never
/// its value).
pub fn apply_profile(flag: Option<&str>) -> Result<(), ExitCode> {
    let overlay = match profile::startup_overlay(flag) {
        Ok(Some(o)) => o,
        Ok(None) => return Ok(()),
        Err(e) => return Err(report(e, USAGE)),
    };
    for line in profile::override_notices(&overlay) {
        eprintln!("{line}");
    }
    // SAFETY: called from main before any thread is started (the async runtime and
    // every worker come later), so nothing reads the environment concurrently.
    unsafe {
        for k in &overlay.unset {
            std::env::remove_var(k);
        }
        for (k, v) in &overlay.set {
            std::env::set_var(k, v);
        }
    }
    Ok(())
}
