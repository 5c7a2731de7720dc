//! The checking pipeline over the database: imports → lowering → graph validation →
//! diagnostics with positions. Everything before [`file_diagnostics`] is position-free.

use std::collections::{BTreeMap, BTreeSet};

use crate::db::{Db, SourceFile, file_ast, import_key, parse_file};
use crate::diagnostic::{
    Code, Diagnostic, Fix, Places, Severity, SpanPlaces, Subject, to_diagnostic,
};
use crate::lower::{self, FileLoc, Lowered, Subgraphs};
use crate::syntax::{DeclKind, Loc};
use crate::validate::{self, Finding};

/// A file's imports, followed transitively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportClosure {
    /// Every file reachable through imports, the file itself excluded, in discovery order.
    pub files: Vec<SourceFile>,
    pub findings: Vec<Finding<FileLoc>>,
}

#[salsa::tracked(returns(ref))]
pub fn import_closure(db: &dyn Db, file: SourceFile) -> ImportClosure {
    let key = file.key(db).clone();
    let mut findings = Vec::new();
    let mut files = Vec::new();
    let mut seen = BTreeSet::from([key.clone()]);
    // Direct imports are checked here; imports of imported files are reported when
    // those files are checked.
    for (i, imp) in file_ast(db, file).imports.iter().enumerate() {
        let target = db.file(&import_key(&key, &imp.path));
        if !target.exists(db) {
            let at = FileLoc {
                file: key.clone(),
                loc: Loc::Import(i),
            };
            findings.push(
                Finding::new(Code::UnknownImport, at, format!("cannot find `{}` (looked for {})", imp.path, target.key(db)))
                    .about(Subject::Import(imp.path.clone()))
                    .label("not found")
                    .help("`std/<name>` imports the standard library; other paths are relative to this file (`./common`, `../lib/x.fwf`)"),
            );
        } else if let Some(chain) = path_to(db, target, &key) {
            let at = FileLoc {
                file: key.clone(),
                loc: Loc::Import(i),
            };
            findings.push(
                Finding::new(
                    Code::ImportCycle,
                    at,
                    format!(
                        "importing `{}` leads back to this file: {key} → {}",
                        imp.path,
                        chain.join(" → ")
                    ),
                )
                .about(Subject::Import(imp.path.clone()))
                .label("cycle")
                .help("move what both files need into a third file and import that from both"),
            );
        }
    }
    let mut queue: Vec<SourceFile> = vec![file];
    while let Some(f) = queue.pop() {
        let fkey = f.key(db).clone();
        for imp in &file_ast(db, f).imports {
            let target = db.file(&import_key(&fkey, &imp.path));
            if target.exists(db) && seen.insert(target.key(db).clone()) {
                files.push(target);
                queue.push(target);
            }
        }
    }
    ImportClosure { files, findings }
}

/// The chain of files through which `key` is reachable by imports from `from`
/// (both included), if it is.
fn path_to(db: &dyn Db, from: SourceFile, key: &str) -> Option<Vec<String>> {
    let mut parent: BTreeMap<String, Option<String>> = BTreeMap::new();
    parent.insert(from.key(db).clone(), None);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(f) = queue.pop_front() {
        let fkey = f.key(db).clone();
        if fkey == key {
            let mut chain = vec![fkey];
            while let Some(Some(p)) = chain.last().and_then(|k| parent.get(k)) {
                chain.push(p.clone());
            }
            chain.reverse();
            return Some(chain);
        }
        for imp in &file_ast(db, f).imports {
            let t = db.file(&import_key(&fkey, &imp.path));
            if t.exists(db) && !parent.contains_key(t.key(db)) {
                parent.insert(t.key(db).clone(), Some(fkey.clone()));
                queue.push_back(t);
            }
        }
    }
    None
}

/// Every workflow of a file, lowered, plus the findings on its declarations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLowering {
    pub workflows: Vec<Lowered>,
    pub findings: Vec<Finding<FileLoc>>,
}

#[salsa::tracked(returns(ref))]
pub fn lower_file(db: &dyn Db, file: SourceFile) -> FileLowering {
    let key = file.key(db).clone();
    let ast = file_ast(db, file);
    let closure = import_closure(db, file);
    let mut findings = closure.findings.clone();
    // Subgraphs visible here: this file's, then imported files'.
    let mut subgraphs: Subgraphs<'_> = BTreeMap::new();
    let mut first_decl: BTreeMap<&str, Loc> = BTreeMap::new();
    for d in &ast.decls {
        let loc = Loc::Decl(d.name.clone());
        // Duplicates are reported by the parser; the first declaration wins.
        if first_decl.insert(&d.name, loc).is_some() {
            continue;
        }
        if d.kind == DeclKind::Subgraph {
            subgraphs.insert(d.name.clone(), (key.clone(), d));
        }
    }
    let mut provided: Vec<(usize, BTreeSet<String>)> = Vec::new();
    for (i, imp) in ast.imports.iter().enumerate() {
        let target = db.file(&import_key(&key, &imp.path));
        let names = file_ast(db, target)
            .decls
            .iter()
            .filter(|d| d.kind == DeclKind::Subgraph)
            .map(|d| d.name.clone())
            .collect();
        provided.push((i, names));
    }
    for f in &closure.files {
        let fkey = f.key(db).clone();
        for d in file_ast(db, *f)
            .decls
            .iter()
            .filter(|d| d.kind == DeclKind::Subgraph)
        {
            subgraphs.entry(d.name.clone()).or_insert((fkey.clone(), d));
        }
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut workflows = Vec::new();
    for d in &ast.decls {
        match d.kind {
            DeclKind::Workflow { .. } => {
                let lowered = lower::lower(&key, d, &subgraphs);
                findings.extend(lowered.findings.iter().cloned());
                used.extend(lowered.used_subgraphs.iter().cloned());
                workflows.push(lowered);
            }
            DeclKind::Subgraph => {
                findings.extend(lower::check_subgraph(&key, d, &subgraphs));
                collect_uses(&d.body, &mut used);
            }
        }
    }
    for (i, names) in provided {
        let exists = db.file(&import_key(&key, &ast.imports[i].path)).exists(db);
        if exists && !names.iter().any(|n| used.contains(n)) {
            findings.push(
                Finding::new(
                    Code::UnusedImport,
                    FileLoc {
                        file: key.clone(),
                        loc: Loc::Import(i),
                    },
                    format!("nothing from `{}` is used", ast.imports[i].path),
                )
                .about(Subject::Import(ast.imports[i].path.clone()))
                .fix(Fix::RemoveLine {
                    keyword: "import".into(),
                })
                .label("unused import")
                .help("remove the import, or `use` one of its subgraphs"),
            );
        }
    }
    if ast.incomplete {
        // Text skipped by a syntax error may be what used the import, knob or node.
        findings.retain(|f| {
            !matches!(
                f.code,
                Code::UnusedImport | Code::UnusedKnob | Code::UnusedNode
            )
        });
    }
    FileLowering {
        workflows,
        findings,
    }
}

fn collect_uses(body: &crate::syntax::Body, used: &mut BTreeSet<String>) {
    used.extend(body.uses.iter().map(|u| u.subgraph.clone()));
    for p in &body.parallels {
        collect_uses(&p.body, used);
    }
}

/// The skeleton of each workflow of the file (see [`validate::skeleton`]), or `None`
/// when the graph rules must not run: on a tree with holes (skipped text, failed
/// instances) they would only report the holes again, as unreachable nodes and missing
/// edges.
#[salsa::tracked(returns(ref))]
pub fn skeletons(db: &dyn Db, file: SourceFile) -> Option<Vec<crate::ir::Ir>> {
    if crate::ir_check::is_ir_text(file.key(db)) {
        let (ir, _) = crate::ir_check::parse_ir_file(db, file).as_ref().ok()?;
        return Some(vec![validate::skeleton(ir)]);
    }
    let lowered = lower_file(db, file);
    let broken = file_ast(db, file).incomplete
        || lowered
            .findings
            .iter()
            .any(|f| f.code.severity() == Severity::Error);
    (!broken).then(|| {
        lowered
            .workflows
            .iter()
            .map(|w| validate::skeleton(&w.ir))
            .collect()
    })
}

/// The graph rules' findings for each workflow, addressed to IR entities. They read
/// only the skeletons, so an edit that leaves the graph as it was does not run them.
#[salsa::tracked(returns(ref))]
pub fn graph_findings(db: &dyn Db, file: SourceFile) -> Vec<Vec<Finding>> {
    match skeletons(db, file) {
        Some(list) => list.iter().map(validate::graph_rules).collect(),
        None => Vec::new(),
    }
}

/// Rule findings of each workflow of the file, addressed to its source: the rules about
/// single nodes, edges and knobs, then the graph rules.
#[salsa::tracked(returns(ref))]
pub fn validate_file(db: &dyn Db, file: SourceFile) -> Vec<Finding<FileLoc>> {
    let mut out = Vec::new();
    if skeletons(db, file).is_none() {
        return out;
    }
    let cx = validate::Context {
        roles: db.roles().names(db).clone(),
    };
    let graph = graph_findings(db, file);
    for (i, w) in lower_file(db, file).workflows.iter().enumerate() {
        let fallback = w.origins.workflow.clone();
        let local = validate::local_rules(&w.ir, &cx);
        let graph = graph.get(i).into_iter().flatten().cloned();
        for f in local.into_iter().chain(graph) {
            let Some(mut f) = f
                .map(|r| w.origins.locate(&r).or_else(|| fallback.clone()))
                .transpose()
            else {
                continue;
            };
            // Point at the attribute when the finding names one; a node without it
            // (a role taken from the name, a gate's inline question) falls back to
            // the node when positions are looked up.
            match (&f.attr, &f.at.loc) {
                (Some(key), Loc::Node(scope, node)) => {
                    f.at.loc = Loc::Attr(scope.clone(), node.clone(), key.clone());
                }
                // A parallel block's `count` is an argument, not an attribute.
                (Some(key), Loc::Parallel(scope, block)) => {
                    f.at.loc = Loc::ParallelArg(scope.clone(), block.clone(), key.clone());
                }
                _ => {}
            }
            out.push(f);
        }
    }
    out
}

/// Every diagnostic of a file, with positions, sorted by position.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let key = file.key(db).clone();
    // The parser's findings (syntax errors, duplicate names) are addressed by span.
    let spans = SpanPlaces(&key);
    let mut out: Vec<Diagnostic> = parse_file(db, file)
        .errors
        .iter()
        .map(|e| {
            let mut f = Finding::new(e.code, e.span.clone(), e.message.clone())
                .label(if e.code == Code::DuplicateName {
                    "second declaration"
                } else {
                    "here"
                })
                .help(e.help.clone());
            f.labels = e.labels.clone();
            f.subject = e.subject.clone();
            to_diagnostic(&f, &spans)
        })
        .collect();
    let findings = lower_file(db, file)
        .findings
        .iter()
        .chain(validate_file(db, file));
    let mut seen = BTreeSet::new();
    for f in findings {
        let d = to_diagnostic(f, &SourcePlaces(db));
        // Instances inline a subgraph several times; report each place once.
        if seen.insert((
            d.code,
            d.file.clone(),
            d.span.start,
            d.span.end,
            d.message.clone(),
        )) {
            out.push(d);
        }
    }
    out.sort_by(|a, b| {
        (a.file.as_str(), a.span.start, a.code).cmp(&(b.file.as_str(), b.span.start, b.code))
    });
    out
}

/// Places in `.fwf` files, through the source map of the file each points into.
struct SourcePlaces<'a>(&'a dyn Db);

impl Places<FileLoc> for SourcePlaces<'_> {
    fn file(&self, at: &FileLoc) -> String {
        at.file.clone()
    }

    fn span(&self, at: &FileLoc) -> Option<std::ops::Range<usize>> {
        let map = &parse_file(self.0, self.0.file(&at.file)).map();
        // A place the map does not hold still points somewhere near (the file start
        // at worst), so labels are never dropped.
        Some(
            map.get(&at.loc)
                .cloned()
                .or_else(|| fallback_span(map, &at.loc))
                .unwrap_or(0..0),
        )
    }

    fn text(&self, file: &str) -> Option<&str> {
        Some(self.0.file(file).text(self.0).as_str())
    }

    fn declares_node(&self, at: &FileLoc, name: &str) -> bool {
        let scope = match &at.loc {
            Loc::Node(scope, _) | Loc::Attr(scope, _, _) | Loc::Term(scope, ..) => scope,
            _ => return false,
        };
        let map = &parse_file(self.0, self.0.file(&at.file)).map();
        [
            Loc::Node(scope.clone(), name.to_string()),
            Loc::Use(scope.clone(), name.to_string()),
            Loc::Parallel(scope.clone(), name.to_string()),
        ]
        .iter()
        .any(|l| map.contains_key(l))
    }

    fn prompt_path(&self, file: &str, role: &str) -> Option<String> {
        // Where the prompt goes depends on which `prompts/` directories exist: disk
        // state salsa does not track, so this file's diagnostics are placed again in
        // the next revision (only while an unknown role has this fix).
        self.0.report_untracked_read();
        crate::host::new_prompt_path(file, role).map(|p| p.to_string_lossy().into_owned())
    }
}

/// A nearby span for a location the map does not hold (e.g. an attribute key given as
/// empty when the finding is about the whole node).
fn fallback_span(map: &crate::syntax::SourceMap, loc: &Loc) -> Option<std::ops::Range<usize>> {
    match loc {
        Loc::Attr(scope, node, _) => map.get(&Loc::Node(scope.clone(), node.clone())).cloned(),
        // A missing argument points at the subgraph name it is missing from.
        Loc::UseArg(scope, alias, _) => map
            .get(&Loc::UseSubgraph(scope.clone(), alias.clone()))
            .or_else(|| map.get(&Loc::Use(scope.clone(), alias.clone())))
            .cloned(),
        Loc::Use(scope, alias) => map.get(&Loc::Use(scope.clone(), alias.clone())).cloned(),
        Loc::ParallelArg(scope, name, _) => map
            .get(&Loc::Parallel(scope.clone(), name.clone()))
            .cloned(),
        Loc::Bound(scope, s, g, t) => map.get(&Loc::Term(scope.clone(), *s, *g, *t)).cloned(),
        _ => None,
    }
}
