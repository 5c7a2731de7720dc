//! Quick fixes for three diagnostics: create the missing prompt of an unknown role
//! (FWF010), bound an unbounded reloop (FWF018), add the missing join of a fork (FWF014).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use factory_compiler::diagnostic::{Code, Diagnostic, Subject};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CreateFile,
    CreateFileOptions, DocumentChangeOperation, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, ResourceOp, TextDocumentEdit, TextEdit, Uri,
    WorkspaceEdit,
};

use super::{DocView, Result};
use crate::lookup;
use crate::paths::path_to_uri;
use crate::world::World;

/// The bound a quick fix gives an unbounded reloop.
pub const DEFAULT_BOUND: u32 = 3;

pub fn code_actions(
    world: &mut World,
    params: CodeActionParams,
) -> Result<Option<Vec<CodeActionOrCommand>>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    let start = doc.offset(params.range.start);
    let end = doc.offset(params.range.end);
    let uri = &params.text_document.uri;
    let mut out = Vec::new();
    // The client names the diagnostics it wants fixed (a lightbulb on a line, "fix all"
    // on a selection); those count wherever the cursor is.
    let asked = |d: &Diagnostic| {
        let range = doc.range(&d.span);
        params.context.diagnostics.iter().any(|c| {
            c.range == range
                && c.code == Some(lsp_types::NumberOrString::String(d.code.as_str().into()))
        })
    };
    for d in world
        .diagnostics(&doc.key)
        .iter()
        .filter(|d| d.file == doc.key)
    {
        // Diagnostics touching the requested range (an empty range is the cursor).
        if (d.span.end < start || d.span.start > end) && !asked(d) {
            continue;
        }
        let action = match d.code {
            Code::UnknownRole => create_prompt(&doc, d),
            Code::UnboundedReloop => bound_reloop(&doc, d, uri),
            Code::ForkWithoutJoin => add_join(&doc, d, uri),
            _ => None,
        };
        if let Some(mut a) = action {
            a.diagnostics = Some(vec![crate::convert::diagnostic(d, &doc.index, uri)]);
            a.kind = Some(CodeActionKind::QUICKFIX);
            a.is_preferred = Some(true);
            out.push(CodeActionOrCommand::CodeAction(a));
        }
    }
    Ok(Some(out))
}

/// Where a new prompt for a file at `key` goes: the nearest existing `prompts/`
/// directory above it, else `prompts/` next to it.
pub fn new_prompt_path(key: &str, role: &str) -> Option<PathBuf> {
    let dir = Path::new(key).parent()?;
    let prompts = dir
        .ancestors()
        .map(|d| d.join("prompts"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| dir.join("prompts"));
    Some(prompts.join(format!("{role}.md")))
}

fn create_prompt(doc: &DocView<'_>, d: &Diagnostic) -> Option<CodeAction> {
    // Only a plain name becomes a file name (`prompts/<role>.md`).
    let role = match &d.subject {
        Some(Subject::Role(role)) if lookup::is_ident(role) => role.as_str(),
        _ => return None,
    };
    let path = new_prompt_path(&doc.key, role)?;
    let uri = path_to_uri(&path)?;
    let body = format!(
        "# {role}\n\nYou are the {role}. Describe here what this role does, what it reads, \
what it must write, and how its work is judged.\n"
    );
    let ops = vec![
        DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
            uri: uri.clone(),
            options: Some(CreateFileOptions {
                overwrite: Some(false),
                ignore_if_exists: Some(true),
            }),
            annotation_id: None,
        })),
        DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
            edits: vec![OneOf::Left(TextEdit::new(Default::default(), body))],
        }),
    ];
    Some(CodeAction {
        title: format!("Create {}", path.display()),
        edit: Some(WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(ops)),
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn single_edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]))
}

fn bound_reloop(doc: &DocView<'_>, d: &Diagnostic, uri: &Uri) -> Option<CodeAction> {
    let term = doc.text.get(d.span.clone())?;
    if !term.ends_with(".reloop") {
        return None;
    }
    let at = doc.range(&(d.span.end..d.span.end));
    Some(CodeAction {
        title: format!("Bound the reloop: `{term}(max {DEFAULT_BOUND})`"),
        edit: Some(single_edit(
            uri,
            vec![TextEdit::new(at, format!("(max {DEFAULT_BOUND})"))],
        )),
        ..Default::default()
    })
}

fn add_join(doc: &DocView<'_>, d: &Diagnostic, uri: &Uri) -> Option<CodeAction> {
    // A fork of this file's own (an instance's fork has a dotted id and no line here).
    let fork = match &d.subject {
        Some(Subject::Node(id)) if lookup::is_ident(id) => id.as_str(),
        _ => return None,
    };
    let text = doc.text;
    let scope = lookup::decl_at(doc.parsed, d.span.start)?.name.clone();
    let mut name = format!("{fork}_join");
    while lookup::node_decl_span(doc.parsed, &scope, &name).is_some() {
        name.push('_');
    }
    // Declare the join on the line after the fork, indented like it.
    let line = lookup::line_start(text, d.span.start);
    let indent: String = text[line..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let next_line = text[d.span.end..]
        .find('\n')
        .map_or(text.len(), |i| d.span.end + i + 1);
    let mut edits = vec![TextEdit::new(
        doc.range(&(next_line..next_line)),
        format!("{indent}join {name}\n"),
    )];
    // Route the branches: after each branch, its next `-> ` now leads to the join.
    let mut inserted = Vec::new();
    for l in &d.labels {
        let line_end = text[l.span.end..]
            .find('\n')
            .map_or(text.len(), |i| l.span.end + i);
        let Some(arrow) = text[l.span.end..line_end].find("->") else {
            continue;
        };
        let mut at = l.span.end + arrow + 2;
        while text[at..].starts_with(' ') {
            at += 1;
        }
        if !inserted.contains(&at) {
            inserted.push(at);
            edits.push(TextEdit::new(doc.range(&(at..at)), format!("{name} -> ")));
        }
    }
    if inserted.is_empty() {
        return None;
    }
    Some(CodeAction {
        title: format!("Add `join {name}` and route the branches of `{fork}` into it"),
        edit: Some(single_edit(uri, edits)),
        ..Default::default()
    })
}
