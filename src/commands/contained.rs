//! `factory contained [--placement P] [--forward VAR]... -- factory <command>` and
//! `factory contained verify`: one factory command run whole inside the sandbox
//! (`factory_runtime::placement::contained`).

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::placement::{Sandbox, contained};

use super::{FAILED, OK, USAGE, report};

/// Run one factory command inside the sandbox (not a security boundary: see --help).
#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "\
NOT A SECURITY BOUNDARY for agent-authored code: the command and what it starts run
under bubblewrap (the system read-only, a private /tmp, ~/.ssh-like credential stores
hidden, writable only the project and $FACTORY_HOME), which keeps them off the rest of
your machine; it does not make what an agent wrote safe to merge. Kept changes still
need your review.

Path rewriting only: the leading `factory` becomes this executable and every other
argument goes through as written. The command sees PATH, HOME, the locale and the
terminal, every FACTORY_-prefixed variable, and exactly the variables --forward names;
nothing else of your environment. `--dry-run` (or FACTORY_CONTAINED_DRY_RUN=1) prints the
command that would run, secrets masked. `factory contained verify` reports the
credentials the command would get by shape (present, empty, malformed), never by value.
contained never falls back to the host: a sandbox that cannot be used here is an error.

Examples:
  factory contained -- factory eval
  factory contained --forward OPENAI_API_KEY -- factory run improve --runner codex
  factory contained verify --forward OPENAI_API_KEY"
)]
pub struct Args {
    #[command(subcommand)]
    verify: Option<Verify>,
    /// Where the command runs: `sandbox` (bubblewrap). `container` is not built yet.
    #[arg(long, value_name = "PLACE", default_value = "sandbox")]
    placement: String,
    /// A variable passed on besides the FACTORY_-prefixed ones (repeatable).
    #[arg(long, value_name = "VAR")]
    forward: Vec<String>,
    /// The project: the command's working directory, writable inside.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Print the command that would run (secrets masked) and run nothing.
    #[arg(long, env = "FACTORY_CONTAINED_DRY_RUN", value_parser = clap::builder::FalseyValueParser::new())]
    dry_run: bool,
    /// The factory command, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(clap::Subcommand)]
enum Verify {
    /// Report the credentials a contained command would get, by shape, never value.
    Verify {
        /// A variable passed on besides the FACTORY_-prefixed ones (repeatable).
        #[arg(long, value_name = "VAR")]
        forward: Vec<String>,
    },
}

pub fn run(args: Args) -> ExitCode {
    if let Some(Verify::Verify { forward }) = args.verify {
        return verify(&forward);
    }
    if let Err(e) = contained::check_placement(&args.placement) {
        return report(e, USAGE);
    }
    if let Err(code) = super::require_dir(&args.project, "factory contained -- factory eval") {
        return code;
    }
    let project = args
        .project
        .canonicalize()
        .unwrap_or_else(|_| args.project.clone());
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return report(
                miette::miette!("cannot find factory's own executable: {e}"),
                FAILED,
            );
        }
    };
    let sandbox = match Sandbox::prepare() {
        Ok(s) => s,
        Err(e) => return report(contained::ContainedError::Probe(e.to_string()), FAILED),
    };
    let req = contained::Request {
        command: &args.command,
        project: &project,
        forward: &args.forward,
        exe: &exe,
    };
    let composed = match contained::compose(&sandbox, &req, std::env::vars()) {
        Ok(c) => c,
        Err(e) => return report(e, USAGE),
    };
    if args.dry_run {
        print!("{}", composed.render());
        return ExitCode::from(OK);
    }
    match contained::run(&composed, &project) {
        Ok(status) => ExitCode::from(status.code().map_or(FAILED, |c| c.clamp(0, 255) as u8)),
        Err(e) => report(
            miette::miette!("cannot start {}: {e}", composed.program),
            FAILED,
        ),
    }
}

fn verify(forward: &[String]) -> ExitCode {
    let shapes = contained::verify(std::env::vars(), forward);
    if shapes.is_empty() {
        println!("no credentials: no secret-named FACTORY_ variable is set and none is forwarded");
    }
    for s in &shapes {
        println!("{s}");
    }
    match Sandbox::prepare() {
        Ok(_) => println!("sandbox: usable (bubblewrap probe passed)"),
        Err(e) => println!("sandbox: cannot be used here: {e}"),
    }
    println!("not a security boundary: kept changes still need your review");
    ExitCode::from(OK)
}
