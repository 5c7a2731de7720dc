//! `factory evolve MODE --bench DIR` end to end: the search runs candidates of the
//! improve mode with the real executor on tests/bench-suite, whose scripted builders
//! succeed only with one more QA loop than improve allows.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::Project;

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bench-suite");

fn evolve(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("factory"));
    c.current_dir(dir)
        .env("FACTORY_HOME", home)
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUNNER")
        .args(["evolve", "improve", "--bench", SUITE])
        .args(args);
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn factory(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(dir)
        .env("FACTORY_HOME", home)
        .env_remove("FACTORY_RUN_ID")
        .env_remove("FACTORY_RUNNER")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_search_finds_the_extra_qa_loop_the_held_out_project_confirms_it_and_it_runs_once_promoted() {
    // A copy of the `counters` bench project, committed with its config: the project
    // the search keeps its state in, and where its promoted mode then runs.
    let target = tempfile::tempdir().unwrap();
    let p = Project::fixture(&Path::new(SUITE).join("counters/project"), target.path());
    let (dir, home) = (p.path(), p.home());
    let out = evolve(dir, home, &["--generations", "5", "--seed", "1"])
        .output()
        .unwrap();
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    let evolve = dir.join(".factory/evolve");
    let archive = json(&evolve.join("archive.json"));
    let cells = archive["cells"].as_object().unwrap();
    let best = cells
        .values()
        .max_by(|a, b| {
            a["fitness"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["fitness"].as_f64().unwrap())
        })
        .unwrap();
    assert!(best["fitness"].as_f64().unwrap() > 0.3, "{shown}");
    // The winner allows one more QA loop than improve; the seed (qa_loops = 3) earns 0.
    assert!(
        best["descriptor"]["knobs"]
            .as_str()
            .unwrap()
            .contains("qa_loops=4"),
        "{best}"
    );
    let seed = cells.values().find(|e| e["generation"] == 0).unwrap();
    assert_eq!(seed["fitness"].as_f64().unwrap(), 0.0);
    assert!(
        shown.contains("held out: seed 0.0000, best 0.5000"),
        "{shown}"
    );
    // Every generation is on record, and isomorphic candidates came from the cache.
    let generations = fs::read_to_string(evolve.join("generations.jsonl")).unwrap();
    assert_eq!(generations.lines().count(), 6, "{generations}");
    let hits: u64 = generations
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["cache_hits"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert!(hits > 0, "{generations}");
    // The best candidate's IR is kept and is a valid mode.
    let hash = best["hash"].as_str().unwrap();
    let ir = evolve
        .join("candidates")
        .join(format!("{}.fwir", &hash[..16]));
    let check = Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .arg("check")
        .arg(&ir)
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check));

    // The best is registered as a mode, listed, and promoted only while unchanged.
    let name = shown
        .lines()
        .find_map(|l| l.strip_prefix("registered the mode "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no candidate registered: {shown}"))
        .to_string();
    assert!(name.starts_with("evolve-gen"), "{name}");
    let modes = text(&factory(dir, home, &["modes"]));
    assert!(modes.contains(&name), "{modes}");
    let registered = evolve.join("modes").join(format!("{name}.fwir"));
    let original = fs::read_to_string(&registered).unwrap();
    fs::write(&registered, format!("{original}\n")).unwrap();
    let refused = factory(dir, home, &["evolve", "promote", &name, "--as", "improve4"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        text(&refused).contains("changed since the search"),
        "{}",
        text(&refused)
    );
    fs::write(&registered, &original).unwrap();
    let promoted = factory(dir, home, &["evolve", "promote", &name, "--as", "improve4"]);
    assert!(promoted.status.success(), "{}", text(&promoted));
    assert!(dir.join(".factory/workflows/improve4.fwir").is_file());
    // Beside it, its editable source, which `factory run improve4` now compiles.
    assert!(
        dir.join(".factory/workflows/improve4.fwf").is_file(),
        "{}",
        text(&promoted)
    );

    // The promoted mode runs like a built-in one: here it keeps what improve reverts.
    let script = Path::new(SUITE).join("counters/replay.yaml");
    let script = script.to_str().unwrap();
    let run = factory(
        dir,
        home,
        &["run", "improve4", "--runner", "replay", "--script", script],
    );
    assert!(run.status.success(), "{}", text(&run));
    assert!(text(&run).contains("experiment 1: keep"), "{}", text(&run));
}

#[test]
fn a_killed_search_resumes_to_the_archive_an_uninterrupted_one_reaches() {
    let args = [
        "--generations",
        "2",
        "--population",
        "3",
        "--seed",
        "7",
        "--jobs",
        "1",
    ];
    let (a, home_a) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = evolve(a.path(), home_a.path(), &args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));

    let (b, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = evolve(b.path(), home_b.path(), &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the seed's generation is on record.
    let log = b.path().join(".factory/evolve/generations.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while fs::read_to_string(&log).map_or(0, |t| t.lines().count()) < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the search never got going"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let out = evolve(b.path(), home_b.path(), &args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("resuming at generation"),
        "{}",
        text(&out)
    );
    let archive = |d: &Path| json(&d.join(".factory/evolve/archive.json"));
    assert_eq!(
        archive(a.path()),
        archive(b.path()),
        "the same seed, the same archive"
    );

    // The report reads the same state: the curve, the cells, the best against the seed.
    let report = factory(b.path(), home_b.path(), &["evolve", "report"]);
    assert!(report.status.success(), "{}", text(&report));
    for part in [
        "fitness per generation",
        "archive grid",
        "archive (",
        "against the seed",
    ] {
        assert!(text(&report).contains(part), "{}", text(&report));
    }
    let mermaid = factory(
        b.path(),
        home_b.path(),
        &["evolve", "report", "--format", "mermaid"],
    );
    assert!(text(&mermaid).contains("flowchart"), "{}", text(&mermaid));

    // Other settings on the same state are refused, naming what to do.
    let out = evolve(
        b.path(),
        home_b.path(),
        &["--generations", "3", "--seed", "8"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("holds a search with other settings"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_suite_directory_that_is_not_a_bench_project_is_named() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let suite = tempfile::tempdir().unwrap();
    fs::create_dir_all(suite.path().join("stray/project")).unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("factory"))
        .current_dir(dir.path())
        .env("FACTORY_HOME", home.path())
        .args(["evolve", "improve", "--bench"])
        .arg(suite.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("is not a bench project: it has no replay.yaml"),
        "{}",
        text(&out)
    );
}
