//! Template strings (`{{exp_id}}`, `{{knobs.qa_loops}}`): every variable must be one the
//! runtime provides or a knob of the workflow.

use super::{Finding, IrRef};
use crate::diagnostic::{Code, Subject};
use crate::ir::{Knob, Node};

pub use crate::ir::conventions::{RUNTIME_VARS, template_vars};

/// The template variables of node `n` in a workflow with `knobs`.
pub(super) fn check(n: &Node, knobs: &[Knob], out: &mut Vec<Finding>) {
    let a = &n.attrs;
    let fields = [
        ("task", &a.task),
        ("run", &a.run),
        ("question", &a.question),
        ("prompt", &a.prompt),
        ("model", &a.model),
    ];
    for (key, text) in fields {
        let Some(text) = text else { continue };
        for var in template_vars(text) {
            if known(knobs, var) {
                continue;
            }
            out.push(
                Finding::new(
                    Code::UnknownTemplateVar,
                    IrRef::Node(n.id.clone()),
                    format!(
                        "`{key}` of `{}` uses `{{{{{var}}}}}`, which is not a known variable",
                        n.id
                    ),
                )
                .about(Subject::Variable(var.to_string()))
                .label("unknown template variable")
                .attr(key)
                .help(format!(
                    "use one of {}, or `knobs.<name>` for a knob of this workflow",
                    RUNTIME_VARS.join(", ")
                )),
            );
        }
    }
}

fn known(knobs: &[Knob], var: &str) -> bool {
    match var.strip_prefix("knobs.") {
        Some(knob) => knobs.iter().any(|k| k.name == knob),
        None => RUNTIME_VARS.contains(&var),
    }
}
