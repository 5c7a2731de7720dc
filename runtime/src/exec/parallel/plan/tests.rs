use super::*;

fn parse(text: &str) -> Result<Plan, PlanError> {
    parse_plan(Path::new(".factory/strategy/parallel.md"), text)
}

const PLAN: &str = "\
# Plan

Some thinking the strategist left before the sections.

## Hypothesis 1: Count words with a HashMap
Replace the Vec scan in `most_frequent`.
Files: `src/lib.rs`
Success: the tie test passes and the eval does not regress

## Hypothesis 3 — Avoid lowercase allocations
Skip `to_lowercase` for ASCII words.

**Intended files:**
- `src/lib.rs`
- `src/words/*.rs`

### Success measure
- same results on the test corpus
- fewer allocations

## Hypothesis 3
Document the tie rule in the doc comment.
Files: README.md, src/lib.rs

## Notes
Not a hypothesis.
";

#[test]
fn sections_with_gaps_duplicates_and_stray_text_parse_in_order() {
    let plan = parse(PLAN).unwrap();
    let h = &plan.hypotheses;
    assert_eq!(h.len(), 3, "{plan:#?}");
    assert_eq!(
        h.iter().map(|h| h.index).collect::<Vec<_>>(),
        vec![1, 2, 3],
        "branch i gets the i-th section, whatever number was written"
    );
    assert_eq!(
        h.iter().map(|h| h.written_number).collect::<Vec<_>>(),
        vec![Some(1), Some(3), Some(3)]
    );
    assert_eq!(h[0].title, "Count words with a HashMap");
    assert_eq!(h[0].line, 5);
    assert_eq!(h[0].files, vec!["src/lib.rs"]);
    assert_eq!(
        h[0].success.as_deref(),
        Some("the tie test passes and the eval does not regress")
    );
    assert_eq!(h[1].title, "Avoid lowercase allocations");
    assert_eq!(h[1].files, vec!["src/lib.rs", "src/words/*.rs"]);
    assert_eq!(
        h[1].success.as_deref(),
        Some("same results on the test corpus; fewer allocations")
    );
    assert_eq!(h[2].title, "Document the tie rule in the doc comment.");
    assert_eq!(h[2].files, vec!["README.md", "src/lib.rs"]);
    assert!(
        !h[2].text.contains("Not a hypothesis"),
        "a section ends at the next heading"
    );
    assert!(plan.dropped.is_empty());
}

#[test]
fn a_repeated_hypothesis_is_dropped_by_name() {
    let plan = parse("## Hypothesis 1\nCache the AST.\n\n## Hypothesis 2\ncache the   AST\n\n## Hypothesis 3\nMemoise lookups.\n").unwrap();
    assert_eq!(plan.hypotheses.len(), 2);
    assert_eq!(plan.hypotheses[1].text, "Memoise lookups.");
    assert_eq!(plan.hypotheses[1].index, 2);
    assert_eq!(
        plan.dropped,
        vec![
            ".factory/strategy/parallel.md:4: `## Hypothesis 2` repeats the hypothesis at line 1; dropped"
        ]
    );
}

#[test]
fn an_empty_or_unparsable_plan_is_an_error_naming_the_file_and_line() {
    let err = parse("# Plan\n\nI think we should cache things.\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        ".factory/strategy/parallel.md: no `## Hypothesis N` section; the plan holds no hypothesis to test"
    );
    let err = parse("## Hypothesis 1\nCache.\n\n## Hypothesis 2\n\n## Hypothesis 3\nMore.\n")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        ".factory/strategy/parallel.md:4: `## Hypothesis 2` has nothing under it"
    );
    assert!(matches!(
        read_plan(Path::new("/nonexistent/plan.md")),
        Err(PlanError::Io { .. })
    ));
}

#[test]
fn headings_without_numbers_and_in_other_cases_count() {
    let plan = parse("### hypothesis: Inline the hot loop\nFiles: `src/a.rs`\n\n## HYPOTHESIS #7\nSplit the module.\n").unwrap();
    assert_eq!(plan.hypotheses.len(), 2);
    assert_eq!(plan.hypotheses[0].written_number, None);
    assert_eq!(plan.hypotheses[0].title, "Inline the hot loop");
    assert_eq!(plan.hypotheses[1].written_number, Some(7));
}
