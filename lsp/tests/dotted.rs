//! Dotted declared names, as `factory compile --emit fwf` writes them for inlined ids
//! (`agent experiment.builder`, `writes: plan.plan = ...`): hover, definition and
//! references work on them as on plain names, wherever in the name the cursor is.

use factory_lsp::handlers::{definition, hover};
use factory_lsp::paths::path_to_uri;
use factory_lsp::position::LineIndex;
use factory_lsp::world::World;
use lsp_types::*;

const SRC: &str = r#"workflow w {
    agent plan.writer { role: strategist writes: plan.plan = ".factory/plan.md" }
    agent exp.builder { role: builder reads: plan.plan }
    flow {
        start -> plan.writer -> exp.builder -> end
    }
}
"#;

fn setup() -> (tempfile::TempDir, World, Uri) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let uri = path_to_uri(&root.join("w.fwf")).unwrap();
    let mut world = World::new(Some(&root));
    let key = world.open_doc(uri.clone(), SRC.to_string(), 1).unwrap();
    assert_eq!(world.lsp_diagnostics(&key), vec![]);
    (dir, world, uri)
}

fn at(needle: &str, shift: usize) -> Position {
    LineIndex::new(SRC).position(SRC.find(needle).unwrap() + shift)
}

fn tdp(uri: &Uri, p: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier::new(uri.clone()),
        position: p,
    }
}

fn hover_md(world: &mut World, uri: &Uri, p: Position) -> String {
    let params = HoverParams {
        text_document_position_params: tdp(uri, p),
        work_done_progress_params: Default::default(),
    };
    match hover::hover(world, params).unwrap() {
        Some(Hover {
            contents: HoverContents::Markup(m),
            ..
        }) => m.value,
        other => panic!("{other:?}"),
    }
}

fn definition_at(world: &mut World, uri: &Uri, p: Position) -> Range {
    let params = GotoDefinitionParams {
        text_document_position_params: tdp(uri, p),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    match definition::definition(world, params).unwrap() {
        Some(GotoDefinitionResponse::Scalar(loc)) => loc.range,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_dotted_node_in_a_flow_goes_to_its_declaration_from_any_part_of_the_name() {
    let (_d, mut world, uri) = setup();
    for shift in [0, 3, 5, 10] {
        let range = definition_at(&mut world, &uri, at("exp.builder -> end", shift));
        assert_eq!(range.start, at("exp.builder {", 0), "shift {shift}");
        assert_eq!(
            range.end,
            at("exp.builder {", "exp.builder".len()),
            "shift {shift}"
        );
    }
    let md = hover_md(&mut world, &uri, at("plan.writer ->", 6));
    assert!(md.contains("plan.writer"), "{md}");
}

#[test]
fn a_dotted_artifact_goes_to_its_named_write_and_hovers_with_its_path() {
    let (_d, mut world, uri) = setup();
    for shift in [0, 4, 6] {
        let range = definition_at(&mut world, &uri, at("plan.plan }", shift));
        assert_eq!(range.start, at("plan.plan = ", 0), "shift {shift}");
        assert_eq!(range.end, at("plan.plan = ", 9), "shift {shift}");
    }
    let md = hover_md(&mut world, &uri, at("plan.plan }", 6));
    assert!(
        md.contains("**artifact** `plan.plan`")
            && md.contains(".factory/plan.md")
            && md.contains("written by: `plan.writer`"),
        "{md}"
    );
}

#[test]
fn references_of_a_dotted_node_and_a_dotted_artifact() {
    let (_d, mut world, uri) = setup();
    let refs = |world: &mut World, p: Position| -> Vec<Position> {
        let params = ReferenceParams {
            text_document_position: tdp(&uri, p),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: ReferenceContext {
                include_declaration: true,
            },
        };
        let got = definition::references(world, params).unwrap().unwrap();
        got.iter().map(|l| l.range.start).collect()
    };
    assert_eq!(
        refs(&mut world, at("plan.writer {", 2)),
        vec![at("plan.writer {", 0), at("plan.writer ->", 0)]
    );
    assert_eq!(
        refs(&mut world, at("plan.plan = ", 7)),
        vec![at("plan.plan = ", 0), at("plan.plan }", 0)]
    );
}
