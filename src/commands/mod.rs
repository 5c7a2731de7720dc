//! One module per command. Each exposes `Args` (clap) and `run(Args) -> ExitCode`.
//!
//! Exit codes are shared by every command: 0 success, 1 the command ran and found a
//! failure (diagnostics with errors, a failed check), 2 usage or I/O problems.

pub mod check;
mod check_fix;
mod check_outcome;
pub mod compile;
pub mod fmt;
pub mod lsp;
pub mod modes;

use std::process::ExitCode;

pub mod ace;
pub mod agent;
pub mod begin;
pub mod config;
pub mod confine;
pub mod contained;
pub mod dashboard;
pub mod demo;
pub mod detect;
pub mod discover;
pub mod doctor;
pub mod eval;
pub mod evolve;
pub mod evolve_search;
pub mod evolve_trial;
pub mod finalize;
pub mod graph;
pub mod history;
pub mod init;
pub mod insights;
pub mod pr;
pub mod precheck;
pub mod resume;
pub mod run;
mod run_end;
pub mod runners;
pub mod runs;
pub mod serve_mcp;
pub mod skills;
pub mod study;
pub mod worktrees;

/// The command ran and everything is fine.
pub const OK: u8 = 0;
/// The command ran and found a problem the user must fix (errors, failed checks).
pub const FAILED: u8 = 1;
/// The command could not run: bad usage, unreadable files, I/O errors.
pub const USAGE: u8 = 2;
/// A run completed and judged its experiments, and kept none of them: a script's
/// `factory run … && git merge …` stops here.
pub const NOT_KEPT: u8 = 3;

/// The exit code for a configuration that could not be loaded. A factory.md (or its
/// derived config.json) that is wrong is a problem the user fixes by editing it (1); no
/// configuration at all, an unreadable file, an unwritable `.factory/` or a base commit
/// without factory.md means the command could not run (2).
pub fn config_exit_code(err: &factory_runtime::project::config::ConfigError) -> u8 {
    use factory_runtime::project::config::ConfigError;
    match err {
        ConfigError::FactoryMd { .. } | ConfigError::InvalidJson { .. } => FAILED,
        ConfigError::MissingFactoryMd { .. }
        | ConfigError::Missing { .. }
        | ConfigError::NotCommitted { .. }
        | ConfigError::Stale { .. }
        | ConfigError::Layout(_)
        | ConfigError::Io { .. } => USAGE,
    }
}

/// Refuses a project path that is not a directory, naming it: a mistyped path must not
/// be answered as if it were a project with nothing in it (no modes of its own, no
/// runs, no graph). `example` is the command line the help suggests.
pub fn require_dir(path: &std::path::Path, example: &str) -> Result<(), ExitCode> {
    if path.is_dir() {
        return Ok(());
    }
    Err(report(
        miette::miette!(
            help = format!("pass the project's directory, e.g. `{example}`"),
            "{} is not a directory",
            path.display()
        ),
        USAGE,
    ))
}

/// The IR of a workflow argument (a `.fwf` or `.fwir` file, or a mode name) resolved from
/// `project`; otherwise its findings (or why it cannot be read) are reported and the
/// usage exit code returned. One wording for every command that takes a workflow to work on.
pub fn compile_workflow(
    what: &str,
    project: &std::path::Path,
) -> Result<factory_compiler::ir::Ir, ExitCode> {
    factory_compiler::driver::compile(what, project, None)
        .map(|compiled| compiled.ir)
        .map_err(|e| compile_failed(e, USAGE))
}

/// Reports a workflow that did not compile, the one way every command does: each
/// finding with its place and fix, then the error. `invalid` is the exit code when
/// the workflow has errors; an unreadable file or a missing workflow is a usage error.
pub fn compile_failed(err: factory_compiler::driver::CompileError, invalid: u8) -> ExitCode {
    for l in err.located() {
        eprintln!("{:?}", l.diagnostic.to_report(l.source.clone()));
    }
    let code = match err {
        factory_compiler::driver::CompileError::Invalid(_) => invalid,
        _ => USAGE,
    };
    report(err, code)
}

/// Prints an error as a miette report on stderr and returns the exit code for it.
pub fn report(err: impl Into<miette::Report>, code: u8) -> ExitCode {
    let text = format!("{:?}", err.into());
    eprintln!("{}", factory_runtime::sys::redact::redact(&text));
    ExitCode::from(code)
}

/// Installs the miette handler once, so reports render rustc-style, and a panic hook
/// that prints a short message instead of a Rust backtrace.
pub fn install_report_handler() {
    let _ = miette::set_hook(Box::new(|_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .terminal_links(false)
                .context_lines(1)
                .build(),
        )
    }));
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: factory hit an internal bug{location}: {info}\n\
             help: this is never your input's fault; please report it with the command you ran"
        );
    }));
}

/// How the agent runner is picked: the same three flags on every command that runs one
/// or checks one (`run`, `agent`, `doctor`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunnerArgs {
    /// The agent runner: claude, codex, opencode, gemini, exec or replay.
    #[arg(long, value_name = "NAME")]
    pub runner: Option<String>,
    /// exec: the agent command; placeholders {prompt_file} {output} {role} {cwd} {model} {project}.
    #[arg(long, value_name = "CMD")]
    pub agent_cmd: Option<String>,
    /// replay: the YAML script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<std::path::PathBuf>,
}

/// Prints `value` as pretty JSON on stdout, the one `--json` output of every command;
/// a value that cannot be encoded is reported, with the usage exit code.
pub fn print_json(value: &impl serde::Serialize) -> Result<(), ExitCode> {
    match serde_json::to_string_pretty(value) {
        Ok(j) => {
            println!("{j}");
            Ok(())
        }
        Err(e) => Err(report(
            miette::miette!("cannot encode the output as JSON: {e}"),
            USAGE,
        )),
    }
}
