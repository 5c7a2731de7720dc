//! The checking pipeline over the database: imports → lowering → graph validation →
//! diagnostics with positions. Everything before [`file_diagnostics`] is position-free.
//!
//! Lowering runs in parts: [`lowering_input`] → [`lower_structure`] (a file's
//! workflows but for their own nodes) → [`node_slots`] → [`lower_node`] (one per node).
//! Checking ([`file_findings`]) reads the parts; only [`lower_file`] (compiling,
//! emitting) puts a whole IR together. A bare IR text file is checked by [`ir_text`]
//! with the same graph rules.

use std::collections::{BTreeMap, BTreeSet};

use crate::db::{Db, SourceFile, file_ast, import_key, parse_file};
use crate::diagnostic::{
    Code, Diagnostic, Fix, Places, Severity, SpanPlaces, Subject, to_diagnostic,
};
use std::sync::Arc;

use crate::lower::{self, FileLoc, Lowered, NodePart, NodeScope, Structure, Subgraphs};
use crate::syntax::{Ast, DeclKind, Loc, NodeDecl};
use crate::validate::{self, Finding};

pub mod ir_text;

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

/// The tree lowering's structure reads (see [`lower::structure_input`]): equal across
/// edits to a node's details, so [`lower_structure`] does not run again for them.
#[salsa::tracked(returns(ref))]
pub fn lowering_input(db: &dyn Db, file: SourceFile) -> Arc<Ast> {
    Arc::new(lower::structure_input(file_ast(db, file)))
}

/// Every workflow of a file, lowered but for its own nodes (see [`Structure`]), plus the
/// findings on its imports and subgraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStructure {
    pub workflows: Vec<Structure>,
    pub findings: Vec<Finding<FileLoc>>,
}

#[salsa::tracked(returns(ref))]
pub fn lower_structure(db: &dyn Db, file: SourceFile) -> FileStructure {
    let key = file.key(db).clone();
    let ast = lowering_input(db, file);
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
        let names = lowering_input(db, target)
            .decls
            .iter()
            .filter(|d| d.kind == DeclKind::Subgraph)
            .map(|d| d.name.clone())
            .collect();
        provided.push((i, names));
    }
    for f in &closure.files {
        let fkey = f.key(db).clone();
        for d in lowering_input(db, *f)
            .decls
            .iter()
            .filter(|d| d.kind == DeclKind::Subgraph)
        {
            subgraphs.entry(d.name.clone()).or_insert((fkey.clone(), d));
        }
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut workflows = Vec::new();
    for (i, d) in ast.decls.iter().enumerate() {
        match d.kind {
            DeclKind::Workflow { .. } => {
                let structure = lower::lower_structure(&key, d, i, &subgraphs);
                used.extend(structure.used_subgraphs.iter().cloned());
                workflows.push(structure);
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
    FileStructure {
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

/// A node of a workflow (or of its parallel blocks), lowered on its own by
/// [`lower_node`]. It is named by its workflow and id; when an edit changes its
/// declaration, only its own lowering runs again.
#[salsa::tracked(debug)]
pub struct NodeSlot<'db> {
    #[returns(copy)]
    pub workflow: usize,
    #[returns(ref)]
    pub id: String,
    #[tracked]
    #[returns(ref)]
    pub decl: Arc<NodeDecl>,
    #[tracked]
    #[returns(ref)]
    pub scope: Arc<NodeScope>,
}

/// The slots of each workflow of a file, each with its place in the workflow's nodes.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct Slots<'db> {
    pub workflows: Vec<Vec<(usize, NodeSlot<'db>)>>,
}

/// Pairs each slot of the file's structure with its declaration in the file's tree.
#[salsa::tracked(returns(ref))]
pub fn node_slots<'db>(db: &'db dyn Db, file: SourceFile) -> Slots<'db> {
    let ast = file_ast(db, file);
    let workflows = lower_structure(db, file)
        .workflows
        .iter()
        .enumerate()
        .map(|(w, s)| {
            s.slots
                .iter()
                .filter_map(|slot| {
                    let decl = slot.path.find(ast)?.clone();
                    let id = s.ir.nodes.get(slot.index)?.id.clone();
                    Some((
                        slot.index,
                        NodeSlot::new(db, w, id, decl, slot.scope.clone()),
                    ))
                })
                .collect()
        })
        .collect();
    Slots { workflows }
}

/// One node lowered on its own, with the rules about it alone.
#[salsa::tracked(returns(ref))]
pub fn lower_node<'db>(db: &'db dyn Db, slot: NodeSlot<'db>) -> NodePart {
    let roles = db.roles().names(db);
    lower::lower_node(slot.decl(db), slot.scope(db), roles.as_ref())
}

/// The slots' parts of each workflow of a file, each with its place in the nodes.
fn parts(db: &dyn Db, file: SourceFile) -> Vec<Vec<(usize, &NodePart)>> {
    node_slots(db, file)
        .workflows
        .iter()
        .map(|slots| {
            slots
                .iter()
                .map(|(index, slot)| (*index, lower_node(db, *slot)))
                .collect()
        })
        .collect()
}

/// Every workflow of a file, lowered whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLowering {
    pub workflows: Vec<Lowered>,
}

/// Puts each workflow's structure and its nodes together. Checking does not need this
/// (see [`file_findings`]); compiling and emitting do. Not a query: the parts are
/// memoized, and the caller owns the whole (a memo would keep a second copy of every
/// node for as long as the database lives).
pub fn lower_file(db: &dyn Db, file: SourceFile) -> FileLowering {
    let parts = parts(db, file);
    let workflows = lower_structure(db, file)
        .workflows
        .iter()
        .zip(&parts)
        .map(|(s, parts)| lower::assemble(s, parts))
        .collect();
    FileLowering { workflows }
}

/// Every finding of a file, addressed to its source: lowering's, then — unless the tree
/// has holes — the rules'. It reads the nodes' parts and the structure, never a whole
/// IR, so an edit to one node's details runs that node's lowering and this.
#[salsa::tracked(returns(ref))]
pub fn file_findings(db: &dyn Db, file: SourceFile) -> Vec<Finding<FileLoc>> {
    let structure = lower_structure(db, file);
    let mut out = structure.findings.clone();
    let mut rules = Vec::new();
    for (s, parts) in structure.workflows.iter().zip(parts(db, file)) {
        out.extend(lower::findings(s, &parts));
        for (_, part) in &parts {
            rules.extend(part.rules.iter().cloned());
        }
    }
    let incomplete = lowering_input(db, file).incomplete;
    if incomplete {
        // Text skipped by a syntax error may be what used the import, knob or node.
        out.retain(|f| {
            !matches!(
                f.code,
                Code::UnusedImport | Code::UnusedKnob | Code::UnusedNode
            )
        });
    }
    let broken = incomplete || out.iter().any(|f| f.code.severity() == Severity::Error);
    if !broken {
        out.extend(validate_file(db, file).iter().cloned());
        out.extend(rules);
    }
    out
}

/// The skeleton of each workflow of the file (see [`validate::skeleton`]), or `None`
/// when the graph rules must not run: on a tree with holes (skipped text, failed
/// instances) they would only report the holes again, as unreachable nodes and missing
/// edges. It reads only the structure: the slots' nodes hold what a skeleton needs.
#[salsa::tracked(returns(ref))]
pub fn skeletons(db: &dyn Db, file: SourceFile) -> Option<Vec<crate::ir::Ir>> {
    if ir_text::is_ir_text(file.key(db)) {
        let (ir, _) = ir_text::parse_ir_file(db, file).as_ref().ok()?;
        return Some(vec![validate::skeleton(ir)]);
    }
    let structure = lower_structure(db, file);
    let broken = lowering_input(db, file).incomplete
        || structure
            .findings
            .iter()
            .chain(structure.workflows.iter().flat_map(|w| &w.findings))
            .any(|f| f.code.severity() == Severity::Error);
    (!broken).then(|| {
        structure
            .workflows
            .iter()
            .map(|w| validate::skeleton(&w.ir))
            .collect()
    })
}

/// What the workflow-wide rules read of each workflow's nodes (the slots' nodes in
/// full, the others as the structure holds them): equal after an edit that changes no
/// role and no precheck command, so [`workflow_findings`] does not run again.
#[salsa::tracked(returns(ref))]
pub fn node_facts(db: &dyn Db, file: SourceFile) -> Vec<Vec<validate::NodeFact>> {
    let parts = parts(db, file);
    lower_structure(db, file)
        .workflows
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let slotted: BTreeSet<usize> = w.slots.iter().map(|s| s.index).collect();
            let mut facts: Vec<validate::NodeFact> =
                w.ir.nodes
                    .iter()
                    .enumerate()
                    .filter(|(n, _)| !slotted.contains(n))
                    .map(|(_, n)| validate::NodeFact::of(n))
                    .collect();
            facts.extend(
                parts
                    .get(i)
                    .into_iter()
                    .flatten()
                    .map(|(_, p)| validate::NodeFact::of(&p.node)),
            );
            facts.sort_by(|a, b| a.id.cmp(&b.id));
            facts
        })
        .collect()
}

/// The workflow-wide rules' findings for each workflow, from [`node_facts`].
#[salsa::tracked(returns(ref))]
pub fn workflow_findings(db: &dyn Db, file: SourceFile) -> Vec<Vec<Finding>> {
    node_facts(db, file)
        .iter()
        .map(|facts| validate::workflow_rules(facts))
        .collect()
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
/// edges, knobs and the nodes that are not slots, then the graph rules. (The slots'
/// nodes are held to their rules in [`lower_node`].)
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
    let whole = workflow_findings(db, file);
    for (i, w) in lower_structure(db, file).workflows.iter().enumerate() {
        let fallback = w.origins.workflow.clone();
        let mut apart = vec![false; w.ir.nodes.len()];
        for slot in &w.slots {
            if let Some(a) = apart.get_mut(slot.index) {
                *a = true;
            }
        }
        let local = validate::local_rules_except(&w.ir, &cx, |n| apart[n]);
        let whole = whole.get(i).into_iter().flatten().cloned();
        let graph = graph.get(i).into_iter().flatten().cloned();
        for f in local.into_iter().chain(whole).chain(graph) {
            let placed = f
                .map(|r| w.origins.locate(&r).or_else(|| fallback.clone()))
                .transpose();
            out.extend(placed.map(lower::place));
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
    let findings = file_findings(db, file);
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

    fn parses(&self, text: &str) -> bool {
        !crate::syntax::parse(text)
            .errors
            .iter()
            .any(|e| e.code == Code::Syntax)
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
