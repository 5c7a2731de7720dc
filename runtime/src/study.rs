//! The study step (spec §8.17): `.factory/strategy/observations.md`, a deterministic
//! digest of the project for the researcher — its shape, hot spots, recent git
//! history, past experiments and their lessons, reverted hypotheses to avoid, and the
//! eval's weakest dimensions. No model is called.
//!
//! Study keeps the code graph current itself: it updates `.factory/graph.json` (or
//! extracts it when missing), so the hot spots are never stale. Anything unavailable
//! (no git repository, no experiments, no eval yet) is said so in the report; only a
//! failure to write the report fails.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use factory_graph::{CodeGraph, GraphError, Kind};

use crate::project::layout::FactoryPaths;
use crate::store::{ExperimentStore, Verdict};

/// How many recent commits the report lists, and churn is measured over.
const RECENT_COMMITS: usize = 10;
const CHURN_COMMITS: usize = 100;
const HOTSPOTS: usize = 10;
const EXPERIMENTS: usize = 15;
const WEAKEST: usize = 3;

/// `.factory/graph.json`, the code graph's home.
pub fn graph_path(project: &Path) -> PathBuf {
    FactoryPaths::new(project).dir().join("graph.json")
}

/// `.factory/strategy/observations.md`.
pub fn observations_path(project: &Path) -> PathBuf {
    FactoryPaths::new(project)
        .strategy_dir()
        .join("observations.md")
}

/// What [`study`] did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Studied {
    /// Where the report was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
    /// `updated`, `extracted`, or why there is no graph.
    pub graph: String,
    /// Experiments read from the store.
    pub experiments: usize,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum StudyError {
    #[error("{0} does not exist or is not a directory")]
    #[diagnostic(help("pass the project's directory, e.g. `factory study .`"))]
    NoProject(PathBuf),
    #[error("cannot write {path}: {source}")]
    #[diagnostic(help("check that .factory/strategy/ is writable"))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Refreshes the code graph, writes the observations report and says what it did.
pub fn study(project: &Path) -> Result<Studied, StudyError> {
    if !project.is_dir() {
        return Err(StudyError::NoProject(project.to_path_buf()));
    }
    let (graph, graph_note) = refresh_graph(project);
    let mut out = String::new();
    let name = project
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "project".to_owned());
    let _ = writeln!(out, "# Observations: {name}\n");
    let _ = writeln!(
        out,
        "Written by `factory study` from the code graph, git, `.factory/results.tsv`, \
         `.factory/archive/` and `.factory/last_eval.json`. Code graph: {graph_note}.\n"
    );
    shape(&mut out, project, graph.as_ref());
    hot_spots(&mut out, project, graph.as_ref());
    recent_history(&mut out, project);
    let experiments = past_experiments(&mut out, project);
    weakest_dimensions(&mut out, project);
    let path = observations_path(project);
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        crate::sys::files::atomic_write(&path, out.as_bytes())
    };
    write().map_err(|source| StudyError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(Studied {
        path,
        bytes: out.len(),
        graph: graph_note,
        experiments,
    })
}

fn refresh_graph(project: &Path) -> (Option<CodeGraph>, String) {
    let path = graph_path(project);
    let built = match factory_graph::load(&path) {
        Ok(g) => factory_graph::update(project, g, None).map(|(g, _)| (g, "updated")),
        Err(GraphError::Missing { .. } | GraphError::Corrupt { .. }) => {
            factory_graph::extract(project, None).map(|(g, _)| (g, "extracted"))
        }
        Err(e) => Err(e),
    };
    match built {
        Ok((g, how)) => match factory_graph::save(&g, &path) {
            Ok(()) => (Some(g), format!("{how} (`.factory/graph.json`)")),
            Err(e) => (Some(g), format!("{how}, but not saved: {e}")),
        },
        Err(e) => (None, format!("not available ({e})")),
    }
}

fn shape(out: &mut String, project: &Path, graph: Option<&CodeGraph>) {
    out.push_str("## Shape\n\n");
    match graph {
        Some(g) => {
            let s = factory_graph::query::status(g, factory_graph::Drift::default());
            let (files, lines) = s
                .languages
                .values()
                .fold((0, 0), |(f, l), c| (f + c.files, l + c.lines));
            let _ = writeln!(
                out,
                "- {files} source files, {lines} lines; {} other tracked files",
                g.graph.other_files.len()
            );
            for (lang, c) in &s.languages {
                let _ = writeln!(out, "- {lang}: {} files, {} lines", c.files, c.lines);
            }
            if !s.other_languages.is_empty() {
                let other: Vec<String> = s
                    .other_languages
                    .iter()
                    .map(|(e, n)| format!("{e} {n}"))
                    .collect();
                let _ = writeln!(out, "- not parsed: {}", other.join(", "));
            }
            let kinds: Vec<String> = s
                .kinds
                .iter()
                .filter(|(k, _)| k.is_definition())
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            let _ = writeln!(out, "- definitions: {}", kinds.join(", "));
            let test_files: Vec<&str> = g
                .files()
                .filter(|f| f.test)
                .map(|f| f.id.as_str())
                .collect();
            let test_fns = g
                .nodes
                .iter()
                .filter(|n| n.test && n.kind != Kind::File)
                .count();
            let dirs: BTreeSet<&str> = test_files
                .iter()
                .map(|f| f.rsplit_once('/').map_or(".", |(d, _)| d))
                .collect();
            let _ = writeln!(
                out,
                "- tests: {} test files{}, {test_fns} test functions or classes",
                test_files.len(),
                if dirs.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (in {})",
                        dirs.iter().copied().collect::<Vec<_>>().join(", ")
                    )
                }
            );
            if !s.parse_errors.is_empty() {
                let _ = writeln!(
                    out,
                    "- files with syntax errors: {}",
                    s.parse_errors.join(", ")
                );
            }
        }
        None => out.push_str("- no code graph, so no file or line counts\n"),
    }
    match crate::project::config::read_config(project) {
        Ok(cfg) => {
            if !cfg.goal.trim().is_empty() {
                let _ = writeln!(out, "- goal: {}", one_line(&cfg.goal));
            }
            let _ = writeln!(out, "- eval command: `{}`", one_line(&cfg.eval_command));
            for g in &cfg.guards {
                let _ = writeln!(out, "- guard: `{}`", one_line(g));
            }
            if !cfg.smoke_test.trim().is_empty() {
                let _ = writeln!(out, "- smoke test: `{}`", one_line(&cfg.smoke_test));
            }
            if !cfg.scope.is_empty() {
                let _ = writeln!(out, "- scope: {}", cfg.scope.join(", "));
            }
        }
        Err(_) => out.push_str(
            "- no `.factory/config.json` (run `factory init`), so no build or eval commands\n",
        ),
    }
    out.push('\n');
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn hot_spots(out: &mut String, project: &Path, graph: Option<&CodeGraph>) {
    out.push_str("## Hot spots\n\n");
    let Some(g) = graph else {
        out.push_str("No code graph available, so no hot spots.\n\n");
        return;
    };
    match factory_graph::hotspots::hotspots(project, g, CHURN_COMMITS, HOTSPOTS) {
        Ok(h) => {
            let _ = writeln!(
                out,
                "Fan-in (distinct callers, subtypes, tests) × churn (commits touching its \
                 lines) over the last {} commits:\n",
                h.commits_scanned
            );
            if h.hotspots.is_empty() {
                out.push_str("- no definition is both depended on and recently changed\n");
            }
            for s in &h.hotspots {
                let _ = writeln!(
                    out,
                    "- `{}` ({} at {}:{}): fan-in {}, churn {}",
                    s.id, s.kind, s.file, s.line, s.fan_in, s.churn
                );
            }
            if !h.most_connected.is_empty() {
                out.push_str("\nMost depended on:\n\n");
                for s in &h.most_connected {
                    let _ = writeln!(
                        out,
                        "- `{}` ({}:{}): fan-in {}",
                        s.id, s.file, s.line, s.fan_in
                    );
                }
            }
            if !h.most_changed_files.is_empty() {
                out.push_str("\nMost changed files:\n\n");
                for f in &h.most_changed_files {
                    let _ = writeln!(out, "- {} ({} commits)", f.file, f.commits);
                }
            }
        }
        Err(e) => {
            let _ = writeln!(out, "Hot spots unavailable: {e}");
        }
    }
    out.push('\n');
}

fn recent_history(out: &mut String, project: &Path) {
    out.push_str("## Recent history\n\n");
    let lines = (|| -> Result<Vec<String>, git2::Error> {
        let repo = git2::Repository::discover(project)?;
        let mut walk = repo.revwalk()?;
        walk.push_head()?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
        let mut lines = Vec::new();
        for oid in walk.take(RECENT_COMMITS) {
            let c = repo.find_commit(oid?)?;
            let date = jiff::Timestamp::from_second(c.time().seconds())
                .map(|t| t.strftime("%Y-%m-%d").to_string())
                .unwrap_or_default();
            let id = c.id().to_string();
            lines.push(format!(
                "- {} {} {}",
                &id[..id.len().min(8)],
                date,
                c.summary().ok().flatten().unwrap_or("(no message)")
            ));
        }
        Ok(lines)
    })();
    match lines {
        Ok(l) if !l.is_empty() => {
            for line in l {
                out.push_str(&line);
                out.push('\n');
            }
        }
        Ok(_) => out.push_str("No commits yet.\n"),
        Err(e) => {
            let _ = writeln!(out, "No git history available ({}).", e.message());
        }
    }
    out.push('\n');
}

/// Writes the experiments, lessons and anti-patterns sections; returns how many
/// experiments were read.
fn past_experiments(out: &mut String, project: &Path) -> usize {
    out.push_str("## Past experiments\n\n");
    let history = ExperimentStore::with_registry(project, None).history();
    let records = match history {
        Ok(h) => h.records,
        Err(e) => {
            let _ = writeln!(out, "The experiment store could not be read: {e}\n");
            Vec::new()
        }
    };
    if records.is_empty() {
        out.push_str("No experiments recorded yet (`.factory/results.tsv` is empty or absent).\n");
    }
    let start = records.len().saturating_sub(EXPERIMENTS);
    if start > 0 {
        let _ = writeln!(out, "{start} older experiments not shown.\n");
    }
    for r in &records[start..] {
        let delta = r
            .delta
            .map(|d| format!(", delta {d:+}"))
            .unwrap_or_default();
        let _ = write!(
            out,
            "- #{} **{}**{delta}: {}",
            r.id,
            r.verdict,
            one_line(&r.hypothesis)
        );
        let lesson = [&r.notes, &r.change_summary]
            .into_iter()
            .map(|s| one_line(s))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        if !lesson.is_empty() {
            let _ = write!(out, " — {lesson}");
        }
        out.push('\n');
    }
    out.push_str("\n### Lessons from the archive\n\n");
    let archive = FactoryPaths::new(project).archive_dir();
    let mut entries: Vec<PathBuf> = fs::read_dir(&archive)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    if entries.is_empty() {
        out.push_str("No archived notes yet (`.factory/archive/*.md`).\n");
    }
    for p in &entries {
        let text = fs::read_to_string(p).unwrap_or_default();
        let gist = text
            .lines()
            .map(|l| l.trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or("(empty)");
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let _ = writeln!(out, "- {name}: {gist}");
    }
    out.push_str("\n### Anti-patterns to avoid\n\n");
    let reverted: Vec<_> = records
        .iter()
        .filter(|r| r.verdict == Verdict::Revert)
        .collect();
    if reverted.is_empty() {
        out.push_str("No reverted hypotheses yet.\n");
    } else {
        out.push_str("These hypotheses were tried and reverted; do not repeat them unchanged:\n\n");
    }
    for r in reverted {
        let why = one_line(&r.notes);
        let _ = writeln!(
            out,
            "- #{}: {}{}",
            r.id,
            one_line(&r.hypothesis),
            if why.is_empty() {
                String::new()
            } else {
                format!(" (why: {why})")
            }
        );
    }
    out.push('\n');
    records.len()
}

fn weakest_dimensions(out: &mut String, project: &Path) {
    out.push_str("## Weakest eval dimensions\n\n");
    let Some(report) = crate::eval::load_last_eval(project) else {
        out.push_str("No eval yet (`.factory/last_eval.json` is absent); run `factory eval`.\n");
        return;
    };
    let _ = writeln!(
        out,
        "Composite {:.3} (threshold {:.3}, {}).\n",
        report.composite.total,
        report.composite.threshold,
        if report.composite.passed {
            "passed"
        } else {
            "failed"
        }
    );
    let mut results = report.composite.results.clone();
    results.sort_by(|a, b| {
        a.score
            .total_cmp(&b.score)
            .then_with(|| a.name.cmp(&b.name))
    });
    for r in results.iter().take(WEAKEST) {
        let _ = writeln!(
            out,
            "- {} ({:?}): {:.2}{}",
            r.name,
            r.tier,
            r.score,
            if r.details.trim().is_empty() {
                String::new()
            } else {
                format!(" — {}", one_line(&r.details))
            }
        );
    }
    out.push('\n');
}
