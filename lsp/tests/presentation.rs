//! How a document is presented: folding ranges and semantic tokens.
//! Data-driven: `support::Session`.

mod support;

use insta::assert_snapshot;
use support::*;

const SRC: &str = r#"
// One.
// Two.
workflow w {
    knob k: int = 2 in 1..=3
    agent a { role: builder }
    gate g by agent(ceo) "Ok?"
    flow {
        start -> a -> g
        g.proceed -> end
        g.reloop(max k) -> a
        g.halt -> end
    }
}
"#;

#[test]
fn folds_blocks_and_comment_runs() {
    assert_snapshot!(check_folding(SRC), @"
    1-2 (Comment): // One.
    3-12: workflow w {
    7-11: flow {
    ");
}

#[test]
fn semantic_tokens_classify_by_meaning() {
    // The workflow's name is a declaration; `g` in a flow is a node, `k` in a bound a knob.
    assert_snapshot!(check_semantic_tokens(SRC), @r#"
    1:1 `// One.` comment
    2:1 `// Two.` comment
    3:1 `workflow` keyword
    3:10 `w` function [declaration]
    4:5 `knob` keyword
    4:10 `k` parameter [declaration]
    4:13 `int` type
    4:21 `in` keyword
    5:5 `agent` keyword
    5:11 `a` variable [declaration]
    5:15 `role` property
    6:5 `gate` keyword
    6:10 `g` variable [declaration]
    6:12 `by` keyword
    6:15 `agent` keyword
    6:26 `"Ok?"` string
    7:5 `flow` keyword
    8:9 `start` keyword
    8:18 `a` variable
    8:23 `g` variable
    9:9 `g` variable
    9:11 `proceed` enumMember
    9:22 `end` keyword
    10:9 `g` variable
    10:11 `reloop` enumMember
    10:18 `max` keyword
    10:22 `k` parameter
    10:28 `a` variable
    11:9 `g` variable
    11:11 `halt` enumMember
    11:19 `end` keyword
    "#);
}
