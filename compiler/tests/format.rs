//! The canonical formatter: idempotent on any text, loses no comment, and never changes
//! what a valid file means (the formatted file parses to an equal tree).

use std::path::Path;

use factory_compiler::format::format;
use factory_compiler::ide::parse;
use proptest::prelude::*;

/// Every `.fwf` fixture of the compiler's own tests: real, varied, mostly valid files.
fn fixtures() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut out = Vec::new();
    for dir in ["diagnostics", "lowering"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "fwf"))
            .collect();
        entries.sort();
        for p in entries {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((p.display().to_string(), text));
        }
    }
    assert!(out.len() > 20, "fixtures not found");
    out
}

/// The text of every `//` comment, as the formatter must keep it.
fn comments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        // Skip strings so `"a // b"` is not taken for a comment.
        let mut in_str = false;
        let mut escaped = false;
        for (i, c) in line.char_indices() {
            if in_str {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_str = false,
                    _ => {}
                }
            } else if c == '"' {
                in_str = true;
            } else if line[i..].starts_with("//") {
                out.push(line[i..].trim_end().to_string());
                break;
            }
        }
    }
    out
}

/// Scrambles the layout of a file without changing its tokens: random indentation,
/// trailing blanks and extra blank lines.
fn scramble(text: &str, noise: &[u8]) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let n = noise.get(i % noise.len().max(1)).copied().unwrap_or(0);
        out.push_str(&" \t  "[..(n % 4) as usize]);
        out.push_str(&" ".repeat((n / 4 % 7) as usize));
        out.push_str(line.trim_start());
        out.push_str(&" \t"[..(n / 32 % 3).min(2) as usize]);
        out.push('\n');
        if n > 200 {
            out.push_str("\n  \n");
        }
    }
    out
}

#[test]
fn formatting_fixtures_keeps_their_meaning_and_comments() {
    for (name, text) in fixtures() {
        let formatted = format(&text);
        assert_eq!(format(&formatted), formatted, "not idempotent on {name}");
        let before = parse(&text);
        let after = parse(&formatted);
        assert_eq!(
            before.ast, after.ast,
            "{name} changed meaning:\n{formatted}"
        );
        assert_eq!(
            before.errors.len(),
            after.errors.len(),
            "{name}: errors changed"
        );
        for c in comments(&text) {
            assert!(formatted.contains(&c), "{name} lost comment {c:?}");
        }
    }
}

#[test]
fn messy_file_snapshot() {
    let messy = "//! A messy file.\n\n\n\nimport   std/qa   // the qa subgraph\nworkflow  messy{\n\t/// Builds.\n  agent builder{role:builder   reads : plan,\"notes.md\"}\n      knob loops:int=2 in 1 ..= 5 expandable\n   knob style : string = \"a\" in [ \"a\" , \"b\" ]\n\n\n\n        gate review by agent (ceo) \"Good  ->  enough?\"{outcomes:proceed,halt}\nfork f\n  // a lonely comment\n  flow{\n\n  start->builder->review   // trailing\n review.reloop( max loops )->builder\n        review.halt->end\n  review.proceed -> f->a,b->j->end\n\n  }\n}   \n\n\n";
    insta::assert_snapshot!(format(messy));
}

const TOKENS: &[&str] = &[
    "workflow",
    "w",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    "->",
    "..=",
    ".",
    "agent",
    "a",
    "b.proceed",
    "role",
    "\"str  ing\"",
    "\"a // b\"",
    "\"esc \\\" q\"",
    "\"open",
    "// c  ",
    "/// doc",
    "//! top",
    "\n",
    "\n\n\n",
    " ",
    "\t",
    "  ",
    "é",
    "3",
    "-1",
    "min_size",
    "in",
    "\\",
    "/",
    "-",
    ">",
    "{{x}}",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..120).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn idempotent_on_token_soup(text in soup()) {
        let once = format(&text);
        prop_assert_eq!(format(&once), once.clone());
        for c in comments(&text) {
            prop_assert!(once.contains(&c), "lost comment {:?} in {:?}", c, once);
        }
    }

    #[test]
    fn idempotent_on_arbitrary_text(text in "\\PC{0,200}") {
        let once = format(&text);
        prop_assert_eq!(format(&once), once);
    }

    #[test]
    fn scrambled_fixtures_format_back_to_the_same_meaning(
        pick in 0usize..1000,
        noise in prop::collection::vec(any::<u8>(), 1..40),
    ) {
        let files = fixtures();
        let (name, text) = &files[pick % files.len()];
        let messy = scramble(text, &noise);
        let formatted = format(&messy);
        prop_assert_eq!(format(&formatted), formatted.clone());
        prop_assert_eq!(&parse(&messy).ast, &parse(&formatted).ast, "{}", name);
        // Blank lines are the author's to keep; everything else of the layout is not,
        // except in text the parser skipped after a syntax error, which stays as written.
        let broken = !parse(text).skipped.is_empty();
        let solid = |t: &str| {
            t.lines()
                .map(|l| if broken { l.trim() } else { l })
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        prop_assert_eq!(solid(&formatted), solid(&format(text)), "layout noise must not matter: {}", name);
    }
}
