//! `factory discover [PATH] [--approve]`: propose how the project is evaluated.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::eval::discovery::{self, Discovered, EvalProfile, ProfileError};
use factory_runtime::project::config;

use super::{OK, USAGE, report};

/// Introspect the project (language, framework, test/lint/type-check commands, CI) and
/// write .factory/eval_profile.json for a person to review.
#[derive(clap::Args)]
#[command(after_help = "\
A new profile is written with \"human_reviewed\": false, which keeps the project in
the evals_pending_review state until someone reads it and runs `factory discover
--approve`. The approval holds until the profile's content changes (an edit puts it
back into review). Running discover again never resets an approval: when discovery
proposes something different, the proposal goes to .factory/eval_profile.proposed.json
and the approved profile stays in force (`--replace` adopts the proposal, for review).
factory.md's eval_spec bullets are classified: those naming a command become
dimensions, the rest stay as advisory text. A previous, different profile is kept as
.factory/eval_profile.json.previous.

Examples:
  factory discover
  factory discover ../my-project --json
  factory discover --approve        # after reviewing .factory/eval_profile.json")]
pub struct Args {
    /// Project directory.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Mark the existing profile as human-reviewed (generates one first if there is none).
    #[arg(long, visible_alias = "auto-approve")]
    approve: bool,
    /// Replace an approved profile with what discovery proposes now (it then needs
    /// approval again).
    #[arg(long)]
    replace: bool,
    /// Print the profile as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory discover .") {
        return code;
    }
    // The same refusal `begin` and `run` give: a profile outside a repository would
    // create .factory/ where no experiment can ever run.
    if let Err(err) = factory_runtime::worktrees::open(&args.path) {
        return report(err, USAGE);
    }
    let result = if args.approve {
        let fresh = if args.replace {
            generate(&args.path, true).map(|_| ())
        } else {
            Ok(())
        };
        fresh.and_then(|_| match discovery::approve_profile(&args.path) {
            Err(ProfileError::Missing { .. }) => {
                generate(&args.path, false).and_then(|_| discovery::approve_profile(&args.path))
            }
            other => other,
        })
    } else {
        generate(&args.path, args.replace).map(|d| match d {
            Discovered::Written(p) | Discovered::Unchanged(p) => p,
            Discovered::Proposed { approved, proposal, path } => {
                eprintln!(
                    "discovery now proposes a different profile ({} dimension(s): {}); it is in {}\n\
                     the approved profile stays in force; `factory discover --replace` adopts the proposal (to be reviewed)",
                    proposal.dimensions.len(),
                    proposal.dimensions.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", "),
                    path.display()
                );
                *approved
            }
        })
    };
    let profile = match result {
        Ok(p) => p,
        Err(err) => return report(err, USAGE),
    };
    let setup = setup_proposal(&args.path);
    if args.json {
        let mut value = match serde_json::to_value(&profile) {
            Ok(v) => v,
            Err(e) => return report(miette::miette!("cannot encode the profile: {e}"), USAGE),
        };
        if let (Some(steps), Some(map)) = (&setup, value.as_object_mut()) {
            map.insert(
                "proposed_setup".into(),
                serde_json::to_value(steps).unwrap_or_default(),
            );
        }
        match serde_json::to_string_pretty(&value) {
            Ok(j) => println!("{j}"),
            Err(e) => return report(miette::miette!("cannot encode the profile: {e}"), USAGE),
        }
    } else {
        print_summary(&profile, &discovery::profile::profile_path(&args.path));
        if let Some(steps) = &setup {
            print_setup(steps);
        }
    }
    ExitCode::from(OK)
}

/// The `## Setup` this project needs, when factory.md declares none.
fn setup_proposal(path: &std::path::Path) -> Option<Vec<discovery::SetupStep>> {
    let declared = config::read_factory_md(path)
        .map(|c| !c.setup.is_empty())
        .unwrap_or(false);
    let steps = discovery::propose_setup(path);
    (!declared && !steps.is_empty()).then_some(steps)
}

fn print_setup(steps: &[discovery::SetupStep]) {
    println!(
        "setup: factory.md has no `## Setup`, and each clean checkout the gate measures needs one; add this to factory.md and commit it:\n"
    );
    print!("{}", discovery::setup::render_section(steps));
    println!();
    for s in steps {
        println!("  `{}`: {}", s.command, s.why);
    }
}

fn generate(path: &std::path::Path, replace: bool) -> Result<Discovered, ProfileError> {
    // eval_spec bullets come from factory.md when the project has one; without it
    // discovery still runs on introspection alone.
    let spec = config::load(path).map(|c| c.eval_spec).unwrap_or_default();
    discovery::discover(path, &spec, replace)
}

fn print_summary(p: &EvalProfile, path: &std::path::Path) {
    let framework = p
        .framework
        .as_deref()
        .map(|f| format!(", {f}"))
        .unwrap_or_default();
    println!(
        "project: {}{framework} (confidence {:.0}%)",
        p.project_type,
        p.confidence * 100.0
    );
    for d in &p.dimensions {
        println!("  {:<12} {}", d.name, d.command);
    }
    for u in &p.unavailable {
        println!("  {:<12} - {}", u.name, u.reason);
    }
    for a in &p.advisory {
        println!("  advisory     {a}");
    }
    if !p.ci.is_empty() {
        println!("ci: {}", p.ci.join(", "));
    }
    if p.human_reviewed {
        println!("{}: reviewed", path.display());
    } else {
        println!(
            "{}: awaiting review (then run `factory discover --approve`)",
            path.display()
        );
    }
}
