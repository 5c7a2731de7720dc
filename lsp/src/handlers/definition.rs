//! Go to definition and find references.

use factory_compiler::check::import_closure;
use factory_compiler::db::{Db, import_key, parse_file};
use factory_compiler::syntax::Loc;
use lsp_types::{
    GotoDefinitionParams, GotoDefinitionResponse, Location, Position, Range, ReferenceParams,
};

use super::{DocView, Result};
use crate::lookup::{self, Symbol};
use crate::paths::{key_to_uri, path_to_uri};
use crate::position::LineIndex;
use crate::world::World;

pub fn definition(
    world: &mut World,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let p = params.text_document_position_params;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let Some(hit) = lookup::symbol_at(doc.parsed, doc.text, doc.offset(p.position)) else {
        return Ok(None);
    };
    let file_start = Range::new(Position::new(0, 0), Position::new(0, 0));
    let location = match &hit.symbol {
        Symbol::Import { index } => {
            let Some(imp) = doc.parsed.ast.imports.get(*index) else {
                return Ok(None);
            };
            let key = import_key(&doc.key, &imp.path);
            disk_key(world, &key)
                .and_then(|k| key_to_uri(&k))
                .map(|uri| Location::new(uri, file_start))
        }
        Symbol::Role { name } => super::hover::prompt_path(&doc.key, name)
            .or_else(|| crate::builtin_files::prompt_file(name))
            .and_then(|p| path_to_uri(&p))
            .map(|uri| Location::new(uri, file_start)),
        Symbol::Subgraph { name } if lookup::declaration(doc.parsed, &hit.symbol).is_none() => {
            subgraph_elsewhere(world, &doc.key, name)
        }
        symbol => lookup::declaration_in(doc.parsed, doc.text, symbol)
            .map(|span| Location::new(p.text_document.uri.clone(), doc.range(&span)))
            .or_else(|| match symbol {
                Symbol::Artifact { decl, name } => artifact_elsewhere(world, &doc.key, decl, name),
                _ => None,
            }),
    };
    Ok(location.map(GotoDefinitionResponse::Scalar))
}

/// The key of a file that is on disk. The standard library is the project's directory
/// (`$FACTORY_STDLIB` or a `stdlib/` above the workspace), or else a read-only copy of
/// the embedded one.
fn disk_key(world: &World, key: &str) -> Option<String> {
    if !world.db.file(key).exists(&world.db) {
        return None;
    }
    if let Some(rest) = key.strip_prefix("std/") {
        let path = match world.stdlib_dir().map(|dir| dir.join(rest)) {
            Some(path) if path.is_file() => path,
            _ => crate::builtin_files::stdlib_file(rest.strip_suffix(".fwf")?)?,
        };
        return Some(path.to_string_lossy().into_owned());
    }
    key.starts_with('/').then(|| key.to_string())
}

fn subgraph_elsewhere(world: &World, key: &str, name: &str) -> Option<Location> {
    let file = world.db.file(key);
    for f in &import_closure(&world.db, file).files {
        let parsed = parse_file(&world.db, *f);
        if let Some(span) = parsed.map.get(&Loc::Decl(name.to_string())) {
            let fkey = disk_key(world, f.key(&world.db))?;
            let text = f.text(&world.db);
            return Some(Location::new(
                key_to_uri(&fkey)?,
                LineIndex::new(text).range(span),
            ));
        }
    }
    None
}

/// An artifact of a subgraph declared in an imported file (`study.combined`).
fn artifact_elsewhere(world: &World, key: &str, decl: &str, name: &str) -> Option<Location> {
    let file = world.db.file(key);
    import_closure(&world.db, file).files.iter().find_map(|f| {
        let parsed = parse_file(&world.db, *f);
        parsed.map.get(&Loc::Decl(decl.to_string()))?;
        let text = f.text(&world.db);
        let span = lookup::artifact_declaration(parsed, text, decl, name)?;
        let fkey = disk_key(world, f.key(&world.db))?;
        Some(Location::new(
            key_to_uri(&fkey)?,
            LineIndex::new(text).range(&span),
        ))
    })
}

pub fn references(world: &mut World, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
    let p = params.text_document_position;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let Some(hit) = lookup::symbol_at(doc.parsed, doc.text, doc.offset(p.position)) else {
        return Ok(None);
    };
    let decl = lookup::declaration_in(doc.parsed, doc.text, &hit.symbol);
    let spans = lookup::references(doc.parsed, doc.text, &hit.symbol);
    Ok(Some(
        spans
            .into_iter()
            .filter(|s| params.context.include_declaration || Some(s) != decl.as_ref())
            .map(|s| Location::new(p.text_document.uri.clone(), doc.range(&s)))
            .collect(),
    ))
}

/// Every occurrence of the name under the cursor, for the editor to highlight.
pub fn highlights(
    world: &mut World,
    params: lsp_types::DocumentHighlightParams,
) -> Result<Option<Vec<lsp_types::DocumentHighlight>>> {
    let p = params.text_document_position_params;
    let doc = DocView::new(world, &p.text_document.uri)?;
    let Some(hit) = lookup::symbol_at(doc.parsed, doc.text, doc.offset(p.position)) else {
        return Ok(None);
    };
    Ok(Some(
        lookup::references(doc.parsed, doc.text, &hit.symbol)
            .into_iter()
            .map(|s| lsp_types::DocumentHighlight {
                range: doc.range(&s),
                kind: None,
            })
            .collect(),
    ))
}
