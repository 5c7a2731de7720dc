//! Incremental re-checking through the salsa database: a file is split into items
//! (`outline`), each parsed on its own (`parse_item`), so an edit inside one item
//! re-parses that item only; an edit that only moves text (a comment) stops at the
//! position-free tree; an edit to a node's details (a timeout, a task, a role) lowers
//! that node again and nothing else; an edit to the graph (a flow, what a node reads or
//! writes) lowers the workflow's structure again and runs the graph rules.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use factory_compiler::check::ir_text::ir_file_diagnostics;
use factory_compiler::check::{file_diagnostics, lower_file};
use factory_compiler::db::{Database, Loader};
use factory_compiler::host::BUILTIN_ROLES;
use factory_compiler::testgen::layered_workflow;

const KEY: &str = "layered.fwf";

struct NoFiles;

impl Loader for NoFiles {
    fn load(&self, _key: &str) -> Option<String> {
        None
    }
}

/// A checked 1,000-node (as the aim says) workflow in a logging database, with the log cleared.
fn checked() -> (Database, Arc<Mutex<Vec<String>>>, String) {
    let roles = Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect());
    let (mut db, log) = Database::with_log(Arc::new(NoFiles), roles);
    let text = layered_workflow(1_000);
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
    let file = db.set_text(KEY, layered_workflow(1_000));
    assert!(file_diagnostics(&db, file).is_empty());
    let ran = executed(&log);
    for q in [
        "outline",
        "parse_item",
        "parse_file",
        "file_ast",
        "lowering_input",
        "lower_structure",
        "node_slots",
        "lower_node",
        "file_findings",
        "skeletons",
        "graph_findings",
        "validate_file",
        "file_diagnostics",
    ] {
        assert!(ran.contains(q), "{q} missing from {ran:?}");
    }
    // Each node of the workflow is lowered on its own, once (all but `start` and `end`).
    let nodes = lower_file(&db, file).workflows[0].ir.nodes.len() - 2;
    assert!(nodes >= 1_000, "{nodes} nodes");
    assert_eq!(counts(&log)["lower_node"], nodes);
    // One parse per item: the nodes, the flow statements, headers and braces.
    let items = counts(&log)["parse_item"];
    assert!(items > nodes + 100, "{items} items");
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
fn an_attribute_edit_lowers_only_that_node() {
    let (mut db, log, text) = checked();
    let head = text.find("agent l5_head {").unwrap();
    let rel = text[head..].find("timeout: 600").unwrap();
    let mut edited = text.clone();
    edited.replace_range(head + rel..head + rel + 12, "timeout: 601");
    let file = db.set_text(KEY, edited);
    assert!(file_diagnostics(&db, file).is_empty());
    // Only the edited node is parsed again. The tree changed, but what the workflow's
    // structure reads of it did not (`lowering_input` is equal): only the edited node
    // is lowered again (`lower_node`, once), and neither the structure, nor the
    // skeletons, nor the graph rules run. The nodes' facts (roles, precheck commands)
    // are read again and found equal, so the workflow-wide rules do not run either.
    assert_eq!(
        counts(&log),
        exactly(&[
            ("outline", 1),
            ("parse_item", 1),
            ("parse_file", 1),
            ("file_ast", 1),
            ("import_closure", 1),
            ("lowering_input", 1),
            ("node_slots", 1),
            ("lower_node", 1),
            ("node_facts", 1),
            ("file_findings", 1),
            ("file_diagnostics", 1),
        ])
    );
    // The change reached the IR.
    let ir = &lower_file(&db, file).workflows[0].ir;
    let node = ir.nodes.iter().find(|n| n.id == "l5_head").unwrap();
    assert_eq!(node.attrs.timeout, Some(601));
}

/// `text` with the first `from` after `after` replaced by `to`.
fn edit_after(text: &str, after: &str, from: &str, to: &str) -> String {
    let at = text.find(after).unwrap();
    let rel = text[at..].find(from).unwrap();
    let mut edited = text.to_string();
    edited.replace_range(at + rel..at + rel + from.len(), to);
    edited
}

#[test]
fn a_node_rule_is_reported_through_that_node_alone() {
    let (mut db, log, text) = checked();
    let edited = edit_after(
        &text,
        "agent l5_head {",
        "role: strategist",
        "role: strategst",
    );
    let file = db.set_text(KEY, edited.clone());
    let diags = file_diagnostics(&db, file);
    let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["FWF010"], "{diags:#?}");
    // The finding points at the role attribute of the edited node.
    assert_eq!(&edited[diags[0].span.clone()], "role");
    let line = edited[..diags[0].span.start].lines().count();
    assert_eq!(
        edited.lines().nth(line - 1).map(str::trim),
        Some("role: strategst")
    );
    let ran = counts(&log);
    assert_eq!(ran.get("lower_node"), Some(&1), "{ran:?}");
    for q in [
        "lower_structure",
        "skeletons",
        "graph_findings",
        "validate_file",
    ] {
        assert!(!ran.contains_key(q), "{q} ran: {ran:?}");
    }

    // Putting the role back takes the finding away, again through the node alone.
    db.clear_log();
    let file = db.set_text(KEY, text);
    assert!(file_diagnostics(&db, file).is_empty());
    assert_eq!(counts(&log).get("lower_node"), Some(&1));
}

#[test]
fn a_graph_edit_lowers_the_structure_and_runs_the_graph_rules() {
    let (mut db, log, text) = checked();
    // Where a node writes is part of the graph (the dataflow rules read it).
    let edited = edit_after(&text, "agent l5_head {", "5/plan.md", "5/plan2.md");
    let file = db.set_text(KEY, edited);
    assert!(file_diagnostics(&db, file).is_empty());
    let ran = counts(&log);
    for q in [
        "lower_structure",
        "skeletons",
        "graph_findings",
        "validate_file",
    ] {
        assert_eq!(ran.get(q), Some(&1), "{q}: {ran:?}");
    }
    let ir = &lower_file(&db, file).workflows[0].ir;
    let node = ir.nodes.iter().find(|n| n.id == "l5_head").unwrap();
    assert_eq!(node.attrs.writes[0].path, ".factory/layers/5/plan2.md");
    // A node that reads the artifact reads it at its new path.
    let reader = ir.nodes.iter().find(|n| n.id == "l5_w1").unwrap();
    assert_eq!(reader.attrs.reads[0].path, ".factory/layers/5/plan2.md");
}

/// A logging database holding `text` under `key`, checked clean, with the log cleared.
fn clean(key: &str, text: &str) -> (Database, Arc<Mutex<Vec<String>>>) {
    let roles = Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect());
    let (mut db, log) = Database::with_log(Arc::new(NoFiles), roles);
    let file = db.set_text(key, text.to_string());
    let diags = file_diagnostics(&db, file);
    assert!(diags.is_empty(), "{diags:#?}");
    db.clear_log();
    (db, log)
}

const KNOBBED: &str = "workflow w {
    knob secs: int = 30
    agent a { role: builder timeout: secs writes: \"a.md\" check: exists }
    agent b { role: builder writes: \"b.md\" check: exists }
    flow { start -> a -> b -> end }
}
";

#[test]
fn whether_a_knob_is_used_is_settled_where_the_nodes_meet() {
    let (mut db, log) = clean("w.fwf", KNOBBED);

    // The only use of the knob goes: the warning comes, though only `a` is lowered
    // again.
    let file = db.set_text("w.fwf", KNOBBED.replace("timeout: secs", "timeout: 30"));
    let codes: Vec<&str> = file_diagnostics(&db, file)
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(codes, ["FWF103"]);
    let ran = counts(&log);
    assert_eq!(ran.get("lower_node"), Some(&1), "{ran:?}");
    assert!(!ran.contains_key("lower_structure"), "{ran:?}");

    // A template naming the knob in the other node uses it again.
    let file = db.set_text(
        "w.fwf",
        KNOBBED.replace("timeout: secs", "timeout: 30").replace(
            "agent b { role: builder",
            "agent b { role: builder task: \"wait {{knobs.secs}}s\"",
        ),
    );
    assert!(
        file_diagnostics(&db, file).is_empty(),
        "{:#?}",
        file_diagnostics(&db, file)
    );
    let ir = &lower_file(&db, file).workflows[0].ir;
    assert_eq!(ir.node("a").unwrap().attrs.timeout, Some(30));
}

const PARALLEL: &str = "workflow p {
    knob tries: int = 2 in 1..=4
    parallel branches(count: tries) in worktrees {
        agent first { role: builder timeout: 60 writes: \"a.md\" check: exists }
        agent second { role: builder timeout: 60 writes: \"b.md\" check: exists }
        flow { start -> first -> second -> end }
    }
    select best by best_score { writes: \"best.json\" }
    flow {
        start -> branches -> best -> end
        best.fail -> end
    }
}
";

#[test]
fn a_node_inside_a_parallel_block_is_lowered_on_its_own_too() {
    let (mut db, log) = clean("p.fwf", PARALLEL);

    // The second node of the block: its declaration is found through the block.
    let edited = edit_after(PARALLEL, "agent second", "timeout: 60", "timeout: 90");
    let file = db.set_text("p.fwf", edited);
    assert!(file_diagnostics(&db, file).is_empty());
    let ran = counts(&log);
    assert_eq!(ran.get("lower_node"), Some(&1), "{ran:?}");
    assert!(!ran.contains_key("lower_structure"), "{ran:?}");
    let ir = &lower_file(&db, file).workflows[0].ir;
    assert_eq!(ir.node("branches.second").unwrap().attrs.timeout, Some(90));
    assert_eq!(ir.node("branches.first").unwrap().attrs.timeout, Some(60));
    assert_eq!(ir.node("branches").unwrap().attrs.count, Some(2));
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
        .filter(|e| e.starts_with("lower_structure"))
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
            .filter(|e| e.starts_with("lower_structure"))
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
