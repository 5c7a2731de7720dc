//! `factory evolve trial` and `compare` (one candidate against its parent on a bench
//! suite), the cost budget of a search, and the `evolve` mode that runs them as a
//! workflow — all with the real executor on copies of tests/bench-suite projects.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{Project, copy_tree, text};

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bench-suite");

/// A suite of `counters` (training) and `budget` (held out) under `dir`, the `counters`
/// script passed through `edit`.
fn small_suite(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    for name in ["counters", "budget"] {
        let to = dir.join(name);
        fs::create_dir_all(&to).unwrap();
        copy_tree(&Path::new(SUITE).join(name), &to);
    }
    let script = dir.join("counters/replay.yaml");
    let text = fs::read_to_string(&script).unwrap();
    fs::write(&script, edit(text)).unwrap();
    dir.to_path_buf()
}

fn host(target: &Path) -> Project {
    Project::fixture(&Path::new(SUITE).join("counters/project"), target)
}

/// improve's IR with `qa_loops` at `n` (its default and every reloop bound it sets).
fn improve_with_qa_loops(p: &Project, n: u32) -> String {
    let out = p.factory(&["compile", "improve", "--emit", "ir"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ir = text(&out.stdout);
    assert!(ir.contains("knob qa_loops int default=3") && ir.contains("max=3 max_knob=qa_loops"));
    ir.replace(
        "knob qa_loops int default=3",
        &format!("knob qa_loops int default={n}"),
    )
    .replace(
        "max=3 max_knob=qa_loops",
        &format!("max={n} max_knob=qa_loops"),
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn compare_proceeds_for_a_better_candidate_halts_for_a_worse_one_and_the_parent_runs_once() {
    let target = tempfile::tempdir().unwrap();
    let p = host(target.path());
    let suite_dir = tempfile::tempdir().unwrap();
    let suite = small_suite(suite_dir.path(), |s| s);
    let dir = p.path();
    fs::write(dir.join("better.fwir"), improve_with_qa_loops(&p, 4)).unwrap();
    fs::write(dir.join("worse.fwir"), improve_with_qa_loops(&p, 1)).unwrap();
    let bench = suite.to_str().unwrap();

    let trial = |cand: &str, out: &str| {
        let o = p.factory(&[
            "evolve",
            "trial",
            cand,
            "--against",
            "improve",
            "--bench",
            bench,
            "-o",
            out,
        ]);
        assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
        // One progress line per run: "  <hash> on <project>: ...".
        text(&o.stderr)
            .lines()
            .filter(|l| l.contains(" on "))
            .count()
    };
    assert_eq!(
        trial("better.fwir", "better.json"),
        4,
        "both sides on both projects"
    );
    let t = json(&dir.join("better.json"));
    assert!(t["candidate"]["train"].as_f64().unwrap() > 0.2, "{t}");
    assert_eq!(t["parent"]["train"].as_f64(), Some(0.0), "{t}");
    assert!(t["candidate"]["holdout"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(t["results"]["candidate"].as_array().unwrap().len(), 2);
    let cmp = p.factory(&["evolve", "compare", "better.json"]);
    assert_eq!(cmp.status.code(), Some(0), "{}", text(&cmp.stderr));
    assert!(
        text(&cmp.stdout).contains(r#""verdict":"proceed""#),
        "{}",
        text(&cmp.stdout)
    );

    // The parent's results come from the cache: only the new candidate runs.
    assert_eq!(
        trial("worse.fwir", "worse.json"),
        2,
        "the parent was cached"
    );
    let cmp = p.factory(&["evolve", "compare", "worse.json"]);
    assert_eq!(cmp.status.code(), Some(1));
    let shown = text(&cmp.stdout);
    assert!(
        shown.contains(r#""verdict":"halt""#) && shown.contains("no gain on training"),
        "{shown}"
    );

    // The parent against itself is never better, whatever the numbers.
    p.factory(&["compile", "improve", "--emit", "ir", "-o", "same.fwir"]);
    assert_eq!(trial("same.fwir", "same.json"), 0, "everything cached");
    let cmp = p.factory(&["evolve", "compare", "same.json"]);
    assert_eq!(cmp.status.code(), Some(1));
    assert!(text(&cmp.stdout).contains("same canonical hash"));
}

#[test]
fn compare_names_an_unusable_trial_file_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("t.json"), "{\"candidate\": 1").unwrap();
    let o = assert_cmd::Command::cargo_bin("factory")
        .unwrap()
        .current_dir(dir.path())
        .args(["evolve", "compare", "t.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("t.json") && err.contains("factory evolve trial"),
        "{err}"
    );
    // A candidate that is neither a file nor a mode is named, in words.
    let o = assert_cmd::Command::cargo_bin("factory")
        .unwrap()
        .current_dir(dir.path())
        .args([
            "evolve",
            "trial",
            "nope.fwir",
            "--against",
            "improve",
            "--bench",
            SUITE,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("`nope.fwir` is neither a file nor a mode"),
        "{err}"
    );
    assert!(!err.contains("Custom {"), "a debug dump: {err}");
}

#[test]
fn a_search_stops_when_its_agent_cost_budget_is_spent() {
    let target = tempfile::tempdir().unwrap();
    let p = host(target.path());
    let suite_dir = tempfile::tempdir().unwrap();
    // The researcher reports what it cost, as claude or opencode would.
    let suite = small_suite(suite_dir.path(), |s| {
        s.replacen(
            "  researcher:\n    - write:",
            "  researcher:\n    - usage: {input_tokens: 1000, output_tokens: 100, cost_usd: 0.25}\n      write:",
            1,
        )
    });
    assert!(
        fs::read_to_string(suite.join("counters/replay.yaml"))
            .unwrap()
            .contains("cost_usd: 0.25")
    );
    let o = p.factory(&[
        "evolve",
        "improve",
        "--bench",
        suite.to_str().unwrap(),
        "--generations",
        "5",
        "--seed",
        "1",
        "--max-cost",
        "0.2",
    ]);
    let shown = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{shown}");
    assert!(
        shown.contains("stopped: agent-cost budget of $0.20 spent ($0.2500)"),
        "{shown}"
    );
    assert!(shown.contains("agents cost $0.2500"), "{shown}");
    // Only the seed was scored: one generation line, and the spend is saved for a resume.
    let gens = fs::read_to_string(p.path().join(".factory/evolve/generations.jsonl")).unwrap();
    assert_eq!(gens.lines().count(), 1, "{gens}");
    let state = json(&p.path().join(".factory/evolve/search.json"));
    assert_eq!(state["spent_usd"].as_f64(), Some(0.25), "{state}");
}

#[test]
fn the_evolve_mode_mutates_trials_and_adopts_or_explains_as_compare_decides() {
    let target = tempfile::tempdir().unwrap();
    let p = host(target.path());
    let dir = p.path();
    small_suite(&dir.join(".factory/evolve/bench"), |s| s);
    let script = dir.join("evolve-agents.yaml");
    fs::write(
        &script,
        "agents:\n  analyst:\n    - write:\n        .factory/evolve/analysis.md: |\n          # Analysis\n\n          ## Cause\n          The candidate changed the graph without giving the builder the extra QA pass\n          the bench projects need, so it kept nothing more than the parent did; the next\n          mutation should raise qa_loops by one instead of editing edges or prompts.\n",
    )
    .unwrap();
    let o = p.factory(&[
        "run",
        "evolve",
        "--runner",
        "replay",
        "--script",
        script.to_str().unwrap(),
    ]);
    let shown = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{shown}");
    let evolve = dir.join(".factory/evolve");
    let candidate = fs::read_to_string(evolve.join("candidate.fwir")).unwrap();
    let parent = fs::read_to_string(evolve.join("parent.fwir")).unwrap();
    assert_ne!(candidate, parent, "the mutant differs from its parent");
    let adopted = dir.join(".factory/workflows/improve.fwir");
    if evolve.join("trial.json").exists() {
        let t = json(&evolve.join("trial.json"));
        // Every bench run really ran (nothing of the outer run leaked in): the parent,
        // unchanged improve, to its end; the mutant to an end of its own (a mutant may
        // fail — say, a node inserted with a runner not installed — which scores 0).
        for side in ["candidate", "parent"] {
            let runs = t["results"][side].as_array().unwrap();
            assert_eq!(runs.len(), 2, "{t}");
            for r in runs {
                let outcome = r["outcome"].as_str().unwrap();
                let ends: &[&str] = if side == "parent" {
                    &["completed"]
                } else {
                    &["completed", "failed", "halted"]
                };
                assert!(ends.contains(&outcome), "{side}: {r}");
            }
        }
        let better = t["candidate"]["train"].as_f64() > t["parent"]["train"].as_f64()
            && t["candidate"]["holdout"].as_f64() >= t["parent"]["holdout"].as_f64()
            && t["candidate"]["hash"] != t["parent"]["hash"];
        if better {
            assert_eq!(fs::read_to_string(&adopted).unwrap(), candidate, "{shown}");
            // Its rendering compiles back to the same IR, and is the mode now.
            let fwf = dir.join(".factory/workflows/improve.fwf");
            let back = p.factory(&["compile", fwf.to_str().unwrap(), "--emit", "ir"]);
            assert_eq!(text(&back.stdout), candidate);
            assert!(!evolve.join("analysis.md").exists());
        } else {
            assert!(!adopted.exists(), "{shown}");
            assert!(evolve.join("analysis.md").exists(), "{shown}");
        }
    } else {
        // The mutant failed `factory check --deny-warnings`: explained, not trialled.
        assert!(
            !adopted.exists() && evolve.join("analysis.md").exists(),
            "{shown}"
        );
    }
    // The user's checkout is untouched: only .factory/ changed.
    let repo = git2::Repository::open(dir).unwrap();
    let statuses = repo.statuses(None).unwrap();
    let changed: Vec<String> = statuses
        .iter()
        .filter_map(|s| s.path().ok().map(str::to_string))
        .filter(|p| !p.starts_with(".factory/") && p != "evolve-agents.yaml")
        .collect();
    assert!(changed.is_empty(), "{changed:?}");
}
