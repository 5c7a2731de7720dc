//! The code knowledge graph of a project: every tracked Rust, Python,
//! JavaScript/TypeScript and Go file parsed with tree-sitter into a directed
//! multigraph of files and definitions (functions, methods, types, traits and
//! interfaces) and their relations (contains, imports, calls by name,
//! inherits/implements, tests), stored as a NetworkX node-link document.
//!
//! - [`model`]: nodes, links, the document, per-file facts.
//! - [`extract`] / [`update`]: full and incremental builds; [`load`] / [`save`].
//! - [`query`]: status, find by name, explain a node, shortest path.
//! - [`hotspots`]: fan-in × git churn.
//!
//! The crate knows nothing about experiments or `.factory/`: callers say where the
//! document lives.
//!
//! ```no_run
//! use std::path::Path;
//! let (graph, _stats) = factory_graph::extract(Path::new("."), None)?;
//! factory_graph::save(&graph, Path::new("graph.json"))?;
//! for hit in factory_graph::query::find(&graph, "parse") {
//!     println!("{}:{} {}", hit.file, hit.line, hit.id);
//! }
//! # Ok::<(), factory_graph::GraphError>(())
//! ```

mod build;
pub mod hotspots;
mod lang;
pub mod model;
pub mod query;
mod resolve;
mod source;

use std::path::PathBuf;

pub use build::{BuildStats, Drift, Progress, drift, extract, load, save, update};
pub use lang::{content_hash, is_test_file};
pub use model::{CodeGraph, Kind, Language, Link, Node, Relation};
pub use resolve::assemble;

/// Why the graph could not be built, read or queried.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum GraphError {
    #[error("{path} is not inside a git repository")]
    #[diagnostic(
        code(factory::graph::not_a_repository),
        help("the graph covers the files git tracks: run `git init && git add .` there first")
    )]
    NotARepository { path: PathBuf },
    #[error("no code graph at {path}")]
    #[diagnostic(
        code(factory::graph::missing),
        help("build it with `factory graph extract`")
    )]
    Missing { path: PathBuf },
    #[error("cannot read the code graph at {path}: {reason}")]
    #[diagnostic(
        code(factory::graph::corrupt),
        help("rebuild it with `factory graph extract`")
    )]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: {source}")]
    #[diagnostic(
        code(factory::graph::io),
        help("check that the path exists and is readable and writable")
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("git: {0}")]
    #[diagnostic(
        code(factory::graph::git),
        help("check the repository with `git status`")
    )]
    Git(#[from] git2::Error),
}
