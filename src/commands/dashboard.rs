//! `factory dashboard`: serve the web dashboard until Ctrl-C.

use std::path::PathBuf;
use std::process::ExitCode;

use factory_serve::dashboard::{Options, run_until_ctrl_c};

use super::{OK, USAGE, report};

#[derive(clap::Args)]
#[command(after_help = "\
Shows the registered projects (and any given with --project): their state, runs,
experiments, a score chart, each experiment's reviews, precheck and eval, a live run's
graph updated as it runs, and cross-project insights. It only reads project files.

On 127.0.0.1 (the default) no token is needed; with --host it prints a URL carrying
a random token, which the browser keeps in a cookie (or send `Authorization: Bearer TOKEN`).

Examples:
  factory dashboard
  factory dashboard --project ../api --port 8500
  factory dashboard --host 0.0.0.0   # reachable from elsewhere, token required")]
pub struct Args {
    /// A project to show besides the registered ones (repeatable).
    #[arg(long = "project", value_name = "DIR")]
    projects: Vec<PathBuf>,
    /// The port to listen on (0: any free one).
    #[arg(long, default_value_t = 8420)]
    port: u16,
    /// The address to bind instead of 127.0.0.1; a token is then required.
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    for p in &args.projects {
        if let Err(code) = super::require_dir(p, "factory dashboard --project ../my-project") {
            return code;
        }
    }
    let options = Options {
        projects: args.projects,
        host: args.host,
        port: args.port,
        home: None,
    };
    let ready = |bound: &factory_serve::dashboard::Bound| {
        println!("factory dashboard on {}", bound.url());
        if bound.token().is_some() {
            println!("the token in this URL is required; keep it private");
        }
        println!("press Ctrl-C to stop");
    };
    match run_until_ctrl_c(options, ready) {
        Ok(()) => ExitCode::from(OK),
        Err(e) => report(e, USAGE),
    }
}
