//! Rename a node, instance, parallel block or knob across its file, and a subgraph or a
//! subgraph's parameter across the workspace (the declaration, and every `use` of the
//! subgraph or argument naming the parameter); refused when the new name is not an
//! identifier or is already taken.

use factory_compiler::db::SourceFile;
use factory_compiler::ide::Loc;
use factory_compiler::lexical::is_ident;
use factory_compiler::resolve::scope::node_decl_span;
use factory_compiler::resolve::{self, Symbol};
use lsp_types::{
    PrepareRenameResponse, RenameParams, TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};

use super::{DocView, HandlerError, Result};
use crate::lookup;
use crate::world::World;

const RESERVED: &[&str] = &[
    "start", "end", "proceed", "reloop", "halt", "fail", "max", "knobs",
];

pub fn prepare(
    world: &World,
    params: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    let Some(hit) = resolve::symbol_at(&world.db, doc.file, doc.offset(params.position)) else {
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
        Symbol::Node { .. }
            | Symbol::Knob { .. }
            | Symbol::Param { .. }
            | Symbol::Decl { .. }
            | Symbol::Subgraph { .. }
    )
}

pub fn rename(world: &World, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
    let p = params.text_document_position;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let new = params.new_name.trim();
    let Some(hit) = resolve::symbol_at(&world.db, doc.file, doc.offset(p.position)) else {
        return Err(HandlerError::failed(
            "nothing to rename here: put the cursor on a node, subgraph, knob or parameter name",
        ));
    };
    if !renamable(&hit.symbol) {
        return Err(HandlerError::failed(
            "only nodes, instances, parallel blocks, subgraphs, workflows, knobs and parameters can be renamed",
        ));
    }
    if !is_ident(new) || RESERVED.contains(&new) {
        return Err(HandlerError::failed(format!(
            "`{new}` is not a valid name: use letters, digits and `_`, not starting with a digit, and not a reserved word"
        )));
    }
    if let Some(clash) = clash(world, &doc, &hit.symbol, new) {
        return Err(HandlerError::failed(clash));
    }
    let files = world.workspace_files();
    // Edits by file, in the order the resolver found the files.
    let mut changes: Vec<(Uri, Vec<TextEdit>)> = Vec::new();
    for loc in resolve::references(&world.db, doc.file, &hit.symbol, &files) {
        let Some(l) = lookup::location(world, &loc) else {
            continue;
        };
        let edit = TextEdit::new(l.range, new.to_string());
        match changes.iter_mut().find(|(u, _)| *u == l.uri) {
            Some((_, edits)) => edits.push(edit),
            None => changes.push((l.uri, vec![edit])),
        }
    }
    Ok(Some(WorkspaceEdit::new(changes.into_iter().collect())))
}

fn clash(world: &World, doc: &DocView<'_>, symbol: &Symbol, new: &str) -> Option<String> {
    let db = &world.db;
    match symbol {
        Symbol::Node { scope, name } if name != new => node_decl_span(doc.parsed, scope, new)
            .map(|_| format!("cannot rename `{name}` to `{new}`: a node named `{new}` already exists in `{scope}`")),
        Symbol::Knob { workflow, name } if name != new => doc.parsed.map()
            .contains_key(&Loc::Knob(workflow.clone(), new.to_string()))
            .then(|| format!("cannot rename knob `{name}` to `{new}`: a knob named `{new}` already exists")),
        Symbol::Param { decl, name } if name != new => match editable_home(world, doc, decl) {
            Err(why) => Some(format!("cannot rename parameter `{name}`: {why}")),
            Ok(home) => resolve::tree(db, home).map()
                .contains_key(&Loc::Param(decl.clone(), new.to_string()))
                .then(|| format!("cannot rename parameter `{name}` to `{new}`: `{decl}` already has a parameter `{new}`")),
        },
        Symbol::Decl { name } | Symbol::Subgraph { name } if name != new => {
            match editable_home(world, doc, name) {
                Err(why) => Some(format!("cannot rename `{name}`: {why}")),
                Ok(home) => resolve::tree(db, home).ast.decls.iter().any(|d| d.name == new).then(|| {
                    format!("cannot rename `{name}` to `{new}`: `{}` already declares `{new}`", home.key(db))
                }),
            }
        }
        _ => None,
    }
}

/// The file declaring `decl` as this document sees it, when a rename may edit it (not
/// the standard library's).
fn editable_home(
    world: &World,
    doc: &DocView<'_>,
    decl: &str,
) -> std::result::Result<SourceFile, String> {
    let Some(home) = resolve::home(&world.db, doc.file, decl) else {
        return Err(format!(
            "`{decl}` is not declared in this file or an imported one"
        ));
    };
    let key = home.key(&world.db);
    if key.starts_with("std/") {
        return Err(format!(
            "`{decl}` is declared in the standard library (`{key}`)"
        ));
    }
    Ok(home)
}
