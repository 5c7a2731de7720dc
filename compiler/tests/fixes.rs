//! Diagnostics keep their structure, checked over the fixtures of
//! `tests/diagnostics/`: every finding says what it is about (its subject), and every
//! machine-applicable fix, applied, removes the finding it fixes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use factory_compiler::check::file_diagnostics;
use factory_compiler::db::{Database, Db, Loader};
use factory_compiler::diagnostic::{Code, Diagnostic, FixEdits, Subject};
use factory_compiler::host::BUILTIN_ROLES;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics")
}

struct DirLoader(PathBuf);

impl Loader for DirLoader {
    fn load(&self, key: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(key)).ok()
    }
}

fn builtin_roles() -> BTreeSet<String> {
    BUILTIN_ROLES.iter().map(|r| r.to_string()).collect()
}

fn check(db: &Database, key: &str) -> Vec<Diagnostic> {
    file_diagnostics(db, db.file(key)).clone()
}

/// Serves sources from memory.
struct MemLoader(BTreeMap<String, String>);

impl Loader for MemLoader {
    fn load(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

/// The diagnostics of `text` saved as `w.fwf`, and the text with every fix applied.
fn fix_text(text: &str) -> (Vec<Diagnostic>, String) {
    let files = BTreeMap::from([("w.fwf".to_string(), text.to_string())]);
    let db = Database::new(Arc::new(MemLoader(files)), Some(builtin_roles()));
    let diags = check(&db, "w.fwf");
    let mut edits: Vec<_> = diags
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .flat_map(|f| f.edits.iter().cloned())
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.range, &e.replacement);
    }
    (diags, out)
}

fn fixture_db() -> Database {
    Database::new(Arc::new(DirLoader(fixtures())), Some(builtin_roles()))
}

#[test]
fn every_finding_of_the_fixtures_has_a_subject() {
    let mut missing = Vec::new();
    for &code in Code::ALL {
        let key = format!("{}.fwf", code.as_str());
        for d in check(&fixture_db(), &key) {
            if d.code != Code::Syntax && d.subject.is_none() {
                missing.push(format!("{key}: {} {}", d.code.as_str(), d.message));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "findings without a subject:\n{}",
        missing.join("\n")
    );
}

/// Applies the text edits of `fix` to `text` (last first, as `check --fix` does).
fn apply(text: &str, fix: &FixEdits) -> String {
    let mut edits: Vec<_> = fix.edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse((e.range.start, e.range.end)));
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.range.clone(), &e.replacement);
    }
    out
}

/// The codes whose fixtures carry a fix: each fix must remove its finding.
const FIXED: &[Code] = &[
    Code::UnknownRole,
    Code::ForkWithoutJoin,
    Code::UnboundedReloop,
    Code::UnusedImport,
    Code::UnusedKnob,
];

#[test]
fn each_fix_applied_removes_its_finding() {
    for &code in Code::ALL {
        let key = format!("{}.fwf", code.as_str());
        let db = fixture_db();
        let diags = check(&db, &key);
        let fixable: Vec<&Diagnostic> = diags.iter().filter(|d| d.fix.is_some()).collect();
        assert_eq!(
            !fixable.is_empty(),
            FIXED.contains(&code),
            "{key}: fixes on {:?}",
            fixable.iter().map(|d| d.code.as_str()).collect::<Vec<_>>()
        );
        for d in fixable {
            let Some(fix) = d.fix.as_ref() else { continue };
            let mut db = fixture_db();
            for e in &fix.edits {
                assert_eq!(
                    e.file, d.file,
                    "{key}: an edit outside the diagnostic's file"
                );
            }
            let text = db.file(&d.file).text(&db).clone();
            db.set_text(&d.file, apply(&text, fix));
            // A created prompt gives its role a prompt; the server and the command line
            // learn of it by discovering roles again.
            let mut roles = builtin_roles();
            for c in &fix.creates {
                let path = Path::new(&c.path);
                assert_eq!(
                    path.parent().and_then(Path::file_name),
                    Some("prompts".as_ref()),
                    "{key}: a prompt goes in prompts/"
                );
                assert!(c.contents.starts_with('#'), "{key}: {}", c.contents);
                roles.extend(path.file_stem().map(|s| s.to_string_lossy().into_owned()));
            }
            db.set_roles(Some(roles));
            let after = check(&db, &key);
            let still: Vec<&Diagnostic> = after
                .iter()
                .filter(|a| a.code == d.code && a.subject == d.subject)
                .collect();
            assert!(
                still.is_empty(),
                "{key}: `{}` left {still:#?}\nin:\n{}",
                fix.title,
                db.file(&d.file).text(&db)
            );
            let errors: Vec<&str> = after
                .iter()
                .filter(|a| a.is_error())
                .map(|a| a.code.as_str())
                .collect();
            assert!(
                errors.is_empty(),
                "{key}: `{}` leaves errors {errors:?}",
                fix.title
            );
        }
    }
}

const GATE: &str = "    agent builder { role: builder }\n    gate review by agent(ceo) \"Good?\"\n";
const FLOW: &str = "    flow {\n        start -> builder -> review\n        review.proceed -> end\n        review.reloop(max 2) -> builder\n        review.halt -> end\n    }\n";

#[test]
fn a_bound_on_an_edge_that_is_not_a_reloop_is_dropped() {
    let text = format!(
        "workflow w {{\n{GATE}{}}}\n",
        FLOW.replace("review.proceed ->", "review.proceed(max 2) ->")
    );
    let (diags, fixed) = fix_text(&text);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].code, Code::BadAttribute);
    assert_eq!(fixed, format!("workflow w {{\n{GATE}{FLOW}}}\n"));
    assert!(fix_text(&fixed).0.is_empty());
}

#[test]
fn an_unused_knob_goes_with_its_doc_comment() {
    let text = format!(
        "workflow w {{\n    /// How hard to try.\n    /// (two lines)\n    knob spare: int = 3 in 1..=5\n{GATE}{FLOW}}}\n"
    );
    let (diags, fixed) = fix_text(&text);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(fixed, format!("workflow w {{\n{GATE}{FLOW}}}\n"));
}

#[test]
fn a_declaration_continued_on_the_next_line_gets_no_line_deletion() {
    let text =
        format!("workflow w {{\n    knob spare: int = 3\n        in 1..=5\n{GATE}{FLOW}}}\n");
    let (diags, fixed) = fix_text(&text);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0].code, Code::UnusedKnob);
    assert!(diags[0].fix.is_none(), "{:#?}", diags[0].fix);
    assert_eq!(fixed, text);
}

#[test]
fn a_fork_inside_an_instance_gets_no_join_from_the_workflow() {
    // The fork is the subgraph's; the workflow's file has no line to add the join to.
    let lib = "subgraph split() {\n    fork f\n    fn a \"true\"\n    fn b \"true\"\n    flow {\n        start -> f\n        f -> a, b -> end\n    }\n}\n";
    let files = BTreeMap::from([
        ("lib.fwf".to_string(), lib.to_string()),
        (
            "w.fwf".to_string(),
            "import ./lib\nworkflow w {\n    use split() as s\n    flow {\n        start -> s -> end\n    }\n}\n".to_string(),
        ),
    ]);
    let db = Database::new(Arc::new(MemLoader(files)), Some(builtin_roles()));
    let diags = check(&db, "w.fwf");
    let fork = diags
        .iter()
        .find(|d| d.code == Code::ForkWithoutJoin)
        .unwrap_or_else(|| panic!("FWF014 expected: {diags:#?}"));
    assert_eq!(fork.subject, Some(Subject::Node("s.f".into())), "{fork:#?}");
    assert!(fork.fix.is_none(), "{fork:#?}");
}

/// Branches that meet at a gate without a join: the join goes before the gate, where
/// they meet — not after it, which would leave the gate's reloop outside the fork
/// (FWF016). Each branch's edge is labelled by its own name.
#[test]
fn a_join_is_added_where_the_branches_meet() {
    let text = "workflow w {\n    fork f\n    agent a { role: researcher }\n    agent b { role: researcher }\n    gate g by agent(ceo) \"ok?\"\n    flow {\n        start -> f -> a, b -> g\n        g.proceed -> end\n        g.halt -> end\n        g.reloop(max 2) -> f\n    }\n}\n";
    let (diags, fixed) = fix_text(text);
    let fork = diags
        .iter()
        .find(|d| d.code == Code::ForkWithoutJoin)
        .unwrap_or_else(|| panic!("{diags:#?}"));
    let labels: Vec<&str> = fork.labels.iter().map(|l| l.message.as_str()).collect();
    assert!(labels.contains(&"`a` goes on to `g`"), "{labels:?}");
    assert!(labels.contains(&"`b` goes on to `g`"), "{labels:?}");
    assert!(fixed.contains("    fork f\n    join f_join\n"), "{fixed}");
    assert!(
        fixed.contains("start -> f -> a, b -> f_join -> g\n"),
        "{fixed}"
    );
    let after = fix_text(&fixed).0;
    assert!(after.is_empty(), "the fixed file is clean: {after:#?}");
}
