//! Queries and hot spots on the fixtures.

mod common;

use std::fs;

use common::{commit_all, fixture_repo};
use factory_graph::query::{self, Lookup};
use factory_graph::{Kind, Relation};

#[test]
fn find_prefers_exact_names_and_falls_back_to_substrings() {
    let repo = fixture_repo("rust");
    let (g, _) = factory_graph::extract(repo.path(), None).unwrap();
    let hits = query::find(&g, "area");
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(
        ids,
        ["src/shapes.rs::Shape::area", "src/shapes.rs::Circle::area"]
    );
    assert_eq!((hits[0].file.as_str(), hits[0].line), ("src/shapes.rs", 2));
    let fuzzy = query::find(&g, "circ");
    assert!(fuzzy.iter().any(|h| h.id == "src/lib.rs::unit_circle"));
    assert!(query::find(&g, "nothing_like_this").is_empty());
}

#[test]
fn explain_lists_both_directions() {
    let repo = fixture_repo("python");
    let (g, _) = factory_graph::extract(repo.path(), None).unwrap();
    let Lookup::Found(node) = query::lookup(&g, "format_greeting") else {
        panic!("format_greeting should be unique");
    };
    let e = query::explain(&g, node);
    let callers: Vec<&str> = e.incoming[&Relation::Calls]
        .iter()
        .map(|n| n.id.as_str())
        .collect();
    assert!(callers.contains(&"app/models.py::User::greet"));
    assert!(callers.contains(&"app/service.py::register"));
    assert_eq!(e.incoming[&Relation::Contains][0].id, "app/models.py");
    assert!(e.incoming.contains_key(&Relation::Tests));
    assert!(matches!(query::lookup(&g, "greet"), Lookup::Found(_)));
    assert!(matches!(query::lookup(&g, "no_such"), Lookup::NotFound));
}

#[test]
fn shortest_path_follows_links_and_falls_back_to_undirected() {
    let repo = fixture_repo("go");
    let (g, _) = factory_graph::extract(repo.path(), None).unwrap();
    let (steps, directed) =
        query::shortest_path(&g, "cmd/app/main.go", "geo/point.go::square").unwrap();
    assert!(directed);
    // main.go imports point.go, which contains square.
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(steps[0].relation, Relation::Imports);
    assert_eq!(steps[1].relation, Relation::Contains);
    let (_, directed) =
        query::shortest_path(&g, "geo/point.go::square", "cmd/app/main.go").unwrap();
    assert!(!directed);
}

#[test]
fn hotspots_multiply_fan_in_by_churn() {
    let repo = fixture_repo("go");
    let point = repo.path().join("geo/point.go");
    let text = fs::read_to_string(&point).unwrap();
    fs::write(&point, text.replace("return x * x", "return x*x + 0")).unwrap();
    commit_all(repo.path(), "tweak square", 100);
    let (g, _) = factory_graph::extract(repo.path(), None).unwrap();
    let h = factory_graph::hotspots::hotspots(repo.path(), &g, 10, 5).unwrap();
    assert_eq!(h.commits_scanned, 2);
    let top = &h.hotspots[0];
    assert_eq!(top.id, "geo/point.go::square");
    assert_eq!(top.kind, Kind::Function);
    assert_eq!(top.churn, 2);
    // Distinct callers: Area, Distance and TestSquare (which calls and tests it).
    assert_eq!(top.fan_in, 3, "{top:?}");
    assert_eq!(top.score, 6);
    assert_eq!(h.most_changed_files[0].file, "geo/point.go");
    assert_eq!(h.most_changed_files[0].commits, 2);
}

#[test]
fn status_reports_staleness_and_counts() {
    let repo = fixture_repo("js");
    let (g, _) = factory_graph::extract(repo.path(), None).unwrap();
    let s = query::status(&g, factory_graph::drift(repo.path(), &g).unwrap());
    assert!(!s.stale);
    assert_eq!(s.languages["typescript"].files, 2);
    assert_eq!(s.kinds[&Kind::Class], 2);
    fs::write(repo.path().join("src/util.js"), "export const x = 1;\n").unwrap();
    let s = query::status(&g, factory_graph::drift(repo.path(), &g).unwrap());
    assert!(s.stale);
    assert_eq!(s.changed, ["src/util.js"]);
}
