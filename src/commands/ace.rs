//! `factory ace reflect|curate|show`: learned per-role playbooks (spec §8.15).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use factory_runtime::ace::{self, AceError, report};
use factory_runtime::agents::playbook::PlaybookError;
use factory_runtime::agents::{self, AgentError};
use factory_runtime::project::registry::user_home;

use super::{FAILED, OK, USAGE};

#[derive(clap::Args)]
#[command(after_help = "\
The loop: `factory ace reflect` turns keep/revert notes and agent failures of every
registered project into candidate bullets ($FACTORY_HOME/ace/candidates.json, else
~/.factory/ace/); `factory ace curate` removes net-negative bullets, merges near-duplicates
and caps each role's count, writing ~/.factory/playbooks/<role>.md; every resolved prompt
of that role then carries those bullets after its default playbook. No model is called.
docs/ace.md lists the patterns and the curation rules.")]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Candidate bullets with helpful/harmful counts from every registered project
    /// (and each --project), saved for `curate`.
    Reflect {
        /// Also reflect over this project (repeatable); registered projects always count.
        #[arg(long, value_name = "DIR")]
        project: Vec<PathBuf>,
        /// Print the candidates and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove net-negative bullets, merge near-duplicates, cap by net score, and write
    /// each role's evolved playbook; prints what was removed, merged and capped.
    Curate {
        /// Print what would change and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// The playbook ROLE gets appended to its prompt, and where each part comes from.
    Show {
        /// The role (builder, researcher, ...).
        role: String,
        /// Project root (its .factory/playbooks/ROLE.md replaces the default).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
    },
}

pub fn run(args: Args) -> ExitCode {
    let result = match args.action {
        Action::Reflect { project, dry_run } => ace::home()
            .and_then(|home| ace::run_reflect(&home, &project, dry_run))
            .map(|r| report::reflected(&r, dry_run)),
        Action::Curate { dry_run } => ace::home()
            .and_then(|home| ace::run_curate(&home, dry_run))
            .map(|r| report::curated(&r, dry_run)),
        Action::Show { role, project } => return show(&role, project),
    };
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::from(OK)
        }
        Err(e) => {
            let code = match e {
                AceError::Playbook(PlaybookError::Malformed { .. })
                | AceError::BadCandidates { .. } => FAILED,
                _ => USAGE,
            };
            super::report(e, code)
        }
    }
}

fn show(role: &str, project: PathBuf) -> ExitCode {
    if let Err(code) = super::require_dir(&project, "factory ace show builder --project .") {
        return code;
    }
    if !agents::known_roles(&project).iter().any(|r| r == role) {
        return super::report(
            AgentError::UnknownRole {
                role: role.to_string(),
                known: agents::known_roles(&project).join(", "),
            },
            USAGE,
        );
    }
    match agents::resolve_playbook(&project, user_home().as_deref(), role) {
        Ok(p) => {
            print!("{}", report::show(role, &p));
            ExitCode::from(OK)
        }
        Err(e) => {
            let code = if matches!(e, AgentError::Playbook(PlaybookError::Malformed { .. })) {
                FAILED
            } else {
                USAGE
            };
            super::report(e, code)
        }
    }
}
