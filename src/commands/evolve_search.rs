//! `factory evolve MODE --bench DIR`: the outer loop's search (runtime/src/evolve/search.rs).

use std::path::PathBuf;
use std::process::ExitCode;

use factory_runtime::evolve::bench::Suite;
use factory_runtime::evolve::search::{self, Settings, short};
use factory_runtime::evolve::suggest::CommandSuggest;

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args, Debug)]
pub struct PromoteArgs {
    /// The candidate (`evolve-gen<N>-<id>`, as `factory modes` lists it).
    pub candidate: String,
    /// The name of the new mode.
    #[arg(long = "as", value_name = "MODE")]
    pub as_name: String,
    /// The project.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,
}

/// `factory evolve promote CANDIDATE --as MODE`.
pub fn promote(args: PromoteArgs) -> ExitCode {
    if let Err(code) = super::require_dir(
        &args.project,
        "factory evolve promote NAME --as MODE --project .",
    ) {
        return code;
    }
    match factory_runtime::evolve::modes::promote(&args.project, &args.candidate, &args.as_name) {
        Ok(done) => {
            println!(
                "promoted {} to the mode `{}`: {} (run it with `factory run {}`)",
                args.candidate,
                args.as_name,
                done.fwir.display(),
                args.as_name
            );
            match done.fwf {
                Ok(path) => println!(
                    "wrote {}, its editable source: it compiles to the same IR, and `factory run {}` uses it",
                    path.display(),
                    args.as_name
                ),
                Err(why) => println!("no .fwf was written: {why}"),
            }
            ExitCode::from(OK)
        }
        Err(e) => report(e, FAILED),
    }
}

/// The search's arguments.
#[derive(clap::Args, Debug)]
pub struct SearchArgs {
    /// The mode to start from (a built-in mode, a .fwf or a .fwir file).
    pub mode: Option<String>,
    /// The bench suite: a directory of projects, each with project/ and replay.yaml.
    #[arg(long, value_name = "DIR")]
    pub bench: Option<PathBuf>,
    /// The project whose .factory/evolve/ keeps the search.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,
    /// Generations to run.
    #[arg(long, default_value_t = 5)]
    pub generations: u32,
    /// Children per generation.
    #[arg(long, default_value_t = 8)]
    pub population: usize,
    /// The random seed: the same seed gives the same archive.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Candidate runs at the same time.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Stop after this many generations without a better candidate.
    #[arg(long, default_value_t = 5)]
    pub plateau: u32,
    /// Stop after this many minutes.
    #[arg(long, value_name = "MINUTES")]
    pub max_minutes: Option<f64>,
    /// Stop once the candidates' agents have cost this many US dollars (as the runners
    /// report it; scripted agents report what their script says).
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Ask this command (an agent) for task rewrites and new knob values where the
    /// offline lists run out; see docs/evolve.md.
    #[arg(long, value_name = "CMD")]
    pub suggest: Option<String>,
}

pub fn run(args: SearchArgs) -> ExitCode {
    let (Some(mode), Some(bench)) = (args.mode.as_deref(), args.bench.as_deref()) else {
        return report(
            miette::miette!(
                help = "for example: factory evolve improve --bench tests/bench-suite --generations 5 --seed 1",
                "name the mode to evolve and the bench suite to score it on"
            ),
            USAGE,
        );
    };
    if let Err(code) =
        super::require_dir(&args.project, "factory evolve MODE --bench DIR --project .")
    {
        return code;
    }
    let suite = match Suite::load(bench) {
        Ok(s) => s,
        Err(e) => return report(e, USAGE),
    };
    let project = std::path::absolute(&args.project).unwrap_or(args.project.clone());
    let seed = match super::compile_workflow(mode, &project) {
        Ok(ir) => ir,
        Err(code) => return code,
    };
    let Ok(factory) = std::env::current_exe() else {
        return report(
            miette::miette!("cannot find the factory binary to run candidates with"),
            USAGE,
        );
    };
    let settings = Settings {
        mode: mode.to_string(),
        seed: args.seed,
        generations: args.generations,
        population: args.population,
        plateau: args.plateau,
        max_minutes: args.max_minutes,
        max_cost: args.max_cost,
    };
    eprintln!(
        "evolving {mode} on {} ({} training, {} held-out projects), seed {}",
        bench.display(),
        suite.train().len(),
        suite.holdout().len(),
        args.seed
    );
    let say = |line: &str| eprintln!("{line}");
    let hook = args
        .suggest
        .as_deref()
        .map(|cmd| CommandSuggest::new(cmd, &project));
    let tools = search::Tools {
        factory: &factory,
        jobs: args.jobs,
        hook: hook
            .as_ref()
            .map(|h| h as &dyn factory_runtime::evolve::Suggest),
        say: &say,
    };
    let outcome = match search::run(&project, &seed, &suite, &settings, &tools) {
        Ok(o) => o,
        Err(e) => return report(e, USAGE),
    };
    println!("stopped: {}", outcome.stopped);
    println!(
        "evaluated {} candidates ({} more from the cache); {} cells in the archive",
        outcome.evaluated, outcome.cache_hits, outcome.cells
    );
    if outcome.spent_usd > 0.0 {
        println!("agents cost ${:.4}", outcome.spent_usd);
    }
    println!(
        "seed {}: {:.4}",
        short(&outcome.seed.hash),
        outcome.seed.fitness
    );
    println!(
        "best {}: {:.4} (generation {}, {})",
        short(&outcome.best.hash),
        outcome.best.fitness,
        outcome.best.generation,
        outcome.best.op.as_deref().unwrap_or("the seed")
    );
    match (outcome.holdout_seed, outcome.holdout_best) {
        (Some(s), Some(b)) => println!("held out: seed {s:.4}, best {b:.4}"),
        _ => println!("held out: no held-out projects; generalization is unchecked"),
    }
    for name in &outcome.registered {
        println!(
            "registered the mode {name} (`factory run {name}`; `factory evolve promote {name} --as NAME` keeps it)"
        );
    }
    if outcome.overfit {
        println!("FLAGGED: the best wins only on the training projects; it is not to be promoted");
        return ExitCode::from(FAILED);
    }
    ExitCode::from(OK)
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The project whose .factory/evolve/ holds the search.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,
    /// text (default), or the best candidate's graph as mermaid or dot with the diff on top.
    #[arg(long, default_value = "text", value_parser = ["text", "mermaid", "dot"])]
    pub format: String,
}

/// `factory evolve report`.
pub fn report_search(args: ReportArgs) -> ExitCode {
    use factory_runtime::evolve::report::{Picture, render};
    if let Err(code) = super::require_dir(&args.project, "factory evolve report --project .") {
        return code;
    }
    let picture = match args.format.as_str() {
        "mermaid" => Picture::Mermaid,
        "dot" => Picture::Dot,
        _ => Picture::Text,
    };
    match render(&args.project, picture) {
        Ok(text) => {
            print!("{text}");
            ExitCode::from(OK)
        }
        Err(e) => report(e, USAGE),
    }
}
