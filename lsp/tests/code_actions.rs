//! Quick fixes, applied the way an editor applies them, leave a file without the
//! diagnostic they fix.

use std::fs;
use std::path::PathBuf;

use factory_lsp::handlers::code_action::code_actions;
use factory_lsp::paths::path_to_uri;
use factory_lsp::position::LineIndex;
use factory_lsp::world::World;
use lsp_types::*;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../compiler/tests/diagnostics")
        .join(name);
    fs::read_to_string(path).unwrap()
}

struct Open {
    _dir: tempfile::TempDir,
    root: PathBuf,
    key: String,
    uri: Uri,
    world: World,
}

fn open(text: &str) -> Open {
    open_with(text, &[])
}

/// Opens `text` as `w.fwf` in a project holding `files` (path, text) too.
fn open_with(text: &str, files: &[(&str, &str)]) -> Open {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    for (path, body) in files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }
    let path = root.join("w.fwf");
    fs::write(&path, text).unwrap();
    let uri = path_to_uri(&path).unwrap();
    let mut world = World::new(Some(&root));
    let key = world.open_doc(uri.clone(), text.to_string(), 1).unwrap();
    Open {
        _dir: dir,
        root,
        key,
        uri,
        world,
    }
}

fn codes(o: &Open) -> Vec<String> {
    o.world
        .lsp_diagnostics(&o.key)
        .into_iter()
        .filter_map(|d| match d.code {
            Some(NumberOrString::String(c)) => Some(c),
            _ => None,
        })
        .collect()
}

/// The quick fixes offered for the first diagnostic with `code`.
fn fixes(o: &mut Open, code: &str) -> Vec<CodeAction> {
    let diag = o
        .world
        .lsp_diagnostics(&o.key)
        .into_iter()
        .find(|d| d.code == Some(NumberOrString::String(code.into())))
        .unwrap_or_else(|| panic!("no {code}"));
    let params = CodeActionParams {
        text_document: TextDocumentIdentifier::new(o.uri.clone()),
        range: diag.range,
        context: CodeActionContext {
            diagnostics: vec![diag],
            only: None,
            trigger_kind: None,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    code_actions(&mut o.world, params)
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|a| match a {
            CodeActionOrCommand::CodeAction(a) => a,
            CodeActionOrCommand::Command(c) => panic!("unexpected command {c:?}"),
        })
        .collect()
}

fn apply_text_edits(text: &str, edits: &[TextEdit]) -> String {
    let idx = LineIndex::new(text);
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                idx.offset(e.range.start),
                idx.offset(e.range.end),
                e.new_text.as_str(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, t) in spans {
        out.replace_range(s..e, t);
    }
    out
}

fn apply_in_file(o: &mut Open, action: &CodeAction) {
    let edits = &action.edit.as_ref().unwrap().changes.as_ref().unwrap()[&o.uri];
    let text = apply_text_edits(o.world.text(&o.key), edits);
    o.world.db.set_text(&o.key, text);
}

#[test]
fn bounding_an_unbounded_reloop() {
    let mut o = open(&fixture("FWF018.fwf"));
    assert!(codes(&o).contains(&"FWF018".to_string()));
    let fixes = fixes(&mut o, "FWF018");
    assert_eq!(fixes.len(), 1);
    assert_eq!(fixes[0].kind, Some(CodeActionKind::QUICKFIX));
    apply_in_file(&mut o, &fixes[0]);
    assert!(
        o.world
            .text(&o.key)
            .contains("review.reloop(max 3) -> builder")
    );
    assert_eq!(codes(&o), Vec::<String>::new());
}

#[test]
fn adding_the_missing_join_of_a_fork() {
    let mut o = open(&fixture("FWF014.fwf"));
    let fixes = fixes(&mut o, "FWF014");
    assert_eq!(fixes.len(), 1, "{fixes:#?}");
    apply_in_file(&mut o, &fixes[0]);
    let text = o.world.text(&o.key).to_string();
    assert!(
        text.contains("    fork research\n    join research_join\n"),
        "{text}"
    );
    assert!(
        text.contains("market, code -> research_join -> end"),
        "{text}"
    );
    assert_eq!(codes(&o), Vec::<String>::new(), "{text}");
}

#[test]
fn creating_the_prompt_of_an_unknown_role() {
    let mut o = open(&fixture("FWF010.fwf"));
    let fixes = fixes(&mut o, "FWF010");
    assert_eq!(fixes.len(), 1);
    let Some(DocumentChanges::Operations(ops)) =
        fixes[0].edit.as_ref().unwrap().document_changes.clone()
    else {
        panic!("resource operations expected");
    };
    let want = path_to_uri(&o.root.join("prompts/biulder.md")).unwrap();
    // Apply like a client: create the file, then insert the text.
    let mut created = None;
    for op in ops {
        match op {
            DocumentChangeOperation::Op(ResourceOp::Create(c)) => {
                assert_eq!(c.uri, want);
                created = Some(o.root.join("prompts/biulder.md"));
            }
            DocumentChangeOperation::Edit(e) => {
                assert_eq!(e.text_document.uri, want);
                let OneOf::Left(edit) = &e.edits[0] else {
                    panic!()
                };
                let path = created.clone().expect("created before edited");
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, &edit.new_text).unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        fs::read_to_string(o.root.join("prompts/biulder.md"))
            .unwrap()
            .contains("biulder")
    );
    // The server learns of the new prompt (a watched-file change) and the error goes.
    let key = o.key.clone();
    o.world.discover_roles_for(&key);
    assert_eq!(codes(&o), Vec::<String>::new());
}

#[test]
fn removing_an_unused_import() {
    let lib = fixture("lib/qa.fwf");
    let mut o = open_with(&fixture("FWF102.fwf"), &[("lib/qa.fwf", &lib)]);
    let fixes = fixes(&mut o, "FWF102");
    assert_eq!(fixes.len(), 1);
    assert_eq!(fixes[0].title, "Remove `import ./lib/qa`");
    apply_in_file(&mut o, &fixes[0]);
    assert!(o.world.text(&o.key).starts_with("workflow tiny {"));
    assert_eq!(codes(&o), Vec::<String>::new());
}

#[test]
fn no_fixes_away_from_diagnostics() {
    let mut o = open(&fixture("FWF018.fwf"));
    let params = CodeActionParams {
        text_document: TextDocumentIdentifier::new(o.uri.clone()),
        range: Range::new(Position::new(0, 0), Position::new(0, 1)),
        context: CodeActionContext::default(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    assert!(
        code_actions(&mut o.world, params)
            .unwrap()
            .unwrap()
            .is_empty()
    );
}
