//! Quick fixes: the fixes the compiler attaches to diagnostics, as workspace edits. No
//! fix logic lives here; `factory check --fix` applies the same edits.

use std::collections::HashMap;
use std::path::Path;

use factory_compiler::diagnostic::{Diagnostic, FixEdits};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CreateFile,
    CreateFileOptions, DocumentChangeOperation, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, ResourceOp, TextDocumentEdit, TextEdit, Uri,
    WorkspaceEdit,
};

use super::{DocView, Result};
use crate::paths::path_to_uri;
use crate::world::World;

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
        let action = d.fix.as_ref().and_then(|fix| code_action(&doc, fix, uri));
        if let Some(mut a) = action {
            a.diagnostics = Some(vec![crate::convert::diagnostic(d, &doc.index, uri)]);
            a.kind = Some(CodeActionKind::QUICKFIX);
            a.is_preferred = Some(true);
            out.push(CodeActionOrCommand::CodeAction(a));
        }
    }
    Ok(Some(out))
}

/// A fix as a code action: plain text edits as `changes`; with files to create, as
/// resource operations (create, then fill) followed by the edits.
fn code_action(doc: &DocView<'_>, fix: &FixEdits, uri: &Uri) -> Option<CodeAction> {
    // Positions convert through this document's lines; the compiler only gives a
    // diagnostic edits in its own file.
    let mut edits = Vec::new();
    for e in &fix.edits {
        if e.file != doc.key {
            return None;
        }
        edits.push(TextEdit::new(doc.range(&e.range), e.replacement.clone()));
    }
    let edit = if fix.creates.is_empty() {
        WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]))
    } else {
        let mut ops = Vec::new();
        for c in &fix.creates {
            let created = path_to_uri(Path::new(&c.path))?;
            ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
                CreateFile {
                    uri: created.clone(),
                    options: Some(CreateFileOptions {
                        overwrite: Some(false),
                        ignore_if_exists: Some(true),
                    }),
                    annotation_id: None,
                },
            )));
            ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: created,
                    version: None,
                },
                edits: vec![OneOf::Left(TextEdit::new(
                    Default::default(),
                    c.contents.clone(),
                ))],
            }));
        }
        if !edits.is_empty() {
            ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: None,
                },
                edits: edits.into_iter().map(OneOf::Left).collect(),
            }));
        }
        WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(ops)),
            ..Default::default()
        }
    };
    Some(CodeAction {
        title: fix.title.clone(),
        edit: Some(edit),
        ..Default::default()
    })
}
