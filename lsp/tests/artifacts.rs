//! Artifacts and attribute keys: hover, definition and references.

use factory_lsp::handlers::{definition, hover};
use factory_lsp::paths::path_to_uri;
use factory_lsp::position::LineIndex;
use factory_lsp::world::World;
use lsp_types::*;

const SRC: &str = r#"workflow w {
    input goal_doc = "docs/goal.md"
    agent strategist { role: strategist reads: goal_doc writes: plan = ".factory/plan.md" }
    agent builder { role: builder reads: plan, goal_doc }
    flow {
        start -> strategist -> builder -> end
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

#[test]
fn hover_on_artifacts_and_attribute_keys() {
    let (_d, mut world, uri) = setup();
    let md = hover_md(&mut world, &uri, at("plan, goal_doc", 1));
    assert!(
        md.contains("**artifact** `plan`")
            && md.contains(".factory/plan.md")
            && md.contains("written by: `strategist`"),
        "{md}"
    );
    let md = hover_md(&mut world, &uri, at("goal_doc }", 1));
    assert!(md.contains("input") && md.contains("docs/goal.md"), "{md}");
    let md = hover_md(&mut world, &uri, at("reads: plan", 1));
    assert!(md.contains("**attribute** `reads`"), "{md}");
}

#[test]
fn definition_and_references_of_a_named_write() {
    let (_d, world, uri) = setup();
    let params = GotoDefinitionParams {
        text_document_position_params: tdp(&uri, at("plan, goal_doc", 0)),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let Some(GotoDefinitionResponse::Scalar(loc)) = definition::definition(&world, params).unwrap()
    else {
        panic!()
    };
    assert_eq!(loc.range.start, at("plan = ", 0));
    let params = ReferenceParams {
        text_document_position: tdp(&uri, at("goal_doc = ", 2)),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: ReferenceContext {
            include_declaration: true,
        },
    };
    let refs = definition::references(&world, params).unwrap().unwrap();
    let starts: Vec<Position> = refs.iter().map(|l| l.range.start).collect();
    assert_eq!(
        starts,
        vec![
            at("goal_doc = ", 0),
            at("goal_doc writes", 0),
            at("goal_doc }", 0)
        ]
    );
}

#[test]
fn highlights_mark_every_occurrence() {
    let (_d, world, uri) = setup();
    let params = DocumentHighlightParams {
        text_document_position_params: tdp(&uri, at("-> builder", 4)),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let got = definition::highlights(&world, params).unwrap().unwrap();
    let starts: Vec<Position> = got.iter().map(|h| h.range.start).collect();
    assert_eq!(starts, vec![at("builder {", 0), at("builder -> end", 0)]);
}
