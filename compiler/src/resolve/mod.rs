//! Name resolution, once, for every consumer (the language server's hover, definition,
//! references, rename and highlights): what a cursor is on, where that is declared, and
//! every place that names it — across files, for the names that cross them (subgraphs
//! and their artifacts through imports, roles everywhere).
//!
//! Results are plain data: file keys and byte ranges. The compiler does no I/O here, so
//! the files to search beyond the import graph (a subgraph's importers, a role's other
//! users) are the ones the caller passes in; the language server knows its workspace.

mod index;
pub mod scope;

use std::ops::Range;
use std::sync::Arc;

use crate::check::import_closure;
use crate::db::{Db, SourceFile, import_key, parse_file};
use crate::syntax::Parsed;

pub use index::{Occurrence, SymbolIndex};

/// A named thing of a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A node, a `use` instance or a `parallel` block, declared in `scope`.
    Node {
        scope: String,
        name: String,
    },
    Knob {
        workflow: String,
        name: String,
    },
    Param {
        decl: String,
        name: String,
    },
    /// A workflow or subgraph, at its declaration.
    Decl {
        name: String,
    },
    /// The subgraph named by a `use`.
    Subgraph {
        name: String,
    },
    Import {
        index: usize,
    },
    Role {
        name: String,
    },
    /// A named artifact of declaration `decl`: an `input`, or `writes: name = "path"`,
    /// read by name (`study.combined` from a workflow using the subgraph).
    Artifact {
        decl: String,
        name: String,
    },
    /// An attribute key (`role`, `reads`, ...).
    Attribute {
        key: String,
    },
}

impl Symbol {
    /// Whether two symbols are one thing: a subgraph at its declaration and where a
    /// `use` names it are.
    pub fn same(&self, other: &Symbol) -> bool {
        match (self, other) {
            (
                Symbol::Decl { name: a } | Symbol::Subgraph { name: a },
                Symbol::Decl { name: b } | Symbol::Subgraph { name: b },
            ) => a == b,
            _ => self == other,
        }
    }
}

/// A symbol and the span of the text that names it at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub symbol: Symbol,
    pub span: Range<usize>,
}

/// A place in a file: the file's key (as the database names it) and a byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub span: Range<usize>,
}

/// The file's tree and its source map: the resolver's one access to the parse.
pub fn tree(db: &dyn Db, file: SourceFile) -> &Parsed {
    parse_file(db, file)
}

/// Every named occurrence of a file, computed once per revision of its text.
#[salsa::tracked]
pub fn file_symbols(db: &dyn Db, file: SourceFile) -> Arc<SymbolIndex> {
    Arc::new(index::build(tree(db, file), file.text(db)))
}

/// The symbol under the cursor at byte `offset` of `file`.
pub fn symbol_at(db: &dyn Db, file: SourceFile, offset: usize) -> Option<Hit> {
    let index = file_symbols(db, file);
    let o = index.at(offset)?;
    Some(Hit {
        symbol: o.symbol.clone(),
        span: o.span.clone(),
    })
}

/// Where `symbol`, found in `file`, is declared: in the file, or in the imported file
/// that declares its subgraph. An import's definition is the start of the imported
/// file. Roles have none here (their prompt files are on disk, for the caller to find),
/// nor do attribute keys.
pub fn definition(db: &dyn Db, file: SourceFile, symbol: &Symbol) -> Option<Location> {
    let home = match symbol {
        Symbol::Import { index } => {
            let imp = tree(db, file).ast.imports.get(*index)?;
            let key = import_key(file.key(db), &imp.path);
            return db.file(&key).exists(db).then_some(Location {
                file: key,
                span: 0..0,
            });
        }
        Symbol::Role { .. } | Symbol::Attribute { .. } => return None,
        Symbol::Decl { name } | Symbol::Subgraph { name } => home(db, file, name)?,
        Symbol::Artifact { decl, .. } | Symbol::Param { decl, .. } => home(db, file, decl)?,
        Symbol::Node { .. } | Symbol::Knob { .. } => file,
    };
    let index = file_symbols(db, home);
    let o = index.declaration(symbol)?;
    Some(Location {
        file: home.key(db).clone(),
        span: o.span.clone(),
    })
}

/// Every place that names `symbol` (found in `file`), its declaration included: in
/// `file`, and for subgraphs, their parameters (named by `use` arguments) and artifacts,
/// and roles, also in the declaring file and in `files` (the caller's workspace) where
/// the name means the same declaration.
/// Ordered by file (as searched: `file`, the declaring file, then `files`) and offset.
pub fn references(
    db: &dyn Db,
    file: SourceFile,
    symbol: &Symbol,
    files: &[SourceFile],
) -> Vec<Location> {
    // The declaration a cross-file name means, and how to tell, in another file, that a
    // same-named occurrence means it too.
    let owner = match symbol {
        Symbol::Attribute { .. } => return Vec::new(),
        Symbol::Node { .. } | Symbol::Knob { .. } | Symbol::Import { .. } => {
            return in_file(db, file, symbol);
        }
        Symbol::Role { .. } => None,
        Symbol::Decl { name } | Symbol::Subgraph { name } => match home(db, file, name) {
            Some(h) => Some((name, h)),
            None => return in_file(db, file, symbol),
        },
        Symbol::Artifact { decl, .. } | Symbol::Param { decl, .. } => match home(db, file, decl) {
            Some(h) => Some((decl, h)),
            None => return in_file(db, file, symbol),
        },
    };
    let mut searched: Vec<SourceFile> = Vec::new();
    let candidates = std::iter::once(file)
        .chain(owner.map(|(_, h)| h))
        .chain(files.iter().copied());
    let mut out = Vec::new();
    for f in candidates {
        if searched.contains(&f) {
            continue;
        }
        searched.push(f);
        if let Some((decl, h)) = owner
            && home(db, f, decl) != Some(h)
        {
            continue;
        }
        out.extend(in_file(db, f, symbol));
    }
    out
}

/// The places of `file` naming `symbol`, in order.
fn in_file(db: &dyn Db, file: SourceFile, symbol: &Symbol) -> Vec<Location> {
    let index = file_symbols(db, file);
    let key = file.key(db);
    index
        .of(symbol)
        .map(|o| Location {
            file: key.clone(),
            span: o.span.clone(),
        })
        .collect()
}

/// The file declaring the workflow or subgraph `name` as `file` sees it: the file
/// itself, or the first file of its imports (followed transitively) that declares it.
pub fn home(db: &dyn Db, file: SourceFile, name: &str) -> Option<SourceFile> {
    let declares = |f: SourceFile| tree(db, f).ast.decls.iter().any(|d| d.name == name);
    if declares(file) {
        return Some(file);
    }
    import_closure(db, file)
        .files
        .iter()
        .copied()
        .find(|f| declares(*f))
}
