//! Go to definition, find references and highlights: the compiler's resolver, its
//! results converted to LSP locations.

use factory_compiler::resolve::{self, Symbol};
use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, ReferenceParams};

use super::{DocView, Result};
use crate::lookup;
use crate::world::World;

pub fn definition(
    world: &World,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let p = params.text_document_position_params;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let Some(hit) = resolve::symbol_at(&world.db, doc.file, doc.offset(p.position)) else {
        return Ok(None);
    };
    let location = match &hit.symbol {
        Symbol::Role { name } => lookup::role_location(&doc.key, name),
        symbol => resolve::definition(&world.db, doc.file, symbol)
            .and_then(|loc| lookup::location(world, &loc)),
    };
    Ok(location.map(GotoDefinitionResponse::Scalar))
}

pub fn references(world: &World, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
    let p = params.text_document_position;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let Some(hit) = resolve::symbol_at(&world.db, doc.file, doc.offset(p.position)) else {
        return Ok(None);
    };
    let decl = resolve::definition(&world.db, doc.file, &hit.symbol);
    let files = world.workspace_files();
    Ok(Some(
        resolve::references(&world.db, doc.file, &hit.symbol, &files)
            .into_iter()
            .filter(|loc| params.context.include_declaration || Some(loc) != decl.as_ref())
            .filter_map(|loc| lookup::location(world, &loc))
            .collect(),
    ))
}

/// Every occurrence in this document of the name under the cursor, for the editor to
/// highlight.
pub fn highlights(
    world: &World,
    params: lsp_types::DocumentHighlightParams,
) -> Result<Option<Vec<lsp_types::DocumentHighlight>>> {
    let p = params.text_document_position_params;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let Some(hit) = resolve::symbol_at(&world.db, doc.file, doc.offset(p.position)) else {
        return Ok(None);
    };
    Ok(Some(
        resolve::references(&world.db, doc.file, &hit.symbol, &[])
            .into_iter()
            .filter(|loc| loc.file == doc.key)
            .map(|loc| lsp_types::DocumentHighlight {
                range: doc.range(&loc.span),
                kind: None,
            })
            .collect(),
    ))
}
