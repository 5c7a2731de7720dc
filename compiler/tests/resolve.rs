//! The resolver, data-driven: each fixture is one or more files (`//- name.fwf` starts
//! a file), with `$0` marking the cursor. The snapshot is what the cursor is on, its
//! definition and its references across the fixture's files, each place as
//! `file:line:column` and the text there.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use factory_compiler::db::{Database, Db, Loader, SourceFile};
use factory_compiler::resolve::{self, Location, file_symbols};

const CURSOR: &str = "$0";

struct Files(BTreeMap<String, String>);

impl Loader for Files {
    fn load(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

/// The fixture's files by key, the cursor's file and offset (the marker removed).
fn split(fixture: &str) -> (BTreeMap<String, String>, String, usize) {
    let mut files = BTreeMap::new();
    let mut key = "main.fwf".to_string();
    let mut text = String::new();
    for line in fixture.trim_start_matches('\n').split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("//- ") {
            if !text.is_empty() {
                files.insert(key.clone(), std::mem::take(&mut text));
            }
            key = name.trim().to_string();
        } else {
            text.push_str(line);
        }
    }
    files.insert(key, text);
    let (file, offset) = files
        .iter()
        .find_map(|(k, t)| t.find(CURSOR).map(|o| (k.clone(), o)))
        .expect("a $0 cursor in the fixture");
    if let Some(t) = files.get_mut(&file) {
        *t = t.replacen(CURSOR, "", 1);
    }
    (files, file, offset)
}

fn place(db: &Database, loc: &Location) -> String {
    let text = db.file(&loc.file).text(db);
    let line = text[..loc.span.start].matches('\n').count() + 1;
    let col = loc.span.start - text[..loc.span.start].rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{}:{line}:{col} `{}`", loc.file, &text[loc.span.clone()])
}

/// The resolver's answer at the cursor, rendered.
fn check(fixture: &str) -> String {
    let (files, key, offset) = split(fixture);
    let db = Database::new(Arc::new(Files(files.clone())), None);
    let all: Vec<SourceFile> = files.keys().map(|k| db.file(k)).collect();
    let file = db.file(&key);
    let Some(hit) = resolve::symbol_at(&db, file, offset) else {
        return "nothing".into();
    };
    let mut out = format!(
        "{:?}\nat: {}\n",
        hit.symbol,
        place(
            &db,
            &Location {
                file: key.clone(),
                span: hit.span.clone()
            }
        )
    );
    match resolve::definition(&db, file, &hit.symbol) {
        Some(def) => out.push_str(&format!("definition: {}\n", place(&db, &def))),
        None => out.push_str("definition: none\n"),
    }
    out.push_str("references:\n");
    for r in resolve::references(&db, file, &hit.symbol, &all) {
        out.push_str(&format!("  {}\n", place(&db, &r)));
    }
    out
}

#[test]
fn a_flow_term_with_a_label_means_its_node() {
    insta::assert_snapshot!(check(r#"
workflow w {
    agent build { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> build -> review
        review.rel$0oop(max 3) -> build
        review.proceed -> end
        review.halt -> end
    }
}
"#), @r#"
Node { scope: "w", name: "review" }
at: main.fwf:6:9 `review`
definition: main.fwf:3:10 `review`
references:
  main.fwf:3:10 `review`
  main.fwf:5:27 `review`
  main.fwf:6:9 `review`
  main.fwf:7:9 `review`
  main.fwf:8:9 `review`
"#);
}

#[test]
fn a_name_in_a_parallel_block_means_the_blocks_own_node() {
    insta::assert_snapshot!(check(r#"
workflow w {
    agent builder { role: builder }
    parallel tries(count: 2) in worktrees {
        agent builder { role: builder }
        flow {
            start -> buil$0der -> end
        }
    }
    flow {
        start -> builder -> tries -> end
    }
}
"#), @r#"
Node { scope: "w/tries", name: "builder" }
at: main.fwf:6:22 `builder`
definition: main.fwf:4:15 `builder`
references:
  main.fwf:4:15 `builder`
  main.fwf:6:22 `builder`
"#);
}

#[test]
fn a_knob_in_its_declaration_a_bound_an_argument_and_a_template() {
    insta::assert_snapshot!(check(r#"
workflow w {
    knob rou$0nds: int = 3 in 1..=5
    agent build { role: builder task: "Try {{knobs.rounds}} times" }
    gate review by agent(ceo) "Good?"
    parallel tries(count: rounds) in worktrees {
        agent t { role: builder }
        flow {
            start -> t -> end
        }
    }
    flow {
        start -> build -> tries -> review
        review.reloop(max rounds) -> build
        review.proceed -> end
        review.halt -> end
    }
}
"#), @r#"
Knob { workflow: "w", name: "rounds" }
at: main.fwf:2:10 `rounds`
definition: main.fwf:2:10 `rounds`
references:
  main.fwf:2:10 `rounds`
  main.fwf:3:52 `rounds`
  main.fwf:5:27 `rounds`
  main.fwf:13:27 `rounds`
"#);
}

#[test]
fn a_template_placeholder_selects_its_knob() {
    insta::assert_snapshot!(check(r#"
workflow w {
    knob rounds: int = 3
    agent build { role: builder task: "Try {{ knobs.ro$0unds }} times" }
    flow {
        start -> build -> end
    }
}
"#), @r#"
Knob { workflow: "w", name: "rounds" }
at: main.fwf:3:53 `rounds`
definition: main.fwf:2:10 `rounds`
references:
  main.fwf:2:10 `rounds`
  main.fwf:3:53 `rounds`
"#);
}

#[test]
fn a_subgraph_parameter_in_a_template_and_a_bound() {
    insta::assert_snapshot!(check(r#"
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(ceo) "Ok after {{loo$0ps}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}
"#), @r#"
Param { decl: "review", name: "loops" }
at: main.fwf:2:44 `loops`
definition: main.fwf:1:28 `loops`
references:
  main.fwf:1:28 `loops`
  main.fwf:2:44 `loops`
  main.fwf:6:28 `loops`
"#);
}

#[test]
fn a_subgraph_declared_in_one_file_is_found_where_importers_use_it() {
    insta::assert_snapshot!(check(r#"
//- lib.fwf
subgraph rev$0iew(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use review(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
//- other.fwf
subgraph review() {
    agent x { role: critic }
    flow {
        start -> x -> end
    }
}

workflow o {
    use review() as r
    flow {
        start -> r -> end
    }
}
"#), @r#"
Decl { name: "review" }
at: lib.fwf:1:10 `review`
definition: lib.fwf:1:10 `review`
references:
  lib.fwf:1:10 `review`
  main.fwf:5:9 `review`
"#);
}

#[test]
fn a_use_of_an_imported_subgraph_resolves_to_its_declaration() {
    insta::assert_snapshot!(check(r#"
//- lib.fwf
subgraph review(fix: node) {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use rev$0iew(fix: a) as qa
    flow {
        start -> a -> qa -> end
    }
}
"#), @r#"
Subgraph { name: "review" }
at: main.fwf:5:9 `review`
definition: lib.fwf:1:10 `review`
references:
  main.fwf:5:9 `review`
  lib.fwf:1:10 `review`
"#);
}

#[test]
fn a_use_argument_names_the_parameter_of_the_imported_subgraph() {
    insta::assert_snapshot!(check(r#"
//- lib.fwf
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(ceo) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    agent a { role: builder }
    use review(fix: a, lo$0ops: 3) as qa
    flow {
        start -> a -> qa -> end
    }
}
"#), @r#"
Param { decl: "review", name: "loops" }
at: main.fwf:5:24 `loops`
definition: lib.fwf:1:28 `loops`
references:
  main.fwf:5:24 `loops`
  lib.fwf:1:28 `loops`
  lib.fwf:2:44 `loops`
  lib.fwf:6:28 `loops`
"#);
}

#[test]
fn a_role_is_referenced_across_files() {
    insta::assert_snapshot!(check(r#"
//- lib.fwf
subgraph review() {
    gate verdict by agent(builder) "Ok?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max 2) -> verdict
        verdict.halt -> end
    }
}
//- main.fwf
workflow w {
    agent a { role: buil$0der }
    agent b { role: critic }
    flow {
        start -> a -> b -> end
    }
}
"#), @r#"
Role { name: "builder" }
at: main.fwf:2:21 `builder`
definition: none
references:
  main.fwf:2:21 `builder`
  lib.fwf:2:27 `builder`
"#);
}

#[test]
fn a_named_write_declares_the_artifact_its_readers_read() {
    insta::assert_snapshot!(check(r#"
workflow w {
    input spec = "spec.md"
    agent plan { role: planner reads: spec writes: plan = ".factory/plan.md" }
    agent build { role: builder reads: pl$0an, spec }
    flow {
        start -> plan -> build -> end
    }
}
"#), @r#"
Artifact { decl: "w", name: "plan" }
at: main.fwf:4:40 `plan`
definition: main.fwf:3:52 `plan`
references:
  main.fwf:3:52 `plan`
  main.fwf:4:40 `plan`
"#);
}

#[test]
fn an_input_is_an_artifact_declaration() {
    insta::assert_snapshot!(check(r#"
workflow w {
    input spec = "spec.md"
    agent plan { role: planner reads: sp$0ec writes: plan = ".factory/plan.md" }
    flow {
        start -> plan -> end
    }
}
"#), @r#"
Artifact { decl: "w", name: "spec" }
at: main.fwf:3:39 `spec`
definition: main.fwf:2:11 `spec`
references:
  main.fwf:2:11 `spec`
  main.fwf:3:39 `spec`
"#);
}

#[test]
fn an_instance_artifact_resolves_into_the_imported_subgraph() {
    insta::assert_snapshot!(check(r#"
//- lib.fwf
subgraph survey() {
    agent look { role: researcher writes: combined = ".factory/survey.md" }
    flow {
        start -> look -> end
    }
}
//- main.fwf
import ./lib

workflow w {
    use survey() as study
    agent a { role: builder reads: study.comb$0ined }
    flow {
        start -> study -> a -> end
    }
}
"#), @r#"
Artifact { decl: "survey", name: "combined" }
at: main.fwf:5:42 `combined`
definition: lib.fwf:2:43 `combined`
references:
  main.fwf:5:42 `combined`
  lib.fwf:2:43 `combined`
"#);
}

#[test]
fn a_dotted_artifact_name_is_one_name() {
    insta::assert_snapshot!(check(r#"
workflow w {
    agent plan.plan { role: planner writes: plan.plan = ".factory/plan.md" }
    agent build { role: builder reads: plan.pl$0an }
    flow {
        start -> plan.plan -> build -> end
    }
}
"#), @r#"
Artifact { decl: "w", name: "plan.plan" }
at: main.fwf:3:40 `plan.plan`
definition: main.fwf:2:45 `plan.plan`
references:
  main.fwf:2:45 `plan.plan`
  main.fwf:3:40 `plan.plan`
"#);
}

#[test]
fn an_import_is_defined_by_its_file() {
    insta::assert_snapshot!(check(r#"
//- lib.fwf
subgraph review() {
    agent tester { role: builder }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./l$0ib

workflow w {
    use review() as qa
    flow {
        start -> qa -> end
    }
}
"#), @r#"
Import { index: 0 }
at: main.fwf:1:8 `./lib`
definition: lib.fwf:1:1 ``
references:
  main.fwf:1:8 `./lib`
"#);
}

#[test]
fn a_comment_names_nothing() {
    insta::assert_snapshot!(check(r#"
workflow w {
    // builder a$0 builder
    agent a { role: builder }
    flow {
        start -> a -> end
    }
}
"#), @"nothing");
}

/// The index is a query: asked twice at one revision, it is built once; an edit to
/// another file does not rebuild it; an edit to its own file does.
#[test]
fn the_symbol_index_is_built_once_per_revision_of_its_file() {
    let text = "workflow w {\n    agent a { role: builder }\n    flow {\n        start -> a -> end\n    }\n}\n";
    let files = Files(BTreeMap::from([("main.fwf".to_string(), text.to_string())]));
    let (mut db, log) = Database::with_log(Arc::new(files), None);
    let built = |log: &Mutex<Vec<String>>| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|e| e.starts_with("file_symbols"))
            .count()
    };
    let file = db.file("main.fwf");
    let at = text.find("-> a").unwrap() + 3;
    assert!(resolve::symbol_at(&db, file, at).is_some());
    assert!(resolve::symbol_at(&db, file, at + 1).is_some());
    assert_eq!(built(&log), 1);
    db.set_text("other.fwf", "workflow o {}\n".into());
    let _ = file_symbols(&db, file);
    assert_eq!(built(&log), 1, "an edit elsewhere rebuilt the index");
    db.set_text("main.fwf", text.replace("agent a", "agent  a"));
    assert!(resolve::symbol_at(&db, file, at + 1).is_some());
    assert_eq!(
        built(&log),
        2,
        "an edit to the file did not rebuild its index"
    );
}
