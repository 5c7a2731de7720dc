//! `factory runners`: the agent-CLI runners on this machine — found or not, version,
//! auth state (never a secret) — and, hidden, the argv a runner builds.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::runners::{AgentRequest, cli, status};

use super::{OK, USAGE, report};

#[derive(clap::Args)]
#[command(after_help = "\
One line per agent-CLI runner, in the order the default runner is picked when none is named
(--runner, $FACTORY_RUNNER): found on PATH or not, its version, and whether a credential is
there (the variable's name or the login file; never its value). exec and replay need no
binary of their own. docs/runners.md describes each runner.

Example:
  factory runners --json")]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Print the argv the runner NAME builds (JSON), for scripts/check-real-clis.
    #[arg(long, value_name = "NAME", hide = true)]
    print_argv: Option<String>,
    /// With --print-argv: the model.
    #[arg(long, value_name = "M", hide = true, requires = "print_argv")]
    model: Option<String>,
    /// With --print-argv: the agent's working directory.
    #[arg(long, value_name = "DIR", hide = true, requires = "print_argv")]
    cwd: Option<PathBuf>,
    /// With --print-argv: the project root (default: the working directory).
    #[arg(long, value_name = "DIR", hide = true, requires = "print_argv")]
    project: Option<PathBuf>,
    /// With --print-argv: the prompt.
    #[arg(long, value_name = "TEXT", hide = true, requires = "print_argv")]
    prompt: Option<String>,
    /// With --print-argv: the interactive argv.
    #[arg(long, hide = true, requires = "print_argv")]
    interactive: bool,
}

pub fn run(args: Args) -> ExitCode {
    if let Some(name) = &args.print_argv {
        return print_argv(name, &args);
    }
    let all = status::survey();
    if args.json {
        return super::print_json(&all).map_or_else(|code| code, |()| ExitCode::from(OK));
    }
    for r in &all {
        let (found, at) = match &r.path {
            Some(p) => ("found", format!("  {}", p.display())),
            None => ("not found", String::new()),
        };
        let line = format!(
            "{:<9} {:<10} {:<24} auth: {:<32}{}{at}",
            r.name,
            found,
            r.version.as_deref().unwrap_or("-"),
            r.auth,
            if r.default { " (default)" } else { "" },
        );
        println!("{}", line.trim_end());
    }
    if all.iter().all(|r| r.path.is_none()) {
        println!(
            "\nno agent CLI found; install one (e.g. `{}`) or use --runner exec / --runner replay",
            all.first().map(|r| r.install).unwrap_or_default()
        );
    }
    ExitCode::from(OK)
}

fn print_argv(name: &str, args: &Args) -> ExitCode {
    let here = std::env::current_dir().unwrap_or_default();
    let cwd = args.cwd.clone().unwrap_or_else(|| here.clone());
    let req = AgentRequest {
        role: "builder".into(),
        prompt: args.prompt.clone().unwrap_or_else(|| "Say hello.".into()),
        project: args.project.clone().unwrap_or_else(|| cwd.clone()),
        cwd,
        model: args.model.clone(),
        ..AgentRequest::default()
    };
    match cli::preview(name, &req, args.interactive) {
        Ok(spec) => {
            let argv: Vec<&str> = std::iter::once(spec.program.as_str())
                .chain(spec.args.iter().map(String::as_str))
                .collect();
            let env: serde_json::Map<String, serde_json::Value> = spec
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect();
            println!("{}", serde_json::json!({"argv": argv, "env": env}));
            ExitCode::from(OK)
        }
        Err(e) => report(e, USAGE),
    }
}
