//! Generated workflows for benches and tests (cargo feature `testgen`).
//!
//! [`layered_workflow`] builds a valid `.fwf` file of any size out of repeated layers,
//! so the cost of checking can be measured against the number of nodes.

use std::fmt::Write;

/// Nodes in one layer: a head agent, a fork, three workers, a join and a gate.
pub const NODES_PER_LAYER: usize = 7;

/// A valid workflow of about `nodes` nodes (at least one layer, plus `start`/`end`).
///
/// Layer `i` is `head -> fork -> w1, w2, w3 -> join -> gate`: the head reads the
/// previous layer's outputs and writes a named plan, each worker reads the plan and
/// writes its own output (so branches never write the same artifact), and the gate
/// reads the three outputs and decides: `proceed` to the next layer, a bounded
/// `reloop` back to the head (alternately the `loops` knob and a literal bound),
/// `halt -> end`. Every node carries checks, a timeout and a template, so each
/// validation rule has work to do. The output checks with zero diagnostics.
pub fn layered_workflow(nodes: usize) -> String {
    let layers = nodes.div_ceil(NODES_PER_LAYER).max(1);
    let mut s = String::with_capacity(layers * 1200);
    s.push_str("//! A generated workflow: repeated fork/join layers closed by a gate.\n");
    s.push_str("workflow layered {\n");
    s.push_str("    knob loops: int = 2 in 1..=5\n");
    s.push_str("    input goal = \".factory/goal.md\"\n\n");
    for i in 0..layers {
        layer(&mut s, i);
    }
    s.push_str("    flow {\n");
    for i in 0..layers {
        let from = if i == 0 {
            "start".to_string()
        } else {
            format!("l{}_gate.proceed", i - 1)
        };
        let _ = writeln!(
            s,
            "        {from} -> l{i}_head -> l{i}_fork -> l{i}_w1, l{i}_w2, l{i}_w3 -> l{i}_join -> l{i}_gate"
        );
        let bound = if i % 2 == 0 { "loops" } else { "2" };
        let _ = writeln!(s, "        l{i}_gate.reloop(max {bound}) -> l{i}_head");
        let _ = writeln!(s, "        l{i}_gate.halt -> end");
    }
    let _ = writeln!(s, "        l{}_gate.proceed -> end", layers - 1);
    s.push_str("    }\n}\n");
    s
}

fn layer(s: &mut String, i: usize) {
    let reads = if i == 0 {
        "goal".to_string()
    } else {
        let p = i - 1;
        format!("l{p}_out1, l{p}_out2, l{p}_out3")
    };
    let _ = write!(
        s,
        r###"    /// Plans layer {i}.
    agent l{i}_head {{
        role: strategist
        reads: {reads}
        writes: l{i}_plan = ".factory/layers/{i}/plan.md"
        check: exists, min_size(200), contains("## Plan")
        timeout: 600
        task: "Plan layer {i} of {{{{exp_id}}}}"
    }}
    fork l{i}_fork
"###
    );
    for w in 1..=3 {
        let _ = write!(
            s,
            r#"    agent l{i}_w{w} {{
        role: builder
        reads: l{i}_plan
        writes: l{i}_out{w} = ".factory/layers/{i}/out{w}.md"
        check: exists
        timeout: {timeout}
    }}
"#,
            timeout = 300 + 60 * w
        );
    }
    let _ = write!(
        s,
        r#"    join l{i}_join
    gate l{i}_gate by agent(ceo) "Is layer {i} done?" {{
        reads: l{i}_out1, l{i}_out2, l{i}_out3
        timeout: 120
    }}

"#
    );
}

/// The compiler's phases one at a time, for the benches that measure each alone (the
/// rooms they live in are private to the compiler).
pub mod phases {
    use std::collections::BTreeSet;

    use crate::ir::Ir;
    use crate::lower::{self, Lowered, NodePart, Subgraphs};
    use crate::syntax::{self, Ast, Parsed};
    use crate::validate::{self, Finding};

    pub fn parse(text: &str) -> Parsed {
        syntax::parse(text)
    }

    /// Lowering as the database does it on a cold check, without the database: the
    /// structure, then each of its slots' nodes on its own, then the whole IR. The
    /// first declaration of `ast`, keyed `key`, with no subgraphs (`None`: `ast` has no
    /// declaration).
    pub fn lower(key: &str, ast: &Ast, roles: Option<&BTreeSet<String>>) -> Option<Lowered> {
        let subgraphs = Subgraphs::new();
        let input = lower::structure_input(ast);
        let decl = input.decls.first()?;
        let structure = lower::lower_structure(key, decl, 0, &subgraphs);
        let parts: Vec<(usize, NodePart)> = structure
            .slots
            .iter()
            .filter_map(|slot| {
                let decl = slot.path.find(ast)?;
                Some((slot.index, lower::lower_node(decl, &slot.scope, roles)))
            })
            .collect();
        let parts: Vec<(usize, &NodePart)> = parts.iter().map(|(i, p)| (*i, p)).collect();
        Some(lower::assemble(&structure, &parts))
    }

    /// How many items the outline finds in `text` (the scan `db::outline` runs).
    pub fn outline(text: &str) -> usize {
        crate::syntax::outline(text).len()
    }

    /// Every rule on `ir`, with the roles that have prompts.
    pub fn validate(ir: &Ir, roles: Option<BTreeSet<String>>) -> Vec<Finding> {
        validate::validate(ir, &validate::Context { roles })
    }
}
