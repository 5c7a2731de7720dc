//! Assembling the graph from the facts of every file: references by name become
//! links. A call resolves, in order of preference, to definitions of that name in the
//! qualifying type, in the same file, in the files the caller imports, and otherwise
//! anywhere if the name is defined in at most [`AMBIGUOUS`] places (a name defined in
//! more places than that, like `new`, is left unresolved rather than guessed).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::{
    CodeGraph, EXTRACTOR, FORMAT, FileFacts, Kind, Language, Link, Meta, Node, Ref, Relation,
};

/// A name defined in more places than this resolves only through qualification, the
/// caller's file or its imports.
pub const AMBIGUOUS: usize = 3;

/// Builds the graph from per-file facts. Pure and deterministic: nodes sorted by id,
/// links by (source, target, key).
pub fn assemble(
    facts: &BTreeMap<String, FileFacts>,
    other_files: Vec<String>,
    built_at_commit: Option<String>,
) -> CodeGraph {
    let index = Index::new(facts);
    let mut nodes: Vec<Node> = Vec::new();
    let mut counts: BTreeMap<(String, String, Relation), u32> = BTreeMap::new();
    let mut externals: BTreeSet<String> = BTreeSet::new();
    let mut add = |from: &str, to: &str, rel: Relation| {
        if from != to {
            *counts
                .entry((from.to_owned(), to.to_owned(), rel))
                .or_insert(0) += 1;
        }
    };
    // Imports first: call resolution prefers the files a caller imports.
    let mut imported: HashMap<&str, BTreeSet<String>> = HashMap::new();
    for (path, ff) in facts {
        nodes.push(ff.file.clone());
        nodes.extend(ff.defs.iter().cloned());
        for (a, b) in &ff.contains {
            add(a, b, Relation::Contains);
        }
        for r in ff
            .file
            .refs
            .iter()
            .filter(|r| r.relation == Relation::Imports)
        {
            match index.resolve_import(path, ff.file.language, r) {
                Import::Files(files) => {
                    for f in files {
                        add(&r.from, &f, Relation::Imports);
                        imported.entry(path.as_str()).or_default().insert(f);
                    }
                }
                Import::External(name) => {
                    let id = format!("external:{name}");
                    add(&r.from, &id, Relation::Imports);
                    externals.insert(name);
                }
                Import::Unresolved => {}
            }
        }
    }
    let empty = BTreeSet::new();
    for (path, ff) in facts {
        let imports = imported.get(path.as_str()).unwrap_or(&empty);
        for r in ff
            .file
            .refs
            .iter()
            .filter(|r| r.relation != Relation::Imports)
        {
            for target in index.resolve_name(path, imports, r) {
                add(&r.from, target, r.relation);
            }
        }
    }
    for name in externals {
        nodes.push(Node::new(format!("external:{name}"), Kind::External, name));
    }
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let links = counts
        .into_iter()
        .map(|((source, target, relation), count)| Link {
            source,
            target,
            key: relation,
            relation,
            count,
        })
        .collect();
    let mut other_languages: BTreeMap<String, u32> = BTreeMap::new();
    for f in &other_files {
        let name = f.rsplit('/').next().unwrap_or(f);
        let ext = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
            _ => "(none)".to_owned(),
        };
        *other_languages.entry(ext).or_insert(0) += 1;
    }
    CodeGraph {
        directed: true,
        multigraph: true,
        graph: Meta {
            tool: "factory-graph".to_owned(),
            format: FORMAT,
            extractor: EXTRACTOR,
            built_at_commit,
            other_languages,
            other_files,
        },
        nodes,
        links,
    }
}

enum Import {
    Files(Vec<String>),
    External(String),
    Unresolved,
}

/// Lookup tables over every file's definitions.
struct Index<'a> {
    files: BTreeSet<&'a str>,
    by_name: HashMap<&'a str, Vec<&'a Node>>,
    /// Directory → its non-test Go files (a Go import names a package directory).
    go_dirs: BTreeMap<&'a str, Vec<&'a str>>,
    /// File stem → source files (test subjects).
    by_stem: HashMap<&'a str, Vec<&'a str>>,
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rest: &str) -> String {
    let mut parts: Vec<&str> = if dir.is_empty() {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// The owning type's name encoded in a definition id (`f.rs::Type::m` → `Type`).
fn parent_name(node: &Node) -> Option<&str> {
    let file = node.file.as_deref()?;
    let local = node.id.strip_prefix(file)?.strip_prefix("::")?;
    let mut segs: Vec<&str> = local.split("::").collect();
    segs.pop();
    segs.pop()
}

impl<'a> Index<'a> {
    fn new(facts: &'a BTreeMap<String, FileFacts>) -> Self {
        let mut by_name: HashMap<&str, Vec<&Node>> = HashMap::new();
        let mut go_dirs: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut by_stem: HashMap<&str, Vec<&str>> = HashMap::new();
        for (path, ff) in facts {
            for d in &ff.defs {
                by_name.entry(d.name.as_str()).or_default().push(d);
            }
            if ff.file.test {
                continue;
            }
            if ff.file.language == Some(Language::Go) {
                go_dirs.entry(dir_of(path)).or_default().push(path);
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            let stem = name.split_once('.').map_or(name, |(s, _)| s);
            by_stem.entry(stem).or_default().push(path);
        }
        Index {
            files: facts.keys().map(String::as_str).collect(),
            by_name,
            go_dirs,
            by_stem,
        }
    }

    fn has(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    fn resolve_import(&self, from: &str, lang: Option<Language>, r: &Ref) -> Import {
        let found = match lang {
            Some(Language::Rust) => return self.rust_import(from, r),
            Some(Language::Python) => return self.python_import(from, &r.name),
            Some(Language::JavaScript | Language::TypeScript) => self.js_import(from, &r.name),
            Some(Language::Go) => return self.go_import(from, &r.name),
            None => None,
        };
        match found {
            Some(f) => Import::Files(vec![f]),
            None if r.name.starts_with('.') => Import::Unresolved,
            None => {
                let mut segs = r.name.split('/');
                let first = segs.next().unwrap_or_default();
                let pkg = if first.starts_with('@') {
                    format!("{first}/{}", segs.next().unwrap_or_default())
                } else {
                    first.to_owned()
                };
                Import::External(pkg)
            }
        }
    }

    /// The directory holding the crate root (`lib.rs`/`main.rs`) above `from`.
    fn rust_crate_dir(&self, from: &str) -> String {
        let mut dir = dir_of(from);
        loop {
            for root in ["lib.rs", "main.rs"] {
                if self.has(&join(dir, root)) {
                    return dir.to_owned();
                }
            }
            if dir.is_empty() {
                return dir_of(from).to_owned();
            }
            dir = dir_of(dir);
        }
    }

    /// Where `from`'s child modules live: `src/a.rs` → `src/a`, `src/a/mod.rs` → `src/a`.
    fn rust_module_dir(&self, from: &str) -> String {
        let dir = dir_of(from);
        let name = from.rsplit('/').next().unwrap_or(from);
        match name {
            "mod.rs" | "lib.rs" | "main.rs" => dir.to_owned(),
            _ => join(dir, name.trim_end_matches(".rs")),
        }
    }

    fn rust_module_file(&self, dir: &str, seg: &str) -> Option<String> {
        [
            join(dir, &format!("{seg}.rs")),
            join(dir, &format!("{seg}/mod.rs")),
        ]
        .into_iter()
        .find(|p| self.has(p))
    }

    fn rust_import(&self, from: &str, r: &Ref) -> Import {
        if r.qual.as_deref() == Some("mod") {
            let dir = self.rust_module_dir(from);
            return match self.rust_module_file(&dir, &r.name) {
                Some(f) => Import::Files(vec![f]),
                None => Import::Unresolved,
            };
        }
        let segs: Vec<&str> = r.name.split("::").filter(|s| !s.is_empty()).collect();
        let Some((&first, rest)) = segs.split_first() else {
            return Import::Unresolved;
        };
        let crate_dir = self.rust_crate_dir(from);
        let crate_root = ["lib.rs", "main.rs"]
            .into_iter()
            .map(|r| join(&crate_dir, r))
            .find(|p| self.has(p));
        let (mut dir, mut found, rest) = match first {
            "crate" => (crate_dir.clone(), crate_root, rest),
            "self" => (self.rust_module_dir(from), Some(from.to_owned()), rest),
            "super" => {
                let mut dir = self.rust_module_dir(from);
                let mut rest = rest;
                dir = dir_of(&dir).to_owned();
                while let Some((&"super", more)) = rest.split_first() {
                    dir = dir_of(&dir).to_owned();
                    rest = more;
                }
                let parent = self
                    .rust_module_file(dir_of(&dir), dir.rsplit('/').next().unwrap_or(&dir))
                    .or_else(|| {
                        ["lib.rs", "main.rs", "mod.rs"]
                            .into_iter()
                            .map(|r| join(&dir, r))
                            .find(|p| self.has(p))
                    });
                (dir, parent, rest)
            }
            // A child module of the current module (2018 paths), else another crate.
            seg => match self.rust_module_file(&self.rust_module_dir(from), seg) {
                Some(f) => (join(&self.rust_module_dir(from), seg), Some(f), rest),
                None => return Import::External(seg.to_owned()),
            },
        };
        for seg in rest {
            match self.rust_module_file(&dir, seg) {
                Some(f) => {
                    found = Some(f);
                    dir = join(&dir, seg);
                }
                None => break,
            }
        }
        match found {
            Some(f) if f != from => Import::Files(vec![f]),
            _ => Import::Unresolved,
        }
    }

    fn python_import(&self, from: &str, name: &str) -> Import {
        let dots = name.chars().take_while(|&c| c == '.').count();
        let rest = &name[dots..];
        let segs: Vec<&str> = rest.split('.').filter(|s| !s.is_empty()).collect();
        let bases: Vec<String> = if dots > 0 {
            let mut dir = dir_of(from).to_owned();
            for _ in 1..dots {
                dir = dir_of(&dir).to_owned();
            }
            vec![dir]
        } else {
            vec![String::new(), "src".to_owned(), dir_of(from).to_owned()]
        };
        for base in &bases {
            for n in (1..=segs.len()).rev() {
                let module = segs[..n].join("/");
                let module_dir = join(base, &module);
                for cand in [
                    format!("{module_dir}.py"),
                    format!("{module_dir}/__init__.py"),
                ] {
                    if self.has(&cand) && cand != from {
                        return Import::Files(vec![cand]);
                    }
                }
            }
            if dots > 0 && segs.is_empty() {
                let init = join(base, "__init__.py");
                if self.has(&init) && init != from {
                    return Import::Files(vec![init]);
                }
            }
        }
        match segs.first() {
            Some(first) if dots == 0 => Import::External((*first).to_owned()),
            _ => Import::Unresolved,
        }
    }

    fn js_import(&self, from: &str, name: &str) -> Option<String> {
        if !name.starts_with('.') {
            return None;
        }
        let base = join(dir_of(from), name);
        let stripped = base
            .strip_suffix(".js")
            .or_else(|| base.strip_suffix(".jsx"))
            .or_else(|| base.strip_suffix(".mjs"))
            .unwrap_or(&base)
            .to_owned();
        const EXTS: [&str; 7] = ["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts"];
        std::iter::once(base.clone())
            .chain(EXTS.iter().map(|e| format!("{stripped}.{e}")))
            .chain(EXTS.iter().map(|e| format!("{base}/index.{e}")))
            .find(|p| self.has(p))
    }

    fn go_import(&self, from: &str, name: &str) -> Import {
        let best = self
            .go_dirs
            .iter()
            .filter(|(dir, _)| {
                !dir.is_empty() && (name == **dir || name.ends_with(&format!("/{dir}")))
            })
            .max_by_key(|(dir, _)| dir.len());
        match best {
            Some((_, files)) => Import::Files(
                files
                    .iter()
                    .filter(|f| **f != from)
                    .map(|f| (*f).to_owned())
                    .collect(),
            ),
            None => Import::External(name.to_owned()),
        }
    }

    /// The targets of a call, inheritance or test reference.
    fn resolve_name(&self, from_file: &str, imports: &BTreeSet<String>, r: &Ref) -> Vec<&'a str> {
        if r.relation == Relation::Tests && r.qual.as_deref() == Some("file") {
            return self.tested_file(from_file, &r.name);
        }
        let wanted = |n: &Node| match r.relation {
            Relation::Calls => n.kind.is_callable(),
            Relation::Inherits | Relation::Implements => n.kind.is_type(),
            Relation::Tests => n.kind.is_definition() && !n.test,
            Relation::Contains | Relation::Imports => false,
        };
        let mut names = vec![r.name.clone()];
        if r.relation == Relation::Tests {
            // Go's TestParseLine tests parseLine as well as ParseLine.
            let mut chars = r.name.chars();
            if let Some(c) = chars.next() {
                let flipped: String = if c.is_uppercase() {
                    c.to_lowercase().chain(chars).collect()
                } else {
                    c.to_uppercase().chain(chars).collect()
                };
                names.push(flipped);
            }
        }
        for name in names {
            let cands: Vec<&Node> = self
                .by_name
                .get(name.as_str())
                .map(|v| {
                    v.iter()
                        .copied()
                        .filter(|n| wanted(n) && n.id != r.from)
                        .collect()
                })
                .unwrap_or_default();
            if cands.is_empty() {
                continue;
            }
            let picked = pick(&cands, from_file, imports, r.qual.as_deref());
            if !picked.is_empty() {
                return picked.into_iter().map(|n| n.id.as_str()).collect();
            }
        }
        Vec::new()
    }

    fn tested_file(&self, from_file: &str, subject: &str) -> Vec<&'a str> {
        let Some(cands) = self.by_stem.get(subject) else {
            return Vec::new();
        };
        let lang = |p: &str| Language::of_path(p);
        let same_lang: Vec<&str> = cands
            .iter()
            .copied()
            .filter(|p| lang(p) == lang(from_file) && *p != from_file)
            .collect();
        let same_dir: Vec<&str> = same_lang
            .iter()
            .copied()
            .filter(|p| dir_of(p) == dir_of(from_file))
            .collect();
        if !same_dir.is_empty() {
            same_dir
        } else if same_lang.len() <= AMBIGUOUS {
            same_lang
        } else {
            Vec::new()
        }
    }
}

fn pick<'n>(
    cands: &[&'n Node],
    from_file: &str,
    imports: &BTreeSet<String>,
    qual: Option<&str>,
) -> Vec<&'n Node> {
    if let Some(q) = qual {
        let by_qual: Vec<&Node> = cands
            .iter()
            .copied()
            .filter(|n| parent_name(n) == Some(q))
            .collect();
        if !by_qual.is_empty() {
            return by_qual;
        }
    }
    let in_file = |n: &&Node| n.file.as_deref() == Some(from_file);
    let same: Vec<&Node> = cands.iter().copied().filter(in_file).collect();
    if !same.is_empty() {
        return same;
    }
    let imported: Vec<&Node> = cands
        .iter()
        .copied()
        .filter(|n| n.file.as_ref().is_some_and(|f| imports.contains(f)))
        .collect();
    if !imported.is_empty() {
        return imported;
    }
    if cands.len() <= AMBIGUOUS {
        return cands.to_vec();
    }
    Vec::new()
}
