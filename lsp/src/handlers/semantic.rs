//! Semantic tokens: keywords, declarations, node references, attribute keys, verdict
//! labels, types, strings and comments, so editors colour `.fwf` by meaning.

use factory_compiler::ide::Loc;
use factory_compiler::ide::{LABELS, TYPE_NAMES, keywords};
use factory_compiler::resolve::Symbol;
use lsp_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensLegend,
    SemanticTokensParams, SemanticTokensResult,
};

use super::{DocView, Result};
use crate::world::World;
use factory_compiler::ide::{TokenKind, significant};

const TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::ENUM_MEMBER,
    SemanticTokenType::TYPE,
    SemanticTokenType::STRING,
    SemanticTokenType::COMMENT,
];
const DECLARATION: u32 = 1;

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: vec![SemanticTokenModifier::DECLARATION],
    }
}

fn ty(t: SemanticTokenType) -> u32 {
    TYPES.iter().position(|x| *x == t).unwrap_or(0) as u32
}

pub fn semantic_tokens(
    world: &World,
    params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>> {
    let doc = DocView::new(world, &params.text_document.uri)?;
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: None,
        data: encode(&doc, &classify(&doc)),
    })))
}

/// (byte span, token type, modifiers) of every coloured token, in order.
pub fn classify(doc: &DocView<'_>) -> Vec<(std::ops::Range<usize>, u32, u32)> {
    let text = doc.text;
    let map = doc.parsed.map();
    // Indexed once: a file of thousands of nodes has thousands of map entries.
    let mut declared = std::collections::HashMap::new();
    let mut terms: Vec<std::ops::Range<usize>> = Vec::new();
    for (loc, span) in map {
        let t = match loc {
            Loc::Decl(_) => ty(SemanticTokenType::FUNCTION),
            Loc::Node(..) | Loc::Use(..) | Loc::Parallel(..) | Loc::Input(..) => {
                ty(SemanticTokenType::VARIABLE)
            }
            Loc::Knob(..) | Loc::Param(..) => ty(SemanticTokenType::PARAMETER),
            Loc::Term(..) => {
                terms.push(span.clone());
                continue;
            }
            _ => continue,
        };
        declared.insert(span.start, t);
    }
    terms.sort_by_key(|s| s.start);
    let in_term = |at: usize| {
        let i = terms.partition_point(|s| s.start <= at);
        i > 0 && at < terms[i - 1].end
    };
    // What the resolver says the names used in bounds, arguments and values are.
    let index = factory_compiler::resolve::file_symbols(doc.db, doc.file);
    let used: Vec<(std::ops::Range<usize>, u32)> = index
        .occurrences()
        .iter()
        .filter(|o| !o.declares)
        .filter_map(|o| {
            let t = match o.symbol {
                Symbol::Knob { .. } | Symbol::Param { .. } => SemanticTokenType::PARAMETER,
                Symbol::Node { .. } | Symbol::Artifact { .. } => SemanticTokenType::VARIABLE,
                _ => return None,
            };
            Some((o.span.clone(), ty(t)))
        })
        .collect();
    let use_at = |span: &std::ops::Range<usize>| {
        let i = used.partition_point(|(s, _)| s.start <= span.start);
        i.checked_sub(1)
            .map(|i| &used[i])
            .filter(|(s, _)| span.end <= s.end)
            .map(|(_, t)| *t)
    };
    let toks = significant(text);
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let word = &text[t.span.clone()];
        let prev = i.checked_sub(1).map(|j| &text[toks[j].span.clone()]);
        let next = toks.get(i + 1).map(|n| &text[n.span.clone()]);
        let class = match t.kind {
            k if k.is_comment() => Some((ty(SemanticTokenType::COMMENT), 0)),
            k if k.is_str() => Some((ty(SemanticTokenType::STRING), 0)),
            TokenKind::Ident => {
                if let Some(&d) = declared.get(&t.span.start) {
                    Some((d, DECLARATION))
                } else if prev == Some(".") && LABELS.contains(&word) {
                    Some((ty(SemanticTokenType::ENUM_MEMBER), 0))
                } else if prev == Some(":") && TYPE_NAMES.contains(&word) {
                    Some((ty(SemanticTokenType::TYPE), 0))
                } else if keywords().any(|k| k == word) {
                    Some((ty(SemanticTokenType::KEYWORD), 0))
                } else if next == Some(":") {
                    Some((ty(SemanticTokenType::PROPERTY), 0))
                } else if let Some(used) = use_at(&t.span) {
                    Some((used, 0))
                } else if in_term(t.span.start) {
                    Some((ty(SemanticTokenType::VARIABLE), 0))
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some((ty, m)) = class {
            out.push((t.span.clone(), ty, m));
        }
    }
    out
}

fn encode(doc: &DocView<'_>, tokens: &[(std::ops::Range<usize>, u32, u32)]) -> Vec<SemanticToken> {
    let mut out = Vec::with_capacity(tokens.len());
    let (mut line, mut col) = (0u32, 0u32);
    for (span, ty, m) in tokens {
        let start = doc.index.position(span.start);
        let end = doc.index.position(span.end);
        if end.line != start.line {
            continue;
        }
        let delta_line = start.line - line;
        let delta_start = if delta_line == 0 {
            start.character - col
        } else {
            start.character
        };
        out.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: *ty,
            token_modifiers_bitset: *m,
        });
        line = start.line;
        col = start.character;
    }
    out
}
