//! Every feature of the server at the handler level, data-driven: each test is a fixture
//! (a project's files, `//- name` starting each, `$0` marking the cursor) and the
//! handlers' answer as an inline snapshot. The harness is `support::Session`.

mod support;

use insta::assert_snapshot;
use lsp_types::GotoDefinitionResponse;
use lsp_types::request::GotoDefinition;
use support::*;

/// A workflow importing a subgraph file, with a project prompt.
const PROJECT: &str = r#"
//- lib/qa.fwf
//! Review rounds.

/// Attacks the change, then judges it.
subgraph qa(fix: node, loops: int = 2 in 1..=5) {
    agent tester { role: adversarial_tester }
    gate verdict by agent(code_reviewer) "Ok?"
    flow {
        start -> tester -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}
//- prompts/custom_role.md
# Custom role
Does custom things.
//- main.fwf
//! Main.
import ./lib/qa

workflow main {
    /// How many review rounds.
    knob rounds: int = 3 in 1..=5
    input plan_doc = "plan.md"

    /// Implements the plan.
    agent builder { role: builder reads: "plan.md" writes: "out.md" check: exists timeout: 60 }
    agent helper { role: custom_role task: "Round {{knobs.rounds}}" }
    gate review by agent(ceo) "Good?"
    use qa(fix: builder, loops: rounds) as qa

    flow {
        start -> builder -> helper -> review
        review.proceed -> qa -> end
        review.reloop(max rounds) -> builder
        review.halt -> end
    }
}
"#;

#[test]
fn the_project_is_clean() {
    assert_snapshot!(check_diagnostics(PROJECT), @"clean");
}

#[test]
fn diagnostics_carry_code_range_and_related_information() {
    assert_snapshot!(check_diagnostics(r#"
workflow w {
    agent a { role: builder }
    agent a { role: builder }
    fork f
    agent b { role: builder }
    flow {
        start -> f -> a, b -> end
    }
}
"#), @"
    main.fwf:3:11 `a` error FWF002: `a` is declared twice
      help: rename one of the two declarations of `a`
      related: main.fwf:2:11 `a`: first declared here
    main.fwf:4:10 `f` error FWF014: fork `f` has no matching join
      help: declare a `join` and route every branch of `f` into it
      related: main.fwf:7:26 `b`: `b` goes on to `end`
      related: main.fwf:7:23 `a`: `a` goes on to `end`
    ");
}

#[test]
fn hover_on_a_node_shows_kind_role_reads_writes_checks_and_doc() {
    assert_snapshot!(check_hover(r#"
workflow main {
    input plan_doc = "plan.md"

    /// Implements the plan.
    agent builder { role: builder reads: "plan.md" writes: "out.md" check: exists timeout: 60 }
    flow {
        start -> bu$0ilder -> end
    }
}
"#), @r#"
    **agent** `builder`

    - role: `builder`
    - reads: `"plan.md"`
    - writes: `"out.md"`
    - check: `exists`
    - timeout: `60`

    ---

    Implements the plan.
    "#);
}

#[test]
fn hover_on_a_knob_in_a_bound_and_in_a_template_shows_type_default_bounds_and_doc() {
    assert_snapshot!(check_hover(r#"
workflow main {
    /// How many review rounds.
    knob rounds: int = 3 in 1..=5
    agent helper { role: builder task: "Round {{knobs.ro$0unds}}" }
    gate review by agent(ceo) "Good?"
    flow {
        start -> helper -> review
        review.proceed -> end
        review.reloop(max r$0ounds) -> helper
        review.halt -> end
    }
}
"#), @"
    main.fwf:4:57 `knobs.ro$0unds`:
      **knob** `rounds`

      - type: `int`
      - default: `3`
      - bounds: `1..=5`

      ---

      How many review rounds.
    main.fwf:9:28 `r$0ounds`:
      **knob** `rounds`

      - type: `int`
      - default: `3`
      - bounds: `1..=5`

      ---

      How many review rounds.
    ");
}

#[test]
fn hover_on_roles_shows_the_prompt_head() {
    assert_snapshot!(check_hover(r#"
//- prompts/custom_role.md
# Custom role
Does custom things.
//- main.fwf
workflow main {
    agent helper { role: c$0ustom_role }
    gate review by agent(c$0eo) "Good?"
    flow {
        start -> helper -> review
        review.proceed -> end
        review.reloop(max 3) -> helper
        review.halt -> end
    }
}
"#), @"
    main.fwf:2:27 `c$0ustom_role`:
      **role** `custom_role` — prompt `<root>/prompts/custom_role.md`

      ---

      # Custom role
      Does custom things.
    main.fwf:3:27 `c$0eo`:
      **role** `ceo` — prompt built in

      ---

      # Role: CEO

      You are the CEO of a factory run. You are the reviewer at every agent-evaluated gate
      and, when run interactively, the orchestrator that walks a mode's graph. You judge
      artifacts and decide where the run goes next. You never do a specialist's work
      yourself.

      ## Purpose
    ");
}

#[test]
fn hover_on_an_import_names_its_file() {
    assert_snapshot!(check_hover(r#"
//- lib/qa.fwf
subgraph qa(fix: node) {
    agent tester { role: adversarial_tester }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./l$0ib/qa

workflow main {
    agent builder { role: builder }
    use qa(fix: builder) as qa
    flow {
        start -> builder -> qa -> end
    }
}
"#), @"
    **import** `./lib/qa`

    file: `<root>/lib/qa.fwf`
    ");
}

#[test]
fn definition_of_a_flow_term_is_the_node_declaration() {
    assert_snapshot!(check_definition(r#"
workflow main {
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        rev$0iew.reloop(max 3) -> builder
        review.halt -> end
    }
}
"#), @"main.fwf:3:10 `review`");
}

#[test]
fn definition_of_a_use_is_the_subgraph_in_the_imported_file_and_of_a_knob_argument_the_knob() {
    assert_snapshot!(check_definition(r#"
//- lib/qa.fwf
//! Review rounds.

/// Attacks the change, then judges it.
subgraph qa(fix: node, loops: int = 2 in 1..=5) {
    agent tester { role: adversarial_tester }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib/qa

workflow main {
    knob rounds: int = 3 in 1..=5
    agent builder { role: builder }
    use $0qa(fix: builder, loops: r$0ounds) as qa
    flow {
        start -> builder -> qa -> end
    }
}
"#), @"
    main.fwf:6:9 `$0qa`:
      lib/qa.fwf:4:10 `qa`
    main.fwf:6:34 `r$0ounds`:
      main.fwf:4:10 `rounds`
    ");
}

/// The text of the file a definition at the fixture's cursor opens.
fn opened_by_definition(fixture: &str) -> String {
    let mut s = Session::handlers(fixture);
    let params = definition_params(s.cursor_params());
    let Ok(Some(GotoDefinitionResponse::Scalar(loc))) = s.request::<GotoDefinition>(params) else {
        panic!("no definition");
    };
    let path = factory_lsp::paths::uri_to_key(&loc.uri).expect("a file");
    std::fs::read_to_string(path).expect("the file exists")
}

#[test]
fn definition_of_an_import_is_the_file_and_of_a_role_its_prompt() {
    // A built-in role opens a read-only copy of the prompt embedded in factory.
    assert_snapshot!(check_definition(r#"
//- lib/qa.fwf
subgraph qa(fix: node) {
    agent tester { role: adversarial_tester }
    flow {
        start -> tester -> end
    }
}
//- prompts/custom_role.md
# Custom role
Does custom things.
//- main.fwf
import ./$0lib/qa

workflow main {
    agent builder { role: $0custom_role }
    gate review by agent(c$0eo) "Good?"
    use qa(fix: builder) as qa
    flow {
        start -> builder -> review
        review.proceed -> qa -> end
        review.reloop(max 3) -> builder
        review.halt -> end
    }
}
"#), @"
    main.fwf:1:10 `./$0lib/qa`:
      lib/qa.fwf:1:1
    main.fwf:4:27 `$0custom_role`:
      prompts/custom_role.md:1:1
    main.fwf:5:27 `c$0eo`:
      <builtin>/prompts/ceo.md:1:1
    ");
    assert_eq!(
        opened_by_definition(
            r#"
workflow main {
    agent builder { role: builder }
    gate review by agent(c$0eo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max 3) -> builder
        review.halt -> end
    }
}
"#
        ),
        factory_compiler::builtin::prompt("ceo").expect("a built-in ceo prompt")
    );
}

const STD_IMPORT: &str = r#"
import std/dee$0p_qa
workflow w {
    input review = ".factory/reviews/builder-latest.md"
    input strategy = ".factory/strategy/current.md"
    agent b { role: builder writes: "b.md" check: exists }
    use deep_qa(fix: b, on_halt: end) as qa
    flow { start -> b -> qa -> end }
}
"#;

#[test]
fn definition_of_a_standard_library_import_opens_the_embedded_file() {
    if std::env::var_os("FACTORY_STDLIB").is_some() {
        return; // the directory wins then; covered by the import test above
    }
    assert_snapshot!(check_definition(STD_IMPORT), @"<builtin>/stdlib/deep_qa.fwf:1:1");
    assert_eq!(
        opened_by_definition(STD_IMPORT),
        factory_compiler::builtin::stdlib("deep_qa").expect("an embedded deep_qa")
    );
}

#[test]
fn references_of_a_node_cover_declaration_terms_and_arguments_not_the_role() {
    // `role: builder` is a role, not the node.
    assert_snapshot!(check_references(r#"
//- lib/qa.fwf
subgraph qa(fix: node) {
    agent tester { role: adversarial_tester }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib/qa

workflow main {
    agent b$0uilder { role: builder }
    gate review by agent(ceo) "Good?"
    use qa(fix: builder) as qa
    flow {
        start -> builder -> review
        review.proceed -> qa -> end
        review.reloop(max 3) -> builder
        review.halt -> end
    }
}
"#), @"
    main.fwf:4:11 `builder`
    main.fwf:6:17 `builder`
    main.fwf:8:18 `builder`
    main.fwf:10:33 `builder`
    ");
}

#[test]
fn renaming_a_node_edits_every_use_not_comments_and_keeps_the_file_clean() {
    assert_snapshot!(check_rename(r#"
workflow main {
    /// How many review rounds.
    knob rounds: int = 3 in 1..=5
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max rounds) -> builder
        r$0eview.halt -> end
    }
}
"#, "judge"), @"
    main.fwf:5:10 `review`
    main.fwf:7:29 `review`
    main.fwf:8:9 `review`
    main.fwf:9:9 `review`
    main.fwf:10:9 `review`
    after: clean
    ");
}

#[test]
fn renaming_a_knob_edits_bounds_arguments_and_templates_not_comments() {
    assert_snapshot!(check_rename(r#"
//- lib/qa.fwf
subgraph qa(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}
//- main.fwf
import ./lib/qa

workflow main {
    /// How many review rounds.
    knob r$0ounds: int = 3 in 1..=5
    agent builder { role: builder task: "Round {{knobs.rounds}}" }
    gate review by agent(ceo) "Good?"
    use qa(fix: builder, loops: rounds) as qa
    flow {
        start -> builder -> review
        review.proceed -> qa -> end
        review.reloop(max rounds) -> builder
        review.halt -> end
    }
}
"#, "passes"), @"
    main.fwf:5:10 `rounds`
    main.fwf:6:56 `rounds`
    main.fwf:8:33 `rounds`
    main.fwf:12:27 `rounds`
    after: clean
    ");
}

const TWO_AGENTS: &str = r#"
workflow main {
    agent builder { role: builder }
    agent h$0elper { role: builder }
    flow {
        start -> builder -> helper -> end
    }
}
"#;

#[test]
fn rename_refuses_clashes_and_bad_names() {
    assert_snapshot!(check_rename(TWO_AGENTS, "builder"), @"error: cannot rename `helper` to `builder`: a node named `builder` already exists in `main`");
    assert_snapshot!(check_rename(TWO_AGENTS, "9lives"), @"error: `9lives` is not a valid name: use letters, digits and `_`, not starting with a digit, and not a reserved word");
    assert_snapshot!(check_rename(TWO_AGENTS, "end"), @"error: `end` is not a valid name: use letters, digits and `_`, not starting with a digit, and not a reserved word");
}

#[test]
fn document_symbols_outline_workflows_knobs_and_nodes() {
    assert_snapshot!(check_symbols(PROJECT), @"
    main (Module) — workflow at main.fwf:4:10 `main`, lines 4-22
      rounds (Constant) — knob at main.fwf:6:10 `rounds`, lines 6-6
      plan_doc (File) — input at main.fwf:7:11 `plan_doc`, lines 7-7
      builder (Object) — agent at main.fwf:10:11 `builder`, lines 10-10
      helper (Object) — agent at main.fwf:11:11 `helper`, lines 11-11
      review (Object) — gate at main.fwf:12:10 `review`, lines 12-12
      qa (Object) — use qa at main.fwf:13:44 `qa`, lines 13-13
    ");
}

#[test]
fn formatting_returns_one_edit_producing_the_canonical_text() {
    assert_snapshot!(check_formatting(r#"
workflow w{
agent a{role:builder}
flow{
start->a->end
}
}"#), @"
    edit 1:1-6:2:
    workflow w {
        agent a { role: builder }
        flow {
            start -> a -> end
        }
    }
    ");
    // A formatted document needs no edit.
    assert_snapshot!(check_formatting(r#"
workflow w {
    agent a { role: builder }
    flow {
        start -> a -> end
    }
}
"#), @"(no edits)");
}

#[test]
fn completion_offers_node_ids_in_flows_not_knobs() {
    assert_snapshot!(check_completion(r#"
//- lib/qa.fwf
subgraph qa(fix: node) {
    agent tester { role: adversarial_tester }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib/qa

workflow main {
    knob rounds: int = 3 in 1..=5
    agent builder { role: builder }
    agent helper { role: builder }
    gate review by agent(ceo) "Good?"
    use qa(fix: builder) as qa
    flow {
        start -> builder -> helper -> review
        review.proceed -> qa -> end
        review.reloop(max rounds) -> builder
        review.halt -> end
        start -> $0
    }
}
"#), @"
    start (Variable) — node
    end (Variable) — node
    builder (Variable) — node
    helper (Variable) — node
    review (Variable) — node
    qa (Variable) — node
    ");
}

#[test]
fn completion_offers_verdicts_after_a_gate_and_only_fail_after_an_agent() {
    assert_snapshot!(check_completion(r#"
workflow main {
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max 3) -> builder
        review.halt -> end
        review.$0
    }
}
"#), @"
    proceed (EnumMember) — verdict
    reloop (EnumMember) — verdict
    halt (EnumMember) — verdict
    fail (EnumMember) — verdict
    ");
    assert_snapshot!(check_completion(r#"
workflow main {
    agent builder { role: builder }
    gate review by agent(ceo) "Good?"
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max 3) -> builder
        review.halt -> end
        builder.$0
    }
}
"#), @"fail (EnumMember) — verdict");
}

#[test]
fn completion_offers_roles_with_project_prompts() {
    assert_snapshot!(check_completion(r#"
//- prompts/custom_role.md
# Custom role
Does custom things.
//- main.fwf
workflow main {
    agent helper { role: $0custom_role }
    flow {
        start -> helper -> end
    }
}
"#), @"
    adversarial_tester (Class) — role
    archivist (Class) — role
    builder (Class) — role
    ceo (Class) — role
    code_reviewer (Class) — role
    custom_role (Class) — role
    failure_analyst (Class) — role
    health_checker (Class) — role
    refiner (Class) — role
    researcher (Class) — role
    spec_annotator (Class) — role
    strategist (Class) — role
    ");
}

#[test]
fn completion_offers_the_attribute_keys_of_a_gate() {
    assert_snapshot!(check_completion(r#"
workflow main {
    agent builder { role: builder }
    gate review by agent(ceo) "Good?" { $0 }
    flow {
        start -> builder -> review
        review.proceed -> end
        review.reloop(max 3) -> builder
        review.halt -> end
    }
}
"#), @"
    question (Property) — gate attribute
    prompt (Property) — gate attribute
    task (Property) — gate attribute
    reads (Property) — gate attribute
    writes (Property) — gate attribute
    check (Property) — gate attribute
    outcomes (Property) — gate attribute
    timeout (Property) — gate attribute
    model (Property) — gate attribute
    runner (Property) — gate attribute
    placement (Property) — gate attribute
    ");
}

#[test]
fn completion_offers_knobs_in_templates() {
    assert_snapshot!(check_completion(r#"
workflow main {
    knob rounds: int = 3 in 1..=5
    agent helper { role: builder task: "Round {{knobs.$0" }
    flow {
        start -> helper -> end
    }
}
"#), @"rounds (Constant) — knob");
}

#[test]
fn completion_offers_import_paths_not_the_file_itself() {
    assert_snapshot!(check_completion(r#"
//- lib/qa.fwf
subgraph qa(fix: node) {
    agent tester { role: adversarial_tester }
    flow {
        start -> tester -> end
    }
}
//- main.fwf
import ./lib/qa
import ./$0

workflow main {
    agent builder { role: builder }
    use qa(fix: builder) as qa
    flow {
        start -> builder -> qa -> end
    }
}
"#), @"./lib/qa (File) — import");
}
