//! Byte offsets (the compiler's spans) ↔ LSP positions (lines and UTF-16 code units).

use lsp_types::{Position, Range};

/// The start of every line of one text, for converting positions both ways.
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> LineIndex<'t> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = self.text[start..offset].encode_utf16().count();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, span: &std::ops::Range<usize>) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of a position, clamped to the text (a client may send a column
    /// past the end of a line, or a line past the end of the file).
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(self.text.len(), |&e| e - 1);
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }
}

/// Applies one incremental change (or a whole-text replacement when `range` is None).
pub fn apply_change(text: &mut String, range: Option<Range>, new_text: &str) {
    match range {
        None => *text = new_text.to_string(),
        Some(r) => {
            let index = LineIndex::new(text);
            let start = index.offset(r.start);
            let end = index.offset(r.end).max(start);
            text.replace_range(start..end, new_text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let text = "ab\n🦀é x\nlast";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        // 🦀 is two UTF-16 units, é one, the space one.
        assert_eq!(idx.position(x), Position::new(1, 4));
        assert_eq!(idx.offset(Position::new(1, 4)), x);
        assert_eq!(idx.offset(Position::new(9, 0)), text.len());
        assert_eq!(idx.offset(Position::new(0, 99)), 2);
        assert_eq!(idx.position(text.len()), Position::new(2, 4));
    }

    #[test]
    fn incremental_edits_apply() {
        let mut text = "fork f\nagent a\n".to_string();
        apply_change(
            &mut text,
            Some(Range::new(Position::new(1, 6), Position::new(1, 7))),
            "builder",
        );
        assert_eq!(text, "fork f\nagent builder\n");
        apply_change(
            &mut text,
            Some(Range::new(Position::new(2, 0), Position::new(2, 0))),
            "join j\n",
        );
        assert_eq!(text, "fork f\nagent builder\njoin j\n");
    }
}
