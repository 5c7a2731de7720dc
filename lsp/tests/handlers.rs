//! Every feature of the server, called at the handler level on a real project in a
//! temporary directory: a workflow importing a subgraph file, a project prompt.

use std::fs;

use factory_lsp::handlers::{completion, definition, formatting, hover, rename, symbols};
use factory_lsp::paths::{key_to_uri, path_to_uri};
use factory_lsp::position::LineIndex;
use factory_lsp::world::World;
use lsp_types::*;

const QA: &str = r#"//! Review rounds.

/// Attacks the change, then judges it.
subgraph qa(fix: node, loops: int = 2 in 1..=5) {
    agent tester { role: adversarial_tester }
    gate verdict by agent(code_reviewer) "Ok?"
    flow {
        start -> tester -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}
"#;

const MAIN: &str = r#"//! Main.
import ./lib/qa

workflow main {
    /// How many review rounds.
    knob rounds: int = 3 in 1..=5
    input plan_doc = "plan.md"

    /// Implements the plan.
    agent builder { role: builder reads: "plan.md" writes: "out.md" check: exists timeout: 60 }
    agent helper { role: custom_role task: "Round {{knobs.rounds}}" }
    gate review by agent(ceo) "Good?"
    use qa(fix: builder, loops: rounds) as qa

    flow {
        start -> builder -> helper -> review
        review.proceed -> qa -> end
        review.reloop(max rounds) -> builder
        review.halt -> end
    }
}
"#;

struct Project {
    _dir: tempfile::TempDir,
    world: World,
    uri: Uri,
    root: std::path::PathBuf,
}

fn project(main: &str) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(root.join("lib")).unwrap();
    fs::create_dir_all(root.join("prompts")).unwrap();
    fs::write(root.join("lib/qa.fwf"), QA).unwrap();
    fs::write(
        root.join("prompts/custom_role.md"),
        "# Custom role\nDoes custom things.\n",
    )
    .unwrap();
    fs::write(root.join("main.fwf"), main).unwrap();
    let mut world = World::new(Some(&root));
    let uri = path_to_uri(&root.join("main.fwf")).unwrap();
    world.open_doc(uri.clone(), main.to_string(), 1).unwrap();
    Project {
        _dir: dir,
        world,
        uri,
        root,
    }
}

/// The position of the `nth` occurrence of `needle`, `shift` bytes into it.
fn pos(text: &str, needle: &str, nth: usize, shift: usize) -> Position {
    let at = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("no {needle} #{nth}"))
        .0;
    LineIndex::new(text).position(at + shift)
}

fn tdp(p: &Project, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier::new(p.uri.clone()),
        position,
    }
}

fn hover_text(p: &mut Project, position: Position) -> String {
    let params = HoverParams {
        text_document_position_params: tdp(p, position),
        work_done_progress_params: Default::default(),
    };
    match hover::hover(&p.world, params).unwrap() {
        Some(Hover {
            contents: HoverContents::Markup(m),
            ..
        }) => m.value,
        other => panic!("no markdown hover: {other:?}"),
    }
}

fn definition_of(p: &mut Project, position: Position) -> Option<Location> {
    let params = GotoDefinitionParams {
        text_document_position_params: tdp(p, position),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    match definition::definition(&p.world, params).unwrap() {
        Some(GotoDefinitionResponse::Scalar(l)) => Some(l),
        None => None,
        other => panic!("unexpected {other:?}"),
    }
}

fn text_at(text: &str, range: Range) -> &str {
    let idx = LineIndex::new(text);
    &text[idx.offset(range.start)..idx.offset(range.end)]
}

#[test]
fn the_fixture_project_is_clean() {
    let p = project(MAIN);
    let key = p.root.join("main.fwf").to_string_lossy().into_owned();
    assert_eq!(p.world.lsp_diagnostics(&key), vec![]);
}

#[test]
fn diagnostics_carry_code_range_and_related_information() {
    let src = "workflow w {\n    agent a { role: builder }\n    agent a { role: builder }\n    fork f\n    agent b { role: builder }\n    flow {\n        start -> f -> a, b -> end\n    }\n}\n";
    let p = project(src);
    let key = p.root.join("main.fwf").to_string_lossy().into_owned();
    let diags = p.world.lsp_diagnostics(&key);
    let dup = diags
        .iter()
        .find(|d| d.code == Some(NumberOrString::String("FWF002".into())))
        .unwrap_or_else(|| panic!("no FWF002 in {diags:#?}"));
    assert_eq!(dup.range.start, pos(src, "a {", 1, 0));
    assert_eq!(dup.severity, Some(DiagnosticSeverity::ERROR));
    let related = dup
        .related_information
        .as_ref()
        .expect("the first declaration is related");
    assert_eq!(related[0].location.range.start, pos(src, "a {", 0, 0));
    assert_eq!(related[0].location.uri, p.uri);
}

#[test]
fn hover_on_a_node_shows_kind_role_reads_writes_checks_and_doc() {
    let mut p = project(MAIN);
    let md = hover_text(&mut p, pos(MAIN, "builder ->", 0, 2));
    for want in [
        "**agent** `builder`",
        "role: `builder`",
        "reads: `\"plan.md\"`",
        "writes: `\"out.md\"`",
        "check: `exists`",
        "Implements the plan.",
    ] {
        assert!(md.contains(want), "{want:?} missing from {md}");
    }
}

#[test]
fn hover_on_a_knob_shows_type_default_bounds_and_doc() {
    let mut p = project(MAIN);
    // On the bound of the reloop, not the declaration.
    let md = hover_text(&mut p, pos(MAIN, "max rounds", 0, 5));
    for want in [
        "**knob** `rounds`",
        "type: `int`",
        "default: `3`",
        "bounds: `1..=5`",
        "How many review rounds.",
    ] {
        assert!(md.contains(want), "{want:?} missing from {md}");
    }
    // And inside a template.
    let md = hover_text(&mut p, pos(MAIN, "knobs.rounds", 0, 7));
    assert!(md.contains("**knob** `rounds`"), "{md}");
}

#[test]
fn hover_on_roles_shows_the_prompt_head() {
    let mut p = project(MAIN);
    let md = hover_text(&mut p, pos(MAIN, "custom_role", 0, 1));
    assert!(md.contains("Does custom things."), "{md}");
    assert!(md.contains("prompts/custom_role.md"), "{md}");
    let md = hover_text(&mut p, pos(MAIN, "agent(ceo)", 0, 7));
    assert!(md.contains("**role** `ceo`"), "{md}");
    if let Some(builtin) = factory_compiler::builtin::prompt("ceo") {
        let first = builtin.lines().find(|l| !l.trim().is_empty()).unwrap();
        assert!(md.contains(first), "{md}");
    } else {
        assert!(md.contains("built-in role"), "{md}");
    }
}

#[test]
fn hover_on_an_import_names_its_file() {
    let mut p = project(MAIN);
    let md = hover_text(&mut p, pos(MAIN, "./lib/qa", 0, 3));
    assert!(
        md.contains(&format!("{}/lib/qa.fwf", p.root.display())),
        "{md}"
    );
}

#[test]
fn definition_of_a_flow_term_is_the_node_declaration() {
    let mut p = project(MAIN);
    let loc = definition_of(&mut p, pos(MAIN, "review.reloop", 0, 3)).unwrap();
    assert_eq!(loc.uri, p.uri);
    assert_eq!(loc.range.start, pos(MAIN, "review by", 0, 0));
    assert_eq!(text_at(MAIN, loc.range), "review");
}

#[test]
fn definition_of_a_use_is_the_subgraph_in_the_imported_file() {
    let mut p = project(MAIN);
    let loc = definition_of(&mut p, pos(MAIN, "qa(fix", 0, 0)).unwrap();
    assert_eq!(
        loc.uri,
        key_to_uri(&p.root.join("lib/qa.fwf").to_string_lossy()).unwrap()
    );
    assert_eq!(loc.range.start, pos(QA, "qa(fix", 0, 0));
}

#[test]
fn definition_of_an_import_is_the_file_and_of_a_role_its_prompt() {
    let mut p = project(MAIN);
    let loc = definition_of(&mut p, pos(MAIN, "./lib/qa", 0, 2)).unwrap();
    assert_eq!(loc.uri, path_to_uri(&p.root.join("lib/qa.fwf")).unwrap());
    let loc = definition_of(&mut p, pos(MAIN, "custom_role", 0, 0)).unwrap();
    assert_eq!(
        loc.uri,
        path_to_uri(&p.root.join("prompts/custom_role.md")).unwrap()
    );
    // A built-in role opens a read-only copy of the prompt embedded in factory.
    let loc = definition_of(&mut p, pos(MAIN, "agent(ceo)", 0, 7)).expect("built-in prompt");
    let path = loc
        .uri
        .as_str()
        .strip_prefix("file://")
        .unwrap()
        .to_string();
    assert!(path.ends_with("/prompts/ceo.md"), "{path}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        factory_compiler::builtin::prompt("ceo").unwrap()
    );
}

#[test]
fn definition_of_a_standard_library_import_opens_the_embedded_file() {
    if std::env::var_os("FACTORY_STDLIB").is_some() {
        return; // the directory wins then; covered by the import test above
    }
    let main = "import std/deep_qa\nworkflow w {\n    agent b { role: builder writes: \"b.md\" check: exists }\n    use deep_qa(fix: b, on_halt: end) as qa\n    flow { start -> b -> qa -> end }\n}\n";
    let mut p = project(main);
    let loc = definition_of(&mut p, pos(main, "std/deep_qa", 0, 5)).expect("the import resolves");
    let path = loc
        .uri
        .as_str()
        .strip_prefix("file://")
        .unwrap()
        .to_string();
    assert!(path.ends_with("/stdlib/deep_qa.fwf"), "{path}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        factory_compiler::builtin::stdlib("deep_qa").unwrap()
    );
}

#[test]
fn definition_of_a_knob_in_an_argument() {
    let mut p = project(MAIN);
    let loc = definition_of(&mut p, pos(MAIN, "loops: rounds", 0, 8)).unwrap();
    assert_eq!(loc.range.start, pos(MAIN, "rounds:", 0, 0));
}

#[test]
fn references_of_a_node_cover_declaration_terms_and_arguments() {
    let p = project(MAIN);
    let params = ReferenceParams {
        text_document_position: tdp(&p, pos(MAIN, "agent builder", 0, 7)),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: ReferenceContext {
            include_declaration: true,
        },
    };
    let refs = definition::references(&p.world, params).unwrap().unwrap();
    let starts: Vec<Position> = refs.iter().map(|l| l.range.start).collect();
    assert_eq!(
        starts,
        vec![
            pos(MAIN, "builder {", 0, 0),
            pos(MAIN, "builder,", 0, 0),
            pos(MAIN, "builder ->", 0, 0),
            pos(MAIN, "-> builder\n", 0, 3),
        ]
    );
    // `role: builder` is a role, not the node.
    assert!(!starts.contains(&pos(MAIN, "role: builder", 0, 6)));
}

fn apply(text: &str, edit: &WorkspaceEdit, uri: &Uri) -> String {
    let mut edits = edit.changes.as_ref().unwrap()[uri].clone();
    let idx = LineIndex::new(text);
    edits.sort_by_key(|e| std::cmp::Reverse(idx.offset(e.range.start)));
    let mut out = text.to_string();
    for e in edits {
        let (s, t) = (idx.offset(e.range.start), idx.offset(e.range.end));
        out.replace_range(s..t, &e.new_text);
    }
    out
}

fn rename_at(p: &mut Project, position: Position, new: &str) -> Result<WorkspaceEdit, String> {
    let params = RenameParams {
        text_document_position: tdp(p, position),
        new_name: new.into(),
        work_done_progress_params: Default::default(),
    };
    rename::rename(&p.world, params)
        .map(|e| e.unwrap())
        .map_err(|e| e.message)
}

#[test]
fn renaming_a_node_edits_every_use_and_keeps_the_file_clean() {
    let mut p = project(MAIN);
    let edit = rename_at(&mut p, pos(MAIN, "review.halt", 0, 1), "judge").unwrap();
    let out = apply(MAIN, &edit, &p.uri);
    assert!(out.contains("gate judge by agent(ceo)"), "{out}");
    assert!(out.contains("judge.reloop(max rounds) -> builder"), "{out}");
    assert!(
        !out.contains("review.") && !out.contains("-> review"),
        "{out}"
    );
    assert!(
        out.contains("/// How many review rounds."),
        "comments are not renamed: {out}"
    );
    // The renamed file still checks clean.
    let key = p.root.join("main.fwf").to_string_lossy().into_owned();
    p.world.db.set_text(&key, out);
    assert_eq!(p.world.lsp_diagnostics(&key), vec![]);
}

#[test]
fn renaming_a_knob_edits_bounds_arguments_and_templates() {
    let mut p = project(MAIN);
    let edit = rename_at(&mut p, pos(MAIN, "knob rounds", 0, 5), "passes").unwrap();
    let out = apply(MAIN, &edit, &p.uri);
    for want in [
        "knob passes: int",
        "loops: passes)",
        "(max passes)",
        "{{knobs.passes}}",
    ] {
        assert!(out.contains(want), "{want:?} missing from {out}");
    }
    assert_eq!(
        out.matches("rounds").count(),
        1,
        "only the doc comment keeps the word: {out}"
    );
}

#[test]
fn rename_refuses_clashes_and_bad_names() {
    let mut p = project(MAIN);
    let err = rename_at(&mut p, pos(MAIN, "agent helper", 0, 6), "builder").unwrap_err();
    assert!(err.contains("already exists"), "{err}");
    let err = rename_at(&mut p, pos(MAIN, "agent helper", 0, 6), "9lives").unwrap_err();
    assert!(err.contains("not a valid name"), "{err}");
    let err = rename_at(&mut p, pos(MAIN, "agent helper", 0, 6), "end").unwrap_err();
    assert!(err.contains("not a valid name"), "{err}");
}

#[test]
fn document_symbols_outline_workflows_knobs_and_nodes() {
    let p = project(MAIN);
    let params = DocumentSymbolParams {
        text_document: TextDocumentIdentifier::new(p.uri.clone()),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let Some(DocumentSymbolResponse::Nested(syms)) =
        symbols::document_symbols(&p.world, params).unwrap()
    else {
        panic!("nested symbols expected");
    };
    assert_eq!(syms.len(), 1);
    assert_eq!(syms[0].name, "main");
    let names: Vec<&str> = syms[0]
        .children
        .as_ref()
        .unwrap()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["rounds", "plan_doc", "builder", "helper", "review", "qa"]
    );
}

#[test]
fn formatting_returns_one_edit_producing_the_canonical_text() {
    let messy = "workflow w{\nagent a{role:builder}\nflow{\nstart->a->end\n}\n}";
    let mut p = project(messy);
    let params = DocumentFormattingParams {
        text_document: TextDocumentIdentifier::new(p.uri.clone()),
        options: FormattingOptions {
            tab_size: 4,
            insert_spaces: true,
            ..Default::default()
        },
        work_done_progress_params: Default::default(),
    };
    let edits = formatting::formatting(&p.world, params.clone())
        .unwrap()
        .unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].new_text, factory_compiler::format::format(messy));
    // A formatted document needs no edit.
    let key = p.root.join("main.fwf").to_string_lossy().into_owned();
    p.world.db.set_text(&key, edits[0].new_text.clone());
    assert!(
        formatting::formatting(&p.world, params)
            .unwrap()
            .unwrap()
            .is_empty()
    );
}

fn complete(src: &str, cursor: &str) -> Vec<String> {
    let text = src.replace(cursor, "");
    let at = src.find(cursor).unwrap();
    let p = project(&text);
    let params = CompletionParams {
        text_document_position: tdp(&p, LineIndex::new(&text).position(at)),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    };
    match completion::completion(&p.world, params).unwrap() {
        Some(CompletionResponse::Array(items)) => items.into_iter().map(|i| i.label).collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn completion_offers_node_ids_in_flows() {
    let src = MAIN.replace(
        "review.halt -> end",
        "review.halt -> end\n        start -> |",
    );
    let got = complete(&src, "|");
    for want in ["builder", "helper", "review", "qa", "end"] {
        assert!(
            got.contains(&want.to_string()),
            "{want} missing from {got:?}"
        );
    }
    assert!(
        !got.contains(&"rounds".to_string()),
        "knobs are not nodes: {got:?}"
    );
}

#[test]
fn completion_offers_verdicts_after_a_gate() {
    let src = MAIN.replace("review.halt -> end", "review.halt -> end\n        review.|");
    let got = complete(&src, "|");
    assert_eq!(got, ["proceed", "reloop", "halt", "fail"]);
    let src = MAIN.replace(
        "review.halt -> end",
        "review.halt -> end\n        builder.|",
    );
    assert_eq!(complete(&src, "|"), ["fail"]);
}

#[test]
fn completion_offers_roles_and_attribute_keys() {
    let src = MAIN.replace("role: custom_role", "role: |custom_role");
    let got = complete(&src, "|");
    assert!(
        got.contains(&"custom_role".to_string()) && got.contains(&"strategist".to_string()),
        "{got:?}"
    );
    let src = MAIN.replace(
        "gate review by agent(ceo) \"Good?\"",
        "gate review by agent(ceo) \"Good?\" { | }",
    );
    let got = complete(&src, "|");
    assert!(
        got.contains(&"outcomes".to_string()) && got.contains(&"question".to_string()),
        "{got:?}"
    );
    assert!(
        !got.contains(&"role".to_string()),
        "gates take no role: {got:?}"
    );
}

#[test]
fn completion_offers_knobs_in_templates() {
    let src = MAIN.replace("Round {{knobs.rounds}}", "Round {{knobs.|");
    assert_eq!(complete(&src, "|"), ["rounds"]);
}

#[test]
fn completion_offers_import_paths() {
    let src = MAIN.replace("import ./lib/qa", "import ./lib/qa\nimport ./|");
    let got = complete(&src, "|");
    assert_eq!(got, ["./lib/qa"], "the file itself is not offered");
}
