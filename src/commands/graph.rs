//! `factory graph extract|update|status|query|explain|path|hotspots`: the code graph.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use factory_graph::query::{self, Lookup};
use factory_graph::{CodeGraph, GraphError};
use factory_runtime::study::graph_path;

use super::{FAILED, OK, USAGE, report};

/// Build and query the code graph (.factory/graph.json): files, definitions and how
/// they relate (contains, imports, calls, inherits, implements, tests).
#[derive(clap::Args)]
#[command(after_help = "\
Every file git tracks in Rust, Python, JavaScript/TypeScript or Go is parsed with
tree-sitter; other files are counted and listed. The graph is a NetworkX node-link
document: `networkx.node_link_graph(json.load(f), edges=\"links\")` loads it.

Examples:
  factory graph extract
  factory graph update                 # re-parse only files whose content changed
  factory graph query parse --json
  factory graph explain src/lib.rs::Parser::parse
  factory graph path main parse
  factory graph hotspots --commits 200")]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Parse every tracked source file and write .factory/graph.json.
    #[command(after_help = "Example:\n  factory graph extract ../my-project")]
    Extract(BuildArgs),
    /// Re-parse the files that changed since the stored graph (extract if none).
    #[command(after_help = "Example:\n  factory graph update --json")]
    Update(BuildArgs),
    /// Built at which commit, stale or not, counts per language and kind.
    #[command(after_help = "Exit 1 when there is no graph.\n\nExample:\n  factory graph status")]
    Status(StatusArgs),
    /// Definitions whose name matches NAME, with file:line.
    #[command(
        after_help = "Exit 1 when nothing matches.\n\nExample:\n  factory graph query total_area"
    )]
    Query(QueryArgs),
    /// What a node contains, calls, is called by, imports, ...
    #[command(after_help = "\
NODE is an id as `query` prints it (path::Type::name), a file path, or a name
only one definition has.

Example:
  factory graph explain src/shapes.rs::Circle")]
    Explain(ExplainArgs),
    /// The shortest chain of relations from A to B.
    #[command(after_help = "\
Links are followed in their direction first; when no such path exists, in either
direction (the output says so).

Example:
  factory graph path main square")]
    Path(PathArgs),
    /// Definitions with the highest fan-in × git churn.
    #[command(after_help = "Example:\n  factory graph hotspots --commits 50 --limit 20")]
    Hotspots(HotspotArgs),
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Project root (may be a subdirectory of a git repository).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct StatusArgs {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct QueryArgs {
    /// A definition's name (exact, ignoring case; else a substring of name or id).
    name: String,
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ExplainArgs {
    /// Node id, file path or unique name.
    node: String,
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PathArgs {
    /// Where the path starts (id, file path or unique name).
    from: String,
    /// Where it ends.
    to: String,
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct HotspotArgs {
    /// Project root.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// How many recent commits to measure churn over.
    #[arg(long, default_value_t = 100, value_name = "N")]
    commits: usize,
    /// How many entries per list.
    #[arg(long, default_value_t = 10)]
    limit: usize,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        Sub::Extract(a) => build(a, false),
        Sub::Update(a) => build(a, true),
        Sub::Status(a) => status(a),
        Sub::Query(a) => find(a),
        Sub::Explain(a) => explain(a),
        Sub::Path(a) => path(a),
        Sub::Hotspots(a) => hotspots(a),
    }
}

/// Missing or unreadable graphs are a finding (exit 1); the rest are I/O (exit 2).
fn fail(err: GraphError) -> ExitCode {
    let code = match err {
        GraphError::Missing { .. } | GraphError::Corrupt { .. } => FAILED,
        _ => USAGE,
    };
    report(err, code)
}

fn print_json(value: &impl serde::Serialize) -> ExitCode {
    super::print_json(value).map_or_else(|code| code, |()| ExitCode::from(OK))
}

fn load(project: &Path) -> Result<CodeGraph, ExitCode> {
    super::require_dir(project, "factory graph status .")?;
    factory_graph::load(&graph_path(project)).map_err(fail)
}

fn build(args: BuildArgs, incremental: bool) -> ExitCode {
    if let Err(code) = super::require_dir(&args.path, "factory graph extract .") {
        return code;
    }
    let out = graph_path(&args.path);
    let started = Instant::now();
    let previous = if incremental {
        match factory_graph::load(&out) {
            Ok(g) => Some(g),
            Err(GraphError::Missing { .. }) => {
                eprintln!("note: no graph yet at {}; extracting it", out.display());
                None
            }
            Err(err) => return fail(err),
        }
    } else {
        None
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("parsing {pos}/{len} files {wide_bar}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let tick = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let progress: Option<factory_graph::Progress> = if bar.is_some() { Some(&tick) } else { None };
    let built = match previous {
        Some(g) => factory_graph::update(&args.path, g, progress),
        None => factory_graph::extract(&args.path, progress),
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let (graph, stats) = match built {
        Ok(b) => b,
        Err(err) => return fail(err),
    };
    if let Err(err) = factory_graph::save(&graph, &out) {
        return fail(err);
    }
    let files = graph.files().count();
    let definitions = graph
        .nodes
        .iter()
        .filter(|n| n.kind.is_definition())
        .count();
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        return print_json(&serde_json::json!({
            "graph": out,
            "built_at_commit": graph.graph.built_at_commit,
            "files": files,
            "definitions": definitions,
            "links": graph.links.len(),
            "stats": stats,
            "seconds": seconds,
        }));
    }
    println!(
        "{} source files ({} parsed, {} reused, {} removed), {} other files, {} definitions, {} links -> {} in {seconds:.2} s",
        files,
        stats.parsed,
        stats.reused,
        stats.removed.len(),
        stats.other_files,
        definitions,
        graph.links.len(),
        out.display()
    );
    ExitCode::from(OK)
}

fn status(args: StatusArgs) -> ExitCode {
    let graph = match load(&args.path) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let drift = match factory_graph::drift(&args.path, &graph) {
        Ok(d) => d,
        Err(err) => return fail(err),
    };
    let s = query::status(&graph, drift);
    if args.json {
        return print_json(&s);
    }
    let short = |c: &Option<String>| {
        c.as_deref()
            .map_or("(no commit)".to_owned(), |c| c.chars().take(12).collect())
    };
    println!("built at   {}", short(&s.built_at_commit));
    println!("HEAD       {}", short(&s.head));
    if s.stale {
        println!(
            "stale      {} changed, {} added, {} removed since; run `factory graph update`",
            s.changed.len(),
            s.added.len(),
            s.removed.len()
        );
    } else {
        println!("current    yes");
    }
    for (lang, c) in &s.languages {
        println!("{lang:<10} {} files, {} lines", c.files, c.lines);
    }
    if !s.other_languages.is_empty() {
        let other: Vec<String> = s
            .other_languages
            .iter()
            .map(|(e, n)| format!("{e} {n}"))
            .collect();
        println!("not parsed {}", other.join(", "));
    }
    let kinds: Vec<String> = s.kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!("nodes      {}", kinds.join(", "));
    let rels: Vec<String> = s
        .relations
        .iter()
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    println!("links      {}", rels.join(", "));
    for f in &s.parse_errors {
        println!("parse error in {f}");
    }
    for f in &s.non_utf8 {
        println!("not UTF-8: {f}");
    }
    ExitCode::from(OK)
}

fn find(args: QueryArgs) -> ExitCode {
    let graph = match load(&args.path) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let hits = query::find(&graph, &args.name);
    if args.json {
        let code = print_json(&hits);
        return if hits.is_empty() {
            ExitCode::from(FAILED)
        } else {
            code
        };
    }
    if hits.is_empty() {
        eprintln!("no definition matches `{}`", args.name);
        return ExitCode::from(FAILED);
    }
    for h in &hits {
        println!("{}:{}  {}  {}", h.file, h.line, h.kind, h.id);
    }
    ExitCode::from(OK)
}

fn resolve<'g>(graph: &'g CodeGraph, spec: &str) -> Result<&'g factory_graph::Node, ExitCode> {
    match query::lookup(graph, spec) {
        Lookup::Found(n) => Ok(n),
        Lookup::Ambiguous(hits) => {
            let list: Vec<String> = hits
                .iter()
                .map(|h| format!("  {}  ({}:{})", h.id, h.file, h.line))
                .collect();
            Err(report(
                miette::miette!(
                    help = "pass one of these ids instead",
                    "`{spec}` names {} definitions:\n{}",
                    hits.len(),
                    list.join("\n")
                ),
                FAILED,
            ))
        }
        Lookup::NotFound => Err(report(
            miette::miette!(
                help = "find the id with `factory graph query NAME`",
                "no node `{spec}` in the graph"
            ),
            FAILED,
        )),
    }
}

fn explain(args: ExplainArgs) -> ExitCode {
    let graph = match load(&args.path) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let node = match resolve(&graph, &args.node) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let e = query::explain(&graph, node);
    if args.json {
        return print_json(&e);
    }
    let place = match (&e.node.file, e.node.line) {
        (Some(f), Some(l)) => format!(" at {f}:{l}"),
        _ => String::new(),
    };
    println!("{} {}{place}", e.node.kind, e.node.id);
    let sections = e
        .outgoing
        .iter()
        .map(|(r, ns)| (query::relation_phrase(*r, true), ns))
        .chain(
            e.incoming
                .iter()
                .map(|(r, ns)| (query::relation_phrase(*r, false), ns)),
        );
    for (phrase, neighbors) in sections {
        println!("{phrase}:");
        for n in neighbors {
            let at = match (&n.file, n.line) {
                (Some(f), Some(l)) => format!("  ({f}:{l})"),
                _ => String::new(),
            };
            let times = if n.count > 1 {
                format!(" x{}", n.count)
            } else {
                String::new()
            };
            println!("  {} {}{times}{at}", n.kind, n.id);
        }
    }
    ExitCode::from(OK)
}

fn path(args: PathArgs) -> ExitCode {
    let graph = match load(&args.path) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let (from, to) = match (resolve(&graph, &args.from), resolve(&graph, &args.to)) {
        (Ok(a), Ok(b)) => (a.id.clone(), b.id.clone()),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let found = query::shortest_path(&graph, &from, &to);
    if args.json {
        let value = match &found {
            Some((steps, directed)) => {
                serde_json::json!({"from": from, "to": to, "directed": directed, "steps": steps})
            }
            None => serde_json::json!({"from": from, "to": to, "steps": null}),
        };
        let code = print_json(&value);
        return if found.is_some() {
            code
        } else {
            ExitCode::from(FAILED)
        };
    }
    let Some((steps, directed)) = found else {
        eprintln!("no path between {from} and {to}");
        return ExitCode::from(FAILED);
    };
    if !directed {
        println!("(no path along link directions; this one follows some links backwards)");
    }
    println!("{from}");
    for s in &steps {
        if s.forward {
            println!("  -{}-> {}", s.relation, s.to);
        } else {
            println!("  <-{}- {}", s.relation, s.to);
        }
    }
    ExitCode::from(OK)
}

fn hotspots(args: HotspotArgs) -> ExitCode {
    let graph = match load(&args.path) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let h = match factory_graph::hotspots::hotspots(&args.path, &graph, args.commits, args.limit) {
        Ok(h) => h,
        Err(err) => return fail(err),
    };
    if args.json {
        return print_json(&h);
    }
    println!(
        "fan-in x churn over the last {} commits:",
        h.commits_scanned
    );
    if h.hotspots.is_empty() {
        println!("  (no definition both depended on and changed)");
    }
    for s in &h.hotspots {
        println!(
            "  {:>4}  {} {}  ({}:{}, fan-in {}, churn {})",
            s.score, s.kind, s.id, s.file, s.line, s.fan_in, s.churn
        );
    }
    println!("most connected:");
    for s in &h.most_connected {
        println!(
            "  {:>4}  {} {}  ({}:{})",
            s.fan_in, s.kind, s.id, s.file, s.line
        );
    }
    println!("most changed files:");
    for f in &h.most_changed_files {
        println!("  {:>4}  {}", f.commits, f.file);
    }
    ExitCode::from(OK)
}
