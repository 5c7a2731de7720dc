//! An IR written back as a `.fwf` file that compiles to the same IR, byte for byte in
//! its text form (`factory compile --emit fwf`, and the editable copy `factory evolve
//! promote` writes beside a promoted `.fwir`).
//!
//! The file is flat: no `import`, no `use`. Inlined ids keep their dots as declared
//! names (`agent experiment.trial.builder`), every attribute is written out, and each
//! `parallel` node becomes a `parallel` block around its body (see [`layout`]). Some
//! IRs have no such file (a parallel body with two ways out, a bound on a non-reloop
//! edge, a float written `1e21`): [`to_fwf`] then says why instead of writing a file
//! that means something else. Every rendering is compiled again and compared with the
//! IR before it is returned, so a file it returns is faithful by construction.

mod flow;
mod layout;
mod words;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::ir::{END, Ir, NodeKind, START, to_text};
use layout::{Body, layout};

const INDENT: &str = "    ";

/// Why an IR has no faithful `.fwf` rendering.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("workflow `{workflow}` cannot be written as .fwf: {why}")]
pub struct FwfError {
    pub workflow: String,
    pub why: String,
}

/// Renders `ir` as a `.fwf` file that compiles back to `ir`.
pub fn to_fwf(ir: &Ir) -> Result<String, FwfError> {
    let fail = |why: String| FwfError {
        workflow: ir.workflow.name.clone(),
        why,
    };
    // Lookups by id need the canonical order; an IR built by hand may not have it.
    let mut ir = ir.clone();
    ir.canonicalize();
    let ir = &ir;
    let text = render(ir).map_err(fail)?;
    let key = format!("{}.fwf", ir.workflow.name);
    match crate::driver::compile_text(&key, &text) {
        Ok(back) => {
            let (want, got) = (to_text(ir), to_text(&back));
            if let Some((w, g)) = want.lines().zip(got.lines()).find(|(w, g)| w != g) {
                return Err(fail(format!(
                    "its rendering compiles to a different IR (`{g}` where the IR has `{w}`)"
                )));
            }
            if want != got {
                return Err(fail(format!(
                    "its rendering compiles to a different IR ({} lines where the IR has {})",
                    got.lines().count(),
                    want.lines().count()
                )));
            }
            Ok(text)
        }
        Err(diags) => {
            let first = diags
                .iter()
                .find(|d| d.diagnostic.is_error())
                .map_or_else(String::new, |d| d.diagnostic.message.clone());
            Err(fail(format!("its rendering does not compile ({first})")))
        }
    }
}

fn render(ir: &Ir) -> Result<String, String> {
    let meta = &ir.workflow;
    if !words::is_ident(&meta.name) {
        return Err(format!(
            "its name is not a .fwf name (letters, digits and `_`); rename it, e.g. `{}`",
            meta.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ));
    }
    if ir.start != START {
        return Err(format!("its entry node is `{}`, not `{START}`", ir.start));
    }
    for (id, kind) in [(START, NodeKind::Start), (END, NodeKind::End)] {
        if ir.node(id).map(|n| (n.kind, n.attrs.is_empty())) != Some((kind, true)) {
            return Err(format!("it has no plain `{id}` node of kind {kind}"));
        }
    }
    if let Some(n) = ir
        .nodes
        .iter()
        .find(|n| matches!(n.kind, NodeKind::Start | NodeKind::End) && n.id != START && n.id != END)
    {
        return Err(format!("node `{}` is a second {} node", n.id, n.kind));
    }
    let summary = meta
        .doc
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .replace('\n', " ");
    if meta.description != summary {
        return Err(
            "its description is not the first paragraph of its doc, which is where .fwf \
             takes it from"
                .into(),
        );
    }
    let bodies = layout(ir)?;
    let mut out = String::new();
    if !meta.doc.is_empty() {
        words::doc(&mut out, "", "//!", "the workflow", &meta.doc)?;
    }
    let headless = if meta.headless { "headless " } else { "" };
    let _ = writeln!(out, "{headless}workflow {} {{", meta.name);
    let mut gap = false;
    for input in &meta.inputs {
        let name = input
            .name
            .as_deref()
            .filter(|n| words::is_ident(n))
            .ok_or_else(|| {
                format!(
                    "its input {} has no name that is a plain word; .fwf declares inputs as \
                     `input NAME = \"path\"`",
                    input.path
                )
            })?;
        let _ = writeln!(out, "{INDENT}input {name} = {}", words::quote(&input.path));
        gap = true;
    }
    let mut knobs: Vec<_> = ir.knobs.iter().collect();
    knobs.sort_by(|a, b| a.name.cmp(&b.name));
    for (i, k) in knobs.into_iter().enumerate() {
        if i == 0 && gap {
            out.push('\n');
        }
        write::knob(&mut out, k)?;
        gap = true;
    }
    let children: BTreeMap<&str, usize> = bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((b.parallel?.id.as_str(), i)))
        .collect();
    write_body(&mut out, ir, &bodies, &children, 0, INDENT, gap)?;
    out.push_str("}\n");
    Ok(out)
}

/// Writes body `b`'s declarations and its flow at `indent`.
fn write_body(
    out: &mut String,
    ir: &Ir,
    bodies: &[Body<'_>],
    children: &BTreeMap<&str, usize>,
    b: usize,
    indent: &str,
    mut gap: bool,
) -> Result<(), String> {
    let body = &bodies[b];
    let order = order(body);
    let names = write::artifacts(ir, body, &order);
    let deeper = format!("{indent}{INDENT}");
    for n in &order {
        if gap {
            out.push('\n');
        }
        gap = true;
        if n.kind != NodeKind::Parallel {
            write::node(out, indent, body, n, &names)?;
            continue;
        }
        if let Some(d) = &n.attrs.doc {
            words::doc(out, indent, "///", &format!("parallel node `{}`", n.id), d)?;
        }
        let _ = writeln!(out, "{indent}{}", write::parallel_head(ir, body, n)?);
        let child = children.get(n.id.as_str()).copied().unwrap_or_default();
        write_body(out, ir, bodies, children, child, &deeper, false)?;
        let _ = writeln!(out, "{indent}}}");
    }
    if gap {
        out.push('\n');
    }
    let local: Vec<&str> = order.iter().map(|n| body.local(&n.id)).collect();
    let _ = writeln!(out, "{indent}flow {{");
    for line in flow::flow(&body.stmts, &local) {
        let _ = writeln!(out, "{deeper}{line}");
    }
    let _ = writeln!(out, "{indent}}}");
    Ok(())
}

/// The body's nodes in the order a reader meets them: reverse postorder of a depth-first
/// walk from `start` along the flow (plain edges, then proceed, reloop, halt, fail), so
/// a node comes before what it leads to (but for reloops) and a fork's branches before
/// their join; the rest by id.
fn order<'a>(body: &Body<'a>) -> Vec<&'a crate::ir::Node> {
    let by_name: BTreeMap<&str, &crate::ir::Node> =
        body.nodes.iter().map(|n| (body.local(&n.id), *n)).collect();
    let next = |name: &str| -> Vec<&str> {
        // Statements sort by source, then label; popped from the back, the first way
        // is walked last and so comes first once the postorder is reversed.
        body.stmts
            .iter()
            .filter(|s| s.from == name)
            .map(|s| s.to.as_str())
            .collect()
    };
    let mut seen: BTreeSet<&str> = BTreeSet::from([START]);
    let mut post: Vec<&str> = Vec::new();
    let mut stack: Vec<(&str, Vec<&str>)> = vec![(START, next(START))];
    while let Some((name, ways)) = stack.last_mut() {
        match ways.pop() {
            Some(to) if seen.insert(to) => stack.push((to, next(to))),
            Some(_) => {}
            None => {
                post.push(name);
                stack.pop();
            }
        }
    }
    let mut out: Vec<&crate::ir::Node> = post
        .iter()
        .rev()
        .filter_map(|n| by_name.get(n).copied())
        .collect();
    for (name, n) in by_name {
        if !seen.contains(name) {
            out.push(n);
        }
    }
    out
}
