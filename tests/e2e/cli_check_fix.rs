//! `factory check --fix` on real projects in temp dirs: the fixes the language server
//! offers are applied to the files, prompts are created where the quick fix creates
//! them, the result checks clean, and files without a fix are left byte for byte.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("the factory binary is built");
    cmd.current_dir(cwd).env("FACTORY_HOME", cwd.join(".home"));
    cmd
}

/// An unused import, an unused knob, an unknown role, a fork without a join and an
/// unbounded reloop: every one has a fix.
const FIXABLE: &str = r#"import ./lib/qa
workflow tiny {
    knob spare: int = 3 in 1..=5
    agent builder { role: builder }
    agent poet { role: versifier }
    gate review by agent(ceo) "Is the change good?"
    fork split
    fn a "true"
    fn b "true"
    flow {
        start -> builder -> poet -> review
        review.proceed -> split
        split -> a, b -> end
        review.reloop -> builder
        review.halt -> end
    }
}
"#;

const LIB: &str = r#"subgraph qa(fix: node) {
    fn tests "true"
    flow {
        start -> tests -> end
    }
}
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("lib")).unwrap();
    fs::write(dir.path().join("lib/qa.fwf"), LIB).unwrap();
    fs::write(dir.path().join("w.fwf"), FIXABLE).unwrap();
    dir
}

#[test]
fn fix_applies_every_fix_and_the_file_then_checks_clean() {
    let dir = project();
    factory(dir.path())
        .args(["check", "--fix", "w.fwf"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "fixed w.fwf:1:8 FWF102: Remove `import ./lib/qa`",
        ))
        .stderr(predicate::str::contains("FWF103: Remove `knob spare"))
        .stderr(predicate::str::contains(
            "FWF018: Bound the reloop: `review.reloop(max 3)`",
        ))
        .stderr(predicate::str::contains("FWF014: Add `join split_join`"))
        .stderr(predicate::str::contains(
            "FWF010: Create prompts/versifier.md",
        ))
        .stderr(predicate::str::ends_with(
            "checked 1 file(s): 0 error(s), 0 warning(s)\n",
        ));
    let text = fs::read_to_string(dir.path().join("w.fwf")).unwrap();
    assert!(!text.contains("import"), "{text}");
    assert!(!text.contains("knob spare"), "{text}");
    assert!(text.contains("review.reloop(max 3) -> builder"), "{text}");
    assert!(
        text.contains("    fork split\n    join split_join\n"),
        "{text}"
    );
    assert!(
        text.contains("split -> a, b -> split_join -> end"),
        "{text}"
    );
    let prompt = fs::read_to_string(dir.path().join("prompts/versifier.md")).unwrap();
    assert!(prompt.starts_with("# versifier\n"), "{prompt}");
    // The imported file had nothing to fix.
    assert_eq!(
        fs::read_to_string(dir.path().join("lib/qa.fwf")).unwrap(),
        LIB
    );
    // A second run has nothing left to do.
    factory(dir.path())
        .args(["check", "--fix", "w.fwf"])
        .assert()
        .code(0)
        .stderr("checked 1 file(s): 0 error(s), 0 warning(s)\n");
    assert_eq!(fs::read_to_string(dir.path().join("w.fwf")).unwrap(), text);
}

#[test]
fn fix_creates_the_prompt_in_the_nearest_existing_prompts_directory() {
    let dir = project();
    fs::create_dir(dir.path().join("prompts")).unwrap();
    fs::create_dir(dir.path().join("wf")).unwrap();
    fs::rename(dir.path().join("w.fwf"), dir.path().join("wf/w.fwf")).unwrap();
    let text = FIXABLE.replace("./lib/qa", "../lib/qa");
    fs::write(dir.path().join("wf/w.fwf"), &text).unwrap();
    factory(dir.path())
        .args(["check", "--fix", "wf/w.fwf"])
        .assert()
        .code(0);
    assert!(dir.path().join("prompts/versifier.md").is_file());
    assert!(!dir.path().join("wf/prompts").exists());
}

#[test]
fn a_file_with_a_syntax_error_is_not_touched() {
    let dir = project();
    // The reloop is unbounded, but a syntax error elsewhere stops the graph rules:
    // nothing is fixed on a tree with holes.
    let broken = FIXABLE.replace(
        "gate review by agent(ceo) \"Is",
        "gate review by agent(ceo \"Is",
    );
    fs::write(dir.path().join("w.fwf"), &broken).unwrap();
    factory(dir.path())
        .args(["check", "--fix", "w.fwf"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("FWF001"))
        .stderr(predicate::str::contains("fixed").not());
    assert_eq!(
        fs::read_to_string(dir.path().join("w.fwf")).unwrap(),
        broken
    );
    assert!(!dir.path().join("prompts").exists());
}

#[test]
fn fix_leaves_files_without_fixes_alone_and_reports_what_remains() {
    let dir = project();
    // FWF003 has no mechanical fix: it is reported, and the file is not rewritten.
    let unfixable = "workflow other {\n    fn a \"true\"\n    flow {\n        start -> a -> nowhere -> end\n    }\n}\n";
    fs::write(dir.path().join("other.fwf"), unfixable).unwrap();
    let before = fs::metadata(dir.path().join("other.fwf"))
        .unwrap()
        .modified()
        .unwrap();
    factory(dir.path())
        .args(["check", "--fix", "other.fwf", "w.fwf"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("FWF003"))
        .stderr(predicate::str::contains("fixed w.fwf"))
        .stderr(predicate::str::contains("fixed other.fwf").not())
        .stderr(predicate::str::ends_with(
            "checked 2 file(s): 1 error(s), 0 warning(s)\n",
        ));
    assert_eq!(
        fs::read_to_string(dir.path().join("other.fwf")).unwrap(),
        unfixable
    );
    let after = fs::metadata(dir.path().join("other.fwf"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "a file without a fix is not rewritten");
}

#[test]
fn json_carries_each_fix_as_concrete_edits() {
    let dir = project();
    let out = factory(dir.path())
        .args(["check", "--format", "json", "w.fwf"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let fix = |code: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == code)
            .map(|d| d["fix"].clone())
            .unwrap_or_else(|| panic!("no {code} in {json:#}"))
    };
    let reloop = fix("FWF018");
    let at = FIXABLE.find("review.reloop ->").unwrap() + "review.reloop".len();
    assert_eq!(
        reloop["edits"],
        serde_json::json!([{
            "file": "w.fwf", "start": at, "end": at,
            "line": 14, "column": 22, "end_line": 14, "end_column": 22,
            "replacement": "(max 3)",
        }])
    );
    assert_eq!(reloop["creates"], serde_json::json!([]));
    let prompt = fix("FWF010");
    assert_eq!(prompt["edits"], serde_json::json!([]));
    assert_eq!(prompt["creates"][0]["path"], "prompts/versifier.md");
    // Checking with --format json does not apply anything.
    assert_eq!(
        fs::read_to_string(dir.path().join("w.fwf")).unwrap(),
        FIXABLE
    );
}
