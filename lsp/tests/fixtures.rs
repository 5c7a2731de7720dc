//! Data-driven checks through the stdio server: each case is a fixture text (its
//! project's files, `//- name` starting each) with a `$0` cursor marker and the expected
//! answer as an inline snapshot. The harness is `support::Session`.

mod support;

use insta::assert_snapshot;
use support::{Named, Session};

#[test]
fn hover_on_an_instance_artifact() {
    assert_snapshot!(Session::stdio(r#"
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
    agent a { role: builder  reads: study.comb$0ined }
    flow { start -> study -> a -> end }
}
"#).hover(), @"
    **artifact** `combined`

    - path: `.factory/survey.md`
    - written by: `look`

    of subgraph `survey`, from `<root>/lib.fwf`
    ");
}

#[test]
fn definition_of_an_instance_artifact() {
    assert_snapshot!(Session::stdio(r#"
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
    agent a { role: builder  reads: study.$0combined }
    flow { start -> study -> a -> end }
}
"#).definition(), @"lib.fwf:2:44 `combined`");
}

#[test]
fn hover_on_the_instance_itself() {
    assert_snapshot!(Session::stdio(r#"
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
    use survey() as stu$0dy
    agent a { role: builder  reads: study.combined }
    flow { start -> study -> a -> end }
}
"#).hover(), @"
    **use** `study` — instance of subgraph `survey`

    ```fwf
    use survey() as study
    ```
    ");
}

#[test]
fn definition_of_a_named_write_in_the_same_file() {
    assert_snapshot!(Session::stdio(r#"
//- w.fwf
workflow w {
    agent a { role: strategist  writes: plan = "p.md" }
    agent b { role: builder  reads: pl$0an }
    flow { start -> a -> b -> end }
}
"#).definition(), @"w.fwf:2:41 `plan`");
}

/// An unbounded reloop, the cursor on the first line, away from it.
const UNBOUNDED: &str = r#"
//- w.fwf
workflow w {$0
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop -> builder
        review.halt -> end
    }
}
"#;

#[test]
fn quick_fix_for_a_named_diagnostic_away_from_the_cursor() {
    assert_snapshot!(Session::stdio(UNBOUNDED).code_actions(Named::All), @r#"
    diagnostics:
      w.fwf:7:9 `review.reloop` error FWF018: reloop from `review` to `builder` has no bound
        help: give it a bound of at least 1: `review.reloop(max 3) -> builder`
    ---
    Bound the reloop: `review.reloop(max 3)` (quickfix)
      --- w.fwf
      workflow w {
          agent builder { role: builder }
          gate review by agent(ceo) "Good?"
          flow {
              start -> builder -> review
              review.proceed -> end
              review.reloop(max 3) -> builder
              review.halt -> end
          }
      }
    after: clean
    "#);
}

#[test]
fn no_quick_fix_away_from_the_cursor_when_none_is_named() {
    assert_snapshot!(Session::stdio(UNBOUNDED).code_actions(Named::Nothing), @"
    diagnostics:
      w.fwf:7:9 `review.reloop` error FWF018: reloop from `review` to `builder` has no bound
        help: give it a bound of at least 1: `review.reloop(max 3) -> builder`
    ---
    (no code actions)
    ");
}

#[test]
fn quick_fix_under_the_cursor() {
    assert_snapshot!(Session::stdio(r#"
//- w.fwf
workflow w {
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.rel$0oop -> builder
        review.halt -> end
    }
}
"#).code_actions(Named::Nothing), @r#"
    diagnostics:
      w.fwf:7:9 `review.reloop` error FWF018: reloop from `review` to `builder` has no bound
        help: give it a bound of at least 1: `review.reloop(max 3) -> builder`
    ---
    Bound the reloop: `review.reloop(max 3)` (quickfix)
      --- w.fwf
      workflow w {
          agent builder { role: builder }
          gate review by agent(ceo) "Good?"
          flow {
              start -> builder -> review
              review.proceed -> end
              review.reloop(max 3) -> builder
              review.halt -> end
          }
      }
    after: clean
    "#);
}
