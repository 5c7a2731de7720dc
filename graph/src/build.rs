//! Full extraction and incremental update, and reading and writing the document.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::GraphError;
use crate::lang::{Parsers, content_hash, extract_file};
use crate::model::{CodeGraph, FORMAT, FileFacts, Language};
use crate::resolve::assemble;
use crate::source::Project;

/// Called with (files done, files to parse) while parsing.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// What an extract or update did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BuildStats {
    /// Source files parsed now.
    pub parsed: usize,
    /// Source files whose stored facts were reused (update only).
    pub reused: usize,
    /// Of the parsed files, those not in the previous graph (update only).
    pub added: Vec<String>,
    /// Of the parsed files, those whose content changed (update only).
    pub changed: Vec<String>,
    /// Files in the previous graph that are no longer tracked (update only).
    pub removed: Vec<String>,
    /// Tracked files in other languages (listed, not parsed).
    pub other_files: usize,
}

struct Scan {
    sources: Vec<(String, Language, Vec<u8>)>,
    other: Vec<String>,
    head: Option<String>,
}

fn scan(project: &Project) -> Result<Scan, GraphError> {
    let paths = project.tracked_paths()?;
    let (source_paths, other): (Vec<String>, Vec<String>) = paths
        .into_iter()
        .partition(|p| Language::of_path(p).is_some());
    let root = project.root();
    let read: Result<Vec<_>, GraphError> = source_paths
        .into_par_iter()
        .map(|p| Ok(crate::source::read(root, &p)?.map(|bytes| (p, bytes))))
        .collect();
    let sources = read?
        .into_iter()
        .flatten()
        .filter_map(|(p, b)| Language::of_path(&p).map(|l| (p, l, b)))
        .collect();
    Ok(Scan {
        sources,
        other,
        head: project.head(),
    })
}

fn parse_all(
    files: Vec<(String, Language, Vec<u8>)>,
    progress: Option<Progress>,
) -> Vec<FileFacts> {
    let total = files.len();
    let done = AtomicUsize::new(0);
    files
        .into_par_iter()
        .map_init(Parsers::default, |parsers, (path, lang, bytes)| {
            let facts = extract_file(parsers, &path, lang, &bytes);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = progress {
                p(n, total);
            }
            facts
        })
        .collect()
}

/// Parses every tracked source file under `root` and builds the graph.
pub fn extract(
    root: &Path,
    progress: Option<Progress>,
) -> Result<(CodeGraph, BuildStats), GraphError> {
    let project = Project::open(root)?;
    let scan = scan(&project)?;
    let stats = BuildStats {
        parsed: scan.sources.len(),
        other_files: scan.other.len(),
        ..BuildStats::default()
    };
    let facts: BTreeMap<String, FileFacts> = parse_all(scan.sources, progress)
        .into_iter()
        .map(|f| (f.path().to_owned(), f))
        .collect();
    Ok((assemble(&facts, scan.other, scan.head), stats))
}

/// Brings `previous` up to date with the files under `root`: files whose content hash
/// is unchanged keep their stored facts, the others (and new files) are parsed,
/// untracked ones dropped, and every reference is resolved again, so calls into a
/// changed file find its new definitions.
pub fn update(
    root: &Path,
    previous: CodeGraph,
    progress: Option<Progress>,
) -> Result<(CodeGraph, BuildStats), GraphError> {
    let project = Project::open(root)?;
    let scan = scan(&project)?;
    // Facts from other extraction rules cannot be reused.
    let mut old = if previous.graph.extractor == crate::model::EXTRACTOR {
        previous.into_facts()
    } else {
        BTreeMap::new()
    };
    let mut facts: BTreeMap<String, FileFacts> = BTreeMap::new();
    let mut to_parse = Vec::new();
    let mut stats = BuildStats {
        other_files: scan.other.len(),
        ..BuildStats::default()
    };
    for (path, lang, bytes) in scan.sources {
        match old.remove(&path) {
            Some(f)
                if f.file.hash.as_deref() == Some(content_hash(&bytes).as_str())
                    && f.file.language == Some(lang) =>
            {
                stats.reused += 1;
                facts.insert(path, f);
            }
            Some(_) => {
                stats.changed.push(path.clone());
                to_parse.push((path, lang, bytes));
            }
            None => {
                stats.added.push(path.clone());
                to_parse.push((path, lang, bytes));
            }
        }
    }
    stats.removed = old.into_keys().collect();
    stats.parsed = to_parse.len();
    for f in parse_all(to_parse, progress) {
        facts.insert(f.path().to_owned(), f);
    }
    Ok((assemble(&facts, scan.other, scan.head), stats))
}

/// Which tracked files differ from what the graph holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Drift {
    pub head: Option<String>,
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Compares the graph with the working tree (by content hash) and HEAD.
pub fn drift(root: &Path, graph: &CodeGraph) -> Result<Drift, GraphError> {
    let project = Project::open(root)?;
    let scan = scan(&project)?;
    let mut stored: BTreeMap<&str, &str> = graph
        .files()
        .map(|n| (n.id.as_str(), n.hash.as_deref().unwrap_or_default()))
        .collect();
    let mut drift = Drift {
        head: scan.head,
        ..Drift::default()
    };
    for (path, _, bytes) in &scan.sources {
        match stored.remove(path.as_str()) {
            Some(h) if h == content_hash(bytes) => {}
            Some(_) => drift.changed.push(path.clone()),
            None => drift.added.push(path.clone()),
        }
    }
    drift.removed = stored.into_keys().map(str::to_owned).collect();
    Ok(drift)
}

/// Reads a graph document.
pub fn load(path: &Path) -> Result<CodeGraph, GraphError> {
    let text = match fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(GraphError::Missing {
                path: path.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(GraphError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut graph: CodeGraph =
        serde_json::from_slice(&text).map_err(|source| GraphError::Corrupt {
            path: path.to_path_buf(),
            reason: source.to_string(),
        })?;
    if graph.graph.format != FORMAT {
        return Err(GraphError::Corrupt {
            path: path.to_path_buf(),
            reason: format!(
                "format {} (this factory reads format {FORMAT})",
                graph.graph.format
            ),
        });
    }
    // Lookups binary-search by id; a hand-edited file may not be sorted.
    graph.nodes.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(graph)
}

/// Writes the document atomically: a temporary file in the same directory, then a
/// rename, so a reader never sees half a graph.
pub fn save(graph: &CodeGraph, path: &Path) -> Result<(), GraphError> {
    let io = |source| GraphError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        fs::create_dir_all(d).map_err(io)?;
    }
    let bytes = serde_json::to_vec(graph).map_err(|e| GraphError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let name = path
        .file_name()
        .map_or_else(|| "graph.json".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}
