//! The parser recovers at the next declaration: one broken declaration costs itself,
//! never the rest of the file.

use factory_compiler::diagnostic::Code;
use factory_compiler::ide::parse;

#[test]
fn a_stray_closing_brace_at_top_level_is_reported_once_and_parsing_goes_on() {
    let p =
        parse("}\nworkflow w {\n  agent a { role: builder }\n  flow { start -> a -> end }\n}\n");
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    assert_eq!(p.errors[0].span.start, 0);
    assert_eq!(p.ast.decls.len(), 1);
    assert_eq!(p.ast.decls[0].body.nodes.len(), 1);
}

#[test]
fn a_broken_node_costs_only_itself() {
    let text = "workflow w {\n  agent a { role: = }\n  agent b { role: builder }\n  gate g by agent(ceo) \"ok?\"\n  flow { start -> b -> end }\n}\n";
    let p = parse(text);
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    let at = p.errors[0].span.start;
    assert_eq!(
        &text[at..at + 1],
        "=",
        "error should point at the bad value"
    );
    let names: Vec<&str> = p.ast.decls[0]
        .body
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, ["b", "g"]);
    assert_eq!(p.ast.decls[0].body.flow.len(), 1);
}

#[test]
fn a_broken_flow_statement_costs_only_its_line() {
    let text = "workflow w {\n  agent a { role: builder }\n  flow {\n    start -> -> a\n    start -> a\n    a -> end\n  }\n}\n";
    let p = parse(text);
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    assert_eq!(p.ast.decls[0].body.flow.len(), 2);
}

#[test]
fn errors_in_two_declarations_are_both_reported() {
    let text = "workflow w {\n  agent a { role: }\n  knob k: int = \n  agent b { role: builder }\n}\nworkflow v {\n  fn x\n}\n";
    let p = parse(text);
    assert!(p.errors.len() >= 2, "{:?}", p.errors);
    assert!(p.errors.iter().all(|e| e.code == Code::Syntax));
    assert_eq!(p.ast.decls.len(), 2, "the second workflow is still parsed");
}

#[test]
fn an_unclosed_block_is_reported_at_the_end() {
    let text = "workflow w {\n  agent a { role: builder }\n";
    let p = parse(text);
    assert_eq!(p.errors.len(), 1);
    assert!(
        p.errors[0].message.contains("not closed"),
        "{}",
        p.errors[0].message
    );
}

#[test]
fn deeply_nested_parallel_blocks_are_refused_without_overflowing_the_stack() {
    let depth = 5_000;
    let mut text = String::from("workflow w {\n");
    for i in 0..depth {
        text.push_str(&format!("parallel p{i}(count: 2) in worktrees {{\n"));
    }
    text.push_str(&"}\n".repeat(depth));
    text.push_str("flow { start -> end }\n}\n");
    let p = parse(&text);
    assert!(
        p.errors
            .iter()
            .any(|e| e.message.contains("nested more than")),
        "{:?}",
        p.errors.first()
    );
    assert_eq!(p.ast.decls.len(), 1);
    assert_eq!(
        p.ast.decls[0].body.flow.len(),
        1,
        "parsing resumes after the skipped block"
    );
}

#[test]
fn an_unclosed_string_is_named_and_costs_only_its_declaration() {
    // A `\` at the end of the line does not continue a string.
    let text = "workflow w {\n  agent a { role: builder, task: \"fix it \\\n    now\" }\n  agent b { role: builder }\n  flow { start -> b -> end }\n}\n";
    let p = parse(text);
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    let e = &p.errors[0];
    assert_eq!(e.message, "unclosed string: a string ends on its line");
    assert_eq!(&text[e.span.clone()], "\"fix it \\");
    let names: Vec<&str> = p.ast.decls[0]
        .body
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, ["b"]);
}
