//! The SKILL.md emitter: snapshots of a representative fixture and of every built-in
//! mode in `workflows/`, the Agent Skills front matter rules, and that the annotations
//! reach every node of the graph.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use factory_compiler::driver::{self, Compiled};
use factory_compiler::emit::{
    MAX_DESCRIPTION, MAX_NAME, Skill, is_valid_skill_name, skill_name, to_skill,
};
use factory_compiler::skills::relative_locations;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Compiles `path` and renders its skill, with source files relative to the repository
/// so the snapshots do not depend on where it is checked out.
fn skill_of(path: &Path) -> (Compiled, Skill) {
    let compiled = match driver::compile(&path.to_string_lossy(), &repo(), None) {
        Ok(c) => c,
        Err(err) => panic!("{} does not compile: {err:?}", path.display()),
    };
    let locations = relative_locations(&compiled.locations, &repo());
    let skill = to_skill(&compiled.ir, &locations);
    (compiled, skill)
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skills/review_loop.fwf")
}

/// Every `.fwf` in the repository's `workflows/`, sorted.
fn modes() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join("workflows"))
        .expect("workflows/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fwf"))
        .collect();
    out.sort();
    out
}

/// Every skill under test: the fixture and each mode.
fn all_skills() -> Vec<(PathBuf, Compiled, Skill)> {
    std::iter::once(fixture())
        .chain(modes())
        .map(|p| {
            let (c, s) = skill_of(&p);
            (p, c, s)
        })
        .collect()
}

#[test]
fn fixture_skill_snapshot() {
    let (_, skill) = skill_of(&fixture());
    assert_eq!(skill.dir_name, "workflow-review-loop");
    insta::assert_snapshot!("fixture_skill_md", skill.skill_md);
    insta::assert_snapshot!("fixture_annotations", skill.annotations_yaml);
}

#[test]
fn every_mode_skill_is_pinned() {
    // Every mode is compared (not just up to the first difference), so one
    // `cargo insta review` shows all the skills a change touched.
    let mut changed = Vec::new();
    for path in modes() {
        let (_, skill) = skill_of(&path);
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("mode")
            .to_string();
        let pinned = std::panic::catch_unwind(|| {
            insta::assert_snapshot!(format!("mode_{stem}"), skill.skill_md);
        });
        if pinned.is_err() {
            changed.push(stem);
        }
    }
    assert!(
        changed.is_empty(),
        "the skills of these modes changed; review them with `cargo insta review`: {changed:?}"
    );
}

/// The YAML between the leading `---` lines of a SKILL.md.
fn front_matter(skill_md: &str) -> serde_yaml_ng::Mapping {
    let rest = skill_md
        .strip_prefix("---\n")
        .expect("SKILL.md starts with front matter");
    let end = rest.find("\n---\n").expect("front matter is closed");
    serde_yaml_ng::from_str(&rest[..end]).expect("front matter is valid YAML")
}

fn assert_front_matter_rules(skill: &Skill, what: &str) {
    let fm = front_matter(&skill.skill_md);
    let keys: BTreeSet<&str> = fm.keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(keys, BTreeSet::from(["name", "description"]), "{what}");
    let name = fm["name"].as_str().expect("name is a string");
    assert!(is_valid_skill_name(name), "{what}: bad name {name:?}");
    assert!(name.len() <= MAX_NAME);
    assert!(!name.starts_with('-') && !name.ends_with('-') && !name.contains("--"));
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    );
    assert_eq!(
        name, skill.dir_name,
        "{what}: the name matches the directory"
    );
    let description = fm["description"].as_str().expect("description is a string");
    assert!(!description.trim().is_empty(), "{what}");
    assert!(description.chars().count() <= MAX_DESCRIPTION, "{what}");
    assert!(!description.contains('\n'), "{what}: one line");
}

#[test]
fn every_front_matter_parses_and_follows_the_agent_skills_rules() {
    for (path, compiled, skill) in all_skills() {
        let what = path.display().to_string();
        assert_front_matter_rules(&skill, &what);
        let fm = front_matter(&skill.skill_md);
        let description = fm["description"].as_str().unwrap_or_default();
        // What the mode does comes from its `//!` doc, word for word.
        let first = compiled
            .ir
            .workflow
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(description.starts_with(&first), "{what}: {description}");
        assert!(
            description.contains("Use when"),
            "{what}: says when to use it"
        );
    }
}

#[test]
fn awkward_names_and_long_descriptions_are_sanitized_and_escaped() {
    let mut ir = common::representative();
    ir.workflow.name = "Parallel_Improve!!__v2".repeat(5);
    ir.workflow.description = format!(
        "Fixes: \"quotes\", colons: and # hashes, 'single' too. {}",
        "word ".repeat(400)
    );
    let skill = to_skill(&ir, &BTreeMap::new());
    assert_front_matter_rules(&skill, "awkward");
    assert!(
        skill
            .dir_name
            .starts_with("workflow-parallel-improve-v2parallel-improve")
    );
    let fm = front_matter(&skill.skill_md);
    let description = fm["description"].as_str().unwrap_or_default();
    assert!(description.starts_with("Fixes: \"quotes\", colons: and # hashes, 'single' too."));
    assert!(
        description.ends_with("word…"),
        "cut at a word: {description:?}"
    );

    assert_eq!(skill_name("improve"), "workflow-improve");
    assert_eq!(skill_name("parallel_improve"), "workflow-parallel-improve");
    assert_eq!(skill_name("__x__"), "workflow-x");
    assert!(!is_valid_skill_name("Workflow-x"));
    assert!(!is_valid_skill_name("a--b"));
    assert!(!is_valid_skill_name("-a"));
    assert!(!is_valid_skill_name(&"a".repeat(65)));
}

/// Every node id the annotations mention, with its step (entry and exit have none).
fn annotated(skill: &Skill) -> BTreeMap<String, Option<u64>> {
    let doc: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&skill.annotations_yaml).expect("annotations are YAML");
    let mut out = BTreeMap::new();
    for key in ["entry", "exit"] {
        let id = doc[key]["id"].as_str().expect("entry/exit have an id");
        out.insert(id.to_string(), None);
    }
    for step in doc["steps"].as_sequence().expect("steps is a list") {
        let n = step["step"].as_u64().expect("a step number");
        for node in step["nodes"].as_sequence().expect("nodes is a list") {
            let id = node["id"].as_str().expect("a node id");
            assert!(out.insert(id.to_string(), Some(n)).is_none(), "{id} twice");
        }
    }
    out
}

#[test]
fn annotations_name_every_node_with_its_source_and_its_lines_in_the_skill() {
    for (path, compiled, skill) in all_skills() {
        let what = path.display().to_string();
        let ids: BTreeSet<String> = compiled.ir.nodes.iter().map(|n| n.id.clone()).collect();
        let map = annotated(&skill);
        assert_eq!(
            map.keys().cloned().collect::<BTreeSet<_>>(),
            ids,
            "{what}: every IR node is annotated exactly once"
        );
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&skill.annotations_yaml).unwrap();
        let lines: Vec<&str> = skill.skill_md.lines().collect();
        for step in doc["steps"].as_sequence().unwrap() {
            let n = step["step"].as_u64().unwrap();
            let first = step["skill_lines"][0].as_u64().unwrap() as usize;
            let last = step["skill_lines"][1].as_u64().unwrap() as usize;
            assert!(first >= 1 && first <= last && last <= lines.len(), "{what}");
            assert!(
                lines[first - 1].starts_with(&format!("### Step {n}: ")),
                "{what}: step {n} starts at line {first}"
            );
            let id = step["nodes"][0]["id"].as_str().unwrap();
            assert!(
                lines[first - 1].contains(id),
                "{what}: {id} at line {first}"
            );
            // The source location points at the node's declaration in its file.
            let source = &step["nodes"][0]["source"];
            let file = source["file"].as_str().expect("a source file");
            let line = source["line"].as_u64().expect("a source line") as usize;
            if let Ok(text) = std::fs::read_to_string(repo().join(file)) {
                let at = text.lines().nth(line - 1).unwrap_or_default();
                // An instance's nodes point at the `use` (or block) that brought them in.
                assert!(
                    id.split('.').any(|part| at.contains(part)),
                    "{what}: {id} is not declared at {file}:{line}: {at:?}"
                );
            }
        }
    }
}

#[test]
fn ir_without_source_is_annotated_without_places() {
    let ir = common::representative();
    let skill = to_skill(&ir, &BTreeMap::new());
    let map = annotated(&skill);
    let ids: BTreeSet<String> = ir.nodes.iter().map(|n| n.id.clone()).collect();
    assert_eq!(map.keys().cloned().collect::<BTreeSet<_>>(), ids);
    assert!(!skill.annotations_yaml.contains("source:"));
}

#[test]
fn steps_follow_the_graph_and_say_where_each_verdict_leads() {
    let (_, skill) = skill_of(&fixture());
    let md = &skill.skill_md;
    let pos = |s: &str| {
        md.find(s)
            .unwrap_or_else(|| panic!("missing {s:?} in\n{md}"))
    };
    // Topological: each step comes after the steps that lead to it; fork siblings by id.
    let order = [
        "### Step 1: `survey`",
        "### Step 2: `research`",
        "### Step 3: `pitfalls`",
        "### Step 4: `similar`",
        "### Step 5: `researched`",
        "### Step 6: `strategist`",
        "### Step 7: `approve`",
        "### Step 8: `tries`",
        "### Step 9: `tries.builder`",
        "### Step 12: `best`",
        "### Step 13: `precheck`",
    ];
    for pair in order.windows(2) {
        assert!(pos(pair[0]) < pos(pair[1]), "{pair:?}");
    }
    // Agent steps carry the exact command and their checks.
    // It names its step, what it reads and what it must write, as the executor does.
    pos(
        "factory agent strategist --node strategist --reads .factory/config.json --reads .factory/research/similar.md --reads .factory/research/pitfalls.md --writes .factory/strategy/current.md --task \"Act as strategist for step strategist.\"",
    );
    pos(
        "Check afterwards that `.factory/strategy/current.md` (plan) exists, is at least 300 bytes and contains `## Hypothesis`.",
    );
    pos(
        "factory agent researcher --node similar --writes .factory/research/similar.md --task \"Find projects similar to {{project_path}} and what they learned.\"",
    );
    // Shell-special characters in a task are escaped for the double quotes.
    pos("--task \"Explain why \\`keep\\` failed: \\\"{{verdict}}\\\".\"");
    // Gates: evaluator, verdicts, targets and bounds.
    pos(
        "factory agent ceo --node approve --reads .factory/strategy/current.md --verdict .factory/reviews/plan-verdict.md --task \"Review checkpoint approve: Is the plan one phase, scoped and testable?\"",
    );
    pos("Check afterwards that `.factory/reviews/plan-verdict.md` contains `## Verdict`.");
    // Without its own `writes`, an agent gate's verdict goes to the role's verdict file.
    pos("--verdict .factory/reviews/ceo-verdict-tries.qa.verdict.md --task");
    pos(
        "- **reloop** → go back to step 6 (`strategist`), at most 2 times; after that, treat a reloop verdict as halt.",
    );
    pos("- **reloop** → go back to step 9 (`tries.builder`), at most 2 times (knob `qa_loops`)");
    pos("- **halt** → stop: the workflow ends here.");
    pos("Exit status 0 means **proceed**; any other means **halt**.");
    pos(
        "Ask the user this question and wait for the answer:\n\n> Merge the winning branch {{branch}}?",
    );
    // Fork and join, parallel and select, async.
    pos(
        "Run these steps in parallel, each on its own (start them all, do not wait between them): step 3 (`pitfalls`) and step 4 (`similar`).",
    );
    pos(
        "Wait until every parallel branch has finished: step 3 (`pitfalls`) and step 4 (`similar`).",
    );
    // The fan-out runs the body once per hypothesis; nothing is created by hand.
    assert!(!md.contains("git worktree add"), "{md}");
    pos("Run the steps below once per hypothesis of the plan");
    pos("In each copy of steps 9 to 11, `{{hypothesis}}` is that hypothesis's text");
    pos("Wait for every worktree of step 8 (`tries`) to finish");
    pos("factory precheck {{project_path}} --exp <id> --json   # for each open branch");
    let archivist = &md[pos("### Step 18: `archivist`")..];
    // The last step before the end: nothing waits for it, but the workflow does.
    assert!(archivist.contains("**Runs in the background:** start it; nothing else waits for it"));
    // Failure paths and docs.
    pos("If it fails (a non-zero exit, a failed check or a timeout): go to step 16 (`fixer`).");
    pos("Turns the research into one testable plan.");
    pos("A fixture for the SKILL.md emitter");
    pos("- `{{exp_id}}`: the id of the current experiment");
}

#[test]
fn a_changed_node_changes_its_step_and_nothing_else_moves_needlessly() {
    let (compiled, before) = skill_of(&fixture());
    let mut ir = compiled.ir.clone();
    let i = ir.nodes.iter().position(|n| n.id == "keep").unwrap();
    ir.nodes[i].attrs.run = Some("factory finalize --id {{exp_id}} --verdict keep --quiet".into());
    let after = to_skill(&ir, &compiled.locations);
    assert_ne!(before.skill_md, after.skill_md);
    assert!(after.skill_md.contains("--verdict keep --quiet"));
    assert_eq!(
        before.skill_md.lines().count(),
        after.skill_md.lines().count()
    );
    assert_eq!(to_skill(&ir, &compiled.locations), after, "deterministic");
}

#[test]
fn representative_ir_skill_snapshot() {
    // Hand-built IR with text that needs escaping and no source behind it.
    let skill = to_skill(&common::representative(), &BTreeMap::new());
    insta::assert_snapshot!("representative_skill_md", skill.skill_md);
}
