//! The salsa database: source files are inputs; parsing, import resolution, lowering
//! and validation are tracked queries.
//!
//! Firewall: [`file_ast`] and everything after it hold no source positions, so an edit
//! that only moves text (a comment, a blank line) produces an equal tree and salsa
//! re-runs nothing downstream. Positions are looked up only at the very end, in
//! [`crate::check::file_diagnostics`].

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use salsa::Setter;

use crate::syntax::{self, Ast, Chunks, ItemId, Level, Parsed, ParsedChunk};

/// One source file. `key` is the loader's name for it: a path, or `std/<name>.fwf`.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub key: String,
    #[returns(ref)]
    pub text: String,
    /// False when the loader found nothing under this key (the text is then empty).
    #[returns(copy)]
    pub exists: bool,
}

/// The roles that have a prompt; `None` turns the role check off.
#[salsa::input(debug)]
pub struct Roles {
    #[returns(ref)]
    pub names: Option<BTreeSet<String>>,
}

#[salsa::db]
pub trait Db: salsa::Database {
    /// The file under `key`, read through the loader on first use.
    fn file(&self, key: &str) -> SourceFile;
    fn roles(&self) -> Roles;
}

/// Where source text comes from. The compiler does no I/O of its own: the command line
/// reads the disk (and the embedded standard library), the language server adds open
/// editor buffers on top.
pub trait Loader: Send + Sync {
    fn load(&self, key: &str) -> Option<String>;
}

#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    files: Arc<Mutex<HashMap<String, SourceFile>>>,
    loader: Arc<dyn Loader>,
    roles: Option<Roles>,
    log: Option<Arc<Mutex<Vec<String>>>>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn file(&self, key: &str) -> SourceFile {
        let mut files = match self.files.lock() {
            Ok(f) => f,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(f) = files.get(key) {
            return *f;
        }
        let text = self.loader.load(key);
        let exists = text.is_some();
        let file = SourceFile::new(self, key.to_string(), text.unwrap_or_default(), exists);
        files.insert(key.to_string(), file);
        file
    }

    fn roles(&self) -> Roles {
        self.roles.unwrap_or_else(|| Roles::new(self, None))
    }
}

impl Database {
    pub fn new(loader: Arc<dyn Loader>, roles: Option<BTreeSet<String>>) -> Database {
        Database::build(loader, roles, None)
    }

    /// A database that records the name of every query it executes (for tests of
    /// incremental re-checking).
    pub fn with_log(
        loader: Arc<dyn Loader>,
        roles: Option<BTreeSet<String>>,
    ) -> (Database, Arc<Mutex<Vec<String>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let db = Database::build(loader, roles, Some(log.clone()));
        (db, log)
    }

    fn build(
        loader: Arc<dyn Loader>,
        roles: Option<BTreeSet<String>>,
        log: Option<Arc<Mutex<Vec<String>>>>,
    ) -> Database {
        let callback: Option<Box<dyn Fn(salsa::Event) + Send + Sync>> = log.clone().map(|log| {
            Box::new(move |event: salsa::Event| {
                if let salsa::EventKind::WillExecute { database_key } = event.kind
                    && let Ok(mut l) = log.lock()
                {
                    l.push(format!("{database_key:?}"));
                }
            }) as Box<dyn Fn(salsa::Event) + Send + Sync>
        });
        let mut db = Database {
            storage: salsa::Storage::new(callback),
            files: Arc::default(),
            loader,
            roles: None,
            log,
        };
        db.roles = Some(Roles::new(&db, roles));
        db
    }

    /// Replaces a file's text (an editor change, or a file changed on disk).
    pub fn set_text(&mut self, key: &str, text: String) -> SourceFile {
        self.set_source(key, Some(text))
    }

    /// Sets a file to what its source now says: its text, or `None` when it is gone (a
    /// deleted file is missing, as for a fresh database — not an empty file).
    pub fn set_source(&mut self, key: &str, text: Option<String>) -> SourceFile {
        let file = self.file(key);
        let exists = text.is_some();
        let text = text.unwrap_or_default();
        if file.text(self) != &text {
            file.set_text(self).to(text);
        }
        if file.exists(self) != exists {
            file.set_exists(self).to(exists);
        }
        file
    }

    pub fn set_roles(&mut self, roles: Option<BTreeSet<String>>) {
        let r = self.roles();
        r.set_names(self).to(roles);
    }

    /// Forgets the recorded query executions.
    pub fn clear_log(&self) {
        if let Some(log) = &self.log
            && let Ok(mut l) = log.lock()
        {
            l.clear();
        }
    }
}

/// One item of a file's outline: its stable id (scope, kind, name — never its place),
/// the level it is parsed at, and its text. When the file is edited the outline is made
/// again; an item whose text is unchanged keeps its parse.
#[salsa::tracked(debug)]
pub struct Item<'db> {
    #[returns(ref)]
    pub id: ItemId,
    #[tracked]
    #[returns(copy)]
    pub level: Level,
    #[tracked]
    #[returns(ref)]
    pub text: String,
}

/// The items of a file in order, each with where it starts.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct Outline<'db> {
    pub items: Vec<(usize, Item<'db>)>,
}

/// Splits the file into items (a quick scan, no grammar). Positions change with almost
/// every edit, so the result is never compared.
#[salsa::tracked(returns(ref), no_eq)]
pub fn outline<'db>(db: &'db dyn Db, file: SourceFile) -> Outline<'db> {
    let text = file.text(db);
    let items = syntax::outline(text)
        .into_iter()
        .map(|c| {
            let item = Item::new(db, c.id, c.level, text[c.start..c.end].to_string());
            (c.start, item)
        })
        .collect();
    Outline { items }
}

/// One item parsed on its own: re-run only when that item's text changes.
#[salsa::tracked(returns(ref))]
pub fn parse_item<'db>(db: &'db dyn Db, item: Item<'db>) -> ParsedChunk {
    syntax::parse_chunk(item.text(db), item.level(db))
}

/// The file's tree, source map and syntax errors, placed from its items' parses. It
/// holds positions, so it changes with every edit and is never compared; the
/// position-free [`file_ast`] is the firewall.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse_file(db: &dyn Db, file: SourceFile) -> Parsed {
    struct Items<'a> {
        db: &'a dyn Db,
        items: &'a [(usize, Item<'a>)],
    }
    impl Chunks for Items<'_> {
        fn at(&self, pos: usize, level: Level) -> Option<&ParsedChunk> {
            let i = self.items.binary_search_by_key(&pos, |(s, _)| *s).ok()?;
            let item = self.items[i].1;
            (item.level(self.db) == level).then(|| parse_item(self.db, item))
        }
    }
    let items = Items {
        db,
        items: &outline(db, file).items,
    };
    syntax::parse_with(file.text(db), &items)
}

/// The tree without positions: equal across edits that only move text.
#[salsa::tracked(returns(ref))]
pub fn file_ast(db: &dyn Db, file: SourceFile) -> Arc<Ast> {
    parse_file(db, file).ast.clone()
}

/// The key an `import` names, relative to the importing file: `std/x` is the standard
/// library, anything else a path relative to the importer's directory; `.fwf` is added
/// when missing.
pub fn import_key(from: &str, spec: &str) -> String {
    let spec = if spec.ends_with(".fwf") {
        spec.to_string()
    } else {
        format!("{spec}.fwf")
    };
    if spec.starts_with("std/") {
        return spec;
    }
    let dir = match from.rfind('/') {
        Some(i) => &from[..i],
        None => "",
    };
    let joined = if dir.is_empty() {
        spec
    } else {
        format!("{dir}/{spec}")
    };
    crate::paths::normalize(&joined)
}
