//! Quick fixes, applied the way an editor applies them, leave a file without the
//! diagnostic they fix. Each fixture is a diagnostic example of the compiler
//! (`compiler/tests/diagnostics/`) with the cursor on the diagnostic; the snapshot
//! shows the diagnostics, the fixes offered, what each edit does, and the
//! diagnostics once the fix is applied. Data-driven: `support::Session`.

mod support;

use insta::assert_snapshot;
use support::*;

#[test]
fn bounding_an_unbounded_reloop() {
    assert_snapshot!(check_code_actions(r#"
workflow tiny {
    agent builder { role: builder }
    gate review by agent(ceo) "Is the change good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.rel$0oop -> builder
        review.halt -> end
    }
}
"#), @r#"
    diagnostics:
      main.fwf:7:9 `review.reloop` error FWF018: reloop from `review` to `builder` has no bound
        help: give it a bound of at least 1: `review.reloop(max 3) -> builder`
    ---
    Bound the reloop: `review.reloop(max 3)` (quickfix)
      --- main.fwf
      workflow tiny {
          agent builder { role: builder }
          gate review by agent(ceo) "Is the change good?"
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
fn adding_the_missing_join_of_a_fork() {
    assert_snapshot!(check_code_actions(r#"
workflow tiny {
    fork res$0earch
    agent market { role: researcher }
    agent code { role: researcher }
    flow {
        start -> research -> market, code -> end
    }
}
"#), @"
    diagnostics:
      main.fwf:2:10 `research` error FWF014: fork `research` has no matching join
        help: declare a `join` and route every branch of `research` into it
        related: main.fwf:6:30 `market`: `market` goes on to `end`
        related: main.fwf:6:38 `code`: `code` goes on to `end`
    ---
    Add `join research_join` and route the branches of `research` into it (quickfix)
      --- main.fwf
      workflow tiny {
          fork research
          join research_join
          agent market { role: researcher }
          agent code { role: researcher }
          flow {
              start -> research -> market, code -> research_join -> end
          }
      }
    after: clean
    ");
}

#[test]
fn creating_the_prompt_of_an_unknown_role() {
    // The diagnostic (and so the fix) is on the `role` key. Applied like a client: the
    // file is created, then filled; the server learns of the new prompt (a watched-file
    // change) and the error goes.
    assert_snapshot!(check_code_actions(r#"
workflow tiny {
    agent builder { ro$0le: biulder }
    flow {
        start -> builder -> end
    }
}
"#), @"
    diagnostics:
      main.fwf:2:21 `role` error FWF010: unknown role `biulder`
        help: create `prompts/biulder.md` or `.factory/agents/biulder.md` in the project (or `$FACTORY_HOME/agents/prompts/biulder.md` for all your projects), or use a known role: adversarial_tester, archivist, builder, ceo, code_reviewer, failure_analyst, health_checker, refiner, researcher, spec_annotator, strategist
    ---
    Create <root>/prompts/biulder.md (quickfix)
      create prompts/biulder.md
      --- prompts/biulder.md
      # biulder

      You are the biulder. Describe here what this role does, what it reads, what it must write, and how its work is judged.
    after: clean
    ");
}

#[test]
fn removing_an_unused_import() {
    assert_snapshot!(check_code_actions(r#"
//- lib/qa.fwf
//! Shared quality assurance for the diagnostic fixtures.

/// Attacks the change, then asks a reviewer whether it holds up; sends the work back
/// to `fix` at most `loops` times.
subgraph qa(fix: node, loops: int = 2 in 1..=5) {
    agent tester { role: adversarial_tester }
    gate verdict by agent(code_reviewer) "Does the change hold up?"
    flow {
        start -> tester -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}
//- main.fwf
import ./lib$0/qa
workflow tiny {
    agent builder { role: builder }
    flow {
        start -> builder -> end
    }
}
"#), @"
    diagnostics:
      main.fwf:1:8 `./lib/qa` warning FWF102: nothing from `./lib/qa` is used
        help: remove the import, or `use` one of its subgraphs
    ---
    Remove `import ./lib/qa` (quickfix)
      --- main.fwf
      workflow tiny {
          agent builder { role: builder }
          flow {
              start -> builder -> end
          }
      }
    after: clean
    ");
}

#[test]
fn no_fixes_away_from_diagnostics() {
    assert_snapshot!(check_code_actions(r#"
$0w$0orkflow tiny {
    agent builder { role: builder }
    gate review by agent(ceo) "Is the change good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop -> builder
        review.halt -> end
    }
}
"#), @"
    diagnostics:
      main.fwf:7:9 `review.reloop` error FWF018: reloop from `review` to `builder` has no bound
        help: give it a bound of at least 1: `review.reloop(max 3) -> builder`
    ---
    (no code actions)
    ");
}
