//! Dotted declared names, as `factory compile --emit fwf` writes them for inlined ids
//! (`agent experiment.builder`, `writes: plan.plan = ...`): hover, definition and
//! references work on them as on plain names, wherever in the name the cursor is.
//! Data-driven: `support::Session`.

mod support;

use insta::assert_snapshot;
use support::*;

#[test]
fn a_dotted_node_in_a_flow_goes_to_its_declaration_from_any_part_of_the_name() {
    assert_snapshot!(check_definition(r#"
workflow w {
    agent plan.writer { role: strategist writes: plan.plan = ".factory/plan.md" }
    agent exp.builder { role: builder reads: plan.plan }
    flow {
        start -> plan.writer -> $0exp$0.b$0uilde$0r -> end
    }
}
"#), @"
    main.fwf:5:33 `$0exp.builder`:
      main.fwf:3:11 `exp.builder`
    main.fwf:5:36 `exp$0.builder`:
      main.fwf:3:11 `exp.builder`
    main.fwf:5:38 `exp.b$0uilder`:
      main.fwf:3:11 `exp.builder`
    main.fwf:5:43 `exp.builde$0r`:
      main.fwf:3:11 `exp.builder`
    ");
}

#[test]
fn a_dotted_node_hovers_with_its_whole_name() {
    assert_snapshot!(check_hover(r#"
workflow w {
    agent plan.writer { role: strategist writes: plan.plan = ".factory/plan.md" }
    agent exp.builder { role: builder reads: plan.plan }
    flow {
        start -> plan.w$0riter -> exp.builder -> end
    }
}
"#), @r#"
    **agent** `plan.writer`

    - role: `strategist`
    - writes: `plan.plan = ".factory/plan.md"`
    "#);
}

#[test]
fn a_dotted_artifact_goes_to_its_named_write_from_any_part_of_the_name() {
    assert_snapshot!(check_definition(r#"
workflow w {
    agent plan.writer { role: strategist writes: plan.plan = ".factory/plan.md" }
    agent exp.builder { role: builder reads: $0plan$0.pl$0an }
    flow {
        start -> plan.writer -> exp.builder -> end
    }
}
"#), @"
    main.fwf:3:46 `$0plan.plan`:
      main.fwf:2:50 `plan.plan`
    main.fwf:3:50 `plan$0.plan`:
      main.fwf:2:50 `plan.plan`
    main.fwf:3:53 `plan.pl$0an`:
      main.fwf:2:50 `plan.plan`
    ");
}

#[test]
fn a_dotted_artifact_hovers_with_its_path() {
    assert_snapshot!(check_hover(r#"
workflow w {
    agent plan.writer { role: strategist writes: plan.plan = ".factory/plan.md" }
    agent exp.builder { role: builder reads: plan.pl$0an }
    flow {
        start -> plan.writer -> exp.builder -> end
    }
}
"#), @"
    **artifact** `plan.plan`

    - path: `.factory/plan.md`
    - written by: `plan.writer`
    ");
}

#[test]
fn references_of_a_dotted_node_and_a_dotted_artifact() {
    assert_snapshot!(check_references(r#"
workflow w {
    agent pl$0an.writer { role: strategist writes: plan.pl$0an = ".factory/plan.md" }
    agent exp.builder { role: builder reads: plan.plan }
    flow {
        start -> plan.writer -> exp.builder -> end
    }
}
"#), @"
    main.fwf:2:13 `pl$0an.writer`:
      main.fwf:2:11 `plan.writer`
      main.fwf:5:18 `plan.writer`
    main.fwf:2:57 `plan.pl$0an`:
      main.fwf:2:50 `plan.plan`
      main.fwf:3:46 `plan.plan`
    ");
}
