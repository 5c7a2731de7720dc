//! Rules about a workflow as a whole that read its nodes' attributes, on small facts
//! (so an edit elsewhere in a node does not run them again).

use super::{Finding, IrRef, NodeFact};
use crate::diagnostic::{Code, Subject};

/// A precheck of an experiment proves QA ran (Sacred Rule 9): without an agent of each
/// of the three QA roles among the workflow's nodes, every experiment it judges is
/// reverted.
pub(super) fn precheck_qa(nodes: &[NodeFact], out: &mut Vec<Finding>) {
    use crate::ir::conventions::REQUIRED_QA_ROLES;
    let Some(gate) = nodes.iter().find(|n| n.prechecks) else {
        return;
    };
    let missing: Vec<&str> = REQUIRED_QA_ROLES
        .iter()
        .copied()
        .filter(|role| !nodes.iter().any(|n| n.role.as_deref() == Some(role)))
        .collect();
    if missing.is_empty() {
        return;
    }
    let names: Vec<String> = missing.iter().map(|r| format!("`{r}`")).collect();
    out.push(
        Finding::new(
            Code::PrecheckWithoutQa,
            IrRef::Node(gate.id.clone()),
            format!(
                "`{}` prechecks the experiment, but no node runs the {} role{}: its `qa_execution` check fails every experiment",
                gate.id,
                names.join(", "),
                if missing.len() == 1 { "" } else { "s" }
            ),
        )
        .about(Subject::Node(gate.id.clone()))
        .label("requires all three QA roles before it")
        .help("run the QA roles before the precheck: `use deep_qa(fix: builder, on_halt: ..., loops: 3) as qa` from `import std/deep_qa`, or agents with roles health_checker, code_reviewer and adversarial_tester"),
    );
}
