//! Hot spots: definitions many others depend on (fan-in) that also change often (git
//! churn over the last N commits). A definition's churn counts the commits whose diff
//! touched its lines; line numbers are those of each commit, so for definitions that
//! moved a lot it is an approximation. A file's churn counts the commits touching it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use git2::{DiffOptions, Patch};
use serde::Serialize;

use crate::GraphError;
use crate::model::{CodeGraph, Kind, Relation};
use crate::source::Project;

/// One ranked definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hotspot {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub file: String,
    pub line: u32,
    /// Distinct definitions and files that call, extend, implement or test it.
    pub fan_in: usize,
    /// Commits among those scanned that changed its lines.
    pub churn: usize,
    /// fan_in × churn.
    pub score: usize,
}

/// A file and how many of the scanned commits changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChurn {
    pub file: String,
    pub commits: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Hotspots {
    /// Commits actually scanned (fewer than asked in a young repository).
    pub commits_scanned: usize,
    /// By fan-in × churn; only definitions with both.
    pub hotspots: Vec<Hotspot>,
    /// By fan-in alone.
    pub most_connected: Vec<Hotspot>,
    /// Files by commits.
    pub most_changed_files: Vec<FileChurn>,
}

/// Ranks the graph's definitions; at most `limit` of each list.
pub fn hotspots(
    root: &Path,
    graph: &CodeGraph,
    commits: usize,
    limit: usize,
) -> Result<Hotspots, GraphError> {
    let project = Project::open(root)?;
    let (scanned, changes) = churn(&project, commits)?;
    let mut fan_in: HashMap<&str, HashSet<&str>> = HashMap::new();
    for l in &graph.links {
        if matches!(
            l.relation,
            Relation::Calls | Relation::Inherits | Relation::Implements | Relation::Tests
        ) {
            fan_in
                .entry(l.target.as_str())
                .or_default()
                .insert(l.source.as_str());
        }
    }
    let mut all: Vec<Hotspot> = graph
        .nodes
        .iter()
        .filter(|n| n.kind.is_definition())
        .map(|n| {
            let file = n.file.clone().unwrap_or_default();
            let (start, end) = (n.line.unwrap_or(1), n.end_line.unwrap_or(u32::MAX));
            let churn = changes.get(&file).map_or(0, |per_commit| {
                per_commit
                    .iter()
                    .filter(|ranges| ranges.iter().any(|&(a, b)| a <= end && b >= start))
                    .count()
            });
            let fan_in = fan_in.get(n.id.as_str()).map_or(0, HashSet::len);
            Hotspot {
                id: n.id.clone(),
                name: n.name.clone(),
                kind: n.kind,
                file,
                line: n.line.unwrap_or(1),
                fan_in,
                churn,
                score: fan_in * churn,
            }
        })
        .collect();
    all.sort_by(|a, b| {
        (b.score, b.fan_in, b.churn)
            .cmp(&(a.score, a.fan_in, a.churn))
            .then_with(|| a.id.cmp(&b.id))
    });
    let hotspots: Vec<Hotspot> = all
        .iter()
        .filter(|h| h.score > 0)
        .take(limit)
        .cloned()
        .collect();
    all.sort_by(|a, b| {
        (b.fan_in, b.churn)
            .cmp(&(a.fan_in, a.churn))
            .then_with(|| a.id.cmp(&b.id))
    });
    let most_connected = all
        .iter()
        .filter(|h| h.fan_in > 0)
        .take(limit)
        .cloned()
        .collect();
    let mut files: Vec<FileChurn> = changes
        .iter()
        .filter(|(f, _)| graph.node(f).is_some() || graph.graph.other_files.contains(f))
        .map(|(f, per_commit)| FileChurn {
            file: f.clone(),
            commits: per_commit.len(),
        })
        .collect();
    files.sort_by(|a, b| b.commits.cmp(&a.commits).then_with(|| a.file.cmp(&b.file)));
    files.truncate(limit);
    Ok(Hotspots {
        commits_scanned: scanned,
        hotspots,
        most_connected,
        most_changed_files: files,
    })
}

/// Changed line ranges (new side) per file, one entry per commit touching the file.
type Changes = BTreeMap<String, Vec<Vec<(u32, u32)>>>;

fn churn(project: &Project, commits: usize) -> Result<(usize, Changes), GraphError> {
    let repo = project.repo();
    let mut changes: Changes = BTreeMap::new();
    let Some(head) = project.head() else {
        return Ok((0, changes));
    };
    let mut walk = repo.revwalk()?;
    walk.push(git2::Oid::from_str(&head)?)?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    let prefix = project.prefix();
    let mut scanned = 0;
    for oid in walk.take(commits) {
        let commit = repo.find_commit(oid?)?;
        scanned += 1;
        let tree = commit.tree()?;
        let parent_tree = match commit.parents().next() {
            Some(p) => Some(p.tree()?),
            None => None,
        };
        let mut opts = DiffOptions::new();
        opts.context_lines(0);
        if !prefix.is_empty() {
            opts.pathspec(prefix);
        }
        let diff = repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))?;
        for idx in 0..diff.deltas().len() {
            let Some(delta) = diff.get_delta(idx) else {
                continue;
            };
            let Some(path) = delta.new_file().path().and_then(|p| p.to_str()) else {
                continue;
            };
            let rel = if prefix.is_empty() {
                path
            } else {
                match path.strip_prefix(prefix).and_then(|p| p.strip_prefix('/')) {
                    Some(r) => r,
                    None => continue,
                }
            };
            let mut ranges = Vec::new();
            if let Ok(Some(patch)) = Patch::from_diff(&diff, idx) {
                for h in 0..patch.num_hunks() {
                    if let Ok((hunk, _)) = patch.hunk(h) {
                        let start = hunk.new_start().max(1);
                        let end = start + hunk.new_lines().saturating_sub(1);
                        ranges.push((start, end));
                    }
                }
            }
            if ranges.is_empty() {
                // A binary or mode-only change: count the file as a whole.
                ranges.push((1, u32::MAX));
            }
            changes.entry(rel.to_owned()).or_default().push(ranges);
        }
    }
    Ok((scanned, changes))
}
