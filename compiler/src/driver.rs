//! Entry points for tools: check files, compile a file to IR. The command line and the
//! tests call these; the language server drives the database directly.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::check::{file_diagnostics, lower_file};
use crate::db::Loader;
use crate::db::{Database, Db};
use crate::diagnostic::{Located, SourceLocation};
use crate::host::{self, FsLoader};
use crate::ir::Ir;

/// A database rooted at `anchor` (a checked file or directory): the standard library and
/// the roles are looked up from there.
pub fn database_for(anchor: &Path) -> Database {
    let dir = if anchor.is_dir() {
        anchor
    } else {
        anchor.parent().unwrap_or(Path::new("."))
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let loader = FsLoader {
        stdlib: host::find_stdlib(dir),
    };
    Database::new(Arc::new(loader), Some(host::discover_roles(dir)))
}

/// Checks IR text with the graph rules, exactly as `factory check FILE.fwir` does: the
/// outer loop validates its candidates through this, so one implementation of the rules
/// judges hand-written and mutated graphs alike. `roles` comes from [`roles_near`].
pub use crate::check::ir_text::check_ir_text;

/// The roles with a prompt, as seen from `anchor` (a file or directory): what
/// `factory check` passes to the role rule.
pub fn roles_near(anchor: &Path) -> Option<std::collections::BTreeSet<String>> {
    let db = database_for(anchor);
    db.roles().names(&db).clone()
}

/// The database key of a path: the path as given, with `./` and `..` resolved lexically.
pub fn key_of(path: &Path) -> String {
    crate::db::import_key("", &path.to_string_lossy())
        .trim_end_matches(".fwf")
        .to_string()
        + if path.extension().is_some_and(|e| e == "fwf") {
            ".fwf"
        } else {
            ""
        }
}

/// Checks workflow text that is not (or not yet) on disk, as `factory check` would
/// check it saved as `name` in `anchor` (a directory: imports and roles resolve from
/// there). A name ending in `.fwir` is checked as IR text, anything else as `.fwf`.
pub fn check_text(name: &str, text: &str, anchor: &Path) -> Vec<Located> {
    let mut db = database_for(anchor);
    let key = key_of(&anchor.join(name));
    if crate::check::ir_text::is_ir_text(name) {
        let file = db.set_text(&key, text.to_string());
        return crate::check::ir_text::located_ir(&db, file);
    }
    let file = db.set_text(&key, text.to_string());
    located(&db, file)
}

/// What checking a set of paths found.
#[derive(Debug, Default)]
pub struct Checked {
    /// How many `.fwf` and `.fwir` files the paths named (readable or not).
    pub files: usize,
    pub diagnostics: Vec<Located>,
    /// Files that could not be read (not UTF-8, no permission). They do not stop the
    /// others being checked.
    pub unreadable: Vec<Unreadable>,
}

/// A workflow file that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub path: PathBuf,
    /// What is wrong, without the path ("not UTF-8 text; ...").
    pub problem: String,
}

/// Checks `.fwf` and `.fwir` files; directories are searched recursively. Only a path
/// that does not exist (or a directory that cannot be listed) is an error; a file that
/// cannot be read is reported in [`Checked::unreadable`] and the rest are still checked.
pub fn check_paths(paths: &[PathBuf]) -> std::io::Result<Checked> {
    let files = host::collect_sources(paths)?;
    let mut out = Checked {
        files: files.len(),
        ..Checked::default()
    };
    let Some(first) = paths.first() else {
        return Ok(out);
    };
    let mut db = database_for(first);
    for path in files {
        if path.extension().is_some_and(|e| e == "fwir") {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let file = db.set_text(&key_of(&path), text);
                    out.diagnostics
                        .extend(crate::check::ir_text::located_ir(&db, file));
                }
                Err(e) => out.unreadable.push(Unreadable {
                    problem: why_unreadable(&e),
                    path,
                }),
            }
            continue;
        }
        let key = key_of(&path);
        let file = db.file(&key);
        if !file.exists(&db) {
            let problem = match std::fs::read_to_string(&path) {
                Err(e) => why_unreadable(&e),
                Ok(_) => "cannot read the file".to_string(),
            };
            out.unreadable.push(Unreadable { path, problem });
            continue;
        }
        out.diagnostics.extend(located(&db, file));
    }
    Ok(out)
}

/// Every diagnostic of `file`, each with the text of the file it points into.
fn located(db: &Database, file: crate::db::SourceFile) -> Vec<Located> {
    let mut sources = Sources::default();
    file_diagnostics(db, file)
        .iter()
        .map(|d| Located {
            diagnostic: d.clone(),
            source: sources.of(db, &d.file),
        })
        .collect()
}

/// The texts diagnostics point into, one shared copy per file (a copy per diagnostic
/// made reporting quadratic in a large file with many findings).
#[derive(Default)]
struct Sources(std::collections::HashMap<String, Arc<String>>);

impl Sources {
    fn of(&mut self, db: &Database, key: &str) -> Arc<String> {
        self.0
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(db.file(key).text(db).clone()))
            .clone()
    }
}

/// Why a file did not compile: its diagnostics (errors among them), or a missing
/// workflow. One wording everywhere: front ends print [`CompileError::located`], then
/// the error itself (a miette diagnostic with its code and fix).
#[derive(Debug)]
pub enum CompileError {
    Io(std::io::Error),
    Invalid(Vec<Located>),
    NoWorkflow(String),
}

impl CompileError {
    /// The findings to show before the error (each with its place and fix).
    pub fn located(&self) -> &[Located] {
        match self {
            CompileError::Invalid(diags) => diags,
            _ => &[],
        }
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Io(e) => write!(f, "{e}"),
            CompileError::Invalid(diags) => {
                let errors: Vec<&Located> =
                    diags.iter().filter(|l| l.diagnostic.is_error()).collect();
                let file = errors
                    .first()
                    .map_or("the workflow", |l| l.diagnostic.file.as_str());
                write!(
                    f,
                    "{file} has {} error(s); nothing was compiled, run or written",
                    errors.len()
                )
            }
            CompileError::NoWorkflow(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for CompileError {}

impl miette::Diagnostic for CompileError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(match self {
            CompileError::Io(_) => "factory::compile::unreadable",
            CompileError::Invalid(_) => "factory::compile::invalid",
            CompileError::NoWorkflow(_) => "factory::compile::no_workflow",
        }))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(match self {
            CompileError::Io(_) => {
                "name a mode (`factory modes` lists them) or an existing .fwf/.fwir file"
            }
            CompileError::Invalid(_) => {
                "fix the findings above (`factory check FILE` lists the same ones)"
            }
            CompileError::NoWorkflow(_) => {
                "name the workflow to use (`--workflow NAME`), or a file that declares one"
            }
        }))
    }
}

/// A compiled workflow: its IR, the warnings it had, and where each node came from.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub ir: Ir,
    pub warnings: Vec<Located>,
    /// Node id → where it is written (for instances: the `use` that brought it in).
    pub locations: std::collections::BTreeMap<String, SourceLocation>,
}

/// Compiles a workflow named by a path (`.fwf`, or IR text `.fwir`) or by a mode name
/// (`improve`: the project's `.factory/workflows/improve.fwf`, else the built-in mode).
/// For a `.fwf` file, its first workflow or `workflow` by name. Any error fails.
pub fn compile(
    arg: &str,
    project: &Path,
    workflow: Option<&str>,
) -> Result<Compiled, CompileError> {
    let Some(key) = host::resolve_workflow_arg(arg, project) else {
        let known: Vec<String> = host::modes(project).into_iter().map(|m| m.name).collect();
        return Err(CompileError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "`{arg}` is neither a file nor a mode (modes: {})",
                known.join(", ")
            ),
        )));
    };
    let path = Path::new(&key);
    let anchor = if path.is_file() { path } else { project };
    let mut db = database_for(anchor);
    if key.ends_with(".fwir") {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CompileError::Io(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", path.display()),
            ))
        })?;
        let file = db.set_text(&key, text.clone());
        let diags = crate::check::ir_text::located_ir(&db, file);
        if diags.iter().any(|d| d.diagnostic.is_error()) {
            return Err(CompileError::Invalid(diags));
        }
        let (ir, spans) =
            crate::ir::parse_text(&text).map_err(|_| CompileError::Invalid(diags.clone()))?;
        let index = crate::diagnostic::LineIndex::new(&text);
        let locations = spans
            .nodes
            .iter()
            .map(|(id, span)| {
                let (line, column) = index.line_col(span.start);
                (
                    id.clone(),
                    SourceLocation {
                        file: key.clone(),
                        line,
                        column,
                    },
                )
            })
            .collect();
        return Ok(Compiled {
            ir,
            warnings: diags,
            locations,
        });
    }
    let key = if path.is_file() { key_of(path) } else { key };
    let file = db.file(&key);
    if !file.exists(&db) {
        return Err(CompileError::Io(unreadable(Path::new(&key))));
    }
    let diags = located(&db, file);
    if diags.iter().any(|d| d.diagnostic.is_error()) {
        return Err(CompileError::Invalid(diags));
    }
    let lowered = lower_file(&db, file);
    let found = match workflow {
        Some(name) => lowered
            .workflows
            .into_iter()
            .find(|w| w.ir.workflow.name == name),
        None => lowered.workflows.into_iter().next(),
    };
    let Some(w) = found else {
        return Err(CompileError::NoWorkflow(match workflow {
            Some(name) => format!("{key} has no workflow named `{name}`"),
            None => format!("{key} declares no workflow (only subgraphs?)"),
        }));
    };
    let mut locations = std::collections::BTreeMap::new();
    let mut indexes = std::collections::HashMap::new();
    for (id, at) in &w.origins.nodes {
        let src = db.file(&at.file);
        let map = &crate::db::parse_file(&db, src).map();
        if let Some(span) = map.get(&at.loc) {
            let index = indexes
                .entry(at.file.clone())
                .or_insert_with(|| crate::diagnostic::LineIndex::new(src.text(&db)));
            let (line, column) = index.line_col(span.start);
            locations.insert(
                id.clone(),
                SourceLocation {
                    file: at.file.clone(),
                    line,
                    column,
                },
            );
        }
    }
    Ok(Compiled {
        ir: w.ir,
        warnings: diags,
        locations,
    })
}

/// The one-line description of the mode stored under `key` (its first workflow's `//!`
/// summary), read without checking it.
pub fn describe_mode(key: &str) -> Option<String> {
    let text = FsLoader::default().load(key)?;
    if key.ends_with(".fwir") {
        let (ir, _) = crate::ir::parse_text(&text).ok()?;
        return Some(ir.workflow.description);
    }
    let ast = crate::syntax::parse(&text).ast;
    let doc = &ast.decls.first()?.doc;
    Some(doc.split("\n\n").next()?.replace('\n', " "))
}

/// Why a source file could not be loaded, in words (missing, unreadable, not UTF-8).
fn unreadable(path: &Path) -> std::io::Error {
    match std::fs::read_to_string(path) {
        Err(e) => std::io::Error::new(
            e.kind(),
            format!("{}: {}", path.display(), why_unreadable(&e)),
        ),
        Ok(_) => std::io::Error::other(format!("{}: cannot read the file", path.display())),
    }
}

/// Why reading a workflow file failed, in words that say what to do.
fn why_unreadable(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::InvalidData {
        "not UTF-8 text; workflow files must be UTF-8".to_string()
    } else {
        e.to_string()
    }
}

/// Compiles `.fwf` source text held in memory (a file rendered from an IR, which
/// imports at most the standard library) under database key `key`: its first
/// workflow's IR, or every diagnostic when one is an error. Roles are not checked: the
/// text has no project around it.
pub fn compile_text(key: &str, text: &str) -> Result<Ir, Vec<Located>> {
    let mut db = Database::new(Arc::new(FsLoader::default()), None);
    let file = db.set_text(key, text.to_string());
    let diags = located(&db, file);
    if diags.iter().any(|d| d.diagnostic.is_error()) {
        return Err(diags);
    }
    match lower_file(&db, file).workflows.into_iter().next() {
        Some(w) => Ok(w.ir),
        None => Err(diags),
    }
}
