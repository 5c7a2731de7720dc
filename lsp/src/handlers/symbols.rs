//! The document outline: workflows and subgraphs, with their knobs, inputs, nodes,
//! instances and parallel blocks (nested).

use factory_compiler::ide::{Body, DeclKind, Loc};
use lsp_types::{DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, SymbolKind};

use super::{DocView, Result};
use crate::world::World;
use factory_compiler::resolve::scope::decl_range;

pub fn document_symbols(
    world: &World,
    params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    let mut out = Vec::new();
    for d in &doc.parsed.ast.decls {
        let Some(name_span) = doc.parsed.map().get(&Loc::Decl(d.name.clone())) else {
            continue;
        };
        let range = decl_range(doc.parsed, doc.text, &d.name);
        let (kind, detail) = match d.kind {
            DeclKind::Workflow { .. } => (SymbolKind::MODULE, "workflow"),
            DeclKind::Subgraph => (SymbolKind::FUNCTION, "subgraph"),
        };
        let mut children = body_symbols(&doc, &d.name, &d.body);
        for p in &d.params {
            if let Some(span) = doc
                .parsed
                .map()
                .get(&Loc::Param(d.name.clone(), p.name.clone()))
            {
                children.push(symbol(
                    &doc,
                    &p.name,
                    "parameter",
                    SymbolKind::TYPE_PARAMETER,
                    span,
                    span,
                    None,
                ));
            }
        }
        children.sort_by_key(|c| (c.range.start.line, c.range.start.character));
        out.push(symbol(
            &doc,
            &d.name,
            detail,
            kind,
            &range,
            name_span,
            Some(children),
        ));
    }
    Ok(Some(DocumentSymbolResponse::Nested(out)))
}

fn body_symbols(doc: &DocView<'_>, scope: &str, body: &Body) -> Vec<DocumentSymbol> {
    let map = doc.parsed.map();
    let mut out = Vec::new();
    let s = scope.to_string();
    for k in &body.knobs {
        if let Some(span) = map.get(&Loc::Knob(s.clone(), k.name.clone())) {
            out.push(symbol(
                doc,
                &k.name,
                "knob",
                SymbolKind::CONSTANT,
                span,
                span,
                None,
            ));
        }
    }
    for i in &body.inputs {
        if let Some(span) = map.get(&Loc::Input(s.clone(), i.name.clone())) {
            out.push(symbol(
                doc,
                &i.name,
                "input",
                SymbolKind::FILE,
                span,
                span,
                None,
            ));
        }
    }
    for n in &body.nodes {
        if let Some(span) = map.get(&Loc::Node(s.clone(), n.name.clone())) {
            out.push(symbol(
                doc,
                &n.name,
                n.kind.as_str(),
                SymbolKind::OBJECT,
                span,
                span,
                None,
            ));
        }
    }
    for u in &body.uses {
        if let Some(span) = map.get(&Loc::Use(s.clone(), u.alias.clone())) {
            out.push(symbol(
                doc,
                &u.alias,
                &format!("use {}", u.subgraph),
                SymbolKind::OBJECT,
                span,
                span,
                None,
            ));
        }
    }
    for p in &body.parallels {
        if let Some(span) = map.get(&Loc::Parallel(s.clone(), p.name.clone())) {
            let children = body_symbols(doc, &format!("{scope}/{}", p.name), &p.body);
            out.push(symbol(
                doc,
                &p.name,
                "parallel",
                SymbolKind::NAMESPACE,
                span,
                span,
                Some(children),
            ));
        }
    }
    out.sort_by_key(|c| (c.range.start.line, c.range.start.character));
    out
}

#[allow(deprecated)] // `deprecated` is a required field of the struct
fn symbol(
    doc: &DocView<'_>,
    name: &str,
    detail: &str,
    kind: SymbolKind,
    range: &std::ops::Range<usize>,
    selection: &std::ops::Range<usize>,
    children: Option<Vec<DocumentSymbol>>,
) -> DocumentSymbol {
    DocumentSymbol {
        name: name.to_string(),
        detail: Some(detail.to_string()),
        kind,
        tags: None,
        deprecated: None,
        range: doc.range(range),
        selection_range: doc.range(selection),
        children,
    }
}
