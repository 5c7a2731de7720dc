//! Properties of the front end on generated input: the parser never panics, whatever
//! the text; and workflows generated from a grammar of valid shapes lower to IR that
//! survives the text form unchanged.

use std::collections::BTreeMap;
use std::sync::Arc;

use factory_compiler::check::{file_diagnostics, lower_file};
use factory_compiler::db::{Database, Db, Loader};
use factory_compiler::ir::{parse_text, to_text};
use proptest::prelude::*;

struct Mem(BTreeMap<String, String>);

impl Loader for Mem {
    fn load(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

fn db_with(text: &str) -> (Database, factory_compiler::db::SourceFile) {
    let files = BTreeMap::from([("main.fwf".to_string(), text.to_string())]);
    let db = Database::new(Arc::new(Mem(files)), None);
    let file = db.file("main.fwf");
    (db, file)
}

/// Pieces of real syntax, so random concatenations get deep into the grammar.
const TOKENS: &[&str] = &[
    "workflow",
    "subgraph",
    "headless",
    "import",
    "std/x",
    "./y",
    "knob",
    "use",
    "as",
    "agent",
    "fn",
    "gate",
    "fork",
    "join",
    "select",
    "study",
    "llm",
    "parallel",
    "in",
    "worktrees",
    "flow",
    "by",
    "user",
    "agent(ceo)",
    "fn(\"x\")",
    "best_score",
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    "=",
    "->",
    ".",
    "..=",
    "[",
    "]",
    "a",
    "b",
    "start",
    "end",
    "proceed",
    "reloop",
    "halt",
    "fail",
    "(max 2)",
    "max",
    "role",
    "reads",
    "writes",
    "check",
    "exists",
    "min_size(3)",
    "contains(\"x\")",
    "\"text\"",
    "\"{{exp_id}}\"",
    "\"unterminated",
    "3",
    "-1",
    "0.5",
    "true",
    "int",
    "float",
    "string",
    "bool",
    "node",
    "///",
    "//!",
    "// c",
    "\n",
    " ",
    "é",
    "🦀",
    "\\",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|t| t.join(" "))
}

/// A valid workflow: a chain of agents with optional gate-guarded reloops and a
/// fork/join diamond, in a random order of declarations.
fn valid_workflow() -> impl Strategy<Value = String> {
    (1usize..12, prop::collection::vec(any::<bool>(), 12), 1u32..6, any::<bool>(), "[a-z ]{0,20}")
        .prop_map(|(n, gates, bound, diamond, doc)| {
            let mut decls = Vec::new();
            let mut flow = vec!["start".to_string()];
            for (i, gated) in gates.iter().enumerate().take(n) {
                decls.push(format!(
                    "    /// step {i}\n    agent a{i} {{ role: builder writes: \".factory/a{i}.md\" task: \"do {{{{goal}}}} {i}\" }}"
                ));
                flow.push(format!("a{i}"));
                if *gated {
                    decls.push(format!("    gate g{i} by agent(ceo) \"ok {i}?\""));
                    flow.push(format!("g{i}"));
                }
            }
            let mut extra = Vec::new();
            // Gates: proceed continues the chain, reloop goes back, halt ends.
            let mut stmts = Vec::new();
            let mut prev = flow[0].clone();
            for step in &flow[1..] {
                if let Some(n) = prev.strip_prefix('g') {
                    stmts.push(format!("{prev}.proceed -> {step}"));
                    let target = format!("a{n}");
                    extra.push(format!("{prev}.reloop(max {bound}) -> {target}"));
                    extra.push(format!("{prev}.halt -> end"));
                } else {
                    stmts.push(format!("{prev} -> {step}"));
                }
                prev = step.clone();
            }
            if let Some(n) = prev.strip_prefix('g') {
                extra.push(format!("{prev}.reloop(max {bound}) -> a{n}"));
                extra.push(format!("{prev}.halt -> end"));
            }
            let last = if diamond {
                decls.push("    fork f\n    agent x { role: researcher }\n    agent y { role: researcher }\n    join j".into());
                stmts.push(format!("{} -> f -> x, y -> j -> end", if prev.starts_with('g') { format!("{prev}.proceed") } else { prev.clone() }));
                None
            } else {
                Some(prev)
            };
            if let Some(prev) = last {
                if prev.starts_with('g') {
                    stmts.push(format!("{prev}.proceed -> end"));
                } else {
                    stmts.push(format!("{prev} -> end"));
                }
            }
            decls.reverse();
            stmts.extend(extra);
            format!(
                "//! {doc}\nworkflow gen {{\n{}\n    flow {{\n{}\n    }}\n}}\n",
                decls.join("\n"),
                stmts.iter().map(|s| format!("        {s}")).collect::<Vec<_>>().join("\n")
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn parser_never_panics_on_arbitrary_text(text in "\\PC{0,300}") {
        let (db, file) = db_with(&text);
        let _ = file_diagnostics(&db, file);
    }

    #[test]
    fn parser_never_panics_on_token_soup(text in token_soup()) {
        let (db, file) = db_with(&text);
        for d in file_diagnostics(&db, file) {
            prop_assert!(d.span.end <= text.len() && d.span.start <= d.span.end, "span out of range: {d:?}");
        }
    }

    #[test]
    fn generated_workflows_check_clean_and_round_trip(text in valid_workflow()) {
        let (db, file) = db_with(&text);
        let diags = file_diagnostics(&db, file);
        prop_assert!(diags.is_empty(), "{text}\n{diags:#?}");
        let ir = &lower_file(&db, file).workflows[0].ir;
        let printed = to_text(ir);
        let (back, _) = parse_text(&printed).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!(&back, ir);
        prop_assert_eq!(to_text(&back), printed);
    }
}
