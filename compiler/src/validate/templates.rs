//! Template strings (`{{exp_id}}`, `{{knobs.qa_loops}}`): every variable must be one the
//! runtime provides or a knob of the workflow.

use super::{Finding, IrRef};
use crate::diagnostic::Code;
use crate::ir::Ir;

/// Variables the runtime fills in when it runs a node.
pub const RUNTIME_VARS: &[&str] = &[
    "project_path",
    "exp_id",
    "goal",
    "run_id",
    "iteration",
    "hypothesis",
    "branch",
    "worktree",
    "node",
    "verdict",
    "score_before",
    "score_after",
];

/// The variable names used in `text`, in order, trimmed (`{{ x }}` is `x`).
pub fn template_vars(text: &str) -> Vec<&str> {
    let mut vars = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        vars.push(after[..close].trim());
        rest = &after[close + 2..];
    }
    vars
}

pub(super) fn check(ir: &Ir, out: &mut Vec<Finding>) {
    for n in &ir.nodes {
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
                if known(ir, var) {
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
}

fn known(ir: &Ir, var: &str) -> bool {
    match var.strip_prefix("knobs.") {
        Some(knob) => ir.knob(knob).is_some(),
        None => RUNTIME_VARS.contains(&var),
    }
}
