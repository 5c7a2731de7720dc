//! Hover: what a name is — a node's kind, role, reads/writes, checks and doc; a knob's
//! type, default and bounds; a role's prompt; an import's file.

use factory_compiler::db::{Db, import_key};
use factory_compiler::ide::{Bounds, Decl, DeclKind, GateBy, NodeDecl, Param, Value};
use factory_compiler::resolve::{self, Symbol, scope};
use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use super::{DocView, Result};
use crate::world::World;

pub fn hover(world: &World, params: HoverParams) -> Result<Option<Hover>> {
    let p = params.text_document_position_params;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let offset = doc.offset(p.position);
    let Some(hit) = resolve::symbol_at(&world.db, doc.file, offset) else {
        return Ok(None);
    };
    let Some(markdown) = describe(world, &doc, &hit.symbol) else {
        return Ok(None);
    };
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(doc.range(&hit.span)),
    }))
}

/// The markdown shown for a symbol.
pub fn describe(world: &World, doc: &DocView<'_>, symbol: &Symbol) -> Option<String> {
    match symbol {
        Symbol::Node { scope, name } => {
            let body = scope::body(doc.parsed, scope)?;
            if let Some(n) = body.nodes.iter().find(|n| &n.name == name) {
                return Some(node(n));
            }
            if let Some(u) = body.uses.iter().find(|u| &u.alias == name) {
                let args: Vec<String> = u
                    .args
                    .iter()
                    .map(|a| format!("{}: {}", a.name, arg(&a.value)))
                    .collect();
                let mut s = format!(
                    "**use** `{}` — instance of subgraph `{}`\n\n```fwf\nuse {}({}) as {}\n```",
                    u.alias,
                    u.subgraph,
                    u.subgraph,
                    args.join(", "),
                    u.alias
                );
                push_doc(&mut s, &u.doc);
                return Some(s);
            }
            let p = body.parallels.iter().find(|p| &p.name == name)?;
            let args: Vec<String> = p
                .args
                .iter()
                .map(|a| format!("{}: {}", a.name, arg(&a.value)))
                .collect();
            let mut s = format!(
                "**parallel** `{}` ({}){}",
                p.name,
                args.join(", "),
                p.isolation
                    .as_ref()
                    .map(|i| format!(" in {i}"))
                    .unwrap_or_default()
            );
            push_doc(&mut s, &p.doc);
            Some(s)
        }
        Symbol::Knob { workflow, name } => {
            let d = doc.parsed.ast.decls.iter().find(|d| &d.name == workflow)?;
            let k = d.body.knobs.iter().find(|k| &k.name == name)?;
            let mut s = format!(
                "**knob** `{}`\n\n- type: `{}`\n- default: `{}`",
                k.name,
                k.ty.as_str(),
                k.default
            );
            if let Some(b) = &k.bounds {
                s.push_str(&format!("\n- bounds: `{}`", bounds(b)));
            }
            if k.expandable {
                s.push_str("\n- expandable: the outer loop may try values outside the list");
            }
            push_doc(&mut s, &k.doc);
            Some(s)
        }
        Symbol::Param { decl, name } => {
            // A `use` argument names a parameter of a subgraph perhaps declared elsewhere.
            let home = resolve::home(&world.db, doc.file, decl)?;
            let d = find_decl(world, home, decl)?;
            let p = d.params.iter().find(|p| &p.name == name)?;
            Some(format!(
                "**parameter** of subgraph `{}`\n\n```fwf\n{}\n```",
                d.name,
                param(p)
            ))
        }
        Symbol::Decl { name } => {
            let d = doc.parsed.ast.decls.iter().find(|d| &d.name == name)?;
            Some(decl(d))
        }
        Symbol::Subgraph { name } => {
            let Some(home) = resolve::home(&world.db, doc.file, name) else {
                return Some(format!(
                    "subgraph `{name}` is not declared here or in an imported file"
                ));
            };
            let d = find_decl(world, home, name)?;
            if home == doc.file {
                return Some(decl(d));
            }
            Some(format!("{}\n\nfrom `{}`", decl(d), home.key(&world.db)))
        }
        Symbol::Import { index } => {
            let imp = doc.parsed.ast.imports.get(*index)?;
            let key = import_key(&doc.key, &imp.path);
            let exists = world.db.file(&key).exists(&world.db);
            Some(if exists {
                format!("**import** `{}`\n\nfile: `{key}`", imp.path)
            } else {
                format!(
                    "**import** `{}`\n\nnot found (looked for `{key}`)",
                    imp.path
                )
            })
        }
        Symbol::Role { name } => Some(role(&doc.key, name)),
        Symbol::Artifact { decl, name } => {
            let home = resolve::home(&world.db, doc.file, decl)?;
            let d = find_decl(world, home, decl)?;
            if home == doc.file {
                return Some(artifact(&d.body, name));
            }
            // An instance's artifact (`study.combined`): the subgraph is imported.
            Some(format!(
                "{}\n\nof subgraph `{decl}`, from `{}`",
                artifact(&d.body, name),
                home.key(&world.db)
            ))
        }
        Symbol::Attribute { key } => {
            let (_, text) = ATTRIBUTES.iter().find(|(k, _)| k == key)?;
            Some(format!("**attribute** `{key}`\n\n{text}"))
        }
    }
}

/// Declaration `name` of `file`.
fn find_decl<'w>(
    world: &'w World,
    file: factory_compiler::db::SourceFile,
    name: &str,
) -> Option<&'w Decl> {
    resolve::tree(&world.db, file)
        .ast
        .decls
        .iter()
        .find(|d| d.name == name)
}

/// What each attribute means (docs/language.md, "Attributes").
const ATTRIBUTES: &[(&str, &str)] = &[
    (
        "role",
        "The role whose prompt the agent runs: a built-in role, `prompts/<role>.md` or `.factory/agents/<role>.md`.",
    ),
    (
        "prompt",
        "A prompt template given to the model, instead of the role's prompt file.",
    ),
    (
        "task",
        "The task template given to the role, e.g. `\"Implement experiment {{exp_id}}\"`.",
    ),
    (
        "run",
        "The shell command a `fn` or `study` runs; a non-zero exit is a failure.",
    ),
    ("question", "The question a gate's evaluator answers."),
    (
        "reads",
        "Artifact names and/or quoted paths the node reads.",
    ),
    (
        "writes",
        "Paths the node writes, optionally named: `writes: plan = \".factory/plan.md\"`.",
    ),
    (
        "check",
        "`exists`, `min_size(BYTES)`, `contains(\"TEXT\")`, checked on the writes after the node runs; a failed check is a failure.",
    ),
    (
        "timeout",
        "Seconds (a whole number ≥ 1, or an int knob or parameter); running over is a failure.",
    ),
    ("model", "The model to use (a name or a string template)."),
    ("runner", "The agent CLI that runs the node."),
    (
        "placement",
        "Where the node's processes run: `host` (the user's rights) or `sandbox` (only its workspace and declared writes are writable; see docs/sandbox.md).",
    ),
    ("async", "`true`: the node does not block its successors."),
    (
        "outcomes",
        "The verdicts a gate can emit (`proceed`, `reloop`, `halt`); each needs an edge.",
    ),
];

/// Where a named artifact comes from: an input, or the node that writes it.
fn artifact(body: &factory_compiler::ide::Body, name: &str) -> String {
    if let Some(i) = body.inputs.iter().find(|i| i.name == name) {
        return format!("**artifact** `{name}` — input\n\n- path: `{}`", i.path);
    }
    let mut writers = Vec::new();
    collect_writers(body, name, "", &mut writers);
    match writers.as_slice() {
        [] => format!("**artifact** `{name}`"),
        [(node, path), ..] => {
            format!("**artifact** `{name}`\n\n- path: `{path}`\n- written by: `{node}`")
        }
    }
}

fn collect_writers(
    body: &factory_compiler::ide::Body,
    name: &str,
    prefix: &str,
    out: &mut Vec<(String, String)>,
) {
    for n in &body.nodes {
        for a in n.attrs.iter().filter(|a| a.key == "writes") {
            for v in &a.values {
                if let Value::Named { name: nm, path } = v
                    && nm == name
                {
                    out.push((format!("{prefix}{}", n.name), path.clone()));
                }
            }
        }
    }
    for p in &body.parallels {
        collect_writers(&p.body, name, &format!("{prefix}{}.", p.name), out);
    }
}

fn node(n: &NodeDecl) -> String {
    let mut s = format!("**{}** `{}`", n.kind, n.name);
    let role = n
        .attrs
        .iter()
        .find(|a| a.key == "role")
        .and_then(|a| a.values.first())
        .map(value)
        .or_else(|| match &n.gate_by {
            Some(GateBy::Agent(r)) => Some(r.clone()),
            _ => None,
        })
        .or_else(|| (n.kind == factory_compiler::ir::NodeKind::Agent).then(|| n.name.clone()));
    if let Some(r) = role {
        s.push_str(&format!("\n\n- role: `{r}`"));
    }
    match &n.gate_by {
        Some(GateBy::Fn(cmd)) => s.push_str(&format!("\n- decided by: `fn(\"{cmd}\")`")),
        Some(GateBy::User) => s.push_str("\n- decided by: the user"),
        _ => {}
    }
    if let Some(q) = &n.inline {
        s.push_str(&format!(
            "\n- {}: {q}",
            if n.kind == factory_compiler::ir::NodeKind::Gate {
                "question"
            } else {
                "run"
            }
        ));
    }
    for key in [
        "question",
        "prompt",
        "task",
        "run",
        "model",
        "runner",
        "placement",
        "reads",
        "writes",
        "check",
        "timeout",
        "outcomes",
        "async",
    ] {
        if let Some(a) = n.attrs.iter().find(|a| a.key == key) {
            let vals: Vec<String> = a.values.iter().map(value).collect();
            s.push_str(&format!("\n- {key}: `{}`", vals.join(", ")));
        }
    }
    push_doc(&mut s, &n.doc);
    s
}

fn decl(d: &Decl) -> String {
    let mut s = match d.kind {
        DeclKind::Workflow { headless } => format!(
            "**{}workflow** `{}`",
            if headless { "headless " } else { "" },
            d.name
        ),
        DeclKind::Subgraph => {
            let ps: Vec<String> = d.params.iter().map(param).collect();
            format!(
                "**subgraph** `{}`\n\n```fwf\nsubgraph {}({})\n```",
                d.name,
                d.name,
                ps.join(", ")
            )
        }
    };
    push_doc(&mut s, &d.doc);
    s
}

fn push_doc(s: &mut String, doc: &str) {
    if !doc.trim().is_empty() {
        s.push_str("\n\n---\n\n");
        s.push_str(doc.trim());
    }
}

fn param(p: &Param) -> String {
    let mut s = format!("{}: {}", p.name, p.ty.as_str());
    if let Some(d) = &p.default {
        s.push_str(&format!(" = {d}"));
    }
    if let Some(b) = &p.bounds {
        s.push_str(&format!(" in {}", bounds(b)));
    }
    s
}

fn bounds(b: &Bounds) -> String {
    match b {
        Bounds::Range(lo, hi) => format!("{lo}..={hi}"),
        Bounds::Choices(c) => format!(
            "[{}]",
            c.iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn arg(v: &factory_compiler::ide::ArgValue) -> String {
    match v {
        factory_compiler::ide::ArgValue::Literal(l) => l.to_string(),
        factory_compiler::ide::ArgValue::Name(n) => n.clone(),
    }
}

pub fn value(v: &Value) -> String {
    match v {
        Value::Literal(l) => l.to_string(),
        Value::Name(n) => n.clone(),
        Value::Named { name, path } => format!("{name} = \"{path}\""),
        Value::Call { name, args } => format!(
            "{name}({})",
            args.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn role(key: &str, name: &str) -> String {
    let (text, from) = match crate::lookup::prompt_path(key, name) {
        Some(p) => (
            std::fs::read_to_string(&p).ok(),
            format!("`{}`", p.display()),
        ),
        None => (
            factory_compiler::builtin::prompt(name).map(str::to_string),
            "built in".to_string(),
        ),
    };
    match text {
        Some(t) => {
            let head: Vec<&str> = t.lines().take(8).collect();
            format!(
                "**role** `{name}` — prompt {from}\n\n---\n\n{}",
                head.join("\n")
            )
        }
        None if factory_compiler::host::BUILTIN_ROLES.contains(&name) => {
            format!("**role** `{name}` — built-in role")
        }
        None => format!("**role** `{name}` has no prompt: create `prompts/{name}.md`"),
    }
}
