//! The lexer: the tokens of each fixture in `tests/lex/` are pinned (kind, span, text),
//! and on any text the tokens tile it, lexing from any token's start gives the rest of
//! the tokens, and a string literal is one string token exactly when the grammar accepts it.

use std::path::Path;

use factory_compiler::ide::{Lexer, TokenKind, lex, parse};
use proptest::prelude::*;

/// One line per token: kind, byte span, text.
fn dump(text: &str) -> String {
    lex(text)
        .into_iter()
        .map(|t| {
            let kind = format!("{:?}", t.kind);
            format!(
                "{kind:<12} {:>3}..{:<3} {:?}\n",
                t.span.start,
                t.span.end,
                &text[t.span.clone()]
            )
        })
        .collect()
}

#[test]
fn fixture_tokens_are_pinned() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lex");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fwf"))
        .collect();
    paths.sort();
    assert_eq!(paths.len(), 4, "fixtures in {}", dir.display());
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        insta::assert_snapshot!(format!("lex_{name}"), dump(&text));
    }
}

/// Pieces of `.fwf` that meet at awkward places when concatenated.
const PIECES: &[&str] = &[
    "workflow", "agent", "a.b", "{", "}", "(", ")", "[", "]", ",", ":", "=", "->", "..=", ".", "-",
    ">", "/", "//", "///", "//!", " // c", "\"", "\"s\"", "\\", "\\\"", "\n", "\r\n", " ", "\t",
    "3", "-1", "1.5", "é", "\u{a0}", "@",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|p| p.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![soup(), any::<String>()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, .. ProptestConfig::default() })]

    #[test]
    fn tokens_tile_the_text(text in any_text()) {
        let mut at = 0;
        for t in lex(&text) {
            prop_assert_eq!(t.span.start, at);
            prop_assert!(t.span.end > t.span.start, "empty token at {}", at);
            prop_assert!(text.is_char_boundary(t.span.end));
            at = t.span.end;
        }
        prop_assert_eq!(at, text.len());
    }

    #[test]
    fn lexing_from_a_token_gives_the_rest(text in any_text()) {
        let all = lex(&text);
        for (i, t) in all.iter().enumerate() {
            let rest: Vec<_> = Lexer::at(&text, t.span.start).collect();
            prop_assert_eq!(&rest[..], &all[i..]);
        }
    }

    #[test]
    fn a_string_is_one_token_exactly_when_the_grammar_takes_it(
        body in prop::collection::vec(
            prop::sample::select(&["a", " ", "\"", "\\", "\\\"", "\n", "é", "//"][..]),
            0..8,
        )
    ) {
        let literal = format!("\"{}\"", body.concat());
        let toks = lex(&literal);
        // A plain comment may follow the string (`"a"// b`); nothing else may.
        let one = toks[0].kind == TokenKind::Str && toks[1..].iter().all(|t| t.kind.is_trivia());
        let file = format!("workflow w {{\n    knob k: string = {literal}\n    flow {{ start -> end }}\n}}\n");
        let parses = parse(&file).errors.is_empty();
        prop_assert_eq!(one, parses, "{:?}", literal);
    }
}
