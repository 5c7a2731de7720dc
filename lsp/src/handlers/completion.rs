//! Completion by context: node ids inside `flow`, verdict labels after `gate.`, roles
//! after `role:` or `agent(`, attribute keys inside a node's braces, knob names after
//! `{{knobs.`, and declaration keywords elsewhere.

use factory_compiler::ide::ALLOWED_ATTRS;
use factory_compiler::ir::NodeKind;
use lsp_types::{CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse};

use super::{DocView, Result};
use crate::world::World;
use factory_compiler::ide::vocabulary;
use factory_compiler::ide::{TokenKind, line_start, significant};
use factory_compiler::lexical::is_ident;
use factory_compiler::resolve::scope::{body, decl_at};

pub fn completion(world: &World, params: CompletionParams) -> Result<Option<CompletionResponse>> {
    let p = params.text_document_position;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let offset = doc.offset(p.position);
    let items = complete(world, &doc, offset);
    Ok(Some(CompletionResponse::Array(items)))
}

pub fn complete(world: &World, doc: &DocView<'_>, offset: usize) -> Vec<CompletionItem> {
    let text = doc.text;
    let line = &text[line_start(text, offset)..offset];
    let word_start = line
        .trim_end_matches(factory_compiler::lexical::is_ident_char)
        .len();
    let before = line[..word_start].trim_end();
    let decl = decl_at(doc.parsed, offset);

    if let Some(partial) = line.trim_start().strip_prefix("import ") {
        return items(
            import_paths(&doc.key, partial.trim()),
            CompletionItemKind::FILE,
            "import",
        );
    }
    // The cursor is in a placeholder not yet closed.
    if let (_, Some(open)) = factory_compiler::ir::conventions::placeholders(line) {
        let inner = &line[open + 2..];
        if inner.trim_start().starts_with("knobs.") {
            let knobs = decl
                .map(|d| d.body.knobs.iter().map(|k| k.name.clone()).collect())
                .unwrap_or_default();
            return items(knobs, CompletionItemKind::CONSTANT, "knob");
        }
        // The runtime's variables, as the compiler's template rule knows them.
        let mut vars: Vec<String> = factory_compiler::ide::RUNTIME_VARS
            .iter()
            .map(|s| s.to_string())
            .chain(["knobs.".to_string()])
            .collect();
        if let Some(d) = decl {
            vars.extend(d.params.iter().map(|p| p.name.clone()));
        }
        return items(vars, CompletionItemKind::VARIABLE, "template variable");
    }
    if before.ends_with("role:") || before.ends_with("agent(") {
        return items(
            world.roles().iter().cloned().collect(),
            CompletionItemKind::CLASS,
            "role",
        );
    }
    let (block_head, scope) = enclosing_block(doc, offset);
    let in_flow = block_head.trim_end().ends_with("flow");
    if in_flow {
        let scope = scope.unwrap_or_default();
        let last = before
            .rsplit(|c: char| c.is_whitespace() || c == ',' || c == '>')
            .next()
            .unwrap_or(before);
        if let Some(gate) = last.strip_suffix('.').filter(|g| is_ident(g)) {
            let is_gate = body(doc.parsed, &scope)
                .and_then(|b| b.nodes.iter().find(|n| n.name == gate))
                .is_some_and(|n| n.kind == NodeKind::Gate);
            let labels: &[&str] = if is_gate {
                &["proceed", "reloop", "halt", "fail"]
            } else {
                &["fail"]
            };
            return items(
                labels.iter().map(|s| s.to_string()).collect(),
                CompletionItemKind::ENUM_MEMBER,
                "verdict",
            );
        }
        let mut names = vec!["start".to_string(), "end".to_string()];
        if let Some(b) = body(doc.parsed, &scope) {
            names.extend(b.nodes.iter().map(|n| n.name.clone()));
            names.extend(b.uses.iter().map(|u| u.alias.clone()));
            names.extend(b.parallels.iter().map(|p| p.name.clone()));
        }
        return items(names, CompletionItemKind::VARIABLE, "node");
    }
    // Inside a node's attribute block: the keys its kind accepts.
    let head_words: Vec<&str> = block_head.split_whitespace().collect();
    if let Some(kind) = head_words.iter().rev().find_map(|w| node_kind(w))
        && !before.ends_with(':')
    {
        let keys = ALLOWED_ATTRS
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, keys)| *keys)
            .unwrap_or(&[]);
        return keys
            .iter()
            .map(|k| CompletionItem {
                label: k.to_string(),
                kind: Some(CompletionItemKind::PROPERTY),
                detail: Some(format!("{kind} attribute")),
                insert_text: Some(format!("{k}: ")),
                ..Default::default()
            })
            .collect();
    }
    if before.is_empty() {
        let kws: Vec<String> = if decl.is_some() && !block_head.is_empty() {
            vocabulary::body_starts().map(str::to_string).collect()
        } else {
            vocabulary::FILE_KEYWORDS
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        return items(kws, CompletionItemKind::KEYWORD, "keyword");
    }
    Vec::new()
}

/// Importable paths: the standard library's files and `.fwf` files near this one.
fn import_paths(key: &str, partial: &str) -> Vec<String> {
    let mut out: Vec<String> = factory_compiler::builtin::stdlib_files()
        .into_iter()
        .map(|(name, _)| format!("std/{name}"))
        .collect();
    let here = std::path::Path::new(key)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    if let Some(dir) = factory_compiler::host::find_stdlib(here) {
        out.extend(fwf_stems(&dir, 1).into_iter().map(|s| format!("std/{s}")));
    }
    if let Some(dir) = std::path::Path::new(key).parent() {
        let own = std::path::Path::new(key)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        out.extend(
            fwf_stems(dir, 3)
                .into_iter()
                .filter(|s| *s != own)
                .map(|s| format!("./{s}")),
        );
    }
    out.sort();
    out.dedup();
    out.retain(|p| p.starts_with(partial));
    out
}

/// `.fwf` files under `dir` (to `depth` levels), as paths relative to it without `.fwf`.
fn fwf_stems(dir: &std::path::Path, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() && depth > 1 {
            out.extend(
                fwf_stems(&path, depth - 1)
                    .into_iter()
                    .map(|s| format!("{name}/{s}")),
            );
        } else if let Some(stem) = name.strip_suffix(".fwf") {
            out.push(stem.to_string());
        }
    }
    out
}

fn node_kind(word: &str) -> Option<NodeKind> {
    Some(match word {
        "agent" => NodeKind::Agent,
        "fn" => NodeKind::Fn,
        "gate" => NodeKind::Gate,
        "select" => NodeKind::Select,
        "study" => NodeKind::Study,
        "llm" => NodeKind::Llm,
        _ => return None,
    })
}

/// The text before the innermost `{` still open at `offset` (on that brace's line), and
/// the scope (declaration, or `decl/parallel`) that holds it.
fn enclosing_block(doc: &DocView<'_>, offset: usize) -> (String, Option<String>) {
    let text = doc.text;
    let mut stack: Vec<usize> = Vec::new();
    for t in significant(text) {
        if t.span.start >= offset {
            break;
        }
        match t.kind {
            TokenKind::LBrace => stack.push(t.span.start),
            TokenKind::RBrace => {
                stack.pop();
            }
            _ => {}
        }
    }
    let Some(&open) = stack.last() else {
        return (String::new(), None);
    };
    let head = text[line_start(text, open)..open].to_string();
    let decl = decl_at(doc.parsed, offset).map(|d| d.name.clone());
    // Parallel blocks between the declaration and the cursor narrow the scope.
    let mut scope = decl.clone();
    for &o in &stack {
        let h = &text[line_start(text, o)..o];
        let mut w = h.split_whitespace();
        if w.next() == Some("parallel")
            && let Some(name) = w.next()
        {
            let name: String = name
                .chars()
                .take_while(|c| factory_compiler::lexical::is_ident_char(*c))
                .collect();
            scope = scope.map(|s| format!("{s}/{name}"));
        }
    }
    (head, scope)
}

fn items(labels: Vec<String>, kind: CompletionItemKind, detail: &str) -> Vec<CompletionItem> {
    labels
        .into_iter()
        .map(|label| CompletionItem {
            label,
            kind: Some(kind),
            detail: Some(detail.to_string()),
            ..Default::default()
        })
        .collect()
}
