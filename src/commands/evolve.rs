//! `factory evolve`: the search (`factory evolve MODE --bench DIR`, in
//! [`evolve_search`](super::evolve_search)) and its subcommands — `mutate`: mutants of a
//! workflow's IR, each checked by the compiler's graph rules.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use factory_runtime::evolve::suggest::CommandSuggest;
use factory_runtime::evolve::{self, Op, Rules, Source, output};

use super::{FAILED, OK, USAGE, report};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Without a subcommand: the search.
    #[command(flatten)]
    search: super::evolve_search::SearchArgs,
}

#[derive(Subcommand)]
enum Action {
    /// Make a registered candidate a mode of the project, if it is unchanged.
    Promote(super::evolve_search::PromoteArgs),
    /// The search so far: fitness per generation, the archive, the best against the seed.
    Report(super::evolve_search::ReportArgs),
    /// Score a candidate and the mode it came from on a bench suite (what `compare` reads).
    #[command(after_help = "\
Both are run with the real executor on every project of the suite (the held-out ones
too); results are cached by canonical hash in .factory/evolve/trials.json, so a graph
is never run twice on one suite. Exit status: 0 scored, 2 bad input.

Example:
  factory evolve trial candidate.fwir --against improve --bench tests/bench-suite -o trial.json")]
    Trial(super::evolve_trial::TrialArgs),
    /// The gate after `trial`: proceed when the candidate is better, else halt.
    #[command(after_help = "\
Better: a higher mean gain than the parent on the training projects, and no lower on the
held-out ones. Prints {\"verdict\": ..., \"reason\": ...} for a `gate by fn`.
Exit status: 0 proceed, 1 halt, 2 the trial file cannot be read.")]
    Compare(super::evolve_trial::CompareArgs),
    /// Write N valid mutants of a workflow (IR text), made by the mutation operators.
    #[command(after_help = "\
Operators: NODE_INSERT, NODE_REMOVE, EDGE_REDIRECT, PARALLELIZE, SERIALIZE, PARAM_MUTATE,
PROMPT_MUTATE, KNOB_MUTATE (any case, - or _). Each candidate passes the rules of
`factory check`; rejected ones are counted per operator. --steps N applies N operators
in a row to make each candidate. With --count 1, -o is a file;
with more, a directory that gets cand-001.fwir, cand-002.fwir, ... (see docs/evolve.md).

Exit status: 0 at least one candidate written, 1 none could be made, 2 bad input.

Examples:
  factory evolve mutate improve.fwir -o candidate.fwir
  factory evolve mutate workflows/qa.fwf --op knob_mutate --op prompt_mutate --count 4 --seed 7 -o cands/")]
    Mutate {
        /// The workflow: an IR text file (.fwir), a .fwf file (its first workflow) or
        /// a mode name.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Only these operators (repeat the flag, or separate with commas); default all.
        #[arg(long = "op", value_name = "OP", value_delimiter = ',')]
        ops: Vec<String>,
        /// How many distinct valid candidates to write.
        #[arg(long, default_value_t = 1, value_name = "N")]
        count: usize,
        /// Operators applied in a row to make each candidate (each step valid).
        #[arg(long, default_value_t = 1, value_name = "N")]
        steps: usize,
        /// Seed of the random choices: the same seed gives the same candidates. A
        /// number, or any text (such as a run id), which is hashed.
        #[arg(long, default_value = "0", value_name = "S")]
        seed: String,
        /// Where to write: a file when N is 1, else a directory.
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// Ask this command (an agent) for task rewrites and new knob values; it reads
        /// the question from $FACTORY_PROMPT_FILE and answers on stdout.
        #[arg(long, value_name = "CMD")]
        suggest: Option<String>,
    },
}

pub fn run(args: Args) -> ExitCode {
    match args.action {
        None => super::evolve_search::run(args.search),
        Some(Action::Promote(p)) => super::evolve_search::promote(p),
        Some(Action::Report(r)) => super::evolve_search::report_search(r),
        Some(Action::Trial(t)) => super::evolve_trial::trial(t),
        Some(Action::Compare(c)) => super::evolve_trial::compare(c),
        Some(Action::Mutate {
            file,
            ops,
            count,
            steps,
            seed,
            output,
            suggest,
        }) => mutate(
            file,
            ops,
            (count, steps),
            (evolve::seed_from(&seed), suggest),
            output,
        ),
    }
}

fn mutate(
    file: PathBuf,
    ops: Vec<String>,
    (count, steps): (usize, usize),
    (seed, suggest): (u64, Option<String>),
    out: PathBuf,
) -> ExitCode {
    let ops = match parse_ops(&ops) {
        Ok(ops) => ops,
        Err(code) => return code,
    };
    if count == 0 || steps == 0 {
        return report(
            miette::miette!(
                help = "ask for at least one: --count 1 --steps 1",
                "--count 0 or --steps 0 asks for nothing"
            ),
            USAGE,
        );
    }
    if let Err(e) = output::check_target(&out, count) {
        return report(e, USAGE);
    }
    let project = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let parent = match super::compile_workflow(&file.to_string_lossy(), &project) {
        Ok(ir) => ir,
        Err(code) => return code,
    };
    let rules = Rules::near(if file.is_file() { &file } else { &project });
    let hook = suggest.map(|cmd| CommandSuggest::new(&cmd, &project));
    let mut src = Source::new(seed);
    if let Some(h) = &hook {
        src = src.with_hook(h);
    }
    let got = evolve::generate_composed(&parent, &ops, count, steps, &rules, &mut src);
    for why in hook.iter().flat_map(|h| h.declined()) {
        eprintln!("the suggestion was not used: {why}");
    }
    let written = match output::write_candidates(&out, count, &got.candidates) {
        Ok(w) => w,
        Err(e) => return report(e, USAGE),
    };
    for (path, c) in written.iter().zip(&got.candidates) {
        println!("wrote {}  {}  {}", path.display(), c.op, &c.hash[..12]);
    }
    print!("{}", got.render_stats());
    if got.candidates.is_empty() {
        eprintln!(
            "no valid candidate could be made from {} with {}",
            file.display(),
            ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ")
        );
        return ExitCode::from(FAILED);
    }
    if got.candidates.len() < count {
        eprintln!(
            "only {} of {count} candidates could be made (see the counts above)",
            got.candidates.len()
        );
    }
    ExitCode::from(OK)
}

/// The operators named on the command line, or all of them.
fn parse_ops(names: &[String]) -> Result<Vec<Op>, ExitCode> {
    if names.is_empty() {
        return Ok(Op::ALL.to_vec());
    }
    let mut ops = Vec::new();
    for name in names {
        let Some(op) = Op::parse(name) else {
            let known: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
            return Err(report(
                miette::miette!(
                    help = format!("use one of {}", known.join(", ")),
                    "unknown operator `{name}`"
                ),
                USAGE,
            ));
        };
        if !ops.contains(&op) {
            ops.push(op);
        }
    }
    Ok(ops)
}
