//! The file is parsed item by item (the outline's chunks, each parsed on its own and
//! kept across edits), and that must give exactly what parsing the whole text in one go
//! gives: the same tree, source map, errors and skipped ranges, for any text, and after
//! any edit of a file the database has seen before.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use factory_compiler::db::{Database, Loader, parse_file};
use factory_compiler::ide;
use proptest::prelude::*;

struct NoFiles;

impl Loader for NoFiles {
    fn load(&self, _key: &str) -> Option<String> {
        None
    }
}

const KEY: &str = "main.fwf";

/// Parses `texts` one after another in one database (each an edit of the previous) and
/// compares every result with a parse of the whole text.
fn same_as_whole_parse(texts: &[String]) -> Result<(), TestCaseError> {
    let mut db = Database::new(Arc::new(NoFiles), None);
    for text in texts {
        let file = db.set_text(KEY, text.clone());
        let by_items = parse_file(&db, file);
        let whole = ide::parse(text);
        prop_assert_eq!(&by_items.errors, &whole.errors, "errors of {:?}", text);
        prop_assert_eq!(&by_items.skipped, &whole.skipped, "skipped of {:?}", text);
        prop_assert_eq!(&by_items.ast, &whole.ast, "tree of {:?}", text);
        let sorted = |m: &ide::SourceMap| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>()
        };
        prop_assert_eq!(
            sorted(by_items.map()),
            sorted(whole.map()),
            "map of {:?}",
            text
        );
    }
    Ok(())
}

fn fwf_files(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            fwf_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "fwf")
            && let Ok(text) = std::fs::read_to_string(&p)
        {
            out.push(text);
        }
    }
}

/// Every `.fwf` of the repository: modes, standard library, diagnostic and recovery
/// fixtures (many of them broken on purpose).
fn repository_files() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in [
        "workflows",
        "stdlib",
        "examples",
        "compiler/tests",
        "lsp/tests",
    ] {
        fwf_files(&root.join(dir), &mut out);
    }
    out
}

#[test]
fn every_repository_file_parses_the_same_by_items() {
    let files = repository_files();
    assert!(files.len() > 40, "found only {} .fwf files", files.len());
    for text in &files {
        same_as_whole_parse(std::slice::from_ref(text)).unwrap();
    }
}

#[test]
fn every_prefix_of_a_mode_parses_the_same_by_items() {
    // Typing a file from the top: each prefix is an edit of the one before, and most
    // are broken in the middle of an item.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../workflows/improve.fwf"),
    )
    .unwrap();
    let prefixes: Vec<String> = text
        .char_indices()
        .map(|(i, _)| i)
        .step_by(7)
        .map(|i| text[..i].to_string())
        .collect();
    same_as_whole_parse(&prefixes).unwrap();
}

const TOKENS: &[&str] = &[
    "workflow w {",
    "subgraph s(n: int = 2) {",
    "headless",
    "import std/study",
    "knob k: int = 3 in 1..=5",
    "use s(n: 3) as u",
    "agent",
    "agent a",
    "agent b { role: builder }",
    "fn f \"make\"",
    "gate g by agent(ceo)",
    "gate g by",
    "fork f",
    "join j",
    "select s by best_score",
    "parallel p(count: 2) {",
    "flow {",
    "a -> b",
    "g.reloop (max 2) -> a",
    "start -> a -> end",
    "->",
    ",",
    "{",
    "}",
    "(",
    ")",
    ":",
    "=",
    "\"str\"",
    "\"unterminated",
    "///",
    "/// doc",
    "//!",
    "// c",
    "\n",
    "\n",
    "\n",
    " ",
    "é",
    "in",
    "as",
    "by",
    "writes: plan = \"p.md\"",
    "reads: plan",
    "timeout: 60",
    "expandable",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|t| t.join(" "))
}

fn line_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|t| t.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn token_soup_parses_the_same_by_items(a in token_soup(), b in line_soup()) {
        same_as_whole_parse(&[a, b])?;
    }

    #[test]
    fn an_edited_mode_parses_the_same_by_items(
        file in prop::sample::select(repository_files()),
        at in any::<prop::sample::Index>(),
        cut in 0usize..40,
        insert in prop::sample::select(TOKENS),
    ) {
        // Replace a few bytes of a real file with a token, as an editor would.
        let mut start = at.index(file.len().max(1));
        while !file.is_char_boundary(start) { start -= 1; }
        let mut end = (start + cut).min(file.len());
        while !file.is_char_boundary(end) { end += 1; }
        let mut edited = file.clone();
        edited.replace_range(start..end, insert);
        same_as_whole_parse(&[file, edited])?;
    }
}
