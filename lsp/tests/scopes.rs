//! Names inside parallel blocks and subgraphs: lookup, rename and completion resolve in
//! the right scope. Data-driven: `support::Session`.

mod support;

use insta::assert_snapshot;
use support::*;

#[test]
fn a_name_in_a_parallel_block_means_the_blocks_own_node() {
    // `builder` in the inner flow is the inner agent, in the outer flow the outer one; a
    // knob used as the block's count; subgraph parameters in a bound and in a flow.
    assert_snapshot!(check_definition(r#"
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max l$0oops) -> f$0ix
        verdict.halt -> end
    }
}

workflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: h$0ypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> b$0uilder -> qa -> end
        }
    }
    select best by best_score

    flow {
        start -> b$0uilder -> tries -> best -> end
    }
}
"#), @"
    main.fwf:6:29 `l$0oops`:
      main.fwf:1:28 `loops`
    main.fwf:6:39 `f$0ix`:
      main.fwf:1:17 `fix`
    main.fwf:15:28 `h$0ypotheses`:
      main.fwf:12:10 `hypotheses`
    main.fwf:19:23 `b$0uilder`:
      main.fwf:16:15 `builder`
    main.fwf:25:19 `b$0uilder`:
      main.fwf:13:11 `builder`
    ");
}

#[test]
fn prepare_rename_takes_the_name_not_a_keyword() {
    assert_snapshot!(check_prepare_rename(r#"
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}

wo$0rkflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: hypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> b$0uilder -> qa -> end
        }
    }
    select best by best_score

    flow {
        start -> builder -> tries -> best -> end
    }
}
"#), @"
    main.fwf:11:3 `wo$0rkflow`:
      (not renamable)
    main.fwf:19:23 `b$0uilder`:
      main.fwf:19:22 `builder`
    ");
}

#[test]
fn renaming_the_inner_node_leaves_the_outer_one() {
    assert_snapshot!(check_rename(r#"
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}

workflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: hypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> b$0uilder -> qa -> end
        }
    }
    select best by best_score

    flow {
        start -> builder -> tries -> best -> end
    }
}
"#, "maker"), @"
    main.fwf:16:15 `builder`
    main.fwf:17:25 `builder`
    main.fwf:19:22 `builder`
    after: clean
    ");
}

#[test]
fn renaming_a_parameter_covers_bounds_flows_and_templates() {
    assert_snapshot!(check_rename(r#"
subgraph review(fix: node, l$0oops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}

workflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: hypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> builder -> qa -> end
        }
    }
    select best by best_score

    flow {
        start -> builder -> tries -> best -> end
    }
}
"#, "rounds"), @"
    main.fwf:1:28 `loops`
    main.fwf:2:54 `loops`
    main.fwf:6:28 `loops`
    after: clean
    ");
}

#[test]
fn completion_in_a_parallel_flow_offers_its_own_nodes() {
    assert_snapshot!(check_completion(r#"
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}

workflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: hypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> $0builder -> qa -> end
        }
    }
    select best by best_score

    flow {
        start -> builder -> tries -> best -> end
    }
}
"#), @"
    start (Variable) — node
    end (Variable) — node
    builder (Variable) — node
    qa (Variable) — node
    ");
}

#[test]
fn hover_finds_nodes_of_any_declaration_and_block() {
    assert_snapshot!(check_hover(r#"
subgraph review(fix: node, loops: int = 2 in 1..=5) {
    gate verdict by agent(code_reviewer) "Ok after {{loops}} rounds?"
    flow {
        start -> verdict
        verdict.proceed -> end
        verdict.reloop(max loops) -> fix
        verdict.halt -> end
    }
}

workflow explore {
    knob hypotheses: int = 3 in 1..=8
    agent builder { role: builder }

    parallel tries(count: hypotheses) in worktrees {
        agent builder { role: builder task: "Try {{hypothesis}}." }
        use review(fix: builder) as qa
        flow {
            start -> b$0uilder -> q$0a -> end
        }
    }
    select best by best_score

    flow {
        start -> builder -> t$0ries -> b$0est -> end
    }
}
"#), @r#"
    main.fwf:19:23 `b$0uilder`:
      **agent** `builder`

      - role: `builder`
      - task: `"Try {{hypothesis}}."`
    main.fwf:19:34 `q$0a`:
      **use** `qa` — instance of subgraph `review`

      ```fwf
      use review(fix: builder) as qa
      ```
    main.fwf:25:30 `t$0ries`:
      **parallel** `tries` (count: hypotheses) in worktrees
    main.fwf:25:39 `b$0est`:
      **select** `best`
    "#);
}
