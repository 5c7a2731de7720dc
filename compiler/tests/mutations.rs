//! Mutations of valid workflows that once slipped through: two spellings of one artifact
//! path, a reloop bound no run could reach, a node id given twice in IR text with
//! different lines, and a fork left open inside a subgraph file.

use std::collections::BTreeMap;
use std::sync::Arc;

use factory_compiler::check::file_diagnostics;
use factory_compiler::db::{Database, Db, Loader};
use factory_compiler::diagnostic::{Code, Diagnostic};
use factory_compiler::ir::parse_text;

struct MemLoader(BTreeMap<String, String>);

impl Loader for MemLoader {
    fn load(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

fn check(files: &[(&str, &str)], key: &str) -> Vec<Diagnostic> {
    let files = files
        .iter()
        .map(|(k, t)| (k.to_string(), t.to_string()))
        .collect();
    let db = Database::new(Arc::new(MemLoader(files)), None);
    file_diagnostics(&db, db.file(key)).clone()
}

fn codes(diags: &[Diagnostic]) -> Vec<Code> {
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn two_spellings_of_one_path_are_one_artifact() {
    // Both branches write `out/notes.md`, spelled differently: still a race.
    let racing = r#"workflow w {
    fork f
    agent a { role: researcher  writes: "./out/notes.md" }
    agent b { role: researcher  writes: "out//x/../notes.md" }
    join j
    flow {
        start -> f -> a, b -> j -> end
    }
}
"#;
    let diags = check(&[("w.fwf", racing)], "w.fwf");
    assert_eq!(codes(&diags), [Code::ParallelWriteConflict], "{diags:#?}");
    assert!(
        diags[0].message.contains("`out/notes.md`"),
        "{}",
        diags[0].message
    );

    // A read spelled unlike the write that feeds it is fed all the same.
    let fed = r#"workflow w {
    agent a { role: researcher  writes: "out/plan.md" }
    agent b { role: builder  reads: "./out/./plan.md" }
    flow {
        start -> a -> b -> end
    }
}
"#;
    assert_eq!(codes(&check(&[("w.fwf", fed)], "w.fwf")), []);
}

#[test]
fn an_absurd_reloop_bound_is_reported_like_a_missing_one() {
    let text = |bound: u32| {
        format!(
            r#"workflow w {{
    agent builder {{ role: builder }}
    gate review by agent(ceo) "Good?"
    flow {{
        start -> builder -> review
        review.proceed -> end
        review.reloop(max {bound}) -> builder
        review.halt -> end
    }}
}}
"#
        )
    };
    let diags = check(&[("w.fwf", &text(4_000_000_000))], "w.fwf");
    assert_eq!(codes(&diags), [Code::UnboundedReloop], "{diags:#?}");
    assert!(
        diags[0].message.contains("4000000000") && diags[0].help.contains("1 to 1000"),
        "{diags:#?}"
    );
    assert_eq!(codes(&check(&[("w.fwf", &text(1000))], "w.fwf")), []);
}

#[test]
fn an_absurd_bound_from_a_knob_names_the_knob() {
    let text = r#"workflow w {
    knob loops: int = 5000
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max loops) -> builder
        review.halt -> end
    }
}
"#;
    let diags = check(&[("w.fwf", text)], "w.fwf");
    assert_eq!(codes(&diags), [Code::UnboundedReloop], "{diags:#?}");
    assert!(
        diags[0].message.contains("knob `loops`"),
        "{}",
        diags[0].message
    );
}

#[test]
fn a_node_id_given_twice_in_ir_text_is_a_duplicate_whatever_the_lines_say() {
    for (first, second) in [
        ("node a agent", "node a fn run=\"true\""),
        // The copy is broken too: the duplicate is what matters.
        ("node a agent", "node a nonsense"),
        ("node a agent", "node a agent bogus=1"),
        // The first line is broken: it still claims the id.
        ("node a agent bogus=1", "node a agent"),
    ] {
        let text = format!("fwir 1\nworkflow w\n{first}\n{second}\n");
        let errors = parse_text(&text).expect_err("an error");
        let dup = errors
            .iter()
            .find(|e| e.message.contains("duplicate node id `a`"))
            .unwrap_or_else(|| panic!("no duplicate reported for {second:?}: {errors:?}"));
        assert_eq!(&text[dup.span.clone()], second);
        assert!(dup.help.as_deref().is_some_and(|h| h.contains("line 3")));
    }
}

#[test]
fn an_unclosed_fork_in_a_subgraph_is_reported_in_the_subgraph_file() {
    let sub = r#"subgraph survey(fix: node) {
    fork f
    agent a { role: researcher }
    agent b { role: researcher }
    flow {
        start -> f -> a, b -> end
    }
}
"#;
    let diags = check(&[("lib/survey.fwf", sub)], "lib/survey.fwf");
    assert_eq!(codes(&diags), [Code::ForkWithoutJoin], "{diags:#?}");
    assert_eq!(diags[0].file, "lib/survey.fwf");
    assert_eq!(&sub[diags[0].span.clone()], "f");

    // Closed inside the subgraph, or through the node parameter: nothing to report.
    let closed = sub
        .replace("    agent b", "    join j\n    agent b")
        .replace("a, b -> end", "a, b -> j -> fix");
    assert_eq!(
        codes(&check(&[("lib/survey.fwf", &closed)], "lib/survey.fwf")),
        []
    );
}

#[test]
fn a_project_stdlib_directory_adds_to_the_embedded_library() {
    use factory_compiler::host::FsLoader;
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir_all(dir.path().join("stdlib")).unwrap();
    std::fs::write(dir.path().join("stdlib/mine.fwf"), "subgraph mine() {}\n").unwrap();
    let stdlib = factory_compiler::host::find_stdlib(&dir.path().join("deep/er"));
    assert_eq!(stdlib.as_deref(), Some(dir.path().join("stdlib").as_path()));
    let loader = FsLoader { stdlib };
    assert_eq!(
        loader.load("std/mine.fwf").as_deref(),
        Some("subgraph mine() {}\n")
    );
    // Not in the directory: the embedded one.
    assert!(
        loader
            .load("std/deep_qa.fwf")
            .is_some_and(|t| t.contains("subgraph deep_qa"))
    );
}
