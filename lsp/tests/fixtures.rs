//! Data-driven checks through the stdio server: each case is a fixture text with a `$0`
//! cursor marker (plus the other files of its project) and the expected answer as an
//! inline snapshot, one line of test per case.

mod support;

use std::fs;

use insta::assert_snapshot;
use serde_json::{Value, json};
use support::{Client, codes, cursor, project, show_position, uri};

const SURVEY: &str = "subgraph survey() {\n    agent look { role: researcher  writes: combined = \".factory/survey.md\" }\n    flow {\n        start -> look -> end\n    }\n}\n";

/// Opens `fixture` as `w.fwf` in a project holding `files`, waits for its diagnostics,
/// and sends `method` at the cursor with `extra` params.
fn at_cursor(files: &[(&str, &str)], fixture: &str, method: &str, extra: Value) -> (Value, String) {
    let (_d, root) = project();
    for (name, text) in files {
        fs::write(root.join(name), text).unwrap();
    }
    let (text, position) = cursor(fixture);
    let mut c = Client::start(&root);
    let u = c.open(&root.join("w.fwf"), &text);
    let (_, diags) = c.diagnostics(&u, 1);
    let mut params = json!({"textDocument": {"uri": u}, "position": position});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let result = c
        .request(method, params)
        .response_result
        .expect("an answer");
    c.stop();
    // Paths in answers are shown relative to the project.
    let shown = result
        .to_string()
        .replace(&format!("{}/", uri(&root)), "")
        .replace(&root.display().to_string(), "<root>");
    (
        serde_json::from_str(&shown).unwrap_or(Value::Null),
        codes(&diags).join(","),
    )
}

fn hover(files: &[(&str, &str)], fixture: &str) -> String {
    let (result, _) = at_cursor(files, fixture, "textDocument/hover", json!({}));
    result["contents"]["value"]
        .as_str()
        .unwrap_or("(no hover)")
        .to_string()
}

fn definition(files: &[(&str, &str)], fixture: &str) -> String {
    let (loc, _) = at_cursor(files, fixture, "textDocument/definition", json!({}));
    match loc["uri"].as_str() {
        Some(file) => format!("{file} {}", show_position(&loc["range"]["start"])),
        None => "(no definition)".to_string(),
    }
}

/// Titles of the quick fixes at the cursor, naming every published diagnostic in the
/// request's context when `name_them` is set.
fn fixes(fixture: &str, name_them: bool) -> String {
    let (_d, root) = project();
    let (text, position) = cursor(fixture);
    let mut c = Client::start(&root);
    let u = c.open(&root.join("w.fwf"), &text);
    let (_, diags) = c.diagnostics(&u, 1);
    let named = if name_them { diags } else { Vec::new() };
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u},
                   "range": {"start": position, "end": position},
                   "context": {"diagnostics": named}}),
        )
        .response_result
        .expect("actions");
    c.stop();
    let titles: Vec<&str> = actions
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["title"].as_str()).collect())
        .unwrap_or_default();
    titles.join("\n")
}

#[test]
fn hover_on_an_instance_artifact() {
    assert_snapshot!(hover(&[("lib.fwf", SURVEY)], "import ./lib\nworkflow w {\n    use survey() as study\n    agent a { role: builder  reads: study.comb$0ined }\n    flow { start -> study -> a -> end }\n}\n"), @r"
    **artifact** `combined`

    - path: `.factory/survey.md`
    - written by: `look`

    of subgraph `survey`, from `<root>/lib.fwf`
    ");
}

#[test]
fn definition_of_an_instance_artifact() {
    assert_snapshot!(definition(&[("lib.fwf", SURVEY)], "import ./lib\nworkflow w {\n    use survey() as study\n    agent a { role: builder  reads: study.$0combined }\n    flow { start -> study -> a -> end }\n}\n"), @"lib.fwf 1:43");
}

#[test]
fn hover_on_the_instance_itself() {
    assert_snapshot!(hover(&[("lib.fwf", SURVEY)], "import ./lib\nworkflow w {\n    use survey() as stu$0dy\n    agent a { role: builder  reads: study.combined }\n    flow { start -> study -> a -> end }\n}\n"), @r"
    **use** `study` — instance of subgraph `survey`

    ```fwf
    use survey() as study
    ```
    ");
}

#[test]
fn definition_of_a_named_write_in_the_same_file() {
    assert_snapshot!(definition(&[], "workflow w {\n    agent a { role: strategist  writes: plan = \"p.md\" }\n    agent b { role: builder  reads: pl$0an }\n    flow { start -> a -> b -> end }\n}\n"), @"w.fwf 1:40");
}

const UNBOUNDED: &str = "workflow w {$0\n    agent builder { role: builder }\n    gate review by agent(ceo) \"Good?\"\n    flow {\n        start -> builder -> review\n        review.proceed -> end\n        review.reloop -> builder\n        review.halt -> end\n    }\n}\n";

#[test]
fn quick_fix_for_a_named_diagnostic_away_from_the_cursor() {
    assert_snapshot!(fixes(UNBOUNDED, true), @"Bound the reloop: `review.reloop(max 3)`");
}

#[test]
fn no_quick_fix_away_from_the_cursor_when_none_is_named() {
    assert_snapshot!(fixes(UNBOUNDED, false), @"");
}

#[test]
fn quick_fix_under_the_cursor() {
    assert_snapshot!(fixes(&UNBOUNDED.replace("{$0", "{").replace("review.reloop ->", "review.rel$0oop ->"), false), @"Bound the reloop: `review.reloop(max 3)`");
}
