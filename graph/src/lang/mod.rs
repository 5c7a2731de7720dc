//! Parsing one file with tree-sitter and turning its syntax tree into [`FileFacts`]:
//! definitions, `contains` pairs and references by name. One module per language
//! walks the tree; this one holds what they share.

mod go;
mod js;
mod python;
mod rust;

use std::collections::{BTreeSet, HashMap};

use sha2::{Digest, Sha256};
use tree_sitter::{Node as TsNode, Parser};

use crate::model::{FileFacts, Kind, Language, Node, Ref, Relation};

/// One tree-sitter parser per language, reused across files on one thread.
#[derive(Default)]
pub struct Parsers {
    by_grammar: HashMap<&'static str, Parser>,
}

impl Parsers {
    fn parse(&mut self, path: &str, lang: Language, bytes: &[u8]) -> Option<tree_sitter::Tree> {
        let (key, grammar): (&'static str, tree_sitter::Language) = match lang {
            Language::Rust => ("rust", tree_sitter_rust::LANGUAGE.into()),
            Language::Python => ("python", tree_sitter_python::LANGUAGE.into()),
            Language::JavaScript => ("javascript", tree_sitter_javascript::LANGUAGE.into()),
            Language::TypeScript if path.ends_with(".tsx") => {
                ("tsx", tree_sitter_typescript::LANGUAGE_TSX.into())
            }
            Language::TypeScript => (
                "typescript",
                tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            ),
            Language::Go => ("go", tree_sitter_go::LANGUAGE.into()),
        };
        let parser = match self.by_grammar.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut p = Parser::new();
                // A grammar whose ABI this tree-sitter cannot load is a build problem;
                // the file is then kept unparsed, flagged as a parse error.
                p.set_language(&grammar).ok()?;
                v.insert(p)
            }
        };
        parser.parse(bytes, None)
    }
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

fn count_lines(bytes: &[u8]) -> u32 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    let last = usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    u32::try_from(newlines + last).unwrap_or(u32::MAX)
}

/// Parses `bytes` (the content of `path`, relative to the project root) and extracts
/// its facts. Never fails: a syntax error sets `parse_error` and what parsed is kept; a
/// file that is not UTF-8 sets `non_utf8` and its names are read lossily.
pub fn extract_file(parsers: &mut Parsers, path: &str, lang: Language, bytes: &[u8]) -> FileFacts {
    let mut file = Node::new(path, Kind::File, file_name(path));
    file.file = Some(path.to_owned());
    file.language = Some(lang);
    file.hash = Some(content_hash(bytes));
    file.lines = Some(count_lines(bytes));
    file.non_utf8 = std::str::from_utf8(bytes).is_err();
    file.line = Some(1);
    file.test = is_test_file(path, lang);
    let mut cx = Cx {
        src: bytes,
        path,
        lang,
        facts: FileFacts {
            file,
            defs: Vec::new(),
            contains: Vec::new(),
        },
        scope: Vec::new(),
        seen: HashMap::new(),
    };
    match parsers.parse(path, lang, bytes) {
        Some(tree) => {
            let root = tree.root_node();
            cx.facts.file.parse_error = root.has_error();
            match lang {
                Language::Rust => rust::walk(&mut cx, root),
                Language::Python => python::walk(&mut cx, root),
                Language::JavaScript | Language::TypeScript => js::walk(&mut cx, root),
                Language::Go => go::walk(&mut cx, root),
            }
        }
        None => cx.facts.file.parse_error = true,
    }
    cx.file_level_test_ref();
    cx.finish()
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The file's name without directory and extensions (`a/b.test.ts` → `b.test`).
fn stem(path: &str) -> &str {
    let name = file_name(path);
    name.split_once('.').map_or(name, |(s, _)| s)
}

/// Whether the path names a test file by its language's convention.
pub fn is_test_file(path: &str, lang: Language) -> bool {
    let name = file_name(path);
    let in_test_dir = path
        .split('/')
        .any(|seg| matches!(seg, "tests" | "test" | "__tests__"));
    match lang {
        Language::Rust => path.starts_with("tests/") || path.contains("/tests/"),
        Language::Python => {
            name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py"
        }
        Language::JavaScript | Language::TypeScript => {
            name.contains(".test.") || name.contains(".spec.") || in_test_dir
        }
        Language::Go => name.ends_with("_test.go"),
    }
}

/// The subject a test file's name names (`test_parser.py` → `parser`), if any.
fn tested_file_subject(path: &str, lang: Language) -> Option<String> {
    let name = file_name(path);
    let subject = match lang {
        Language::Python => name
            .strip_suffix(".py")
            .and_then(|s| s.strip_prefix("test_").or_else(|| s.strip_suffix("_test"))),
        Language::Go => name.strip_suffix("_test.go"),
        Language::JavaScript | Language::TypeScript => {
            let s = stem(path);
            let full = name.split_once('.').map_or("", |(_, rest)| rest);
            (full.starts_with("test.") || full.starts_with("spec.")).then_some(s)
        }
        Language::Rust => {
            (path.starts_with("tests/") || path.contains("/tests/")).then(|| stem(path))
        }
    }?;
    (!subject.is_empty()).then(|| subject.to_owned())
}

/// The name a test function or class names by convention (`test_parse` → `parse`,
/// `TestParse` → `Parse`, `parse_test` → `parse`).
pub fn tested_name(name: &str) -> Option<&str> {
    let subject = name
        .strip_prefix("test_")
        .or_else(|| name.strip_suffix("_test"))
        .or_else(|| {
            name.strip_prefix("Test")
                .filter(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
        })?;
    (!subject.is_empty()).then_some(subject)
}

/// One enclosing definition while walking.
struct Scope {
    /// Node id (for a Rust `impl` or a Go method receiver: the id the type would have
    /// in this file, which may not exist).
    id: String,
    /// Its name (the type's name for an `impl`).
    name: String,
    /// A type-like scope (class, impl, trait, interface): functions in it are methods.
    is_type: bool,
}

/// The walk's state for one file.
pub(crate) struct Cx<'a> {
    src: &'a [u8],
    path: &'a str,
    lang: Language,
    facts: FileFacts,
    scope: Vec<Scope>,
    seen: HashMap<String, u32>,
}

impl Cx<'_> {
    /// The text of a syntax node (lossy for non-UTF-8 bytes).
    fn text(&self, node: TsNode) -> String {
        let bytes = self.src.get(node.byte_range()).unwrap_or_default();
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn field_text(&self, node: TsNode, field: &str) -> Option<String> {
        node.child_by_field_name(field).map(|n| self.text(n))
    }

    /// The id of whatever encloses the current position: innermost scope, else the file.
    fn owner(&self) -> String {
        self.scope
            .last()
            .map_or_else(|| self.path.to_owned(), |s| s.id.clone())
    }

    /// The innermost enclosing type's name (`self`/`this` resolve to it).
    fn enclosing_type(&self) -> Option<String> {
        self.scope
            .iter()
            .rev()
            .find(|s| s.is_type)
            .map(|s| s.name.clone())
    }

    fn in_type(&self) -> bool {
        self.scope.last().is_some_and(|s| s.is_type)
    }

    /// `path::Outer::name`, made unique within the file.
    fn qualified(&mut self, name: &str) -> String {
        let mut id = self.path.to_owned();
        for s in &self.scope {
            id.push_str("::");
            id.push_str(&s.name);
        }
        id.push_str("::");
        id.push_str(name);
        let n = self.seen.entry(id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            id = format!("{id}#{n}");
        }
        id
    }

    /// Adds a definition of `kind` named `name` spanning `node`, contained in the
    /// current owner; returns its id.
    fn define(&mut self, kind: Kind, name: &str, node: TsNode) -> String {
        let id = self.qualified(name);
        let mut def = Node::new(id.clone(), kind, name);
        def.file = Some(self.path.to_owned());
        def.line = Some(line_of(node.start_position().row));
        def.end_line = Some(line_of(node.end_position().row));
        let owner = self.owner();
        self.facts.contains.push((owner, id.clone()));
        self.facts.defs.push(def);
        id
    }

    fn mark_test(&mut self, id: &str) {
        if let Some(def) = self.facts.defs.iter_mut().rev().find(|d| d.id == id) {
            def.test = true;
        }
    }

    /// Adds a test's reference to what its name names.
    fn test_ref(&mut self, id: &str, name: &str, node: TsNode) {
        if let Some(subject) = tested_name(name) {
            let subject = subject.to_owned();
            self.reference(id.to_owned(), Relation::Tests, subject, None, node);
        }
    }

    fn reference(
        &mut self,
        from: String,
        relation: Relation,
        name: String,
        qual: Option<String>,
        node: TsNode,
    ) {
        if name.is_empty() {
            return;
        }
        self.facts.file.refs.push(Ref {
            from,
            relation,
            name,
            qual,
            line: line_of(node.start_position().row),
        });
    }

    /// A call of `name` (qualified by `qual`) from the current owner.
    fn call(&mut self, name: String, qual: Option<String>, node: TsNode) {
        let qual = match qual.as_deref() {
            Some("self" | "this" | "Self" | "cls") => self.enclosing_type(),
            _ => qual,
        };
        let from = self.owner();
        self.reference(from, Relation::Calls, name, qual, node);
    }

    /// An import made by the file.
    fn import(&mut self, name: String, qual: Option<String>, node: TsNode) {
        let from = self.path.to_owned();
        self.reference(from, Relation::Imports, name, qual, node);
    }

    fn push(&mut self, id: String, name: &str, is_type: bool) {
        self.scope.push(Scope {
            id,
            name: name.to_owned(),
            is_type,
        });
    }

    fn pop(&mut self) {
        self.scope.pop();
    }

    /// Walks every named child with `f`.
    fn children(&mut self, node: TsNode, f: fn(&mut Self, TsNode)) {
        let mut cursor = node.walk();
        let kids: Vec<TsNode> = node.named_children(&mut cursor).collect();
        for child in kids {
            f(self, child);
        }
    }

    fn file_level_test_ref(&mut self) {
        if !self.facts.file.test {
            return;
        }
        if let Some(subject) = tested_file_subject(self.path, self.lang) {
            self.facts.file.refs.push(Ref {
                from: self.path.to_owned(),
                relation: Relation::Tests,
                name: subject,
                qual: Some("file".to_owned()),
                line: 1,
            });
        }
    }

    /// Re-homes members of a type defined elsewhere (a Rust `impl` or Go method of a
    /// type in another file) onto the file, and returns the facts.
    fn finish(mut self) -> FileFacts {
        let ids: BTreeSet<String> = self.facts.defs.iter().map(|d| d.id.clone()).collect();
        let file = self.path.to_owned();
        for (owner, _) in &mut self.facts.contains {
            if *owner != file && !ids.contains(owner.as_str()) {
                owner.clone_from(&file);
            }
        }
        for r in &mut self.facts.file.refs {
            if r.from != file && !ids.contains(r.from.as_str()) {
                r.from.clone_from(&file);
            }
        }
        self.facts.contains.sort();
        self.facts.contains.dedup();
        self.facts
    }
}

fn line_of(row: usize) -> u32 {
    u32::try_from(row + 1).unwrap_or(u32::MAX)
}

/// The last identifier of a path-like name, with generics dropped
/// (`a::b::Foo<T>` → `Foo`, `pkg.Base` → `Base`, `*T` → `T`).
fn last_segment(text: &str) -> String {
    let no_generics = text.split(['<', '[', '(']).next().unwrap_or(text);
    no_generics
        .rsplit(['.', ':'])
        .next()
        .unwrap_or(no_generics)
        .trim_start_matches(['*', '&'])
        .trim()
        .to_owned()
}
