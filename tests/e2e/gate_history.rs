//! What history the gate holds against a hypothesis (docs/gate.md, "Reverted
//! hypotheses"): only a revert measured under the same factory.md and eval profile
//! blocks a retry; `factory history forget N` clears one; and `factory eval` reads the
//! configuration precheck reads. The built binary, real git, temp dirs.

use std::fs;
use std::path::Path;

use crate::support::{GateProject as Project, check, commit_all, details, text};
use factory_runtime::events::{self, Event};
use factory_runtime::project::layout::FactoryPaths;
use git2::Repository;
use serde_json::Value;

/// What only these tests need of the gate's project.
impl Project {
    /// Sets the level in experiment `id`'s worktree and commits it, as a builder would.
    fn set_level(&self, id: u32, level: &str) -> git2::Oid {
        self.build(id, &[("src/level.txt", &format!("{level}\n"))])
    }

    fn finalize(&self, id: u32, verdict: &str) {
        let o = self.factory(&["finalize", "--id", &id.to_string(), "--verdict", verdict]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }

    fn verdict_json(&self, id: u32) -> Value {
        let path = self
            .path()
            .join(format!(".factory/experiments/{id:03}/verdict.json"));
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Commits a new factory.md on `main` (the user's checkout).
    fn commit_factory_md(&self, text: &str) {
        fs::write(self.path().join("factory.md"), text).unwrap();
        commit_all(&Repository::open(self.path()).unwrap(), "factory.md");
    }

    /// A measured revert of `hypothesis`: the level drops, precheck says "regressed".
    fn measured_revert(&self, hypothesis: &str) -> u32 {
        let id = self.begin(hypothesis);
        self.set_level(id, "0.6");
        self.qa_done(id);
        let (code, v) = self.precheck(id);
        assert_eq!(code, Some(1), "{v}");
        assert!(details(&v, "score_direction").contains("regressed"), "{v}");
        self.finalize(id, "revert");
        id
    }
}

const LEVEL: &str = "cat src/level.txt";

/// The eval prints the level only where `GATE_TOOL` is set, else fails as a missing tool.
const NEEDS_TOOL: &str = "if [ -n \"$GATE_TOOL\" ]; then cat src/level.txt; else echo 'gate-tool: command not found' >&2; exit 127; fi";

const HYPOTHESIS: &str = "raise the level by caching the parser tables";

fn factory_md(eval_command: &str, threshold: &str) -> String {
    format!(
        "# Level\n\n## Goal\na higher level\n\n## Scope\n- src/**\n\n## Guards\n- test -f src/level.txt\n\n## Eval command\n{eval_command}\n\n## Eval threshold\n{threshold}\n\n## Constraints\n- none\n\n## Test timeout\n30\n"
    )
}

/// A project on `main` with no known language: the composite is what the eval prints.
fn project(eval_command: &str) -> Project {
    let md = factory_md(eval_command, "0.5");
    Project::init(&[
        (".gitignore", ".factory/\n"),
        ("src/level.txt", "0.7\n"),
        ("factory.md", &md),
    ])
}

/// An error report with miette's line wrapping and gutter undone.
fn flat(report: &str) -> String {
    report
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_measured_revert_under_the_same_configuration_still_blocks() {
    let p = project(LEVEL);
    let first = p.measured_revert(HYPOTHESIS);
    let record = p.verdict_json(first);
    assert_eq!(record["revert_cause"], "measured", "{record}");
    let md = fs::read(p.path().join("factory.md")).unwrap();
    assert_eq!(
        record["gate"]["factory_md"],
        events::chain::sha256_hex(&md),
        "{record}"
    );
    assert_eq!(record["gate"]["eval_profile"], "none", "{record}");

    // The same idea again, this time with a better level: refused for resembling it.
    let id = p.begin(HYPOTHESIS);
    p.set_level(id, "0.9");
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["failures"], serde_json::json!(["anti_patterns"]), "{v}");
    let why = details(&v, "anti_patterns");
    assert!(
        why.contains(&format!("resembles experiment {first}")) && why.contains("history forget"),
        "{why}"
    );
    assert_eq!(v["gate"], record["gate"], "the same configuration: {v}");
}

#[test]
fn a_revert_judged_under_another_factory_md_does_not_block() {
    let p = project(LEVEL);
    let first = p.measured_revert(HYPOTHESIS);
    // The user changes the gate's configuration on main (a longer test timeout).
    p.commit_factory_md(&factory_md(LEVEL, "0.5").replace("30\n", "60\n"));

    let id = p.begin(HYPOTHESIS);
    p.set_level(id, "0.9");
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(check(&v, "anti_patterns")["passed"], true);
    let why = details(&v, "anti_patterns");
    assert!(
        why.contains(&format!(
            "experiment {first} (1.00 similar): judged under another factory.md"
        )),
        "{why}"
    );
    assert_ne!(
        v["gate"]["factory_md"],
        p.verdict_json(first)["gate"]["factory_md"]
    );
}

#[test]
fn an_environment_revert_does_not_block_the_retry() {
    let p = project(NEEDS_TOOL);
    // The tool is missing: the gate cannot measure, and the user reverts.
    let first = p.begin(HYPOTHESIS);
    p.set_level(first, "0.9");
    p.qa_done(first);
    let (code, v) = p.precheck(first);
    assert_eq!(code, Some(2), "{v}");
    assert!(v["error"].as_str().unwrap().contains("127"), "{v}");
    p.finalize(first, "revert");
    assert_eq!(p.verdict_json(first)["revert_cause"], "environment");
    let history = text(&p.factory(&["history"]).stdout);
    assert!(history.contains("revert cause: environment"), "{history}");

    // The tool installed, same factory.md: the retry is measured, and kept.
    let id = p.begin(HYPOTHESIS);
    p.set_level(id, "0.9");
    p.qa_done(id);
    let (code, v) = p.precheck_with(id, &[("GATE_TOOL", "1")]);
    assert_eq!(code, Some(0), "{v}");
    let why = details(&v, "anti_patterns");
    assert!(
        why.contains(&format!(
            "experiment {first} (1.00 similar): reverted for the environment or the eval"
        )),
        "{why}"
    );
    p.finalize(id, "keep");
}

#[test]
fn a_guard_tool_missing_is_the_environment_but_a_failing_guard_is_measured() {
    // A guard command that is not installed (exit 127) is no fault of the change.
    let p = project(LEVEL);
    p.commit_factory_md(
        &factory_md(LEVEL, "0.5").replace("- test -f src/level.txt", "- gate-lint-not-installed"),
    );
    let first = p.begin(HYPOTHESIS);
    p.set_level(first, "0.9");
    p.qa_done(first);
    let (code, v) = p.precheck(first);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["failures"], serde_json::json!(["guard_commands"]), "{v}");
    p.finalize(first, "revert");
    assert_eq!(p.verdict_json(first)["revert_cause"], "environment");

    // A guard that runs and fails is a measurement: it blocks the same idea again.
    let alt = "cat src/level.txt 2>/dev/null || cat src/alt.txt";
    let p = project(alt);
    let move_level = |id: u32| {
        fs::remove_file(p.worktree(id).join("src/level.txt")).unwrap();
        fs::write(p.worktree(id).join("src/alt.txt"), "0.9\n").unwrap();
        commit_all(&Repository::open(p.worktree(id)).unwrap(), "move the level");
        p.qa_done(id);
    };
    let first = p.begin(HYPOTHESIS);
    move_level(first);
    let (code, v) = p.precheck(first);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["failures"], serde_json::json!(["guard_commands"]), "{v}");
    p.finalize(first, "revert");
    assert_eq!(p.verdict_json(first)["revert_cause"], "measured");
    let id = p.begin(HYPOTHESIS);
    move_level(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        details(&v, "anti_patterns").contains(&format!("resembles experiment {first}")),
        "{v}"
    );
}

#[test]
fn history_forget_unblocks_and_history_shows_it_forgotten() {
    let p = project(LEVEL);
    let first = p.measured_revert(HYPOTHESIS);
    let id = p.begin(HYPOTHESIS);
    p.set_level(id, "0.9");
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["failures"], serde_json::json!(["anti_patterns"]), "{v}");

    let verdict_before = fs::read(
        p.path()
            .join(format!(".factory/experiments/{first:03}/verdict.json")),
    )
    .unwrap();
    let tsv_before = fs::read_to_string(p.path().join(".factory/results.tsv")).unwrap();
    let o = p.factory(&["history", "forget", &first.to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(&format!("experiment {first} forgotten at")),
        "{}",
        text(&o.stdout)
    );

    // The record stays as it was; only the marker says it is forgotten.
    assert_eq!(
        fs::read(
            p.path()
                .join(format!(".factory/experiments/{first:03}/verdict.json"))
        )
        .unwrap(),
        verdict_before
    );
    assert_eq!(
        fs::read_to_string(p.path().join(".factory/results.tsv")).unwrap(),
        tsv_before
    );
    let o = p.factory(&["history", "--json"]);
    let history: Value = serde_json::from_slice(&o.stdout).unwrap();
    let record = &history["records"][0];
    assert_eq!(record["id"], first);
    assert_eq!(record["verdict"], "revert");
    let at = record["forgotten_at"].as_str().unwrap().to_owned();
    let shown = text(&p.factory(&["history"]).stdout);
    assert!(shown.contains(&format!("forgotten: at {at}")), "{shown}");
    assert!(
        p.history_events()
            .iter()
            .any(|e| e.kind() == "experiment.forgotten"),
        "an experiment.forgotten event is logged"
    );

    // The retry now passes, and says which revert it did not count.
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v}");
    let why = details(&v, "anti_patterns");
    assert!(
        why.contains(&format!(
            "experiment {first} (1.00 similar): forgotten at {at}"
        )),
        "{why}"
    );

    // Forgetting again changes nothing.
    let o = p.factory(&["history", "forget", &first.to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(&format!("already forgotten at {at}")),
        "{}",
        text(&o.stdout)
    );
}

impl Project {
    fn history_events(&self) -> Vec<Event> {
        events::read(&FactoryPaths::new(self.path()))
            .unwrap()
            .events
    }
}

#[test]
fn forgetting_an_unknown_or_open_experiment_names_the_fix() {
    let p = project(LEVEL);
    let o = p.factory(&["history", "forget", "4"]);
    assert_eq!(o.status.code(), Some(2));
    let err = flat(&text(&o.stderr));
    assert!(
        err.contains("experiment 4 is not on record")
            && err.contains("no experiment is finalized here yet")
            && err.contains("factory history"),
        "{err}"
    );
    assert!(!p.path().join(".factory").exists(), "nothing is created");

    let first = p.measured_revert(HYPOTHESIS);
    let open = p.begin("something else entirely");
    let o = p.factory(&["history", "forget", "99"]);
    assert_eq!(o.status.code(), Some(2));
    let err = flat(&text(&o.stderr));
    assert!(
        err.contains("experiment 99 is not on record")
            && err.contains(&format!("the finalized experiments here are {first}")),
        "{err}"
    );
    let o = p.factory(&["history", "forget", &open.to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let err = flat(&text(&o.stderr));
    assert!(
        err.contains(&format!("experiment {open} has no verdict yet"))
            && err.contains("factory finalize"),
        "{err}"
    );
    assert!(
        !p.path()
            .join(format!(".factory/experiments/{open:03}/forgotten.json"))
            .exists()
    );
}

#[test]
fn eval_reads_factory_md_and_refreshes_a_stale_config_json() {
    let p = project("echo 0.8");
    let o = p.factory(&["init"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let config_json = p.path().join(".factory/config.json");
    let json = |path: &Path| -> Value {
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
    };
    assert_eq!(json(&config_json)["eval_threshold"], 0.5);

    // factory.md's threshold raised after config.json was written: eval uses it.
    fs::write(p.path().join("factory.md"), factory_md("echo 0.8", "0.9")).unwrap();
    let o = p.factory(&["eval", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "0.8 is below 0.9: {}",
        text(&o.stderr)
    );
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["threshold"], 0.9, "{report}");
    assert!(
        text(&o.stderr).contains("refreshed") && text(&o.stderr).contains("config.json"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(json(&config_json)["eval_threshold"], 0.9);
    assert_eq!(
        json(&p.path().join(".factory/config.json.bak"))["eval_threshold"],
        0.5
    );
    // Now in step: nothing to refresh.
    let o = p.factory(&["eval", "--json"]);
    assert!(
        !text(&o.stderr).contains("refreshed"),
        "{}",
        text(&o.stderr)
    );

    // A config.json that cannot be rewritten is refused, naming both files and the fix.
    fs::write(p.path().join("factory.md"), factory_md("echo 0.8", "0.1")).unwrap();
    fs::remove_file(&config_json).unwrap();
    fs::create_dir(&config_json).unwrap();
    fs::write(config_json.join("keep"), "x").unwrap();
    let o = p.factory(&["eval"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = flat(&text(&o.stderr));
    assert!(
        err.contains("config.json")
            && err.contains("factory.md")
            && err.contains("factory init --reparse"),
        "{err}"
    );
}

#[test]
fn eval_of_an_experiment_reads_factory_md_at_its_base_as_precheck_does() {
    let p = project(LEVEL);
    let id = p.begin("raise the level");
    p.set_level(id, "0.8");
    // An uncommitted edit in the user's checkout is not the experiment's configuration.
    fs::write(p.path().join("factory.md"), factory_md(LEVEL, "0.95")).unwrap();
    let o = p.factory(&["eval", "--exp", &id.to_string(), "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["threshold"], 0.5, "{report}");
    // The checkout's own eval reads the edited one.
    let o = p.factory(&["eval", "--json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["threshold"], 0.95, "{report}");
}
