//! `factory agent ROLE`: run one specialist agent through a runner, capture its output
//! as `.factory/reviews/<role>[-TAG]-latest.md` and log its `agent.*` events.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use factory_runtime::agents::{self, AgentError, RoleOutcome, RoleRun};

use super::{FAILED, OK, USAGE, report};

/// Run one agent role (researcher, strategist, builder, ceo, ...) in the project.
#[derive(clap::Args)]
#[command(after_help = "\
The prompt is the project's .factory/agents/<role>.md, else prompts/<role>.md at or above the
project, else ~/.factory/agents/prompts/<role>.md,
else the built-in one, with the role's playbook appended. The agent's stdout is streamed here
and saved as .factory/reviews/<role>[-TAG]-latest.md.

Runners (--runner, else $FACTORY_RUNNER, else the first agent CLI on PATH):
  claude, codex, opencode, gemini
          the agent CLI headless in the project, editing unattended; its JSON events are
          shown as progress, its final message is the review, its tokens and cost go into
          agent.completed. FACTORY_<RUNNER>_DRY_RUN=1 starts nothing. `factory runners`.
  exec    any command: --agent-cmd \"aider --yes-always --message-file {prompt_file}\"
          ($FACTORY_AGENT_CMD when not given; the contract is in docs/runners.md)
  replay  a scripted agent: --script replay.yaml ($FACTORY_REPLAY_SCRIPT when not given)

Exit status: 0 the agent finished, 1 it failed, timed out or left a --writes file unwritten,
2 bad usage or setup.

Example:
  factory agent researcher --task \"Survey caching options\" --runner exec \\
      --agent-cmd \"my-agent --prompt-file {prompt_file}\"")]
pub struct Args {
    /// The role to run.
    role: String,
    /// What to do, appended to the role's prompt.
    #[arg(long, value_name = "TEXT", default_value = "")]
    task: String,
    /// Suffix for the review file (parallel invocations): <role>-TAG-latest.md.
    #[arg(long, value_name = "TAG")]
    review_tag: Option<String>,
    #[command(flatten)]
    runner: super::RunnerArgs,
    /// Project root (the agent works here).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Stop the agent (and everything it started) after this many seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Model for the agent (opencode: provider/model; exec: needs {model} in --agent-cmd).
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// Work in experiment N's worktree, for it (QA run by hand counts for its precheck).
    #[arg(long, value_name = "N")]
    exp: Option<u32>,
    /// Run at the terminal instead of headless (the output is not captured).
    #[arg(long)]
    interactive: bool,
    /// The mode's node this run stands for (a SKILL.md step): named in the task, and
    /// its outputs are kept under it in the experiment's evidence.
    #[arg(long, value_name = "ID")]
    node: Option<String>,
    /// A file the agent should read (repeatable); listed in its task.
    #[arg(long = "reads", value_name = "PATH")]
    reads: Vec<String>,
    /// A file the agent must write (repeatable): listed in its prompt, kept in the
    /// experiment's evidence with --exp; one left unwritten exits 1.
    #[arg(long = "writes", value_name = "PATH")]
    writes: Vec<String>,
    /// A review checkpoint's verdict file, as a gate's agent is told it (`## Verdict
    /// file`); required and kept like a --writes file.
    #[arg(long, value_name = "PATH")]
    verdict: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    let role = RoleRun {
        project: args.project,
        role: args.role,
        task: args.task,
        review_tag: args.review_tag,
        runner: args.runner.runner,
        agent_cmd: args.runner.agent_cmd,
        script: args.runner.script,
        timeout: args.timeout.map(Duration::from_secs),
        model: args.model,
        interactive: args.interactive,
        exp: args.exp,
        node: args.node,
        reads: args.reads,
        writes: args.writes,
        verdict: args.verdict,
    };
    let print = |line: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", factory_runtime::sys::redact::redact(line));
        let _ = out.flush();
    };
    match agents::run_role(&role, &print) {
        Ok(RoleOutcome::Headless(result)) => {
            eprintln!("review: {}", result.review_path.display());
            ExitCode::from(OK)
        }
        Ok(RoleOutcome::Interactive(0)) => ExitCode::from(OK),
        Ok(RoleOutcome::Interactive(code)) => {
            eprintln!("the {} agent exited {code}", role.role);
            ExitCode::from(FAILED)
        }
        Err(err) => {
            let code = if err.is_agent_failure()
                || matches!(
                    err,
                    AgentError::Interrupted { .. } | AgentError::MissingOutputs { .. }
                ) {
                FAILED
            } else {
                USAGE
            };
            report(err, code)
        }
    }
}
