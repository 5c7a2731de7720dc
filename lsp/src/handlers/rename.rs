//! Rename a node, instance, parallel block, knob or parameter across its file; refused
//! when the new name is not an identifier or is already taken.

use std::collections::HashMap;

use factory_compiler::syntax::Loc;
use lsp_types::{
    PrepareRenameResponse, RenameParams, TextDocumentPositionParams, TextEdit, WorkspaceEdit,
};

use super::{DocView, HandlerError, Result};
use crate::lookup::{self, Symbol};
use crate::world::World;

const RESERVED: &[&str] = &[
    "start", "end", "proceed", "reloop", "halt", "fail", "max", "knobs",
];

pub fn prepare(
    world: &mut World,
    params: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    let Some(hit) = lookup::symbol_at(doc.parsed, doc.text, doc.offset(params.position)) else {
        return Ok(None);
    };
    if !renamable(&hit.symbol) {
        return Ok(None);
    }
    Ok(Some(PrepareRenameResponse::Range(doc.range(&hit.span))))
}

fn renamable(s: &Symbol) -> bool {
    matches!(
        s,
        Symbol::Node { .. } | Symbol::Knob { .. } | Symbol::Param { .. }
    )
}

pub fn rename(world: &mut World, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
    let p = params.text_document_position;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let new = params.new_name.trim();
    let Some(hit) = lookup::symbol_at(doc.parsed, doc.text, doc.offset(p.position)) else {
        return Err(HandlerError::failed(
            "nothing to rename here: put the cursor on a node, knob or parameter name",
        ));
    };
    if !renamable(&hit.symbol) {
        return Err(HandlerError::failed(
            "only nodes, instances, parallel blocks, knobs and parameters can be renamed",
        ));
    }
    if !lookup::is_ident(new) || RESERVED.contains(&new) {
        return Err(HandlerError::failed(format!(
            "`{new}` is not a valid name: use letters, digits and `_`, not starting with a digit, and not a reserved word"
        )));
    }
    if let Some(clash) = clash(&doc, &hit.symbol, new) {
        return Err(HandlerError::failed(clash));
    }
    let edits: Vec<TextEdit> = lookup::references(doc.parsed, doc.text, &hit.symbol)
        .into_iter()
        .map(|s| TextEdit::new(doc.range(&s), new.to_string()))
        .collect();
    Ok(Some(WorkspaceEdit::new(HashMap::from([(
        p.text_document.uri,
        edits,
    )]))))
}

fn clash(doc: &DocView<'_>, symbol: &Symbol, new: &str) -> Option<String> {
    let map = &doc.parsed.map;
    match symbol {
        Symbol::Node { scope, name } if name != new => lookup::node_decl_span(doc.parsed, scope, new)
            .map(|_| format!("cannot rename `{name}` to `{new}`: a node named `{new}` already exists in `{scope}`")),
        Symbol::Knob { workflow, name } if name != new => map
            .contains_key(&Loc::Knob(workflow.clone(), new.to_string()))
            .then(|| format!("cannot rename knob `{name}` to `{new}`: a knob named `{new}` already exists")),
        Symbol::Param { decl, name } if name != new => map
            .contains_key(&Loc::Param(decl.clone(), new.to_string()))
            .then(|| format!("cannot rename parameter `{name}` to `{new}`: `{decl}` already has a parameter `{new}`")),
        _ => None,
    }
}
