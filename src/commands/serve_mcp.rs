//! `factory serve-mcp [--project DIR]`: the MCP server over stdio.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{OK, USAGE, report};

/// Serve factory's tools and resources to an MCP client (Claude Code, Codex, ...)
/// over stdin/stdout.
#[derive(clap::Args)]
#[command(after_help = "\
Tools: project_state, history, eval, precheck, list_modes, compile_mode, check_fwf,
start_run, run_status, run_events. Resources: factory://results.tsv,
factory://last_eval.json, factory://runs/{run_id}/events. Every tool takes an optional
`project`; it defaults to --project. The client starts this command itself; see
docs/mcp.md for Claude Code's --mcp-config and other clients.

Example:
  claude --mcp-config '{\"mcpServers\":{\"factory\":{\"command\":\"factory\",\"args\":[\"serve-mcp\",\"--project\",\"/path/to/app\"]}}}'")]
pub struct Args {
    /// The project tools act on when a call names none.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = super::require_dir(&args.project, "factory serve-mcp --project .") {
        return code;
    }
    let project = std::fs::canonicalize(&args.project).unwrap_or(args.project);
    let served = super::run::tokio_runtime().and_then(|rt| {
        rt.block_on(factory_serve::mcp::serve_stdio(project))
            .map_err(|e| {
                miette::miette!(
                    help = "the client closed the connection or sent something that is not MCP",
                    "{e}"
                )
            })
    });
    match served {
        Ok(()) => ExitCode::from(OK),
        Err(e) => report(e, USAGE),
    }
}
