//! Incremental update: only what changed is parsed, and the result equals a full
//! extract.

mod common;

use std::collections::BTreeSet;
use std::fs;

use common::{commit_all, fixture_repo};
use factory_graph::{CodeGraph, Link, Node};

fn nodes_outside(g: &CodeGraph, file: &str) -> Vec<Node> {
    g.nodes
        .iter()
        .filter(|n| n.file.as_deref() != Some(file))
        .cloned()
        .collect()
}

fn links_outside(g: &CodeGraph, file: &str) -> BTreeSet<Link> {
    let in_file = |id: &str| g.node(id).and_then(|n| n.file.as_deref()) == Some(file);
    g.links
        .iter()
        .filter(|l| !in_file(&l.source) && !in_file(&l.target))
        .cloned()
        .collect()
}

#[test]
fn editing_one_file_changes_only_its_nodes_and_links() {
    let repo = fixture_repo("python");
    let (before, _) = factory_graph::extract(repo.path(), None).unwrap();
    let models = repo.path().join("app/models.py");
    let text = fs::read_to_string(&models).unwrap();
    let edited = text.replace(
        "return \"hello \" + name",
        "return shout(\"hello \" + name)",
    ) + "\n\ndef shout(text):\n    return text.upper()\n";
    fs::write(&models, edited).unwrap();

    let (after, stats) = factory_graph::update(repo.path(), before.clone(), None).unwrap();
    assert_eq!(stats.changed, ["app/models.py"]);
    assert_eq!(stats.parsed, 1);
    assert_eq!(stats.reused, before.files().count() - 1);
    assert!(stats.added.is_empty() && stats.removed.is_empty());

    // Everything outside the edited file is untouched...
    assert_eq!(
        nodes_outside(&before, "app/models.py"),
        nodes_outside(&after, "app/models.py")
    );
    assert_eq!(
        links_outside(&before, "app/models.py"),
        links_outside(&after, "app/models.py")
    );
    // ...the file itself did change...
    assert!(after.node("app/models.py::shout").is_some());
    assert!(after.links.iter().any(
        |l| l.source == "app/models.py::format_greeting" && l.target == "app/models.py::shout"
    ));
    assert_ne!(before, after);
    // ...and the update is exactly what a full extract gives.
    let (full, _) = factory_graph::extract(repo.path(), None).unwrap();
    assert_eq!(after, full);
}

#[test]
fn calls_into_a_changed_file_are_resolved_again() {
    let repo = fixture_repo("rust");
    let (before, _) = factory_graph::extract(repo.path(), None).unwrap();
    let calls_new = |g: &CodeGraph| {
        g.links.iter().any(|l| {
            l.source == "src/lib.rs::unit_circle" && l.target == "src/shapes.rs::Circle::new"
        })
    };
    assert!(calls_new(&before));
    let shapes = repo.path().join("src/shapes.rs");
    let text = fs::read_to_string(&shapes).unwrap();
    // Renaming the callee drops the call edge; renaming it back restores it.
    fs::write(&shapes, text.replace("pub fn new(", "pub fn with_radius(")).unwrap();
    let (renamed, _) = factory_graph::update(repo.path(), before.clone(), None).unwrap();
    assert!(!calls_new(&renamed));
    fs::write(&shapes, &text).unwrap();
    let (restored, stats) = factory_graph::update(repo.path(), renamed, None).unwrap();
    assert_eq!(stats.parsed, 1);
    assert!(calls_new(&restored));
    assert_eq!(restored, before);
}

#[test]
fn nothing_changed_reparses_nothing() {
    let repo = fixture_repo("go");
    let (before, _) = factory_graph::extract(repo.path(), None).unwrap();
    let (after, stats) = factory_graph::update(repo.path(), before.clone(), None).unwrap();
    assert_eq!(stats.parsed, 0);
    assert_eq!(stats.reused, before.files().count());
    assert_eq!(before, after);
}

#[test]
fn added_and_removed_files_are_patched_in_and_out() {
    let repo = fixture_repo("js");
    let (before, _) = factory_graph::extract(repo.path(), None).unwrap();
    fs::remove_file(repo.path().join("src/util.js")).unwrap();
    fs::write(
        repo.path().join("src/tax.ts"),
        "export function vat(x: number) { return x * 0.2; }\n",
    )
    .unwrap();
    commit_all(repo.path(), "swap util for tax", 100);
    let (after, stats) = factory_graph::update(repo.path(), before, None).unwrap();
    assert_eq!(stats.added, ["src/tax.ts"]);
    assert_eq!(stats.removed, ["src/util.js"]);
    assert!(after.node("src/util.js::round").is_none());
    assert!(after.node("src/tax.ts::vat").is_some());
    assert!(
        !after
            .links
            .iter()
            .any(|l| l.target.starts_with("src/util.js"))
    );
    let (full, _) = factory_graph::extract(repo.path(), None).unwrap();
    assert_eq!(after, full);
}
