//! The machine driven by scripted inputs: no processes, no files.

use factory_compiler::ir::{Label, parse_text};

use super::failure::NodeFailure;
use super::graph::Graph;
use super::machine::{Command, Input, Machine, NodeResult, RunOutcome};

fn graph(body: &str) -> Graph {
    let text = format!("fwir 1\nworkflow t\n{body}");
    match parse_text(&text) {
        Ok((ir, _)) => Graph::new(ir),
        Err(e) => panic!("bad IR in test: {e:?}"),
    }
}

fn runs(commands: &[Command]) -> Vec<String> {
    commands
        .iter()
        .map(|c| match c {
            Command::Run { node, visit } => format!("{node}#{visit}"),
            Command::Finish(o) => format!("finish:{}", o.name()),
        })
        .collect()
}

fn done(node: &str) -> Input {
    Input::Finished {
        node: node.into(),
        result: NodeResult::Done,
        vars: Default::default(),
    }
}

fn verdict(node: &str, v: Label) -> Input {
    Input::Finished {
        node: node.into(),
        result: NodeResult::Verdict { verdict: v },
        vars: Default::default(),
    }
}

fn failed(node: &str) -> Input {
    Input::Finished {
        node: node.into(),
        result: NodeResult::failed(NodeFailure::CommandTimeout {
            node: node.into(),
            secs: 5,
        }),
        vars: Default::default(),
    }
}

/// A failure of the node's agent (it could not run, crashed or timed out).
fn agent_failed(node: &str) -> Input {
    Input::Finished {
        node: node.into(),
        result: NodeResult::failed(NodeFailure::AgentRun {
            message: "the builder agent failed (exit 1)".into(),
        }),
        vars: Default::default(),
    }
}

const CHAIN: &str = "node start start\nnode a fn run=\"a\"\nnode b fn run=\"b\"\nnode end end\n\
edge start -> a\nedge a -> b\nedge b -> end\n";

#[test]
fn a_chain_runs_in_order_and_completes() {
    let g = graph(CHAIN);
    let mut m = Machine::new(&g);
    assert_eq!(runs(&m.on_input(Input::Start)), ["a#1"]);
    assert_eq!(runs(&m.on_input(done("a"))), ["b#1"]);
    assert_eq!(runs(&m.on_input(done("b"))), ["finish:completed"]);
}

#[test]
fn a_failed_node_without_fail_edge_fails_the_run() {
    let g = graph(CHAIN);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    let c = m.on_input(failed("a"));
    assert_eq!(
        c,
        [Command::Finish(RunOutcome::Failed {
            node: "a".into(),
            reason: "`a` timed out after 5s (its process group was killed)".into()
        })]
    );
}

#[test]
fn a_failed_node_follows_its_fail_edge() {
    let g = graph(
        "node start start\nnode a fn run=\"a\"\nnode rescue fn run=\"r\"\nnode end end\n\
         edge start -> a\nedge a -> end\nedge a -> rescue fail\nedge rescue -> end\n",
    );
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    assert_eq!(runs(&m.on_input(failed("a"))), ["rescue#1"]);
    assert_eq!(
        m.state.vars["reason"],
        "`a` failed: `a` timed out after 5s (its process group was killed)"
    );
}

const FORK: &str = "node start start\nnode f fork\nnode x fn run=\"x\"\nnode y fn run=\"y\"\nnode z fn run=\"z\"\n\
node j join\nnode after fn run=\"after\"\nnode end end\n\
edge start -> f\nedge f -> x\nedge f -> y\nedge f -> z\nedge x -> j\nedge y -> j\nedge z -> j\n\
edge j -> after\nedge after -> end\n";

#[test]
fn a_fork_starts_every_branch_and_the_join_waits_for_all() {
    let g = graph(FORK);
    let mut m = Machine::new(&g);
    assert_eq!(runs(&m.on_input(Input::Start)), ["x#1", "y#1", "z#1"]);
    assert!(m.on_input(done("y")).is_empty());
    assert!(m.on_input(done("x")).is_empty());
    assert_eq!(runs(&m.on_input(done("z"))), ["after#1"]);
    assert_eq!(runs(&m.on_input(done("after"))), ["finish:completed"]);
}

#[test]
fn a_failing_branch_stops_the_run_at_once() {
    let g = graph(FORK);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    assert_eq!(runs(&m.on_input(failed("y"))), ["finish:failed"]);
}

const GATE: &str = "node start start\nnode build agent role=\"builder\"\nnode g gate evaluator=agent role=\"ceo\"\n\
node ok fn run=\"ok\"\nnode no fn run=\"no\"\nnode end end\n\
edge start -> build\nedge build -> g\nedge g -> ok proceed\nedge g -> build reloop max=2\n\
edge g -> no halt\nedge ok -> end\nedge no -> end\n";

#[test]
fn a_gate_verdict_picks_its_edge_and_reloops_count_visits() {
    let g = graph(GATE);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    m.on_input(done("build"));
    assert_eq!(runs(&m.on_input(verdict("g", Label::Reloop))), ["build#2"]);
    assert_eq!(runs(&m.on_input(done("build"))), ["g#2"]);
    assert_eq!(runs(&m.on_input(verdict("g", Label::Proceed))), ["ok#1"]);
}

#[test]
fn a_reloop_past_its_bound_becomes_a_halt() {
    let g = graph(GATE);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    for visit in 2..=3 {
        m.on_input(done("build"));
        let next = format!("build#{visit}");
        assert_eq!(runs(&m.on_input(verdict("g", Label::Reloop))), [next]);
    }
    m.on_input(done("build"));
    // The third reloop exceeds max=2: the gate's halt edge is taken instead.
    assert_eq!(runs(&m.on_input(verdict("g", Label::Reloop))), ["no#1"]);
    assert_eq!(m.state.halts, ["g"]);
    assert_eq!(m.state.halt_reasons, ["reloop limit 2 reached at `g`"]);
    // The node the halt edge leads to can record why.
    assert_eq!(m.state.vars["reason"], "reloop limit 2 reached at `g`");
}

#[test]
fn a_halt_with_no_halt_edge_halts_the_run() {
    let g = graph(
        "node start start\nnode g gate evaluator=fn run=\"true\"\nnode end end\n\
         edge start -> g\nedge g -> end proceed\n",
    );
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    assert_eq!(
        runs(&m.on_input(verdict("g", Label::Halt))),
        ["finish:halted"]
    );
}

#[test]
fn an_async_node_is_passed_at_once_and_awaited_before_the_end() {
    let g = graph(
        "node start start\nnode arch agent async role=\"archivist\"\nnode end end\n\
         edge start -> arch\nedge arch -> end\n",
    );
    let mut m = Machine::new(&g);
    assert_eq!(runs(&m.on_input(Input::Start)), ["arch#1"]);
    assert!(m.state.reached_end, "the walk went past the async node");
    assert_eq!(runs(&m.on_input(failed("arch"))), ["finish:completed"]);
    assert_eq!(m.state.async_failures.len(), 1);
}

#[test]
fn a_saved_state_resumes_the_unfinished_nodes_with_their_visit() {
    let g = graph(FORK);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    m.on_input(done("x"));
    let saved = serde_json::to_string(&m.state).unwrap();
    let state = serde_json::from_str(&saved).unwrap();
    let mut resumed = Machine::with_state(&g, state);
    assert_eq!(runs(&resumed.resume()), ["y#1", "z#1"]);
    resumed.on_input(done("y"));
    assert_eq!(runs(&resumed.on_input(done("z"))), ["after#1"]);
}

#[test]
fn vars_reported_by_a_node_are_kept() {
    let g = graph(CHAIN);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    m.on_input(Input::Finished {
        node: "a".into(),
        result: NodeResult::Done,
        vars: [("exp_id".to_string(), "7".to_string())].into(),
    });
    assert_eq!(m.state.vars["exp_id"], "7");
}

#[test]
fn a_long_chain_does_not_recurse() {
    let n = 100_000;
    let mut body = String::from("node start start\nnode end end\n");
    for i in 0..n {
        body.push_str(&format!("node n{i:06} fn run=\"true\"\n"));
    }
    body.push_str("edge start -> n000000\n");
    for i in 0..n - 1 {
        body.push_str(&format!("edge n{i:06} -> n{:06}\n", i + 1));
    }
    body.push_str(&format!("edge n{:06} -> end\n", n - 1));
    let g = graph(&body);
    let mut m = Machine::new(&g);
    let mut next = m.on_input(Input::Start);
    let mut steps = 0;
    while let Some(Command::Run { node, .. }) = next.first().cloned() {
        next = m.on_input(done(&node));
        steps += 1;
    }
    assert_eq!(steps, n);
    assert_eq!(runs(&next), ["finish:completed"]);
}

/// A parallel node whose body is a gate that goes on to a select or to a discard.
const PARALLEL: &str = "node start start\nnode plan fn run=\"p\"\n\
node branches parallel count=2 isolation=\"worktrees\"\n\
node branches.build fn in=branches run=\"b\"\n\
node branches.check gate in=branches evaluator=fn run=\"c\"\n\
node branches.discard fn in=branches run=\"d\"\n\
node best select strategy=\"best_score\"\nnode keep fn run=\"k\"\nnode end end\n\
edge start -> plan\nedge plan -> branches\nedge branches -> branches.build\n\
edge branches.build -> branches.check\nedge branches.check -> best proceed\n\
edge branches.check -> branches.discard halt\nedge branches.discard -> best\n\
edge best -> keep\nedge keep -> end\n";

#[test]
fn a_parallel_node_continues_where_its_body_leads_never_into_the_body() {
    let g = graph(PARALLEL);
    let mut m = Machine::new(&g);
    assert_eq!(runs(&m.on_input(Input::Start)), ["plan#1"]);
    assert_eq!(runs(&m.on_input(done("plan"))), ["branches#1"]);
    // The branches ran the body; the run goes on to the select, once.
    assert_eq!(runs(&m.on_input(done("branches"))), ["best#1"]);
    assert_eq!(runs(&m.on_input(done("best"))), ["keep#1"]);
    assert_eq!(runs(&m.on_input(done("keep"))), ["finish:completed"]);
    assert!(!m.state.visits.contains_key("branches.build"));
}

#[test]
fn a_branch_runs_the_body_from_a_start_to_an_end_that_stands_for_every_exit() {
    let g = graph(PARALLEL);
    let p = g.id("branches").unwrap();
    let body = Graph::new(g.branch_ir(p));
    let ids: Vec<&str> = body.ir.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "branches.build",
            "branches.check",
            "branches.discard",
            "end",
            "start"
        ]
    );
    let mut m = Machine::new(&body);
    assert_eq!(runs(&m.on_input(Input::Start)), ["branches.build#1"]);
    assert_eq!(
        runs(&m.on_input(done("branches.build"))),
        ["branches.check#1"]
    );
    // Halt goes to the body's discard; what leaves the body ends the branch.
    assert_eq!(
        runs(&m.on_input(verdict("branches.check", Label::Halt))),
        ["branches.discard#1"]
    );
    assert_eq!(
        runs(&m.on_input(done("branches.discard"))),
        ["finish:completed"]
    );
    let mut m = Machine::new(&body);
    m.on_input(Input::Start);
    m.on_input(done("branches.build"));
    assert_eq!(
        runs(&m.on_input(verdict("branches.check", Label::Proceed))),
        ["finish:completed"]
    );
}

#[test]
fn a_retry_runs_the_node_whose_agent_failed_again_and_the_run_goes_on() {
    let g = graph(CHAIN);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    m.on_input(done("a"));
    assert_eq!(runs(&m.on_input(agent_failed("b"))), ["finish:failed"]);
    m.mark_finished();
    assert!(m.can_retry());
    // Its next visit, so the failed attempt's logs stay apart.
    assert_eq!(runs(&m.on_input(Input::Retry)), ["b#2"]);
    assert!(!m.can_retry());
    assert_eq!(runs(&m.on_input(done("b"))), ["finish:completed"]);
}

#[test]
fn only_an_agent_failure_that_ended_the_run_can_be_retried() {
    let g = graph(CHAIN);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    m.on_input(failed("a"));
    m.mark_finished();
    assert!(!m.can_retry(), "a failed check is not retried");
    assert!(m.on_input(Input::Retry).is_empty());
    assert!(m.state.finished);

    let rescue = graph(
        "node start start\nnode a fn run=\"a\"\nnode rescue fn run=\"r\"\nnode end end\n\
         edge start -> a\nedge a -> end\nedge a -> rescue fail\nedge rescue -> end\n",
    );
    let mut m = Machine::new(&rescue);
    m.on_input(Input::Start);
    assert_eq!(runs(&m.on_input(agent_failed("a"))), ["rescue#1"]);
    assert!(
        !m.can_retry(),
        "the graph handled the failure on its fail edge"
    );
}

#[test]
fn a_retry_in_a_fork_runs_again_what_the_failure_cancelled() {
    let g = graph(FORK);
    let mut m = Machine::new(&g);
    m.on_input(Input::Start);
    m.on_input(done("x"));
    assert_eq!(runs(&m.on_input(agent_failed("y"))), ["finish:failed"]);
    m.mark_finished();
    let mut again = runs(&m.on_input(Input::Retry));
    again.sort();
    assert_eq!(again, ["y#2", "z#1"], "z was cancelled, x had finished");
    m.on_input(done("y"));
    assert_eq!(runs(&m.on_input(done("z"))), ["after#1"]);
}
