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
    /// Do not try the profile at HEAD (by default it is measured once in a clean,
    /// set-up checkout, and each dimension that fails there is shown).
    #[arg(long)]
    no_trial: bool,
    /// Remove a dimension from the profile (repeatable): one that cannot pass on this
    /// machine, as the trial at HEAD shows. The profile then awaits review again.
    #[arg(long, value_name = "NAME")]
    drop: Vec<String>,
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
    let mut profile = match result {
        Ok(p) => p,
        Err(err) => return report(err, USAGE),
    };
    let setup = setup_proposal(&args.path);
    let dropped: Vec<(String, String)> = args
        .drop
        .iter()
        .map(|n| {
            (
                n.clone(),
                "dropped at set-up (`factory discover --drop`)".to_string(),
            )
        })
        .collect();
    if let Err(code) = drop_and_save(&args.path, &mut profile, &dropped) {
        return code;
    }
    let trial = if args.approve || args.no_trial {
        None
    } else {
        let proposed: Vec<String> = setup.iter().flatten().map(|s| s.command.clone()).collect();
        if !args.json {
            eprintln!("trying the profile once in a clean checkout of HEAD …");
        }
        Some(discovery::trial::try_at_head(
            &args.path, &profile, &proposed,
        ))
    };
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
        if let (Some(trial), Some(map)) = (&trial, value.as_object_mut()) {
            map.insert(
                "trial".into(),
                match trial {
                    Ok(t) => serde_json::to_value(t).unwrap_or_default(),
                    Err(e) => serde_json::json!({ "error": e }),
                },
            );
        }
        if let Err(code) = super::print_json(&value) {
            return code;
        }
    } else {
        print_summary(&profile, &discovery::profile::profile_path(&args.path));
        if let Some(steps) = &setup {
            print_setup(steps);
        }
        match &trial {
            Some(Ok(t)) => {
                print_trial(t);
                let drop = ask_which_to_drop(t);
                if !drop.is_empty() {
                    if let Err(code) = drop_and_save(&args.path, &mut profile, &drop) {
                        return code;
                    }
                    println!(
                        "dropped {}; the profile awaits review again",
                        drop.iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
            Some(Err(e)) => println!("trial at HEAD: could not run: {e}"),
            None => {}
        }
    }
    ExitCode::from(OK)
}

/// Removes `drop` from the profile in force and writes it (back into review).
fn drop_and_save(
    path: &std::path::Path,
    profile: &mut EvalProfile,
    drop: &[(String, String)],
) -> Result<(), ExitCode> {
    if drop.is_empty() {
        return Ok(());
    }
    if let Err(unknown) = discovery::trial::drop_dimensions(profile, drop) {
        let known: Vec<&str> = profile.dimensions.iter().map(|d| d.name.as_str()).collect();
        return Err(report(
            miette::miette!(
                help = format!("the profile's dimensions are: {}", known.join(", ")),
                "--drop {}: no such dimension in the profile",
                unknown.join(", ")
            ),
            USAGE,
        ));
    }
    profile.human_reviewed = false;
    discovery::write_profile(path, profile)
        .map(|_| ())
        .map_err(|e| report(e, USAGE))
}

fn print_trial(t: &discovery::trial::Trial) {
    let setup = if t.setup.is_empty() {
        "no `## Setup`".to_string()
    } else {
        format!("`## Setup` ran ({})", t.setup.join("; "))
    };
    println!(
        "trial at HEAD {} (a clean checkout, {setup}):",
        &t.commit[..10]
    );
    for d in &t.dimensions {
        if d.passed {
            println!("  ok    {}", d.name);
        } else {
            println!("  FAIL  {}: {}", d.name, d.details);
        }
    }
    if let Some(w) = &t.saturation {
        println!("warning: {w}");
    }
}

/// For each dimension failing at HEAD, asks on a terminal whether to keep it; off a
/// terminal, says how to drop one. A dimension that fails at HEAD fails at every base:
/// it moves no verdict, and hides what it was meant to measure.
fn ask_which_to_drop(t: &discovery::trial::Trial) -> Vec<(String, String)> {
    use std::io::{BufRead, IsTerminal, Write};
    let failing: Vec<_> = t.failing().collect();
    if failing.is_empty() {
        return Vec::new();
    }
    if !std::io::stdin().is_terminal() {
        println!(
            "{} dimension(s) fail at HEAD; if one cannot pass on this machine, drop it: `factory discover --drop {}`",
            failing.len(),
            failing[0].name
        );
        return Vec::new();
    }
    let mut drop = Vec::new();
    let mut lines = std::io::stdin().lock().lines();
    for d in failing {
        print!("keep `{}`, which fails at HEAD? [Y/n] ", d.name);
        let _ = std::io::stdout().flush();
        let answer = lines.next().and_then(Result::ok).unwrap_or_default();
        if answer.trim().eq_ignore_ascii_case("n") || answer.trim().eq_ignore_ascii_case("no") {
            drop.push((
                d.name.clone(),
                format!(
                    "failed at HEAD {} and was dropped at set-up: {}",
                    &t.commit[..10],
                    d.details
                ),
            ));
        }
    }
    drop
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
