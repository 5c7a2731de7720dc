//! How a document is presented: folding ranges and semantic tokens.

use factory_lsp::handlers::{folding, semantic};
use factory_lsp::paths::path_to_uri;
use factory_lsp::world::World;
use lsp_types::*;

const SRC: &str = "// One.
// Two.
workflow w {
    knob k: int = 2 in 1..=3
    agent a { role: builder }
    gate g by agent(ceo) \"Ok?\"
    flow {
        start -> a -> g
        g.proceed -> end
        g.reloop(max k) -> a
        g.halt -> end
    }
}
";

fn world() -> (tempfile::TempDir, World, Uri) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let uri = path_to_uri(&root.join("w.fwf")).unwrap();
    let mut world = World::new(Some(&root));
    world.open_doc(uri.clone(), SRC.to_string(), 1).unwrap();
    (dir, world, uri)
}

#[test]
fn folds_blocks_and_comment_runs() {
    let (_d, world, uri) = world();
    let params = FoldingRangeParams {
        text_document: TextDocumentIdentifier::new(uri),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let got: Vec<(u32, u32, Option<FoldingRangeKind>)> = folding::folding_ranges(&world, params)
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|r| (r.start_line, r.end_line, r.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1, Some(FoldingRangeKind::Comment)),
            (2, 11, None),
            (6, 10, None)
        ]
    );
}

#[test]
fn semantic_tokens_classify_by_meaning() {
    let (_d, world, uri) = world();
    let params = SemanticTokensParams {
        text_document: TextDocumentIdentifier::new(uri),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let Some(SemanticTokensResult::Tokens(tokens)) =
        semantic::semantic_tokens(&world, params).unwrap()
    else {
        panic!("full tokens expected");
    };
    let legend = semantic::legend();
    // Decode back to (line, column, text, type, modifiers).
    let lines: Vec<&str> = SRC.lines().collect();
    let (mut line, mut col) = (0u32, 0u32);
    let mut decoded = Vec::new();
    for t in &tokens.data {
        if t.delta_line > 0 {
            line += t.delta_line;
            col = t.delta_start;
        } else {
            col += t.delta_start;
        }
        let text = &lines[line as usize][col as usize..(col + t.length) as usize];
        decoded.push((
            text.to_string(),
            legend.token_types[t.token_type as usize]
                .as_str()
                .to_string(),
            t.token_modifiers_bitset,
        ));
    }
    let has = |text: &str, ty: &str, m: u32| {
        decoded
            .iter()
            .any(|(x, t, mm)| x == text && t == ty && *mm == m)
    };
    assert!(has("// One.", "comment", 0), "{decoded:?}");
    assert!(has("workflow", "keyword", 0));
    assert!(
        has("w", "function", 1),
        "the workflow's name is a declaration: {decoded:?}"
    );
    assert!(has("k", "parameter", 1));
    assert!(has("int", "type", 0));
    assert!(has("a", "variable", 1));
    assert!(has("role", "property", 0));
    assert!(has("\"Ok?\"", "string", 0));
    assert!(has("proceed", "enumMember", 0));
    assert!(has("g", "variable", 0), "a node in a flow: {decoded:?}");
    assert!(has("k", "parameter", 0), "a knob in a bound: {decoded:?}");
}
