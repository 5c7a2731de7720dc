//! Artifacts and attribute keys: hover, definition, references and highlights.
//! Data-driven: `support::Session`.

mod support;

use insta::assert_snapshot;
use support::*;

#[test]
fn hover_on_artifacts_and_attribute_keys() {
    assert_snapshot!(check_hover(r#"
workflow w {
    input goal_doc = "docs/goal.md"
    agent strategist { role: strategist reads: goal_doc writes: plan = ".factory/plan.md" }
    agent builder { role: builder r$0eads: p$0lan, g$0oal_doc }
    flow {
        start -> strategist -> builder -> end
    }
}
"#), @"
    main.fwf:4:36 `r$0eads`:
      **attribute** `reads`

      Artifact names and/or quoted paths the node reads.
    main.fwf:4:43 `p$0lan`:
      **artifact** `plan`

      - path: `.factory/plan.md`
      - written by: `strategist`
    main.fwf:4:49 `g$0oal_doc`:
      **artifact** `goal_doc` — input

      - path: `docs/goal.md`
    ");
}

#[test]
fn definition_of_an_artifact_is_its_named_write() {
    assert_snapshot!(check_definition(r#"
workflow w {
    input goal_doc = "docs/goal.md"
    agent strategist { role: strategist reads: goal_doc writes: plan = ".factory/plan.md" }
    agent builder { role: builder reads: $0plan, goal_doc }
    flow {
        start -> strategist -> builder -> end
    }
}
"#), @"main.fwf:3:65 `plan`");
}

#[test]
fn references_of_an_input_cover_its_declaration_and_reads() {
    assert_snapshot!(check_references(r#"
workflow w {
    input go$0al_doc = "docs/goal.md"
    agent strategist { role: strategist reads: goal_doc writes: plan = ".factory/plan.md" }
    agent builder { role: builder reads: plan, goal_doc }
    flow {
        start -> strategist -> builder -> end
    }
}
"#), @"
    main.fwf:2:11 `goal_doc`
    main.fwf:3:48 `goal_doc`
    main.fwf:4:48 `goal_doc`
    ");
}

#[test]
fn highlights_mark_every_occurrence() {
    assert_snapshot!(check_highlights(r#"
workflow w {
    input goal_doc = "docs/goal.md"
    agent strategist { role: strategist reads: goal_doc writes: plan = ".factory/plan.md" }
    agent builder { role: builder reads: plan, goal_doc }
    flow {
        start -> strategist -> b$0uilder -> end
    }
}
"#), @"
    main.fwf:4:11 `builder`
    main.fwf:6:32 `builder`
    ");
}
