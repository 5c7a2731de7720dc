//! Names that cross files, through the stdio server: a subgraph declared in one file and
//! `use`d in another is renamed and found in both (from either end), but not in a file
//! whose `use` means another subgraph of the same name; so is a subgraph's parameter,
//! which `use` arguments name; a role's references span the workspace.

mod support;

use std::fs;

use serde_json::{Value, json};
use support::{Client, position, project, uri};

const LIB: &str = "subgraph review(fix: node) {\n    agent tester { role: builder }\n    flow {\n        start -> tester -> end\n    }\n}\n";
const MAIN: &str = "import ./lib\n\nworkflow w {\n    agent a { role: builder }\n    use review(fix: a) as qa\n    flow {\n        start -> a -> qa -> end\n    }\n}\n";
/// Its own `review`, unrelated to lib.fwf's.
const OTHER: &str = "subgraph review() {\n    agent x { role: critic }\n    flow {\n        start -> x -> end\n    }\n}\n\nworkflow o {\n    use review() as r\n    flow {\n        start -> r -> end\n    }\n}\n";

fn offset(text: &str, pos: &Value) -> usize {
    let line = pos["line"].as_u64().expect("a line") as usize;
    let col = pos["character"].as_u64().expect("a column") as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    start + col
}

/// `text` with the LSP edits applied (ASCII text: columns are bytes).
fn apply(text: &str, edits: &Value) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .as_array()
        .expect("edits")
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"]),
                offset(text, &e["range"]["end"]),
                e["newText"].as_str().expect("new text").to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (a, b, new) in spans {
        out.replace_range(a..b, &new);
    }
    out
}

struct Workspace {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    client: Client,
}

/// lib.fwf, main.fwf and other.fwf on disk; the server started on their directory.
fn workspace() -> Workspace {
    let (dir, root) = project();
    fs::write(root.join("lib.fwf"), LIB).unwrap();
    fs::write(root.join("main.fwf"), MAIN).unwrap();
    fs::write(root.join("other.fwf"), OTHER).unwrap();
    let client = Client::start(&root);
    Workspace {
        _dir: dir,
        root,
        client,
    }
}

impl Workspace {
    fn uri(&self, name: &str) -> String {
        uri(&self.root.join(name))
    }

    fn rename(&mut self, file: &str, at: Value, new: &str) -> Value {
        let u = self.uri(file);
        self.client
            .request(
                "textDocument/rename",
                json!({"textDocument": {"uri": u}, "position": at, "newName": new}),
            )
            .response_result
            .expect("an edit")
    }

    /// (file name, start) of every reference, sorted.
    fn references(&mut self, file: &str, at: Value) -> Vec<(String, Value)> {
        let u = self.uri(file);
        let resp = self.client.request(
            "textDocument/references",
            json!({"textDocument": {"uri": u}, "position": at,
                   "context": {"includeDeclaration": true}}),
        );
        let locs = resp.response_result.expect("references");
        let mut out: Vec<(String, Value)> = locs
            .as_array()
            .expect("locations")
            .iter()
            .map(|l| {
                let name = l["uri"]
                    .as_str()
                    .and_then(|u| u.rsplit('/').next())
                    .expect("a file uri")
                    .to_string();
                (name, l["range"]["start"].clone())
            })
            .collect();
        out.sort_by_key(|(f, p)| (f.clone(), p.to_string()));
        out
    }
}

#[test]
fn renaming_a_subgraph_at_its_declaration_renames_its_uses_in_importing_files() {
    let mut w = workspace();
    // Only the library is open: main.fwf is found in the workspace.
    let lib = w.client.open(&w.root.join("lib.fwf"), LIB);
    assert_eq!(w.client.diagnostics(&lib, 1), (1, vec![]));
    let edit = w.rename("lib.fwf", position(LIB, "review", 2), "audit");
    let changes = &edit["changes"];
    assert_eq!(
        apply(LIB, &changes[w.uri("lib.fwf")]),
        LIB.replace("subgraph review", "subgraph audit")
    );
    assert_eq!(
        apply(MAIN, &changes[w.uri("main.fwf")]),
        MAIN.replace("use review", "use audit")
    );
    // other.fwf's `review` is its own subgraph: untouched.
    assert!(changes.get(w.uri("other.fwf")).is_none(), "{edit}");
    assert_eq!(changes.as_object().map(|c| c.len()), Some(2), "{edit}");
    w.client.stop();
}

#[test]
fn renaming_a_subgraph_at_a_use_renames_its_declaration_in_the_imported_file() {
    let mut w = workspace();
    let main = w.client.open(&w.root.join("main.fwf"), MAIN);
    assert_eq!(w.client.diagnostics(&main, 1), (1, vec![]));
    let prepared = w
        .client
        .request(
            "textDocument/prepareRename",
            json!({"textDocument": {"uri": main}, "position": position(MAIN, "review(", 1)}),
        )
        .response_result
        .expect("a range");
    assert_eq!(prepared["start"], position(MAIN, "review(", 0));
    let edit = w.rename("main.fwf", position(MAIN, "review(", 1), "audit");
    let changes = &edit["changes"];
    let renamed_lib = apply(LIB, &changes[w.uri("lib.fwf")]);
    let renamed_main = apply(MAIN, &changes[w.uri("main.fwf")]);
    assert_eq!(
        renamed_lib,
        LIB.replace("subgraph review", "subgraph audit")
    );
    assert_eq!(renamed_main, MAIN.replace("use review", "use audit"));
    assert!(changes.get(w.uri("other.fwf")).is_none(), "{edit}");
    // The renamed pair still checks clean.
    let lib = w.client.open(&w.root.join("lib.fwf"), &renamed_lib);
    assert_eq!(w.client.diagnostics(&lib, 1), (1, vec![]));
    w.client.change(&main, 2, &renamed_main);
    assert_eq!(w.client.diagnostics(&main, 2), (2, vec![]));
    w.client.stop();
}

#[test]
fn renaming_a_subgraph_to_a_name_its_file_declares_is_refused() {
    let mut w = workspace();
    let two = format!(
        "{LIB}\nsubgraph audit() {{\n    agent y {{ role: builder }}\n    flow {{\n        start -> y -> end\n    }}\n}}\n"
    );
    fs::write(w.root.join("lib.fwf"), &two).unwrap();
    let main = w.client.open(&w.root.join("main.fwf"), MAIN);
    assert_eq!(w.client.diagnostics(&main, 1), (1, vec![]));
    let resp = w.client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": main}, "position": position(MAIN, "review(", 1), "newName": "audit"}),
    );
    let err = resp.response_result.expect_err("a clash");
    assert!(err.message.contains("already declares `audit`"), "{err:?}");
    w.client.stop();
}

#[test]
fn references_of_a_subgraph_span_its_declaration_and_its_importers() {
    let mut w = workspace();
    let lib = w.client.open(&w.root.join("lib.fwf"), LIB);
    assert_eq!(w.client.diagnostics(&lib, 1), (1, vec![]));
    let expected = vec![
        ("lib.fwf".to_string(), position(LIB, "review", 0)),
        ("main.fwf".to_string(), position(MAIN, "review", 0)),
    ];
    assert_eq!(
        w.references("lib.fwf", position(LIB, "review", 3)),
        expected
    );
    let main = w.client.open(&w.root.join("main.fwf"), MAIN);
    assert_eq!(w.client.diagnostics(&main, 1), (1, vec![]));
    assert_eq!(
        w.references("main.fwf", position(MAIN, "review", 3)),
        expected
    );
    // Without the declaration: the use alone.
    let resp = w.client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": main}, "position": position(MAIN, "review", 3),
               "context": {"includeDeclaration": false}}),
    );
    let locs = resp.response_result.expect("references");
    assert_eq!(locs.as_array().map(Vec::len), Some(1), "{locs}");
    assert_eq!(locs[0]["uri"], w.uri("main.fwf"));
    w.client.stop();
}

#[test]
fn references_of_a_role_span_the_workspace() {
    let mut w = workspace();
    let main = w.client.open(&w.root.join("main.fwf"), MAIN);
    assert_eq!(w.client.diagnostics(&main, 1), (1, vec![]));
    let found = w.references("main.fwf", position(MAIN, "builder", 0));
    assert_eq!(
        found,
        vec![
            ("lib.fwf".to_string(), position(LIB, "builder", 0)),
            ("main.fwf".to_string(), position(MAIN, "builder", 0)),
        ]
    );
    // `critic` is used in other.fwf only.
    let found = w.references("other.fwf", position(OTHER, "critic", 2));
    assert_eq!(
        found,
        vec![("other.fwf".to_string(), position(OTHER, "critic", 0))]
    );
    w.client.stop();
}

#[test]
fn renaming_a_subgraph_parameter_renames_the_arguments_that_name_it() {
    let mut w = workspace();
    let lib = w.client.open(&w.root.join("lib.fwf"), LIB);
    assert_eq!(w.client.diagnostics(&lib, 1), (1, vec![]));
    let edit = w.rename("lib.fwf", position(LIB, "fix", 1), "repair");
    let changes = &edit["changes"];
    assert_eq!(
        apply(LIB, &changes[w.uri("lib.fwf")]),
        LIB.replace("(fix:", "(repair:")
    );
    assert_eq!(
        apply(MAIN, &changes[w.uri("main.fwf")]),
        MAIN.replace("(fix:", "(repair:")
    );
    // And back, from the argument.
    let main = w.client.open(&w.root.join("main.fwf"), MAIN);
    assert_eq!(w.client.diagnostics(&main, 1), (1, vec![]));
    let edit = w.rename("main.fwf", position(MAIN, "fix", 1), "repair");
    assert_eq!(
        apply(LIB, &edit["changes"][w.uri("lib.fwf")]),
        LIB.replace("(fix:", "(repair:")
    );
    w.client.stop();
}
