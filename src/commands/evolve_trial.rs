//! `factory evolve trial` and `factory evolve compare`: one candidate against its parent
//! on a bench suite, and the gate that reads the result (runtime/src/evolve/trial.rs).

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::evolve::bench::Suite;
use factory_runtime::evolve::search::short;
use factory_runtime::evolve::trial::{self, Trial};
use factory_runtime::sys::files::atomic_write;

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args, Debug)]
pub struct TrialArgs {
    /// The candidate: a .fwir or .fwf file, or a mode name.
    pub candidate: String,
    /// The mode it must beat (the one it was mutated from).
    #[arg(long, value_name = "MODE")]
    pub against: String,
    /// The bench suite: a directory of projects, each with project/ and replay.yaml.
    #[arg(long, value_name = "DIR")]
    pub bench: PathBuf,
    /// The project whose .factory/evolve/ keeps the results.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,
    /// Runs at the same time.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Write the trial (JSON, what `factory evolve compare` reads) here.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `factory evolve trial CANDIDATE --against MODE --bench DIR`.
pub fn trial(args: TrialArgs) -> ExitCode {
    if let Err(code) = super::require_dir(
        &args.project,
        "factory evolve trial CANDIDATE --against MODE --bench DIR --project .",
    ) {
        return code;
    }
    let project = std::path::absolute(&args.project).unwrap_or(args.project.clone());
    let suite = match Suite::load(&args.bench) {
        Ok(s) => s,
        Err(e) => return report(e, USAGE),
    };
    let (candidate, parent) = match (
        super::compile_workflow(&args.candidate, &project),
        super::compile_workflow(&args.against, &project),
    ) {
        (Ok(c), Ok(p)) => (c, p),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let Ok(factory) = std::env::current_exe() else {
        return report(
            miette::miette!("cannot find the factory binary to run the candidate with"),
            USAGE,
        );
    };
    let say = |line: &str| eprintln!("{line}");
    let tools = factory_runtime::evolve::search::Tools {
        factory: &factory,
        jobs: args.jobs,
        hook: None,
        say: &say,
    };
    let t = match trial::run(&project, &candidate, &parent, &suite, &tools) {
        Ok(t) => t,
        Err(e) => return report(e, USAGE),
    };
    if let Some(out) = &args.output {
        let json = serde_json::to_vec_pretty(&t).unwrap_or_default();
        if let Err(e) = atomic_write(out, &json) {
            return report(
                miette::miette!(
                    help = "check that the directory is writable",
                    "cannot write {}: {e}",
                    out.display()
                ),
                USAGE,
            );
        }
    }
    print_trial(&t);
    ExitCode::from(OK)
}

fn print_trial(t: &Trial) {
    let show = |name: &str, s: &trial::Side| {
        let held = s
            .holdout
            .map_or_else(|| "none".to_string(), |h| format!("{h:.4}"));
        println!(
            "{name:<9} {}  training {:.4}  held out {held}",
            short(&s.hash),
            s.train
        );
    };
    show("candidate", &t.candidate);
    show("parent", &t.parent);
    if t.spent_usd > 0.0 {
        println!("agents cost ${:.4}", t.spent_usd);
    }
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The trial file `factory evolve trial -o FILE` wrote.
    pub trial: PathBuf,
}

/// `factory evolve compare TRIAL.json`: a gate. Exit 0 and `{"verdict":"proceed"}` when
/// the candidate is better, 1 and `halt` when it is not, 2 when the file is unusable.
pub fn compare(args: CompareArgs) -> ExitCode {
    let t: Trial = match std::fs::read(&args.trial)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(t) => t,
        Err(why) => {
            return report(
                miette::miette!(
                    help = "write it with `factory evolve trial CANDIDATE --against MODE --bench DIR -o FILE`",
                    "cannot read the trial {}: {why}",
                    args.trial.display()
                ),
                USAGE,
            );
        }
    };
    let d = trial::decide(&t);
    let verdict = if d.better { "proceed" } else { "halt" };
    println!(
        "{}",
        serde_json::json!({ "verdict": verdict, "reason": d.reason })
    );
    ExitCode::from(if d.better { OK } else { FAILED })
}
