//! The generated workflows used by the benches are valid: they check with no diagnostic
//! at all, with the role check on, and they have the size asked for.

use std::collections::BTreeSet;
use std::sync::Arc;

use factory_compiler::check::{file_diagnostics, lower_file};
use factory_compiler::db::{Database, Loader};
use factory_compiler::host::BUILTIN_ROLES;
use factory_compiler::ir::NodeKind;
use factory_compiler::testgen::{NODES_PER_LAYER, layered_workflow};

struct NoFiles;

impl Loader for NoFiles {
    fn load(&self, _key: &str) -> Option<String> {
        None
    }
}

fn roles() -> Option<BTreeSet<String>> {
    Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect())
}

fn assert_clean(nodes: usize) {
    let mut db = Database::new(Arc::new(NoFiles), roles());
    let file = db.set_text("layered.fwf", layered_workflow(nodes));
    let diags = file_diagnostics(&db, file);
    assert!(diags.is_empty(), "{nodes} nodes: {diags:#?}");
    let lowered = lower_file(&db, file);
    assert_eq!(lowered.workflows.len(), 1);
    let ir = &lowered.workflows[0].ir;
    let layers = nodes.div_ceil(NODES_PER_LAYER);
    // Every layer's nodes plus start and end.
    assert_eq!(ir.nodes.len(), layers * NODES_PER_LAYER + 2);
    let count = |k: NodeKind| ir.nodes.iter().filter(|n| n.kind == k).count();
    assert_eq!(count(NodeKind::Fork), layers);
    assert_eq!(count(NodeKind::Join), layers);
    assert_eq!(count(NodeKind::Gate), layers);
    assert_eq!(count(NodeKind::Agent), 4 * layers);
}

#[test]
fn a_100_node_workflow_checks_clean() {
    assert_clean(100);
}

#[test]
fn a_1000_node_workflow_checks_clean() {
    assert_clean(1000);
}

#[test]
fn a_tiny_request_still_gives_one_whole_layer() {
    assert_clean(1);
}

/// The generator is not vacuous: breaking one layer's dataflow is reported.
#[test]
fn breaking_a_generated_workflow_is_reported() {
    let text = layered_workflow(100).replace("reads: l3_plan", "reads: l9_plan");
    let mut db = Database::new(Arc::new(NoFiles), roles());
    let file = db.set_text("layered.fwf", text);
    let diags = file_diagnostics(&db, file);
    assert!(!diags.is_empty());
}
