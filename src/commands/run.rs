//! `factory run MODE|FILE`: execute a mode's IR on a project, to a verdict.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use factory_compiler::driver;
use factory_runtime::exec::{
    self, RunRequest,
    checkpoint::RunSettings,
    view::{View, ViewMode},
};

use super::{FAILED, OK, USAGE, report};
use factory_runtime::sys::redact::redact;

#[derive(clap::Args)]
#[command(after_help = "\
The workflow is a built-in mode (improve, build, ...), the project's .factory/workflows/<mode>.fwf,
a .fwf file or an IR text file (.fwir). A workflow with errors is refused with its diagnostics.

Experiments run on their own branch factory/exp-NNN in .factory/worktrees/exp-NNN; your
checkout, branch and uncommitted files are never touched. A keep leaves the branch for you
to merge. Every node's result is journaled as it finishes: `factory resume` continues a run
that was stopped (Ctrl-C) or killed.

Runners (--runner, else $FACTORY_RUNNER, else the first of claude, codex, opencode, gemini on
PATH): the agent CLIs claude, codex, opencode, gemini; exec (--agent-cmd CMD) and replay
(--script FILE). `factory runners` lists what is installed; see docs/runners.md.

Exit status: 0 the run completed, 1 it halted or failed, 2 bad usage or setup, 130 interrupted.

Examples:
  factory run improve --runner exec --agent-cmd \"my-agent --prompt-file {prompt_file}\"
  factory run workflows/improve.fwf --project ../app --runner replay --script replay.yaml
  factory run parallel-improve --dry-run
  factory run parallel-improve --preview")]
pub struct Args {
    /// The mode name or workflow file.
    workflow: String,
    /// The project to run on.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// The workflow to run when the file declares several.
    #[arg(long, value_name = "NAME", alias = "workflow")]
    workflow_name: Option<String>,
    #[command(flatten)]
    runner: super::RunnerArgs,
    /// The goal of this run (default: factory.md's goal).
    #[arg(long, value_name = "TEXT")]
    goal: Option<String>,
    /// Answer every `user` gate with proceed (needed to run such a mode headless).
    #[arg(long)]
    auto_approve: bool,
    /// Where agent nodes and the gate's commands run: `host` (your rights) or `sandbox`
    /// (bubblewrap: only the node's worktree and declared writes are writable; see
    /// docs/sandbox.md). Default: factory.md's `## Placement`, else `host`.
    #[arg(long, value_name = "PLACE", value_parser = parse_placement)]
    placement: Option<factory_compiler::ir::Placement>,
    /// Print the plan (nodes, commands, worktrees) and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// For parallel modes: print the hypotheses, the streams they would run in and
    /// why, the experiments, branches and worktrees, and the git commands; change nothing.
    #[arg(long, conflicts_with = "dry_run")]
    preview: bool,
    /// Stream the events as JSON lines on stdout.
    #[arg(long)]
    json: bool,
    /// Use this run id, reserved beforehand by a starter that must know it (the MCP
    /// server's start_run); not for hand use.
    #[arg(long, value_name = "ID", hide = true)]
    run_id: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    // Before the plan: a dry run of a mistyped --project would plan for nothing.
    if let Err(code) = super::require_dir(&args.project, "factory run MODE --project .") {
        return code;
    }
    let project = std::path::absolute(&args.project).unwrap_or(args.project.clone());
    let compiled = match driver::compile(&args.workflow, &project, args.workflow_name.as_deref()) {
        Ok(c) => c,
        Err(e) => return super::compile_failed(e, FAILED),
    };
    let settings = RunSettings {
        runner: args.runner.runner,
        agent_cmd: args.runner.agent_cmd,
        script: args
            .runner
            .script
            .map(|s| std::path::absolute(&s).unwrap_or(s)),
        auto_approve: args.auto_approve,
        goal: args.goal,
        placement: args.placement,
    };
    if args.preview {
        let knobs = exec::knob_values(&compiled.ir);
        let text = factory_runtime::exec::parallel::preview::render(&compiled.ir, &project, &knobs);
        print!("{}", redact(&text));
        return ExitCode::from(OK);
    }
    if args.dry_run {
        // The checks a real run makes before it starts: what it would refuse, this does.
        // A plan needs no agent yet: with no runner at all, it shows placeholders.
        let runner = match exec::startable(&compiled.ir, &project, &settings) {
            Ok(ready) => ready.runner,
            Err(exec::RunError::NoRunner(_)) => None,
            Err(e) => return report(e, USAGE),
        };
        let plan = exec::plan::render(
            &compiled.ir,
            &project,
            runner.as_deref(),
            exec::knob_values(&compiled.ir),
            factory_runtime::placement::for_run(settings.placement, &project),
        );
        print!("{}", redact(&plan));
        return ExitCode::from(OK);
    }
    let view = View::new(view_mode(args.json));
    // A mode name, not a path to a file: what `factory runs` shows.
    let named = !args.workflow.contains('/')
        && !args.workflow.ends_with(".fwf")
        && !args.workflow.ends_with(".fwir");
    let req = RunRequest {
        run_id: args.run_id,
        project: project.clone(),
        settings,
        mode: named.then(|| args.workflow.clone()),
    };
    let ended = tokio_runtime().and_then(|rt| {
        rt.block_on(exec::start(compiled.ir, req, &view))
            .map_err(Into::into)
    });
    super::run_end::finish(&project, ended, args.json)
}

pub fn view_mode(json: bool) -> ViewMode {
    if json {
        ViewMode::Json
    } else if std::io::stderr().is_terminal() {
        ViewMode::Live
    } else {
        ViewMode::Plain
    }
}

pub fn tokio_runtime() -> Result<tokio::runtime::Runtime, miette::Report> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| miette::miette!("cannot start the async runtime: {e}"))
}

pub(super) fn parse_placement(s: &str) -> Result<factory_compiler::ir::Placement, String> {
    factory_compiler::ir::Placement::parse(s)
        .ok_or_else(|| format!("`{s}` is not a placement: use `host` or `sandbox`"))
}
