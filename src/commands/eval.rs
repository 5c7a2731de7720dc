//! `factory eval [PATH] [--json]`: score the project.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use factory_runtime::eval::{self, EvalSettings};
use factory_runtime::experiment;
use factory_runtime::project::layout::ensure_factory_dir;

use super::{FAILED, OK, USAGE, report};

/// Score the project: hygiene (build, tests, lint, format, type check), growth (test
/// count and coverage against the last kept baseline) and factory.md's project
/// dimensions, merged into one composite.
#[derive(clap::Args)]
#[command(after_help = "\
Commands are detected for Rust, Python, JavaScript/TypeScript and Go projects; a tool
that is not installed is listed as skipped. Each dimension runs with a timeout
(factory.md `test_timeout`, or a project dimension's own `timeout`); a crash or timeout
scores 0 with the reason and the rest still run. The result is also written to
.factory/last_eval.json when .factory/ exists. Exit 1 when the composite is below
factory.md's eval_threshold.

The configuration is factory.md, as precheck reads it: a .factory/config.json that says
something else is rewritten from factory.md first (the old one kept as config.json.bak),
or refused, naming both files, when it cannot be.

With --exp N the experiment's worktree (.factory/worktrees/exp-NNN) is measured
instead of your checkout, with factory.md as committed at the experiment's base commit
(what its precheck reads); the baseline and last_eval.json are still the project's. An
experiment's eval never becomes the first baseline.

Examples:
  factory eval
  factory eval . --exp 3
  factory eval ../my-project --json
  factory eval --record-baseline     # after a keep: growth is measured from here")]
pub struct Args {
    /// Project directory.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print the full result as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Record this result as the baseline growth is measured against.
    #[arg(long, conflicts_with = "exp")]
    record_baseline: bool,
    /// Measure experiment N's worktree instead of the project's checkout.
    #[arg(long, value_name = "N")]
    exp: Option<u32>,
    /// Seconds each hygiene check may take (overrides factory.md's test_timeout).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
}

pub fn run(args: Args) -> ExitCode {
    let loaded = match args.exp {
        Some(id) => experiment::eval_settings(&args.path, id).map_err(|err| {
            let code = match &err {
                experiment::ExperimentError::Config(c) => super::config_exit_code(c),
                _ => USAGE,
            };
            report(err, code)
        }),
        None => match EvalSettings::for_project(&args.path) {
            Ok((settings, refreshed)) => {
                if let Some(path) = refreshed {
                    eprintln!(
                        "refreshed {} from factory.md (it said something else; the old one is config.json.bak)",
                        path.display()
                    );
                }
                Ok(settings)
            }
            Err(err) => {
                let code = super::config_exit_code(&err);
                Err(report(err, code))
            }
        },
    };
    let mut settings = match loaded {
        Ok(settings) => settings,
        Err(code) => return code,
    };
    settings.progress = factory_runtime::sys::progress::Progress::stderr("eval");
    if let Some(secs) = args.timeout {
        settings.test_timeout = Duration::from_secs(secs.max(1));
    }
    let measured = match args.exp {
        Some(id) => experiment::eval(&args.path, id, &settings).map_err(miette::Report::new),
        None => eval::run_eval(&args.path, &settings).map_err(miette::Report::new),
    };
    let mut result = match measured {
        Ok(r) => r,
        Err(err) => return report(err, USAGE),
    };
    let recorded = if args.exp.is_some() {
        Ok(None)
    } else if args.record_baseline {
        if let Err(err) = ensure_factory_dir(&args.path) {
            return report(err, USAGE);
        }
        eval::record_baseline(&args.path, &result, "manual").map(Some)
    } else {
        eval::record_first_baseline(&args.path, &result)
    };
    match recorded {
        Ok(Some(b)) if !args.json => eprintln!(
            "baseline recorded ({}): {}, composite {:.3}",
            b.source,
            b.test_count.map_or_else(
                || "no test count".to_string(),
                |n| format!("{n} test{}", if n == 1 { "" } else { "s" }),
            ),
            result.composite.total + 0.0
        ),
        Ok(_) => {}
        Err(err) => return report(err, USAGE),
    }
    if args.json {
        result.project = result
            .project
            .canonicalize()
            .unwrap_or(result.project.clone());
        if let Err(code) = super::print_json(&result) {
            return code;
        }
    } else {
        print!("{}", result.render_table());
    }
    for r in result
        .composite
        .results
        .iter()
        .filter(|r| r.details.contains(eval::declared::BARE_NUMBER_NOTE))
    {
        eprintln!("warning: {}", r.details);
    }
    ExitCode::from(if result.composite.passed { OK } else { FAILED })
}
