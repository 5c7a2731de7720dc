//! Whole-document formatting with the compiler's canonical formatter.

use lsp_types::{DocumentFormattingParams, TextEdit};

use super::{DocView, Result};
use crate::world::World;

pub fn formatting(
    world: &World,
    params: DocumentFormattingParams,
) -> Result<Option<Vec<TextEdit>>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    let formatted = factory_compiler::format::format(doc.text);
    if formatted == doc.text {
        return Ok(Some(Vec::new()));
    }
    Ok(Some(vec![TextEdit::new(
        doc.range(&(0..doc.text.len())),
        formatted,
    )]))
}
