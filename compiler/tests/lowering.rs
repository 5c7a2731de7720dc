//! Lowering snapshots: representative workflows and the IR text they lower to.

use std::path::Path;
use std::sync::Arc;

use factory_compiler::check::{file_diagnostics, lower_file};
use factory_compiler::db::{Database, Db};
use factory_compiler::host::FsLoader;
use factory_compiler::ir::to_text;

fn lower(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lowering");
    let db = Database::new(Arc::new(FsLoader::default()), None);
    let key = dir.join(name).to_string_lossy().into_owned();
    let file = db.file(&key);
    assert!(file.exists(&db), "fixture {key} missing");
    let diags = file_diagnostics(&db, file);
    assert!(diags.is_empty(), "{name} should check clean: {diags:#?}");
    to_text(&lower_file(&db, file).workflows[0].ir)
}

#[test]
fn improve_inlines_the_subgraph_and_resolves_knobs_and_artifacts() {
    let text = lower("improve.fwf");
    // The instance's nodes are prefixed, its exits wired to what follows it.
    assert!(text.contains("edge qa.verdict -> decide proceed"));
    assert!(text.contains("edge qa.verdict -> builder reloop max=2 max_knob=qa_loops"));
    assert!(text.contains("edge qa.verdict -> revert halt"));
    insta::assert_snapshot!(text);
}

#[test]
fn parallel_lowers_to_a_parallel_node_its_body_and_a_select() {
    let text = lower("parallel.fwf");
    assert!(text.contains("node hypotheses parallel count=3 count_knob=branches"));
    assert!(text.contains("edge hypotheses -> hypotheses.builder"));
    assert!(text.contains("edge hypotheses.score -> best"));
    insta::assert_snapshot!(text);
}

/// An IR file (an evolved mode, say) gets the parallel count rule too: it is checked
/// on the IR, not only on `.fwf` source.
#[test]
fn an_ir_file_with_a_parallel_count_outside_one_to_eight_is_fwf027() {
    let text = lower("parallel.fwf");
    let dir = tempfile::tempdir().unwrap();
    for (from, to, ok) in [
        ("count=3 count_knob=branches", "count=3", true),
        ("count=3 count_knob=branches", "count=0", false),
        ("count=3 count_knob=branches", "count=9", false),
        (
            "int default=3 min=1 max=8",
            "int default=3 min=1 max=8",
            true,
        ),
        (
            "int default=3 min=1 max=8",
            "int default=3 min=1 max=9",
            false,
        ),
        ("int default=3 min=1 max=8", "int default=3", false),
    ] {
        assert!(text.contains(from));
        let path = dir.path().join("p.fwir");
        std::fs::write(&path, text.replace(from, to)).unwrap();
        let checked = factory_compiler::driver::check_paths(&[path]).unwrap();
        let codes: Vec<&str> = checked
            .diagnostics
            .iter()
            .map(|d| d.diagnostic.code.as_str())
            .collect();
        // Without the knob, `branches` is unused (FWF103), which is not this rule.
        let fwf027 = codes.iter().filter(|c| **c == "FWF027").count();
        assert_eq!(fwf027, usize::from(!ok), "{to}: {codes:?}");
    }
}
