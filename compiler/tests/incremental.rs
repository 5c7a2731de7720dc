//! Incremental re-checking through the salsa database: a file is split into items
//! (`outline`), each parsed on its own (`parse_item`), so an edit inside one item
//! re-parses that item only; an edit that only moves text (a comment) stops at the
//! position-free tree, while an edit to a node's attribute re-lowers and re-validates
//! the file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use factory_compiler::check::{file_diagnostics, lower_file};
use factory_compiler::db::{Database, Loader};
use factory_compiler::host::BUILTIN_ROLES;
use factory_compiler::ir_check::ir_file_diagnostics;
use factory_compiler::testgen::layered_workflow;

const KEY: &str = "layered.fwf";

struct NoFiles;

impl Loader for NoFiles {
    fn load(&self, _key: &str) -> Option<String> {
        None
    }
}

/// A checked 100-node workflow in a logging database, with the log cleared.
fn checked() -> (Database, Arc<Mutex<Vec<String>>>, String) {
    let roles = Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect());
    let (mut db, log) = Database::with_log(Arc::new(NoFiles), roles);
    let text = layered_workflow(100);
    let file = db.set_text(KEY, text.clone());
    assert!(file_diagnostics(&db, file).is_empty());
    db.clear_log();
    (db, log, text)
}

/// The names of the queries executed since the log was last cleared: the recorded
/// entries look like `file_diagnostics(Id(0))`.
fn executed(log: &Mutex<Vec<String>>) -> BTreeSet<String> {
    let log = log.lock().unwrap();
    println!("executed: {log:?}");
    log.iter()
        .map(|entry| entry.split('(').next().unwrap_or(entry).to_string())
        .collect()
}

/// How many times each query ran since the log was last cleared.
fn counts(log: &Mutex<Vec<String>>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for entry in log.lock().unwrap().iter() {
        let name = entry.split('(').next().unwrap_or(entry).to_string();
        *out.entry(name).or_default() += 1;
    }
    out
}

fn exactly(list: &[(&str, usize)]) -> BTreeMap<String, usize> {
    list.iter().map(|(q, n)| (q.to_string(), *n)).collect()
}

#[test]
fn the_first_check_runs_every_query() {
    let roles = Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect());
    let (mut db, log) = Database::with_log(Arc::new(NoFiles), roles);
    let file = db.set_text(KEY, layered_workflow(100));
    assert!(file_diagnostics(&db, file).is_empty());
    let ran = executed(&log);
    for q in [
        "outline",
        "parse_item",
        "parse_file",
        "file_ast",
        "lower_file",
        "skeletons",
        "graph_findings",
        "validate_file",
        "file_diagnostics",
    ] {
        assert!(ran.contains(q), "{q} missing from {ran:?}");
    }
    // One parse per item: 100 nodes, their flow statements, headers and braces.
    let items = counts(&log)["parse_item"];
    assert!(items > 150, "{items} items");
}

#[test]
fn a_comment_edit_stops_before_lowering() {
    let (mut db, log, text) = checked();
    let at = text.find("    agent l5_head").unwrap();
    let mut edited = text.clone();
    edited.insert_str(at, "    // a note that changes nothing\n");
    let file = db.set_text(KEY, edited);
    let diags = file_diagnostics(&db, file);
    assert!(diags.is_empty());
    // The comment is trivia after the item above it: that one item is parsed again,
    // the file's tree is placed again from the items and found equal, so nothing after
    // it runs. `file_diagnostics` re-runs because it reads the source map for positions.
    assert_eq!(
        counts(&log),
        exactly(&[
            ("outline", 1),
            ("parse_item", 1),
            ("parse_file", 1),
            ("file_ast", 1),
            ("file_diagnostics", 1),
        ])
    );
}

#[test]
fn an_attribute_edit_relowers_and_revalidates() {
    let (mut db, log, text) = checked();
    let head = text.find("agent l5_head {").unwrap();
    let rel = text[head..].find("timeout: 600").unwrap();
    let mut edited = text.clone();
    edited.replace_range(head + rel..head + rel + 12, "timeout: 601");
    let file = db.set_text(KEY, edited);
    assert!(file_diagnostics(&db, file).is_empty());
    // Only the edited node is parsed again; the tree changed, so the file is lowered
    // again and the rules about single nodes run, but the graph's skeleton is equal:
    // the graph rules (`graph_findings`) do not run.
    assert_eq!(
        counts(&log),
        exactly(&[
            ("outline", 1),
            ("parse_item", 1),
            ("parse_file", 1),
            ("file_ast", 1),
            ("import_closure", 1),
            ("lower_file", 1),
            ("skeletons", 1),
            ("validate_file", 1),
            ("file_diagnostics", 1),
        ])
    );
    // The change reached the IR.
    let ir = &lower_file(&db, file).workflows[0].ir;
    let node = ir.nodes.iter().find(|n| n.id == "l5_head").unwrap();
    assert_eq!(node.attrs.timeout, Some(601));
}

#[test]
fn inserting_a_statement_reparses_only_it() {
    let (mut db, log, text) = checked();
    // Items are named by scope, kind and name (a statement by its text), never by
    // position: the statements below the new one keep their parses.
    let at = text.find("        l2_gate.proceed").unwrap();
    let mut edited = text.clone();
    edited.insert_str(at, "        l2_gate.fail -> end\n");
    let file = db.set_text(KEY, edited);
    let _ = file_diagnostics(&db, file);
    assert_eq!(
        counts(&log).get("parse_item"),
        Some(&1),
        "{:?}",
        counts(&log)
    );
}

#[test]
fn setting_the_same_text_runs_nothing() {
    let (mut db, log, text) = checked();
    let file = db.set_text(KEY, text);
    assert!(file_diagnostics(&db, file).is_empty());
    assert!(executed(&log).is_empty());
}

const LIB: &str = "subgraph step(role_name: string = \"builder\") {
    agent work { role: builder writes: \"w.md\" check: exists }
    flow { start -> work -> end }
}
";

fn main_using_lib(timeout: u32) -> String {
    format!(
        "workflow main {{
    import ./lib
    use step() as s
    agent after {{ role: builder timeout: {timeout} writes: \"a.md\" check: exists }}
    flow {{ start -> s -> after -> end }}
}}
"
    )
}

const OTHER: &str = "workflow other {
    agent solo { role: builder writes: \"o.md\" check: exists }
    flow { start -> solo -> end }
}
";

#[test]
fn editing_one_file_rechecks_only_the_files_that_depend_on_it() {
    let roles = Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect());
    let (mut db, log) = Database::with_log(Arc::new(NoFiles), roles);
    db.set_text("lib.fwf", LIB.to_string());
    let main = db.set_text("main.fwf", main_using_lib(600));
    let other = db.set_text("other.fwf", OTHER.to_string());
    assert!(
        file_diagnostics(&db, main).is_empty(),
        "{:#?}",
        file_diagnostics(&db, main)
    );
    assert!(file_diagnostics(&db, other).is_empty());

    // An edit to an unrelated file re-checks that file only.
    db.clear_log();
    db.set_text("other.fwf", OTHER.replace("o.md", "p.md"));
    let _ = file_diagnostics(&db, main);
    let _ = file_diagnostics(&db, other);
    let entries = log.lock().unwrap().clone();
    let main_id = format!("{main:?}");
    println!("main = {main_id}, executed: {entries:?}");
    let lowered: Vec<&String> = entries
        .iter()
        .filter(|e| e.starts_with("lower_file"))
        .collect();
    assert_eq!(
        lowered.len(),
        1,
        "only other.fwf is lowered again: {entries:?}"
    );

    // An edit to the imported library re-lowers the file that imports it.
    db.clear_log();
    db.set_text("lib.fwf", LIB.replace("w.md", "x.md"));
    let _ = file_diagnostics(&db, main);
    let _ = file_diagnostics(&db, other);
    assert_eq!(
        log.lock()
            .unwrap()
            .iter()
            .filter(|e| e.starts_with("lower_file"))
            .count(),
        1,
        "main.fwf is lowered again, other.fwf is not"
    );
    let ir = &lower_file(&db, main).workflows[0].ir;
    assert!(
        ir.node("s.work")
            .is_some_and(|n| n.attrs.writes[0].path == "x.md")
    );
}

#[test]
fn ir_text_goes_through_the_same_skeleton_and_graph_rules() {
    let roles = Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect());
    let (mut db, log) = Database::with_log(Arc::new(NoFiles), roles);
    let fwf = db.set_text(KEY, layered_workflow(100));
    let ir_text = factory_compiler::ir::to_text(&lower_file(&db, fwf).workflows[0].ir);
    let key = "layered.fwir";
    let file = db.set_text(key, ir_text.clone());
    assert!(ir_file_diagnostics(&db, file).is_empty());
    db.clear_log();

    // A timeout is not part of the skeleton: the graph rules do not run again.
    let edited = ir_text.replacen("timeout=600", "timeout=601", 1);
    assert_ne!(edited, ir_text);
    let file = db.set_text(key, edited);
    assert!(ir_file_diagnostics(&db, file).is_empty());
    assert_eq!(
        counts(&log),
        exactly(&[
            ("parse_ir_file", 1),
            ("skeletons", 1),
            ("ir_file_diagnostics", 1),
        ])
    );

    // Dropping an edge changes the graph: the graph rules run and report it.
    db.clear_log();
    let start_edge = ir_text
        .lines()
        .find(|l| l.starts_with("edge start "))
        .unwrap()
        .to_string();
    let file = db.set_text(key, ir_text.replacen(&format!("{start_edge}\n"), "", 1));
    let codes: Vec<_> = ir_file_diagnostics(&db, file)
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(counts(&log).get("graph_findings"), Some(&1));
    assert!(codes.contains(&"FWF025"), "{codes:?}");
}
