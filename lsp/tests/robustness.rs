//! No request panics, whatever the document: every handler at many positions of
//! generated (mostly broken) documents, including multi-byte text.

mod support;

use factory_lsp::handlers::*;
use factory_lsp::paths::path_to_uri;
use factory_lsp::world::World;
use lsp_types::*;
use proptest::prelude::*;
use support::{
    at, code_action_params, completion_params, definition_params, folding_params, hover_params,
    references_params, rename_params, semantic_tokens_params, symbols_params,
};

const TOKENS: &[&str] = &[
    "workflow w {",
    "subgraph s(fix: node, n: int = 2 in 1..=5) {",
    "parallel p(count: k) in worktrees {",
    "}",
    "flow {",
    "knob k: int = 2 in 1..=3",
    "agent a { role: builder task: \"{{knobs.k}} {{n}}\" }",
    "gate g by agent(ceo) \"ok?\"",
    "fork f",
    "join j",
    "use s(fix: a, n: k) as q",
    "start -> a -> g",
    "g.reloop(max k) -> a",
    "g.",
    "a.fail -> end",
    "import ./x",
    "import std/qa",
    "role:",
    "{{knobs.",
    "\"unterminated",
    "// comment é",
    "/// doc 🦀",
    "🦀",
    "é",
    "\n",
    "\n",
    " ",
    "->",
    ",",
    ":",
    "(",
    ")",
];

fn doc() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..40).prop_map(|t| t.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn no_handler_panics(text in doc()) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let uri = path_to_uri(&root.join("w.fwf")).unwrap();
        let mut world = World::new(Some(&root));
        let key = world.open_doc(uri.clone(), text.clone(), 1).unwrap();
        let _ = world.lsp_diagnostics(&key);
        let _ = symbols::document_symbols(&world, symbols_params(&uri)).unwrap();
        let _ = folding::folding_ranges(&world, folding_params(&uri)).unwrap();
        let _ = semantic::semantic_tokens(&world, semantic_tokens_params(&uri)).unwrap();
        let lines = text.split('\n').count() as u32;
        for line in 0..lines + 1 {
            for character in [0, 1, 3, 7, 12, 20, 40, 200] {
                let p = at(&uri, Position::new(line, character));
                let _ = hover::hover(&world, hover_params(p.clone())).unwrap();
                let _ = definition::definition(&world, definition_params(p.clone())).unwrap();
                let _ = definition::references(&world, references_params(p.clone(), true)).unwrap();
                let _ = completion::completion(&world, completion_params(p.clone())).unwrap();
                let _ = rename::prepare(&world, p.clone()).unwrap();
                let _ = rename::rename(&world, rename_params(p.clone(), "zz"));
                let range = Range::new(p.position, p.position);
                let _ = code_action::code_actions(&mut world, code_action_params(&uri, range, Vec::new())).unwrap();
            }
        }
    }
}
