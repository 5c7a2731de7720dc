//! Names inside parallel blocks and subgraphs: lookup, rename and completion resolve in
//! the right scope.

use factory_lsp::handlers::{completion, definition, rename};
use factory_lsp::paths::path_to_uri;
use factory_lsp::position::LineIndex;
use factory_lsp::world::World;
use lsp_types::*;

const SRC: &str = r#"subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}

workflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: hypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> builder -> qa -> end
        }
    }
    select best by best_score

    flow {
        start -> builder -> tries -> best -> end
    }
}
"#;

fn setup() -> (tempfile::TempDir, World, Uri) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let uri = path_to_uri(&root.join("x.fwf")).unwrap();
    let mut world = World::new(Some(&root));
    let key = world.open_doc(uri.clone(), SRC.to_string(), 1).unwrap();
    assert_eq!(world.lsp_diagnostics(&key), vec![], "the fixture is clean");
    (dir, world, uri)
}

fn at(needle: &str, nth: usize, shift: usize) -> Position {
    let i = SRC.match_indices(needle).nth(nth).unwrap().0;
    LineIndex::new(SRC).position(i + shift)
}

fn tdp(uri: &Uri, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier::new(uri.clone()),
        position,
    }
}

fn definition_start(world: &mut World, uri: &Uri, position: Position) -> Position {
    let params = GotoDefinitionParams {
        text_document_position_params: tdp(uri, position),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    match definition::definition(world, params).unwrap() {
        Some(GotoDefinitionResponse::Scalar(l)) => l.range.start,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_name_in_a_parallel_block_means_the_blocks_own_node() {
    let (_d, mut world, uri) = setup();
    // `builder` in the inner flow is the inner agent, in the outer flow the outer one.
    let inner = definition_start(&mut world, &uri, at("start -> builder -> qa", 0, 10));
    assert_eq!(inner, at("agent builder { role: builder task", 0, 6));
    let outer = definition_start(&mut world, &uri, at("start -> builder -> tries", 0, 10));
    assert_eq!(outer, at("agent builder { role: builder }", 0, 6));
    // A knob used as the block's count.
    assert_eq!(
        definition_start(&mut world, &uri, at("count: hypotheses", 0, 8)),
        at("hypotheses:", 0, 0)
    );
    // Subgraph parameters: in a bound and in a flow.
    assert_eq!(
        definition_start(&mut world, &uri, at("max loops", 0, 5)),
        at("loops: int", 0, 0)
    );
    assert_eq!(
        definition_start(&mut world, &uri, at("-> fix", 0, 3)),
        at("fix: node", 0, 0)
    );
}

#[test]
fn renaming_the_inner_node_leaves_the_outer_one() {
    let (_d, world, uri) = setup();
    let prepared = rename::prepare(&world, tdp(&uri, at("start -> builder -> qa", 0, 10))).unwrap();
    assert_eq!(
        prepared,
        Some(PrepareRenameResponse::Range(Range::new(
            at("start -> builder -> qa", 0, 9),
            at("start -> builder -> qa", 0, 16)
        )))
    );
    let params = RenameParams {
        text_document_position: tdp(&uri, at("start -> builder -> qa", 0, 10)),
        new_name: "maker".into(),
        work_done_progress_params: Default::default(),
    };
    let edit = rename::rename(&world, params).unwrap().unwrap();
    let mut starts: Vec<Position> = edit.changes.unwrap()[&uri]
        .iter()
        .map(|e| e.range.start)
        .collect();
    starts.sort_by_key(|p| (p.line, p.character));
    assert_eq!(
        starts,
        vec![
            at("agent builder { role: builder task", 0, 6),
            at("fix: builder", 0, 5),
            at("start -> builder -> qa", 0, 9),
        ]
    );
    // Nothing to rename on a keyword.
    assert_eq!(
        rename::prepare(&world, tdp(&uri, at("workflow", 0, 2))).unwrap(),
        None
    );
}

#[test]
fn renaming_a_parameter_covers_bounds_flows_and_templates() {
    let (_d, world, uri) = setup();
    let params = RenameParams {
        text_document_position: tdp(&uri, at("loops: int", 0, 1)),
        new_name: "rounds".into(),
        work_done_progress_params: Default::default(),
    };
    let edit = rename::rename(&world, params).unwrap().unwrap();
    assert_eq!(
        edit.changes.unwrap()[&uri].len(),
        3,
        "declaration, {{{{loops}}}} and (max loops)"
    );
}

#[test]
fn completion_in_a_parallel_flow_offers_its_own_nodes() {
    let (_d, world, uri) = setup();
    let params = CompletionParams {
        text_document_position: tdp(&uri, at("start -> builder -> qa", 0, 9)),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    };
    let Some(CompletionResponse::Array(items)) = completion::completion(&world, params).unwrap()
    else {
        panic!()
    };
    let labels: Vec<String> = items.into_iter().map(|i| i.label).collect();
    assert!(labels.contains(&"qa".to_string()), "{labels:?}");
    assert!(
        !labels.contains(&"tries".to_string()) && !labels.contains(&"best".to_string()),
        "{labels:?}"
    );
}

#[test]
fn hover_finds_nodes_of_any_declaration_and_block() {
    let (_d, mut world, uri) = setup();
    let hover = |world: &mut World, p: Position| {
        let params = HoverParams {
            text_document_position_params: tdp(&uri, p),
            work_done_progress_params: Default::default(),
        };
        match factory_lsp::handlers::hover::hover(world, params).unwrap() {
            Some(Hover {
                contents: HoverContents::Markup(m),
                ..
            }) => m.value,
            other => panic!("{other:?}"),
        }
    };
    let md = hover(&mut world, at("start -> builder -> qa", 0, 10));
    assert!(
        md.contains("**agent** `builder`") && md.contains("task: `\"Try {{hypothesis}}.\"`"),
        "{md}"
    );
    let md = hover(&mut world, at("-> tries", 0, 4));
    assert!(
        md.contains("**parallel** `tries` (count: hypotheses) in worktrees"),
        "{md}"
    );
    let md = hover(&mut world, at("-> best", 0, 4));
    assert!(md.contains("**select** `best`"), "{md}");
    let md = hover(&mut world, at("-> qa", 0, 4));
    assert!(md.contains("instance of subgraph `review`"), "{md}");
}
