//! `factory demo [DIR]`: improve the bundled demo project with scripted agents.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::driver;
use factory_runtime::demo;
use factory_runtime::exec::{self, RunRequest, checkpoint::RunSettings, view::View};

use super::run::{tokio_runtime, view_mode};
use super::{USAGE, report};

#[derive(clap::Args)]
#[command(after_help = "\
Copies the demo project (a small Rust crate) to DIR (default: a new directory under the
system temp dir), makes it a git repository on `main`, records its baseline eval, and runs
the improve mode on it with the replay runner and DIR/replay.yaml: the same path as
  factory run improve --project DIR --runner replay --script DIR/replay.yaml
It ends with a keep: a row in DIR/.factory/results.tsv and the branch factory/exp-001.

With --mode parallel-improve it runs three hypotheses in their own experiments
(DIR/replay-parallel.yaml): the best is re-checked on main's tip and kept, one is
superseded by it and one reverted.

Examples:
  factory demo /tmp/factory-demo
  factory demo --mode parallel-improve /tmp/factory-parallel-demo
  factory demo --placement sandbox /tmp/factory-sandboxed-demo")]
pub struct Args {
    /// Where to put the demo (new or empty).
    dir: Option<PathBuf>,
    /// The mode to run: improve or parallel-improve.
    #[arg(long, default_value = "improve", value_parser = clap::builder::PossibleValuesParser::new(["improve", "parallel-improve"]))]
    mode: String,
    /// Stream the events as JSON lines on stdout.
    #[arg(long)]
    json: bool,
    /// Where the agents and the gate's commands run: `host` or `sandbox` (docs/sandbox.md).
    #[arg(long, value_name = "PLACE", value_parser = super::run::parse_placement)]
    placement: Option<factory_compiler::ir::Placement>,
}

pub fn run(args: Args) -> ExitCode {
    let dir = args.dir.unwrap_or_else(demo::fresh_dir);
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    eprintln!("demo project: {}", dir.display());
    if let Err(e) = demo::prepare(&dir) {
        return report(e, USAGE);
    }
    let Some(script) = demo::script_for(&args.mode) else {
        return report(
            miette::miette!("the demo has no script for the mode `{}`", args.mode),
            USAGE,
        );
    };
    let compiled = match driver::compile(&args.mode, &dir, None) {
        Ok(c) => c,
        Err(e) => {
            return report(
                miette::miette!("the built-in {} mode does not compile: {e:?}", args.mode),
                USAGE,
            );
        }
    };
    let settings = RunSettings {
        runner: Some("replay".into()),
        script: Some(dir.join(script)),
        placement: args.placement,
        ..Default::default()
    };
    let view = View::new(view_mode(args.json));
    let req = RunRequest {
        run_id: None,
        project: dir.clone(),
        settings,
        mode: Some(args.mode.to_string()),
    };
    let ended = tokio_runtime().and_then(|rt| {
        rt.block_on(exec::start(compiled.ir, req, &view))
            .map_err(Into::into)
    });
    super::run_end::finish(&dir, ended, args.json)
}
