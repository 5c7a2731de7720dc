//! No request panics, whatever the document: every handler at many positions of
//! generated (mostly broken) documents, including multi-byte text.

use factory_lsp::handlers::*;
use factory_lsp::paths::path_to_uri;
use factory_lsp::world::World;
use lsp_types::*;
use proptest::prelude::*;

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

fn tdp(uri: &Uri, line: u32, character: u32) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier::new(uri.clone()),
        position: Position::new(line, character),
    }
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
        let id = TextDocumentIdentifier::new(uri.clone());
        let _ = symbols::document_symbols(&world, DocumentSymbolParams {
            text_document: id.clone(), work_done_progress_params: Default::default(), partial_result_params: Default::default(),
        }).unwrap();
        let _ = folding::folding_ranges(&world, FoldingRangeParams {
            text_document: id.clone(), work_done_progress_params: Default::default(), partial_result_params: Default::default(),
        }).unwrap();
        let _ = semantic::semantic_tokens(&world, SemanticTokensParams {
            text_document: id.clone(), work_done_progress_params: Default::default(), partial_result_params: Default::default(),
        }).unwrap();
        let lines = text.split('\n').count() as u32;
        for line in 0..lines + 1 {
            for character in [0, 1, 3, 7, 12, 20, 40, 200] {
                let p = tdp(&uri, line, character);
                let _ = hover::hover(&world, HoverParams { text_document_position_params: p.clone(), work_done_progress_params: Default::default() }).unwrap();
                let _ = definition::definition(&world, GotoDefinitionParams {
                    text_document_position_params: p.clone(), work_done_progress_params: Default::default(), partial_result_params: Default::default(),
                }).unwrap();
                let _ = definition::references(&world, ReferenceParams {
                    text_document_position: p.clone(), work_done_progress_params: Default::default(), partial_result_params: Default::default(),
                    context: ReferenceContext { include_declaration: true },
                }).unwrap();
                let _ = completion::completion(&world, CompletionParams {
                    text_document_position: p.clone(), work_done_progress_params: Default::default(), partial_result_params: Default::default(), context: None,
                }).unwrap();
                let _ = rename::prepare(&world, p.clone()).unwrap();
                let _ = rename::rename(&world, RenameParams { text_document_position: p.clone(), new_name: "zz".into(), work_done_progress_params: Default::default() });
                let _ = code_action::code_actions(&mut world, CodeActionParams {
                    text_document: id.clone(),
                    range: Range::new(p.position, p.position),
                    context: CodeActionContext::default(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                }).unwrap();
            }
        }
    }
}
