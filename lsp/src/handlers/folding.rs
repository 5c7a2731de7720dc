//! Folding ranges: every multi-line `{ ... }` block and every run of comment lines.

use lsp_types::{FoldingRange, FoldingRangeKind, FoldingRangeParams};

use super::{DocView, Result};
use crate::world::World;
use factory_compiler::ide::{line_start, significant};

pub fn folding_ranges(
    world: &World,
    params: FoldingRangeParams,
) -> Result<Option<Vec<FoldingRange>>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    Ok(Some(ranges(&doc)))
}

pub fn ranges(doc: &DocView<'_>) -> Vec<FoldingRange> {
    let text = doc.text;
    let line = |offset: usize| doc.index.position(offset).line;
    let mut out = Vec::new();
    let mut open: Vec<u32> = Vec::new();
    let mut comments: Option<(u32, u32)> = None;
    let flush = |run: Option<(u32, u32)>, out: &mut Vec<FoldingRange>| {
        if let Some((start, end)) = run
            && end > start
        {
            out.push(fold(start, end, Some(FoldingRangeKind::Comment)));
        }
    };
    for t in significant(text) {
        let l = line(t.span.start);
        if t.kind.is_comment()
            && text[line_start(text, t.span.start)..t.span.start]
                .trim()
                .is_empty()
        {
            comments = match comments {
                Some((s, e)) if e + 1 == l => Some((s, l)),
                run => {
                    flush(run, &mut out);
                    Some((l, l))
                }
            };
            continue;
        }
        match &text[t.span.clone()] {
            "{" => open.push(l),
            "}" => {
                if let Some(start) = open.pop()
                    && l > start + 1
                {
                    // Keep the closing brace visible.
                    out.push(fold(start, l - 1, None));
                }
            }
            _ => {}
        }
    }
    flush(comments, &mut out);
    out.sort_by_key(|r| (r.start_line, r.end_line));
    out
}

fn fold(start: u32, end: u32, kind: Option<FoldingRangeKind>) -> FoldingRange {
    FoldingRange {
        start_line: start,
        end_line: end,
        kind,
        ..Default::default()
    }
}
