//! One fixture pair per diagnostic code, checked through the salsa database the command
//! line and the language server use:
//!
//! - `tests/diagnostics/FWFnnn.fwf` (`.fwir` for the rules only IR text can break, see
//!   [`IR_ONLY`]) reports FWFnnn (and nothing else, unless listed in
//!   [`ALSO`]); its rendered report is pinned by a snapshot;
//! - `tests/diagnostics/FWFnnn.fixed.fwf`, the same workflow with the fix applied,
//!   reports nothing at all;
//! - `docs/diagnostics.md` has a section per code holding the fixture and its report,
//!   and every ```fwf example in `docs/language.md` checks cleanly.
//!
//! A new code without a fixture or a docs section fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use factory_compiler::check::file_diagnostics;
use factory_compiler::check::ir_text::ir_file_diagnostics;
use factory_compiler::db::{Database, Db, Loader};
use factory_compiler::diagnostic::{Code, Diagnostic};
use factory_compiler::host::BUILTIN_ROLES;

/// Codes a fixture may report besides its own, because they follow from it.
const ALSO: &[(Code, &[Code])] = &[
    // The subgraph the missing file would have declared is unknown too.
    (Code::UnknownImport, &[Code::UnknownSubgraph]),
];

/// Codes that lowering a `.fwf` file never breaks, so only IR text shows them.
const IR_ONLY: &[Code] = &[
    // Lowering writes every body node's `in=`; hand-written or mutated IR may not.
    Code::ParallelBody,
];

/// The fixture of `code`, or its fixed form.
fn fixture(code: Code, fixed: bool) -> String {
    let ext = if IR_ONLY.contains(&code) {
        "fwir"
    } else {
        "fwf"
    };
    let fixed = if fixed { ".fixed" } else { "" };
    format!("{}{fixed}.{ext}", code.as_str())
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics")
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the compiler crate sits in the workspace")
        .to_path_buf()
}

/// Reads keys as paths under a directory, so reports name files as `FWF005.fwf` and
/// `lib/cycle.fwf` wherever the tests run.
struct DirLoader(PathBuf);

impl Loader for DirLoader {
    fn load(&self, key: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(key)).ok()
    }
}

/// Serves sources from memory (the examples of docs/language.md).
struct MemLoader(BTreeMap<String, String>);

impl Loader for MemLoader {
    fn load(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

fn roles() -> Option<BTreeSet<String>> {
    Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect())
}

fn diagnose(db: &Database, key: &str) -> Vec<Diagnostic> {
    let file = db.file(key);
    assert!(file.exists(db), "{key} is missing");
    if key.ends_with(".fwir") {
        return ir_file_diagnostics(db, file).clone();
    }
    file_diagnostics(db, file).clone()
}

fn check_fixture(key: &str) -> (Database, Vec<Diagnostic>) {
    let db = Database::new(Arc::new(DirLoader(fixtures())), roles());
    let diags = diagnose(&db, key);
    (db, diags)
}

/// Every diagnostic rendered as the command line shows it, without colours.
fn render(db: &Database, diags: &[Diagnostic]) -> String {
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100);
    let mut out = String::new();
    for d in diags {
        let source = Arc::new(db.file(&d.file).text(db).clone());
        let report = d.to_report(source);
        handler
            .render_report(&mut out, report.as_ref())
            .expect("rendering into a String cannot fail");
        out.push('\n');
    }
    // miette ends lines of its frames with spaces in places; they are noise in diffs.
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
        + "\n"
}

fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn every_code_has_a_failing_and_a_fixed_fixture() {
    let missing: Vec<String> = Code::ALL
        .iter()
        .flat_map(|c| [fixture(*c, false), fixture(*c, true)])
        .filter(|name| !fixtures().join(name).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "add these fixtures to compiler/tests/diagnostics/: {missing:?}"
    );
}

#[test]
fn each_fixture_reports_its_code_and_nothing_unrelated() {
    for &code in Code::ALL {
        let key = fixture(code, false);
        let (_, diags) = check_fixture(&key);
        assert!(
            diags.iter().any(|d| d.code == code),
            "{key} should report {}, got {:?}",
            code.as_str(),
            codes(&diags)
        );
        let also = ALSO
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(&[][..], |(_, a)| a);
        let stray: Vec<&str> = diags
            .iter()
            .filter(|d| d.code != code && !also.contains(&d.code))
            .map(|d| d.code.as_str())
            .collect();
        assert!(stray.is_empty(), "{key} also reports {stray:?}");
        for d in diags.iter().filter(|d| d.code == code) {
            assert_eq!(d.severity, code.severity());
            assert!(!d.help.is_empty(), "{key}: {} has no help", code.as_str());
            assert!(
                d.span.start > 0 || d.span.end > 0,
                "{key}: {} points at the start of the file, not at the problem",
                code.as_str()
            );
        }
    }
}

#[test]
fn each_fixed_fixture_is_clean() {
    for &code in Code::ALL {
        let key = fixture(code, true);
        let (db, diags) = check_fixture(&key);
        assert!(
            diags.is_empty(),
            "{key} should check cleanly, got:\n{}",
            render(&db, &diags)
        );
    }
}

#[test]
fn rendered_reports() {
    for &code in Code::ALL {
        let key = fixture(code, false);
        let (db, diags) = check_fixture(&key);
        insta::assert_snapshot!(code.as_str(), render(&db, &diags));
    }
}

/// The section of `doc` under `## FWFnnn`, up to the next `## ` heading.
fn section(doc: &str, code: Code) -> Option<&str> {
    let heading = format!("\n## {}", code.as_str());
    let start = doc.find(&heading)? + 1;
    let rest = &doc[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    Some(&rest[..end])
}

#[test]
fn diagnostics_doc_covers_every_code_with_its_fixture_and_report() {
    let path = repo_root().join("docs/diagnostics.md");
    let doc = std::fs::read_to_string(&path).expect("docs/diagnostics.md exists");
    let mut last = 0;
    for &code in Code::ALL {
        let Some(text) = section(&doc, code) else {
            panic!("docs/diagnostics.md has no `## {}` section", code.as_str());
        };
        let at = doc.find(text).unwrap_or_default();
        assert!(at >= last, "{} is out of order", code.as_str());
        last = at;
        assert!(
            text.contains(code.title()),
            "the {} section should quote its title: {}",
            code.as_str(),
            code.title()
        );
        let key = fixture(code, false);
        let source = std::fs::read_to_string(fixtures().join(&key)).expect("fixture");
        assert!(
            text.contains(&source),
            "the {} section should show {key} verbatim",
            code.as_str()
        );
        let (db, diags) = check_fixture(&key);
        let report = render(&db, &diags);
        assert!(
            text.contains(&report),
            "the {} section should show the current report of {key}:\n{report}",
            code.as_str()
        );
    }
}

/// The ```fwf blocks of a markdown text (```fwf-fragment blocks are not included).
fn fwf_blocks(doc: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in doc.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```fwf" => current = Some((i + 1, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    blocks
}

#[test]
fn language_doc_examples_check_cleanly() {
    let path = repo_root().join("docs/language.md");
    let doc = std::fs::read_to_string(&path).expect("docs/language.md exists");
    let blocks = fwf_blocks(&doc);
    assert!(blocks.len() >= 5, "docs/language.md should have examples");
    // A block starting with `// file: KEY` is a file other examples import (`std/x.fwf`
    // is the standard library); it is checked like the others.
    let mut files = BTreeMap::new();
    let mut keys = Vec::new();
    for (line, text) in &blocks {
        let key = match text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// file: "))
        {
            Some(k) => k.trim().to_string(),
            None => format!("example-line-{line}.fwf"),
        };
        files.insert(key.clone(), text.clone());
        keys.push((line, key));
    }
    let db = Database::new(Arc::new(MemLoader(files)), roles());
    let mut failures = String::new();
    for (line, key) in keys {
        let diags = diagnose(&db, &key);
        if !diags.is_empty() {
            failures += &format!(
                "docs/language.md:{line} ({key}):\n{}\n",
                render(&db, &diags)
            );
        }
    }
    assert!(
        failures.is_empty(),
        "examples that do not check cleanly:\n{failures}"
    );
}

#[test]
fn fwf_blocks_skip_fragments() {
    let doc = "x\n```fwf\nworkflow a {}\n```\n```fwf-fragment\nagent b\n```\n";
    assert_eq!(fwf_blocks(doc), vec![(2, "workflow a {}\n".to_string())]);
}

#[test]
fn syntax_errors_do_not_cascade() {
    // A broken `use` and a broken gate: the flow still names both, the import is only
    // used by the broken `use`. Only the two syntax errors are worth reporting.
    let text = r#"import ./lib/qa
workflow tiny {
    agent builder { role: builder }
    use qa(fix: builder loops: 2) as qa
    gate review by agent(ceo "Good?"
    flow {
        start -> builder -> qa -> review
        review.proceed -> end
        review.reloop(max 2) -> builder
        review.halt -> end
    }
}
"#;
    let mut files = BTreeMap::new();
    files.insert("broken.fwf".to_string(), text.to_string());
    files.insert(
        "lib/qa.fwf".to_string(),
        std::fs::read_to_string(fixtures().join("lib/qa.fwf")).expect("fixture"),
    );
    let db = Database::new(Arc::new(MemLoader(files)), roles());
    let diags = diagnose(&db, "broken.fwf");
    assert_eq!(
        codes(&diags),
        ["FWF001", "FWF001"],
        "{}",
        render(&db, &diags)
    );
    assert_eq!(diags[0].span.start, text.find("builder loops").unwrap());
    assert_eq!(diags[1].span.start, text.find("agent(ceo").unwrap());
}

/// A `parallel` count outside 1..=8 is FWF027 however it is written; a knob is judged
/// by its bounds, which the outer loop may tune it anywhere within.
#[test]
fn parallel_counts_outside_one_to_eight_are_fwf027() {
    let workflow = |knob: &str, count: &str| {
        format!(
            "workflow tiny {{\n{knob}    parallel tries(count: {count}) in worktrees {{\n        agent builder {{ role: builder }}\n        flow {{\n            start -> builder -> end\n        }}\n    }}\n    select best by best_score\n    flow {{\n        start -> tries -> best -> end\n    }}\n}}\n"
        )
    };
    let cases = [
        (workflow("", "0"), Some("a count of 0")),
        (workflow("", "-1"), Some("a count of -1")),
        (workflow("", "9"), Some("a count of 9")),
        (workflow("", "1"), None),
        (workflow("", "8"), None),
        (
            workflow("    knob k: int = 3\n", "k"),
            Some("knob `k` may set the count of parallel block `tries` to any number"),
        ),
        (
            workflow("    knob k: int = 3 in 1..=9\n", "k"),
            Some("to 1..=9, outside 1..=8"),
        ),
        (workflow("    knob k: int = 8 in 1..=8\n", "k"), None),
    ];
    for (text, expected) in cases {
        let mut files = BTreeMap::new();
        files.insert("w.fwf".to_string(), text.clone());
        let db = Database::new(Arc::new(MemLoader(files)), roles());
        let diags = diagnose(&db, "w.fwf");
        match expected {
            None => assert!(diags.is_empty(), "{text}\n{}", render(&db, &diags)),
            Some(message) => {
                assert_eq!(codes(&diags), ["FWF027"], "{text}\n{}", render(&db, &diags));
                assert!(diags[0].message.contains(message), "{}", diags[0].message);
                // The primary span is the count argument.
                let at = &text[diags[0].span.clone()];
                assert!(text.contains(&format!("(count: {at})")), "points at {at:?}");
                assert!(diags[0].help.contains("1..=8") || diags[0].help.contains("from 1 to 8"));
            }
        }
    }
}
