//! Extraction pinned on one small fixture project per language.

mod common;

use common::{fixture_repo, render};

fn snapshot(lang: &str) -> String {
    let repo = fixture_repo(lang);
    let (graph, stats) = factory_graph::extract(repo.path(), None).unwrap();
    assert_eq!(stats.parsed, graph.files().count());
    assert!(graph.graph.built_at_commit.is_some());
    render(&graph)
}

#[test]
fn rust_fixture() {
    insta::assert_snapshot!(snapshot("rust"));
}

#[test]
fn python_fixture() {
    insta::assert_snapshot!(snapshot("python"));
}

#[test]
fn javascript_and_typescript_fixture() {
    insta::assert_snapshot!(snapshot("js"));
}

#[test]
fn go_fixture() {
    insta::assert_snapshot!(snapshot("go"));
}

#[test]
fn flags_syntax_errors_and_non_utf8_files_and_keeps_what_parsed() {
    let repo = fixture_repo("rust");
    let (graph, _) = factory_graph::extract(repo.path(), None).unwrap();
    let broken = graph.node("src/broken.rs").unwrap();
    assert!(broken.parse_error && !broken.non_utf8);
    assert!(graph.node("src/broken.rs::fine").is_some());
    let latin = graph.node("src/latin1.rs").unwrap();
    assert!(latin.non_utf8 && !latin.parse_error);
    assert!(graph.node("src/latin1.rs::plain").is_some());
    let clean = graph.node("src/shapes.rs").unwrap();
    assert!(!clean.parse_error && !clean.non_utf8);
}

#[test]
fn untracked_and_ignored_files_stay_out() {
    let repo = fixture_repo("python");
    std::fs::write(repo.path().join("untracked.py"), "def stray(): pass\n").unwrap();
    std::fs::write(repo.path().join(".gitignore"), "ignored.py\n").unwrap();
    std::fs::write(repo.path().join("ignored.py"), "def hidden(): pass\n").unwrap();
    let (graph, _) = factory_graph::extract(repo.path(), None).unwrap();
    assert!(graph.node("untracked.py").is_none());
    assert!(graph.node("ignored.py").is_none());
    assert!(graph.node("app/models.py").is_some());
}

#[test]
fn a_subdirectory_of_a_repository_is_its_own_root() {
    let repo = fixture_repo("python");
    let (graph, _) = factory_graph::extract(&repo.path().join("app"), None).unwrap();
    let files: Vec<&str> = graph.files().map(|f| f.id.as_str()).collect();
    assert_eq!(
        files,
        ["__init__.py", "legacy.py", "models.py", "service.py"]
    );
}

#[test]
fn outside_a_repository_is_an_error_naming_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let err = factory_graph::extract(tmp.path(), None).unwrap_err();
    assert!(matches!(
        err,
        factory_graph::GraphError::NotARepository { .. }
    ));
}

#[test]
fn the_document_round_trips_through_json() {
    let repo = fixture_repo("js");
    let (graph, _) = factory_graph::extract(repo.path(), None).unwrap();
    let path = repo.path().join("out/graph.json");
    factory_graph::save(&graph, &path).unwrap();
    let back = factory_graph::load(&path).unwrap();
    assert_eq!(graph, back);
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(value["directed"], true);
    assert_eq!(value["multigraph"], true);
    assert!(value["graph"]["built_at_commit"].is_string());
    let link = &value["links"][0];
    for key in ["source", "target", "key", "relation"] {
        assert!(link.get(key).is_some(), "link lacks {key}: {link}");
    }
}
