//! The server as editors meet it, through its byte-stream transport over OS pipes: bursts
//! of edits, broken frames, shutdown, edits to files that are not open, the standard
//! library on disk, formatting broken files, quick fixes the client asks for, instance
//! artifacts, subgraph files and the read-only built-in files.

mod support;

use std::fs;

use insta::assert_snapshot;
use lsp_server::{ErrorCode, Message};
use serde_json::{Value, json};
use support::{Client, Session, codes, project, uri};

const CLEAN: &str = "workflow w {\n    agent a { role: builder }\n    flow {\n        start -> a -> end\n    }\n}\n";

#[test]
fn a_burst_of_edits_is_checked_at_its_last_version_and_stale_ones_are_dropped() {
    let (_d, root) = project();
    let path = root.join("w.fwf");
    fs::write(&path, CLEAN).unwrap();
    let mut c = Client::start(&root);
    let u = c.open(&path, CLEAN);
    assert_eq!(c.diagnostics(&u, 1), (1, vec![]));

    // Twenty keystrokes in one write, as fast as a client can send them; the last one
    // leaves an unknown node in the flow.
    let mut burst = Vec::new();
    for v in 2..=21 {
        let text = if v == 21 {
            CLEAN.replace("-> a ->", "-> ab ->")
        } else {
            CLEAN.replace("builder", &format!("builder{}", " ".repeat(v as usize)))
        };
        burst.extend(Client::encode(
            lsp_server::Notification::new(
                "textDocument/didChange".into(),
                json!({"textDocument": {"uri": u, "version": v},
                       "contentChanges": [{"text": text}]}),
            )
            .into(),
        ));
    }
    c.raw(&burst);
    let (version, diags) = c.diagnostics(&u, 21);
    assert_eq!(version, 21);
    assert!(codes(&diags).contains(&"FWF003".to_string()), "{diags:?}");
    // Versions arrive in order, never an older one after a newer, and the burst was
    // not checked edit by edit.
    let versions = c.published_versions(&u);
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert!(
        versions.len() < 10,
        "every version was checked: {versions:?}"
    );
    // A request right after is answered from the same, final text.
    let resp = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 1, "character": 10}}),
    );
    assert!(resp.response_result.is_ok(), "{resp:?}");
    c.stop();
}

#[test]
fn malformed_frames_are_logged_and_the_server_keeps_serving() {
    let (_d, root) = project();
    let path = root.join("w.fwf");
    let mut c = Client::start(&root);
    // Bad JSON in a well-framed message.
    c.raw(&Client::frame("{\"jsonrpc\": \"2.0\", \"method\": "));
    c.wait_log("not a JSON-RPC message");
    // A message without its header: skipped up to the next frame's header.
    c.raw(br#"{"jsonrpc":"2.0","method":"textDocument/didSave","params":{}}"#);
    // A lone UTF-16 surrogate (a half-typed emoji from a JavaScript client): the text
    // is opened with a replacement character rather than the whole message dropped.
    let open = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{}","languageId":"fwf","version":1,"text":"// \ud83d\n{}"}}}}}}"#,
        uri(&path),
        CLEAN.replace('\n', "\\n")
    );
    c.raw(&Client::frame(&open));
    c.wait_log("skipped");
    let u = uri(&path);
    assert_eq!(c.diagnostics(&u, 1), (1, vec![]));
    let resp = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 2, "character": 10}}),
    );
    let hover = resp.response_result.expect("a hover");
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .contains("agent"),
        "{hover}"
    );
    c.stop();
}

#[test]
fn a_request_after_shutdown_is_refused_not_ignored() {
    let (_d, root) = project();
    let mut c = Client::start(&root);
    let resp = c.request("shutdown", Value::Null);
    assert_eq!(resp.response_result.expect("shut down"), Value::Null);
    let resp = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&root.join("w.fwf"))}, "position": {"line": 0, "character": 0}}),
    );
    let err = resp.response_result.expect_err("an error");
    assert_eq!(err.code, ErrorCode::InvalidRequest as i32, "{err:?}");
    c.notify("exit", Value::Null);
    // `stop` would shut down again; the server ends on `exit`.
}

const LIB: &str = "subgraph review(fix: node) {\n    agent tester { role: adversarial_tester }\n    flow {\n        start -> tester -> end\n    }\n}\n";
const MAIN: &str = "import ./lib\n\nworkflow w {\n    agent a { role: builder }\n    use review(fix: a) as qa\n    flow {\n        start -> a -> qa -> end\n    }\n}\n";

#[test]
fn a_change_to_a_document_that_is_not_open_is_not_applied() {
    let (_d, root) = project();
    fs::write(root.join("lib.fwf"), LIB).unwrap();
    fs::write(root.join("w.fwf"), MAIN).unwrap();
    let mut c = Client::start(&root);
    let main = c.open(&root.join("w.fwf"), MAIN);
    assert_eq!(c.diagnostics(&main, 1), (1, vec![]));
    // lib.fwf was never opened: this edit (which deletes its subgraph) is refused.
    c.change(&uri(&root.join("lib.fwf")), 2, "");
    c.wait_log("not open");
    c.change(&main, 2, &format!("{MAIN}\n"));
    assert_eq!(c.diagnostics(&main, 2), (2, vec![]));
    c.stop();
}

#[test]
fn the_project_stdlib_is_used_and_its_edits_reach_importers() {
    let (_d, root) = project();
    fs::create_dir_all(root.join("stdlib")).unwrap();
    fs::write(root.join("stdlib/mine.fwf"), LIB).unwrap();
    let main_text = MAIN.replace("import ./lib", "import std/mine");
    fs::write(root.join("w.fwf"), &main_text).unwrap();
    let mut c = Client::start(&root);
    let main = c.open(&root.join("w.fwf"), &main_text);
    // `std/mine` exists only in the project's stdlib/ directory.
    assert_eq!(c.diagnostics(&main, 1), (1, vec![]));
    // The embedded standard library still fills in what the directory lacks.
    let resp = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": main}, "position": {"line": 0, "character": 9}}),
    );
    let loc = resp.response_result.expect("a location");
    assert_eq!(loc["uri"], uri(&root.join("stdlib/mine.fwf")));
    // Renaming the subgraph in the open stdlib file breaks the importer at once.
    let lib = c.open(&root.join("stdlib/mine.fwf"), LIB);
    c.change(&lib, 2, &LIB.replace("subgraph review", "subgraph renamed"));
    // (Opening the file may republish the importer, still clean, first.)
    let lost = c.wait(|m| {
        matches!(m, Message::Notification(n)
            if n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == main
                && n.params["diagnostics"].to_string().contains("FWF006"))
    });
    assert!(
        lost.is_some(),
        "the importer should lose `review`: {:?}",
        c.seen
    );
    c.stop();
}

#[test]
fn formatting_a_file_with_a_syntax_error_leaves_the_broken_part_alone() {
    let (_d, root) = project();
    let text = "workflow w {\n  agent a { role: builder }\n  agent b { role: builder\n  agent c { role: builder }\nflow {\nstart -> a -> c -> end\n}\n}\n";
    let mut c = Client::start(&root);
    let u = c.open(&root.join("w.fwf"), text);
    let resp = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": u}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let edits = resp.response_result.expect("edits");
    let formatted = edits[0]["newText"].as_str().expect("one whole-file edit");
    assert_eq!(
        formatted,
        "workflow w {\n    agent a { role: builder }\n  agent b { role: builder\n    agent c { role: builder }\n    flow {\n        start -> a -> c -> end\n    }\n}\n"
    );
    c.stop();
}

const UNBOUNDED: &str = "workflow w {\n    agent builder { role: builder }\n    gate review by agent(ceo) \"Good?\"\n    flow {\n        start -> builder -> review\n        review.proceed -> end\n        review.reloop -> builder\n        review.halt -> end\n    }\n}\n";

#[test]
fn quick_fixes_answer_the_diagnostics_the_client_names_wherever_the_cursor_is() {
    let (_d, root) = project();
    let mut c = Client::start(&root);
    let u = c.open(&root.join("w.fwf"), UNBOUNDED);
    let (_, diags) = c.diagnostics(&u, 1);
    assert_eq!(codes(&diags), ["FWF018"]);
    let at_top = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    let ask = |c: &mut Client, context: Value| {
        c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u}, "range": at_top, "context": context}),
        )
        .response_result
        .expect("actions")
    };
    // The cursor is on line 1, far from the reloop, but the client names the diagnostic.
    let actions = ask(&mut c, json!({"diagnostics": diags}));
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert_eq!(titles, ["Bound the reloop: `review.reloop(max 3)`"]);
    // Naming nothing there offers nothing there.
    assert_eq!(ask(&mut c, json!({"diagnostics": []})), json!([]));
    c.stop();
}

#[test]
fn hover_and_definition_on_an_instance_artifact() {
    let mut s = Session::stdio(
        r#"
//- lib.fwf
subgraph survey() {
    agent look { role: researcher  writes: combined = ".factory/survey.md" }
    flow {
        start -> look -> end
    }
}
//- w.fwf
import ./lib

workflow w {
    use survey() as study
    agent a { role: builder  reads: study.co$0mbined }
    flow {
        start -> study -> a -> end
    }
}
"#,
    );
    assert_snapshot!(s.hover(), @"
    **artifact** `combined`

    - path: `.factory/survey.md`
    - written by: `look`

    of subgraph `survey`, from `<root>/lib.fwf`
    ");
    assert_snapshot!(s.definition(), @"lib.fwf:2:44 `combined`");
}

#[test]
fn an_unclosed_fork_in_a_subgraph_file_is_reported_in_that_file() {
    assert_snapshot!(Session::stdio(r#"
//- survey.fwf
subgraph survey() {
    fork f
    agent a { role: researcher }
    agent b { role: researcher }
    flow {
        start -> f -> a, b -> end
    }
}
"#).diagnostics(), @"
    survey.fwf:2:10 `f` error FWF014: fork `survey.f` has no matching join
      help: declare a `join` and route every branch of `survey.f` into it
    ");
}

#[test]
fn built_in_files_opened_by_definition_are_read_only() {
    let (_d, root) = project();
    let main = "import std/deep_qa\n\nworkflow w {\n    agent a { role: builder }\n    flow {\n        start -> a -> end\n    }\n}\n";
    let mut c = Client::start(&root);
    let u = c.open(&root.join("w.fwf"), main);
    let resp = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 9}}),
    );
    let loc = resp.response_result.expect("a location");
    let target = loc["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("a uri: {loc}"));
    let path = target.strip_prefix("file://").expect("a file");
    assert!(path.ends_with("stdlib/deep_qa.fwf"), "{path}");
    let meta = fs::metadata(path).expect("the copy exists");
    assert!(meta.permissions().readonly(), "{path} is writable");
    assert!(
        fs::read_to_string(path)
            .unwrap()
            .contains("subgraph deep_qa")
    );
    c.stop();
}

#[test]
fn diagnostics_of_a_check_that_was_cancelled_still_arrive() {
    // Two files: an edit to the imported one cancels the importer's check; the next
    // check must still cover the importer.
    let (_d, root) = project();
    fs::write(root.join("lib.fwf"), LIB).unwrap();
    fs::write(root.join("w.fwf"), MAIN).unwrap();
    let mut c = Client::start(&root);
    let main = c.open(&root.join("w.fwf"), MAIN);
    assert_eq!(c.diagnostics(&main, 1), (1, vec![]));
    let lib = c.open(&root.join("lib.fwf"), LIB);
    let mut burst = Vec::new();
    for v in 2..=6 {
        let text = if v == 6 {
            LIB.replace("subgraph review", "subgraph gone")
        } else {
            format!("{LIB}{}", "\n".repeat(v as usize))
        };
        burst.extend(Client::encode(
            lsp_server::Notification::new(
                "textDocument/didChange".into(),
                json!({"textDocument": {"uri": lib, "version": v}, "contentChanges": [{"text": text}]}),
            )
            .into(),
        ));
    }
    c.raw(&burst);
    let found = c.wait(|m| {
        matches!(m, Message::Notification(n)
            if n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == main
                && !n.params["diagnostics"].as_array().is_none_or(Vec::is_empty))
    });
    assert!(found.is_some(), "the importer was not rechecked");
    c.stop();
}
