//! The `factory` command line: argument parsing and dispatch only. Every command lives
//! in `commands/<name>.rs` as an `Args` struct and a `run` function that calls library
//! code in `factory-compiler` or `factory-runtime`.

mod commands;

/// Checking a large workflow allocates and frees many small strings; glibc's malloc
/// serves that pattern several times slower (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "factory",
    version,
    about = "Measured, auditable improvement of software with coding agents",
    long_about = None,
)]
struct Cli {
    /// Credential profile from ~/.factory/config.toml (`[credentials.NAME]`); also
    /// FACTORY_PROFILE or `defaults.profile`.
    #[arg(long, global = true, value_name = "NAME")]
    profile: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check workflow files and print their diagnostics.
    Check(commands::check::Args),
    /// Compile a workflow to IR, JSON, dot or mermaid.
    Compile(commands::compile::Args),
    /// Format workflow files in place, or check that they are formatted.
    Fmt(commands::fmt::Args),
    /// Run the language server for .fwf files over stdio.
    Lsp(commands::lsp::Args),
    /// List the modes available here and where each comes from.
    Modes(commands::modes::Args),
    /// Parse factory.md into .factory/config.json and ignore .factory/ in git.
    Init(commands::init::Args),
    /// Print the project's state (no_repo, incomplete, no_factory, ...).
    Detect(commands::detect::Args),
    /// Start an experiment and print its id.
    Begin(commands::begin::Args),
    /// Record an experiment's verdict and scores.
    Finalize(commands::finalize::Args),
    Pr(commands::pr::Args),
    /// Evolve a mode: search over its graph on a bench suite (`factory evolve MODE
    /// --bench DIR`), or mutate a workflow's IR (`factory evolve mutate FILE`).
    Evolve(commands::evolve::Args),
    /// List the experiment worktrees, or clean away those no longer needed.
    Worktrees(commands::worktrees::Args),
    /// Show past experiments: recent in full, older summarized.
    History(commands::history::Args),
    /// Score the project: hygiene, growth and project dimensions, and the composite.
    Eval(commands::eval::Args),
    /// Introspect the project and write an eval profile for review.
    Discover(commands::discover::Args),
    /// Check everything a keep verdict requires; one failure fails the whole.
    Precheck(commands::precheck::Args),
    /// Improve the bundled demo project with scripted agents, end to end.
    Demo(commands::demo::Args),
    /// Run a mode (or any workflow) on a project, to a verdict.
    Run(commands::run::Args),
    /// Continue the project's last run from its checkpoint.
    Resume(commands::resume::Args),
    /// List the project's past runs and their outcomes.
    Runs(commands::runs::Args),
    /// Run one agent role through a runner and capture its review.
    Agent(commands::agent::Args),
    /// List the agent-CLI runners: found on PATH, version, auth state.
    Runners(commands::runners::Args),
    /// Export the workflows as Agent Skills (SKILL.md) or check exported ones for drift.
    Skills(commands::skills::Args),
    /// Build and query the code graph: files, definitions and their relations.
    Graph(commands::graph::Args),
    /// Write .factory/strategy/observations.md for the researcher.
    Study(commands::study::Args),
    /// Check a project's set-up (git, factory.md, ignores, eval profile, toolchain, runner).
    Doctor(commands::doctor::Args),
    /// Run one factory command inside the sandbox (not a security boundary).
    Contained(commands::contained::Args),
    /// The landlock launcher of a sandboxed command (composed by factory).
    #[command(name = "__confine", hide = true)]
    Confine(commands::confine::Args),
    /// Show or validate ~/.factory/config.toml (defaults and credential profiles).
    Config(commands::config::Args),
    /// Learned per-role playbooks: reflect on outcomes, curate, show what a role gets.
    Ace(commands::ace::Args),
    /// Serve the web dashboard: projects, experiments, live runs, insights.
    Dashboard(commands::dashboard::Args),
    /// Keep rate, mean delta, revert reasons and failing checks across projects.
    Insights(commands::insights::Args),
    /// Serve factory's tools and resources to an MCP client over stdio.
    ServeMcp(commands::serve_mcp::Args),
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    commands::install_report_handler();
    if let Err(code) = commands::config::apply_profile(cli.profile.as_deref()) {
        return code;
    }
    match cli.command {
        Command::Check(args) => commands::check::run(args),
        Command::Compile(args) => commands::compile::run(args),
        Command::Fmt(args) => commands::fmt::run(args),
        Command::Lsp(args) => commands::lsp::run(args),
        Command::Modes(args) => commands::modes::run(args),
        Command::Init(args) => commands::init::run(args),
        Command::Detect(args) => commands::detect::run(args),
        Command::Begin(args) => commands::begin::run(args),
        Command::Finalize(args) => commands::finalize::run(args),
        Command::Pr(args) => commands::pr::run(args),
        Command::Evolve(args) => commands::evolve::run(args),
        Command::Worktrees(args) => commands::worktrees::run(args),
        Command::History(args) => commands::history::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Discover(args) => commands::discover::run(args),
        Command::Precheck(args) => commands::precheck::run(args),
        Command::Skills(args) => commands::skills::run(args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Resume(args) => commands::resume::run(args),
        Command::Runs(args) => commands::runs::run(args),
        Command::Agent(args) => commands::agent::run(args),
        Command::Runners(args) => commands::runners::run(args),
        Command::Graph(args) => commands::graph::run(args),
        Command::Study(args) => commands::study::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Contained(args) => commands::contained::run(args),
        Command::Confine(args) => commands::confine::run(args),
        Command::Config(args) => commands::config::run(args, cli.profile.as_deref()),
        Command::Ace(args) => commands::ace::run(args),
        Command::Dashboard(args) => commands::dashboard::run(args),
        Command::Insights(args) => commands::insights::run(args),
        Command::ServeMcp(args) => commands::serve_mcp::run(args),
    }
}

/// Rust ignores SIGPIPE, so `factory modes | head` would fail writing to a closed pipe;
/// a command-line tool should simply stop, as `cat` does.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
