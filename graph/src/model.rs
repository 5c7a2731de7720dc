//! The graph as data: nodes, links and the NetworkX node-link document they are
//! written as, plus the per-file facts the graph is assembled from.
//!
//! Everything a file contributes (its node, its definitions, its `contains` links and
//! the references it makes by name) is a [`FileFacts`]; the graph is a pure function of
//! the facts of every file ([`crate::resolve::assemble`]), and a stored graph gives its
//! facts back ([`CodeGraph::into_facts`]). An incremental update swaps the facts of the
//! changed files and assembles again, so it equals a full extract by construction.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Version of the document layout, bumped when a stored graph can no longer be read.
pub const FORMAT: u32 = 1;

/// Version of the extraction rules. A stored graph built by other rules is parsed
/// again in full by an update, since its per-file facts would differ.
pub const EXTRACTOR: u32 = 1;

/// A language the graph parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Go,
}

impl Language {
    /// The language of a path, from its extension; `None` for languages not parsed.
    pub fn of_path(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" | "tsx" => Language::TypeScript,
            "go" => Language::Go,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Go => "go",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A source file (a module, in most of the languages parsed).
    File,
    /// A module declared inside a file (Rust `mod x { ... }`).
    Module,
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    /// A type alias or another named type.
    Type,
    /// Something imported from outside the project (a crate, package or module).
    External,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Module => "module",
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Class => "class",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Trait => "trait",
            Kind::Interface => "interface",
            Kind::Type => "type",
            Kind::External => "external",
        }
    }

    /// A definition inside a file (not a file, not an external module).
    pub fn is_definition(self) -> bool {
        !matches!(self, Kind::File | Kind::External)
    }

    /// Something a call by name can reach (constructors included).
    pub fn is_callable(self) -> bool {
        matches!(self, Kind::Function | Kind::Method | Kind::Class)
    }

    /// Something a class or type can inherit from or implement.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            Kind::Class | Kind::Struct | Kind::Enum | Kind::Trait | Kind::Interface | Kind::Type
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How two nodes relate. Also the link's `key`, so a pair of nodes has at most one link
/// per relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// A file or definition holds a definition.
    Contains,
    /// A file imports another file or an external module.
    Imports,
    /// A definition calls a function, method or constructor, resolved by name.
    Calls,
    /// A type extends another (class bases, interface extension, Go embedding).
    Inherits,
    /// A type implements a trait or interface.
    Implements,
    /// A test (function or file) exercises the definition or file its name names.
    Tests,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Contains => "contains",
            Relation::Imports => "imports",
            Relation::Calls => "calls",
            Relation::Inherits => "inherits",
            Relation::Implements => "implements",
            Relation::Tests => "tests",
        }
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One node of the node-link document. File nodes carry the file's hash, size, flags
/// and the references it makes; definition nodes carry their place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// `path` for a file, `path::Outer::name` for a definition (`#2`, `#3`... when a
    /// file defines the same qualified name twice), `external:name` for an import from
    /// outside the project.
    pub id: String,
    pub kind: Kind,
    pub name: String,
    /// The file (relative to the project root, `/`-separated) holding the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<Language>,
    /// First line, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Last line, 1-based, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// A test function, test class or test file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub test: bool,
    /// File nodes: SHA-256 of the content, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// File nodes: number of lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    /// File nodes: the parser met a syntax error; what parsed is still extracted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub parse_error: bool,
    /// File nodes: the content is not valid UTF-8 (names are read lossily).
    #[serde(default, skip_serializing_if = "is_false")]
    pub non_utf8: bool,
    /// File nodes: every reference the file makes by name, resolved into links when
    /// the graph is assembled (kept so an update can resolve them again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<Ref>,
}

impl Node {
    /// A bare node of the given kind; the optional fields are empty.
    pub fn new(id: impl Into<String>, kind: Kind, name: impl Into<String>) -> Self {
        Node {
            id: id.into(),
            kind,
            name: name.into(),
            file: None,
            language: None,
            line: None,
            end_line: None,
            test: false,
            hash: None,
            lines: None,
            parse_error: false,
            non_utf8: false,
            refs: Vec::new(),
        }
    }
}

/// A reference by name, made in one file, that becomes zero or more links.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Ref {
    /// The node making the reference (the innermost definition, or the file).
    pub from: String,
    pub relation: Relation,
    /// The name referred to: a callee, a base type, a tested name, an import path as
    /// written (`crate::store::tsv`, `..util`, `./x`, `github.com/a/b`).
    pub name: String,
    /// What qualified the name (`Type` in `Type::new()`, the receiver type of
    /// `self.f()`; `mod` for a Rust `mod x;`, `file` for a test file's subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qual: Option<String>,
    pub line: u32,
}

/// One link of the node-link document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Link {
    pub source: String,
    pub target: String,
    /// The relation again: NetworkX's multigraph key.
    pub key: Relation,
    pub relation: Relation,
    /// How many references this link stands for (call sites, import lines).
    pub count: u32,
}

/// The `graph` attributes of the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// Always `factory-graph`.
    pub tool: String,
    /// [`FORMAT`].
    pub format: u32,
    /// [`EXTRACTOR`] of the rules that built the graph.
    #[serde(default)]
    pub extractor: u32,
    /// HEAD when the graph was built (`None` in a repository without commits).
    pub built_at_commit: Option<String>,
    /// Tracked files in languages that are not parsed, counted per extension.
    pub other_languages: BTreeMap<String, u32>,
    /// Those files' paths.
    pub other_files: Vec<String>,
}

/// The whole graph, as the NetworkX node-link document it is stored as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeGraph {
    pub directed: bool,
    pub multigraph: bool,
    pub graph: Meta,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
}

/// What one source file contributes to the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct FileFacts {
    /// The file node (with its hash, flags and references).
    pub file: Node,
    /// Its definitions, in source order.
    pub defs: Vec<Node>,
    /// `(container, member)` pairs, all inside the file.
    pub contains: Vec<(String, String)>,
}

impl FileFacts {
    pub fn path(&self) -> &str {
        &self.file.id
    }
}

impl CodeGraph {
    /// The node with this id.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes
            .binary_search_by(|n| n.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.nodes[i])
    }

    /// File nodes, by path.
    pub fn files(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.kind == Kind::File)
    }

    /// Splits the graph back into the facts of each file (externals and resolved
    /// links are derived data and are dropped).
    pub fn into_facts(self) -> BTreeMap<String, FileFacts> {
        let mut facts: BTreeMap<String, FileFacts> = BTreeMap::new();
        let mut defs: Vec<Node> = Vec::new();
        for node in self.nodes {
            match node.kind {
                Kind::File => {
                    facts.insert(
                        node.id.clone(),
                        FileFacts {
                            file: node,
                            defs: Vec::new(),
                            contains: Vec::new(),
                        },
                    );
                }
                Kind::External => {}
                _ => defs.push(node),
            }
        }
        let mut file_of: BTreeMap<String, String> = BTreeMap::new();
        for def in defs {
            if let Some(f) = def.file.clone()
                && let Some(ff) = facts.get_mut(&f)
            {
                file_of.insert(def.id.clone(), f);
                ff.defs.push(def);
            }
        }
        for link in self.links {
            if link.relation != Relation::Contains {
                continue;
            }
            let file = if facts.contains_key(&link.source) {
                Some(link.source.clone())
            } else {
                file_of.get(&link.source).cloned()
            };
            if let Some(ff) = file.and_then(|f| facts.get_mut(&f)) {
                ff.contains.push((link.source, link.target));
            }
        }
        for ff in facts.values_mut() {
            ff.defs.sort_by_key(|d| (d.line, d.id.clone()));
        }
        facts
    }
}
