//! The executor's own costs, without processes: the pure machine walking a chain, and
//! one checkpoint snapshot of a small and a large state. Figures in docs/performance.md.

use criterion::{Criterion, criterion_group, criterion_main};
use factory_compiler::ir::parse_text;
use factory_runtime::exec::checkpoint::Checkpoint;
use factory_runtime::exec::graph::Graph;
use factory_runtime::exec::machine::{Command, Input, Machine, NodeResult};
use factory_runtime::project::layout::FactoryPaths;

fn chain(n: usize) -> Graph {
    let mut text = String::from("fwir 1\nworkflow chain\nnode end end\nnode start start\n");
    for i in 0..n {
        text.push_str(&format!("node n{i:06} fn run=\"true\"\n"));
    }
    text.push_str("edge start -> n000000\n");
    for i in 0..n - 1 {
        text.push_str(&format!("edge n{i:06} -> n{:06}\n", i + 1));
    }
    text.push_str(&format!("edge n{:06} -> end\n", n - 1));
    let (ir, _) = parse_text(&text).expect("valid IR");
    Graph::new(ir)
}

/// Walks the whole chain, as the driver would with every node succeeding.
fn walk(graph: &Graph) -> Machine<'_> {
    let mut m = Machine::new(graph);
    let mut next = m.on_input(Input::Start);
    while let Some(Command::Run { node, .. }) = next.first().cloned() {
        next = m.on_input(Input::Finished {
            node,
            result: NodeResult::Done,
            vars: Default::default(),
        });
    }
    m
}

fn checkpoint(graph: &Graph, visited: usize) -> Checkpoint {
    let mut m = Machine::new(graph);
    let mut next = m.on_input(Input::Start);
    for _ in 0..visited {
        let Some(Command::Run { node, .. }) = next.first().cloned() else {
            break;
        };
        next = m.on_input(Input::Finished {
            node,
            result: NodeResult::Done,
            vars: Default::default(),
        });
    }
    Checkpoint {
        run_id: "bench".into(),
        workflow: "chain".into(),
        ir_hash: String::new(),
        settings: Default::default(),
        started_at: String::new(),
        saved_at: String::new(),
        respawns: 0,
        parent_run: None,
        branch_exp: None,
        state: m.state,
    }
}

fn machine(c: &mut Criterion) {
    let g = chain(10_000);
    c.bench_function("machine: walk a 10,000-node chain", |b| b.iter(|| walk(&g)));
}

fn snapshots(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = FactoryPaths::new(dir.path());
    let g = chain(10_000);
    for visited in [40, 10_000] {
        let mut cp = checkpoint(&g, visited);
        c.bench_function(
            &format!("checkpoint: save a state of {visited} visited nodes"),
            |b| b.iter(|| cp.save(&paths).expect("saved")),
        );
    }
}

criterion_group!(benches, machine, snapshots);
criterion_main!(benches);
