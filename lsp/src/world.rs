//! The server's state: one salsa database holding every file the server has seen, the
//! texts of the documents open in the editor, and the roles that have prompts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use factory_compiler::check::{file_diagnostics, import_closure};
use factory_compiler::db::{Database, Db, SourceFile};
use factory_compiler::diagnostic::Diagnostic;
use factory_compiler::host::{self, FsLoader};
use factory_compiler::ide::Parsed;

/// A document open in the editor.
#[derive(Debug, Clone)]
pub struct Doc {
    pub uri: lsp_types::Uri,
    pub version: i32,
}

pub struct World {
    pub db: Database,
    /// Open documents by key; their text lives in the database.
    pub open: BTreeMap<String, Doc>,
    roles: BTreeSet<String>,
    root: PathBuf,
    /// The standard library directory on disk, if the project has one: a file open
    /// from it is also `std/<name>.fwf`, the key its importers load.
    stdlib: Option<PathBuf>,
}

impl World {
    pub fn new(root: Option<&Path>) -> World {
        let start = root.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let stdlib = host::find_stdlib(&start);
        let loader = FsLoader {
            stdlib: stdlib.clone(),
        };
        let roles = host::discover_roles(&start);
        World {
            db: Database::new(Arc::new(loader), Some(roles.clone())),
            open: BTreeMap::new(),
            roles,
            root: start,
            stdlib,
        }
    }

    /// The standard library directory on disk (`None`: the embedded one).
    pub fn stdlib_dir(&self) -> Option<&Path> {
        self.stdlib.as_deref()
    }

    /// The other key of `key`: `std/<name>.fwf` for a file of the standard library
    /// directory, which is how importers name it.
    pub fn alias(&self, key: &str) -> Option<String> {
        let rest = Path::new(key).strip_prefix(self.stdlib.as_deref()?).ok()?;
        Some(format!("std/{}", rest.to_str()?))
    }

    /// Sets the text of `key` (and of its `std/` alias) in the database.
    pub fn set_text(&mut self, key: &str, text: String) {
        if let Some(alias) = self.alias(key) {
            self.db.set_text(&alias, text.clone());
        }
        self.db.set_text(key, text);
    }

    /// Adds the roles with prompts next to or above `key` (a file opened outside the
    /// workspace root may have its own `prompts/`).
    pub fn discover_roles_for(&mut self, key: &str) {
        let dir = Path::new(key).parent().unwrap_or(Path::new("."));
        let found = host::discover_roles(dir);
        if !found.is_subset(&self.roles) {
            self.roles.extend(found);
            self.db.set_roles(Some(self.roles.clone()));
        }
    }

    /// Recomputes the roles from disk (a prompt file was added or deleted).
    pub fn refresh_roles(&mut self) {
        let mut roles = host::discover_roles(&self.root);
        for key in self.open.keys() {
            let dir = Path::new(key).parent().unwrap_or(Path::new("."));
            roles.extend(host::discover_roles(dir));
        }
        if roles != self.roles {
            self.roles = roles;
            self.db.set_roles(Some(self.roles.clone()));
        }
    }

    pub fn roles(&self) -> &BTreeSet<String> {
        &self.roles
    }

    pub fn text(&self, key: &str) -> &str {
        let file = self.db.file(key);
        file.text(&self.db)
    }

    pub fn parsed(&self, key: &str) -> &Parsed {
        factory_compiler::resolve::tree(&self.db, self.db.file(key))
    }

    /// The files a search across files covers (references, rename): the open documents
    /// and the `.fwf` files under the workspace root.
    pub fn workspace_files(&self) -> Vec<SourceFile> {
        let mut keys: Vec<String> = self.open.keys().cloned().collect();
        keys.extend(crate::workspace::fwf_files(&self.root));
        keys.sort();
        keys.dedup();
        keys.iter().map(|k| self.db.file(k)).collect()
    }

    pub fn diagnostics(&self, key: &str) -> &[Diagnostic] {
        file_diagnostics(&self.db, self.db.file(key))
    }

    /// The open documents whose diagnostics may change when `key` changes: itself and
    /// every open file that imports it (or its `std/` alias), directly or not.
    pub fn affected_by(&self, key: &str) -> Vec<String> {
        let keys: Vec<String> = std::iter::once(key.to_string())
            .chain(self.alias(key))
            .collect();
        let open: Vec<&String> = self.open.keys().collect();
        affected(&self.db, &open, &keys)
    }

    /// Opens (or re-opens) a document with the editor's text; returns its key.
    pub fn open_doc(&mut self, uri: lsp_types::Uri, text: String, version: i32) -> Option<String> {
        let key = crate::paths::uri_to_key(&uri)?;
        self.discover_roles_for(&key);
        self.set_text(&key, text);
        self.open.insert(key.clone(), Doc { uri, version });
        Some(key)
    }

    /// The LSP diagnostics of an open document (those located in the document itself).
    pub fn lsp_diagnostics(&self, key: &str) -> Vec<lsp_types::Diagnostic> {
        let Some(doc) = self.open.get(key) else {
            return Vec::new();
        };
        lsp_diagnostics(&self.db, key, &doc.uri)
    }

    /// Re-reads a file that is not open from disk (it changed there).
    pub fn reload_from_disk(&mut self, key: &str) {
        if self.open.contains_key(key) {
            return;
        }
        // A file that cannot be read (deleted, moved) is missing, as a fresh server sees it.
        let text = std::fs::read_to_string(key).ok();
        if let Some(alias) = self.alias(key) {
            self.db.set_source(&alias, text.clone());
        }
        self.db.set_source(key, text);
    }
}

/// Which of the `open` files `changed` keys can affect: themselves and the files that
/// import one of them, directly or not.
pub fn affected(db: &Database, open: &[&String], changed: &[String]) -> Vec<String> {
    open.iter()
        .filter(|k| {
            // Every key the file's imports name, directly or not — a missing one too
            // (a deleted import is a change its importers must hear of).
            let root = db.file(k);
            let closure = import_closure(db, root);
            changed.contains(k)
                || std::iter::once(root)
                    .chain(closure.files.iter().copied())
                    .flat_map(|f| {
                        let from = f.key(db).clone();
                        factory_compiler::db::file_ast(db, f)
                            .imports
                            .iter()
                            .map(move |imp| factory_compiler::db::import_key(&from, &imp.path))
                            .collect::<Vec<_>>()
                    })
                    .any(|named| changed.contains(&named))
        })
        .map(|k| k.to_string())
        .collect()
}

/// The LSP diagnostics of `key` (those located in the file itself), shown at `uri`.
pub fn lsp_diagnostics(
    db: &Database,
    key: &str,
    uri: &lsp_types::Uri,
) -> Vec<lsp_types::Diagnostic> {
    let text = db.file(key).text(db);
    let index = crate::position::LineIndex::new(text);
    file_diagnostics(db, db.file(key))
        .iter()
        .filter(|d| d.file == key)
        .map(|d| crate::convert::diagnostic(d, &index, uri))
        .collect()
}
