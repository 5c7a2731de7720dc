//! `factory graph` and `factory study` as a user runs them, on temporary git
//! repositories made from the graph crate's fixtures and the demo project.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use factory_runtime::store::{ExperimentStore, Outcome, Verdict};
use git2::{Repository, Signature, Time};
use predicates::str::contains;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn commit_all(root: &Path, message: &str, seconds: i64) {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::new("T", "t@example.invalid", &Time::new(seconds, 0)).unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap();
}

/// A temporary git repository holding a copy of `src`.
fn repo_from(src: &Path) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(src, tmp.path());
    Repository::init(tmp.path()).unwrap();
    commit_all(tmp.path(), "initial", 1_000);
    tmp
}

fn fixture(lang: &str) -> tempfile::TempDir {
    repo_from(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("graph/tests/fixtures")
            .join(lang),
    )
}

fn factory(home: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").unwrap();
    cmd.env("FACTORY_HOME", home);
    cmd
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap()
}

#[test]
fn extract_then_query_explain_path_status_and_hotspots() {
    let repo = fixture("python");
    let home = tempfile::tempdir().unwrap();
    let p = repo.path().to_str().unwrap();
    factory(home.path())
        .args(["graph", "extract", p])
        .assert()
        .success()
        .stdout(contains("5 source files"));
    assert!(repo.path().join(".factory/graph.json").is_file());

    factory(home.path())
        .args(["graph", "query", "format_greeting", p])
        .assert()
        .success()
        .stdout(contains(
            "app/models.py:17  function  app/models.py::format_greeting",
        ));
    factory(home.path())
        .args(["graph", "query", "nothing_here", p])
        .assert()
        .code(1);

    let out = factory(home.path())
        .args(["graph", "explain", "format_greeting", p, "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let e = json(&out);
    let callers: Vec<&str> = e["incoming"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert!(callers.contains(&"app/service.py::register"), "{e}");
    factory(home.path())
        .args(["graph", "explain", "app/models.py::User", p])
        .assert()
        .success()
        .stdout(contains("inherits from:"))
        .stdout(contains("app/models.py::Base"))
        .stdout(contains("tested by:"));

    factory(home.path())
        .args(["graph", "path", "register", "validate", p])
        .assert()
        .success()
        .stdout(contains("-calls-> app/models.py::Base::save"))
        .stdout(contains("-calls-> app/models.py::Base::validate"));

    let out = factory(home.path())
        .args(["graph", "status", p, "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let s = json(&out);
    assert_eq!(s["stale"], false);
    assert_eq!(s["languages"]["python"]["files"], 5);
    assert_eq!(s["parse_errors"][0], "app/service.py");
    assert_eq!(s["non_utf8"][0], "app/legacy.py");

    fs::write(repo.path().join("app/__init__.py"), "VERSION = 2\n").unwrap();
    factory(home.path())
        .args(["graph", "status", p])
        .assert()
        .success()
        .stdout(contains("stale      1 changed"));
    factory(home.path())
        .args(["graph", "update", p, "--json"])
        .assert()
        .success()
        .stdout(contains("\"parsed\": 1"));

    factory(home.path())
        .args(["graph", "hotspots", p, "--commits", "5", "--json"])
        .assert()
        .success()
        .stdout(contains("\"commits_scanned\": 1"));
}

#[test]
fn a_missing_graph_names_the_command_that_builds_it() {
    let repo = fixture("go");
    let home = tempfile::tempdir().unwrap();
    for sub in [
        vec!["status"],
        vec!["query", "x"],
        vec!["explain", "x"],
        vec!["path", "a", "b"],
        vec!["hotspots"],
    ] {
        let mut args = vec!["graph"];
        args.extend(sub.iter().copied());
        args.push(repo.path().to_str().unwrap());
        factory(home.path())
            .args(&args)
            .assert()
            .code(1)
            .stderr(contains("factory graph extract"));
    }
}

#[test]
fn usage_errors_exit_2_and_help_shows_an_example() {
    let home = tempfile::tempdir().unwrap();
    factory(home.path())
        .args(["graph", "frobnicate"])
        .assert()
        .code(2);
    factory(home.path())
        .args(["graph", "hotspots", "--commits", "many"])
        .assert()
        .code(2);
    factory(home.path())
        .args(["graph", "--help"])
        .assert()
        .success()
        .stdout(contains("factory graph extract"));
    factory(home.path())
        .args(["study", "--help"])
        .assert()
        .success()
        .stdout(contains("Example"));
    let not_repo = tempfile::tempdir().unwrap();
    factory(home.path())
        .args(["graph", "extract", not_repo.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("git init"));
}

/// Installs networkx into a fresh virtual environment and returns its python.
fn networkx_python(dir: &Path) -> PathBuf {
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| StdCommand::new(p).arg("--version").output().is_ok())
        .expect("this test needs python3 on PATH (.ci/run installs it)");
    let venv = dir.join("venv");
    let made = StdCommand::new(python)
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(
        made.success(),
        "python3 -m venv failed (install python3-venv)"
    );
    let py = venv.join("bin/python");
    let pip = StdCommand::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "networkx",
        ])
        .status()
        .unwrap();
    assert!(pip.success(), "pip install networkx failed");
    py
}

#[test]
fn networkx_loads_the_graph_unchanged() {
    let repo = fixture("rust");
    let home = tempfile::tempdir().unwrap();
    factory(home.path())
        .args(["graph", "extract", repo.path().to_str().unwrap()])
        .assert()
        .success();
    let doc_path = repo.path().join(".factory/graph.json");
    let doc = json(&fs::read(&doc_path).unwrap());
    let nodes = doc["nodes"].as_array().unwrap().len();
    let links = doc["links"].as_array().unwrap().len();
    assert!(nodes > 20 && links > 20, "{nodes} nodes, {links} links");

    let venv = tempfile::tempdir().unwrap();
    let py = networkx_python(venv.path());
    let script = r#"
import inspect, json, sys
import networkx as nx
data = json.load(open(sys.argv[1]))
kw = {"edges": "links"} if "edges" in inspect.signature(nx.node_link_graph).parameters else {}
g = nx.node_link_graph(data, **kw)
assert g.is_directed() and g.is_multigraph()
calls = sum(1 for _, _, d in g.edges(data=True) if d["relation"] == "calls")
print(g.number_of_nodes(), g.number_of_edges(), calls, g.graph["built_at_commit"] is not None)
"#;
    let out = StdCommand::new(&py)
        .arg("-c")
        .arg(script)
        .arg(&doc_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = doc["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["relation"] == "calls")
        .count();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("{nodes} {links} {calls} True")
    );
}

fn demo_repo() -> tempfile::TempDir {
    repo_from(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo"))
}

#[test]
fn study_on_the_demo_names_hot_spots_and_past_experiments() {
    let repo = demo_repo();
    let home = tempfile::tempdir().unwrap();
    let p = repo.path().to_str().unwrap();
    // A second commit that changes most_frequent, so it has churn as well as callers.
    let lib = repo.path().join("src/lib.rs");
    let text = fs::read_to_string(&lib).unwrap();
    fs::write(
        &lib,
        text.replace(
            "let best = counts",
            "// The highest count wins.\n    let best = counts",
        ),
    )
    .unwrap();
    commit_all(repo.path(), "Explain how the winner is chosen", 2_000);

    factory(home.path()).args(["init", p]).assert().success();
    for hypothesis in ["Count words in a HashMap", "Sort the words before counting"] {
        factory(home.path())
            .args(["begin", p, "--hypothesis", hypothesis])
            .assert()
            .success();
    }
    // A keep through the binary needs a passing precheck of a real change; the store
    // records one directly (the keep gate is the experiment layer's business).
    ExperimentStore::with_registry(repo.path(), Some(home.path().to_path_buf()))
        .finalize(
            1,
            Outcome::new(Verdict::Keep)
                .scores(0.5, 0.8)
                .notes("HashMap made it 30x faster"),
        )
        .unwrap();
    factory(home.path())
        .args([
            "finalize",
            p,
            "--id",
            "2",
            "--verdict",
            "revert",
            "--score-before",
            "0.8",
        ])
        .args(["--score-after", "0.7", "--notes", "sorting broke tie order"])
        .assert()
        .success();
    fs::write(
        repo.path().join(".factory/archive/001-hashmap.md"),
        "# Hash maps beat linear scans for word counts\n\nDetails.\n",
    )
    .unwrap();
    fs::write(
        repo.path().join(".factory/last_eval.json"),
        r#"{"project": ".", "language": "rust", "total": 0.7,
            "results": [
              {"name": "tests", "tier": "hygiene", "score": 1.0, "weight": 0.5, "passed": true, "details": "2 passed"},
              {"name": "lint", "tier": "hygiene", "score": 0.25, "weight": 0.5, "passed": false, "details": "3 clippy warnings"}
            ],
            "guard_violations": [], "threshold": 0.5, "passed": true,
            "skipped": [], "test_count": 2, "coverage": null, "baseline": null}"#,
    )
    .unwrap();

    factory(home.path())
        .args(["study", p])
        .assert()
        .success()
        .stdout(contains("observations.md"));
    let obs = fs::read_to_string(repo.path().join(".factory/strategy/observations.md")).unwrap();
    assert!(obs.len() >= 200, "{obs}");
    for needle in [
        "rust: 1 files",
        "eval command: `factory eval`",
        "## Hot spots",
        "`src/lib.rs::most_frequent` (function at src/lib.rs:9): fan-in 1, churn 2",
        "Explain how the winner is chosen",
        "#1 **keep**, delta +0.3: Count words in a HashMap — HashMap made it 30x faster",
        "#2 **revert**, delta -0.1: Sort the words before counting",
        "001-hashmap.md: Hash maps beat linear scans for word counts",
        "- #2: Sort the words before counting (why: sorting broke tie order)",
        "- lint (Hygiene): 0.25 — 3 clippy warnings",
    ] {
        assert!(obs.contains(needle), "missing {needle:?} in:\n{obs}");
    }
    assert!(
        repo.path().join(".factory/graph.json").is_file(),
        "study builds the graph"
    );
}

#[test]
fn study_without_git_history_or_eval_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo"),
        tmp.path(),
    );
    let home = tempfile::tempdir().unwrap();
    factory(home.path())
        .args(["study", tmp.path().to_str().unwrap()])
        .assert()
        .success();
    let obs = fs::read_to_string(tmp.path().join(".factory/strategy/observations.md")).unwrap();
    assert!(obs.len() >= 200, "{obs}");
    for needle in [
        "Code graph: not available",
        "No code graph available, so no hot spots.",
        "No git history available",
        "No experiments recorded yet",
        "No eval yet",
        "no `.factory/config.json`",
    ] {
        assert!(obs.contains(needle), "missing {needle:?} in:\n{obs}");
    }
}
