//! `factory doctor [PATH]`: checks a project's set-up and says what to do.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::doctor;

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args)]
#[command(after_help = "\
Checks, in order: a git repository with a commit; factory.md present, valid and
committed; .factory/config.json readable; .factory/ ignored (and .gitignore committed); the eval profile approved;
the project's toolchain (a test command is available); a clean checkout of HEAD, set up
by factory.md's `## Setup` and proven by the provenance probe to run its own code (what
the keep gate does to each side); the agent runner a run would use, ready to start; the
event log verifies. Each check is the one `factory run` makes. Changes nothing in the
project (the set-up runs in a scratch checkout), except that --set-aside-log renames a
log that fails verification (and its head record) so the next run starts a new one.
Exit 0 when ready, 1 when something needs fixing.

Examples:
  factory doctor
  factory doctor --runner exec --agent-cmd \"my-agent {prompt_file}\"   # the runner you will run with
  factory doctor --set-aside-log   # a log written under another FACTORY_HOME, say")]
pub struct Args {
    /// The project.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    /// When the event log fails verification, set it (and its head record) aside so the
    /// next run starts a new log; nothing is deleted.
    #[arg(long)]
    set_aside_log: bool,
    /// The runner flags `factory run` will get, checked as it will check them.
    #[command(flatten)]
    runner: super::RunnerArgs,
    /// The placement `factory run` will get (`host` or `sandbox`): with `sandbox`, a
    /// sandbox that cannot be used here is a problem. Default: factory.md's, else host.
    #[arg(long, value_name = "PLACE", value_parser = super::run::parse_placement)]
    placement: Option<factory_compiler::ir::Placement>,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory doctor .") {
        return code;
    }
    if args.set_aside_log {
        let paths = factory_runtime::project::layout::FactoryPaths::new(&args.path);
        match factory_runtime::events::chain::set_aside(&paths) {
            Ok(moved) if moved.is_empty() => {
                eprintln!("the event log verifies (or there is none): nothing set aside")
            }
            Ok(moved) => {
                for (from, to) in moved {
                    eprintln!("set aside {} as {}", from.display(), to.display());
                }
                eprintln!("the next run starts a new event log");
            }
            Err(e) => return report(e, USAGE),
        }
    }
    let settings = factory_runtime::exec::checkpoint::RunSettings {
        runner: args.runner.runner,
        agent_cmd: args.runner.agent_cmd,
        script: args.runner.script,
        placement: args.placement,
        ..Default::default()
    };
    let findings = doctor::diagnose(&args.path, &settings);
    if args.json {
        if let Err(code) = super::print_json(&findings) {
            return code;
        }
    } else {
        print!("{}", doctor::render(&findings));
    }
    ExitCode::from(if findings.iter().all(|f| f.ok) {
        OK
    } else {
        FAILED
    })
}
