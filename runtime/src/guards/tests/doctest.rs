//! Rust doc-tests by identity. cargo names one `<file> - <item> (line N)`; factory's id is
//! `doc:<crate>::<file> - <item>`, then ` #2`, ` #3`, … for an item's later examples (the
//! line moves with any edit above it, the ordinal only when an example is added before).
//! An example is found again by reading the id's file: the item's doc comment, its
//! n-th fenced block that rustdoc runs.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::locate::read;
use super::source::FnDef;

/// A doc-test id's parts.
#[derive(Debug, PartialEq, Eq)]
struct DocId<'a> {
    file: &'a str,
    /// `Builder<'a, 'b>::keep`; empty for the crate's or a module's inner docs.
    item: &'a str,
    /// 1-based: which of the item's examples.
    ordinal: usize,
}

fn parse(id: &str) -> Option<DocId<'_>> {
    let (_crate, rest) = id.strip_prefix("doc:")?.split_once("::")?;
    let (rest, ordinal) = match rest.rsplit_once(" #") {
        Some((r, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (r, n.parse().ok()?)
        }
        _ => (rest, 1),
    };
    let (file, item) = match rest.split_once(" - ") {
        Some((f, i)) => (f, i.trim()),
        None => (rest.trim_end_matches(" -"), ""),
    };
    Some(DocId {
        file,
        item,
        ordinal,
    })
}

/// Whether `id` names a doc-test.
pub(super) fn is_doc_test(id: &str) -> bool {
    id.starts_with("doc:")
}

/// The id cargo's `name (line N)` gets: the item's `ordinal`-th example (1-based).
pub(super) fn id(target: &str, item: &str, ordinal: usize) -> String {
    if ordinal <= 1 {
        format!("{target}::{item}")
    } else {
        format!("{target}::{item} #{ordinal}")
    }
}

/// The item path without generics, split: `Builder<'a, 'b>::keep` → `["Builder", "keep"]`.
fn segments(item: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in item.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

static ITEM_KIND: &str = r"(?:fn|struct|enum|trait|type|union|mod|const|static|macro_rules!)";

/// Where test `id` is: the file, and its example as a definition (`body` is the code).
pub(super) fn locate(dir: &Path, id: &str) -> Option<(String, Option<FnDef>)> {
    let doc = parse(id)?;
    let text = read(dir, doc.file);
    Some((doc.file.to_string(), example(&text, &doc)))
}

fn example(text: &str, doc: &DocId) -> Option<FnDef> {
    let lines: Vec<&str> = text.lines().collect();
    let segs = segments(doc.item);
    let leaf = segs.last().cloned().unwrap_or_default();
    let docs = match item_line(&lines, &segs) {
        Some(at) => outer_docs(&lines, at),
        // A module's docs are inner (`//!`) in its own file.
        None if doc.item.is_empty() || module_file(doc.file, &leaf) => inner_docs(&lines),
        None => return None,
    };
    let (start, end, code) = test_blocks(&docs).into_iter().nth(doc.ordinal - 1)?;
    Some(FnDef {
        name: leaf,
        line: start,
        end,
        body: normalize(&code),
        suites: Vec::new(),
    })
}

fn module_file(file: &str, module: &str) -> bool {
    file.ends_with(&format!("/{module}.rs")) || file.ends_with(&format!("/{module}/mod.rs"))
}

/// The 0-based line defining the item's last segment: inside an `impl` naming its owner
/// when there is one, else the first.
fn item_line(lines: &[&str], segs: &[String]) -> Option<usize> {
    let leaf = segs.last()?;
    let def = Regex::new(&format!(r"\b{ITEM_KIND}\s+{}\b", regex::escape(leaf))).ok()?;
    let found: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let l = lines[i].trim_start();
            !l.starts_with("//") && def.is_match(l)
        })
        .collect();
    let owner = segs.len().checked_sub(2).map(|i| &segs[i]);
    let in_owner = |&&i: &&usize| {
        owner.is_some_and(|o| {
            lines[..i]
                .iter()
                .rev()
                .find(|l| l.trim_start().starts_with("impl"))
                .is_some_and(|l| {
                    l.split(|c: char| !c.is_alphanumeric() && c != '_')
                        .any(|w| w == o)
                })
        })
    };
    found.iter().find(in_owner).or(found.first()).copied()
}

/// The `///` lines above line `at` (attributes between are skipped), as (1-based line,
/// text without the marker).
fn outer_docs(lines: &[&str], at: usize) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    for i in (0..at).rev() {
        let l = lines[i].trim_start();
        if let Some(d) = l.strip_prefix("///") {
            docs.push((i + 1, strip_one_space(d)));
        } else if !l.starts_with("#[") {
            break;
        }
    }
    docs.reverse();
    docs
}

fn inner_docs(lines: &[&str]) -> Vec<(usize, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            l.trim_start()
                .strip_prefix("//!")
                .map(|d| (i + 1, strip_one_space(d)))
        })
        .collect()
}

fn strip_one_space(s: &str) -> String {
    s.strip_prefix(' ').unwrap_or(s).to_string()
}

static FENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(```+|~~~+)\s*(.*)$").unwrap_or_else(|e| panic!("built-in regex: {e}"))
});

/// The fenced blocks rustdoc runs as tests, as (first code line, last code line, code).
fn test_blocks(docs: &[(usize, String)]) -> Vec<(usize, usize, String)> {
    let mut blocks = Vec::new();
    // The open fence and whether rustdoc runs its block.
    let mut open: Option<(String, bool)> = None;
    let mut code: Vec<(usize, &str)> = Vec::new();
    for (line, text) in docs {
        let fence = FENCE.captures(text);
        match (open.clone(), fence) {
            (None, Some(c)) => {
                open = Some((c[1].to_string(), is_rust(&c[2])));
                code.clear();
            }
            (Some((f, runs)), Some(c)) if c[1].starts_with(&f) && c[2].trim().is_empty() => {
                if let (true, Some(first), Some(last)) = (runs, code.first(), code.last()) {
                    let text: Vec<&str> = code.iter().map(|(_, t)| *t).collect();
                    blocks.push((first.0, last.0, text.join("\n")));
                }
                open = None;
            }
            (Some(_), _) => code.push((*line, text.as_str())),
            (None, None) => {}
        }
    }
    blocks
}

/// rustdoc runs a block whose info string is empty or made only of its own words.
fn is_rust(info: &str) -> bool {
    info.split([',', ' ', '\t'])
        .map(|w| w.trim().trim_start_matches('{').trim_end_matches('}'))
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(
                w,
                "rust"
                    | "ignore"
                    | "should_panic"
                    | "no_run"
                    | "compile_fail"
                    | "test_harness"
                    | "standalone_crate"
                    | "allow_fail"
            ) || w.starts_with("edition")
                || w.starts_with("ignore-")
                || w.starts_with('E') && w.len() == 5 && w[1..].bytes().all(|b| b.is_ascii_digit())
        })
}

fn normalize(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the new example is the old one moved or renamed with its item: the same code,
/// or the same code but for the item's own name (`.keep(true)` → `.disable_cleanup(true)`).
pub(super) fn same_example(old_id: &str, old: &FnDef, new_id: &str, new: &FnDef) -> bool {
    if old.body == new.body {
        return true;
    }
    let (Some(o), Some(n)) = (parse(old_id), parse(new_id)) else {
        return false;
    };
    let (old_leaf, new_leaf) = (segments(o.item).pop(), segments(n.item).pop());
    let (Some(old_leaf), Some(new_leaf)) = (old_leaf, new_leaf) else {
        return false;
    };
    let Ok(word) = Regex::new(&format!(r"\b{}\b", regex::escape(&old_leaf))) else {
        return false;
    };
    old_leaf != new_leaf && word.replace_all(&old.body, new_leaf.as_str()) == new.body
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = r#"//! A crate.
//!
//! ```
//! let x = 1;
//! ```
pub struct Builder<'a, 'b> { a: &'a str, b: &'b str }

impl<'a, 'b> Builder<'a, 'b> {
    /// Keeps it.
    ///
    /// ```
    /// let b = Builder::new().keep(true);
    /// ```
    ///
    /// ```text
    /// not a test
    /// ```
    ///
    /// ```no_run
    /// second();
    /// ```
    #[must_use]
    pub fn keep(&mut self, keep: bool) -> &mut Self { self }
}

impl TempDir {
    /// ```
    /// other();
    /// ```
    pub fn keep(self) {}
}
"#;

    fn at(id: &str) -> Option<FnDef> {
        example(
            LIB,
            &parse(id).unwrap_or_else(|| panic!("not a doc id: {id}")),
        )
    }

    #[test]
    fn ids_name_the_file_the_item_and_the_example() {
        assert_eq!(
            parse("doc:tempfile::src/lib.rs - Builder<'a,'b>::keep #2"),
            Some(DocId {
                file: "src/lib.rs",
                item: "Builder<'a,'b>::keep",
                ordinal: 2
            })
        );
        assert_eq!(
            parse("doc:tempfile::src/lib.rs -"),
            Some(DocId {
                file: "src/lib.rs",
                item: "",
                ordinal: 1
            })
        );
        assert_eq!(parse("tests/a.rs::t"), None);
    }

    #[test]
    fn an_example_is_found_in_its_items_doc_comment_inside_the_owners_impl() {
        let first = at("doc:x::src/lib.rs - Builder<'a, 'b>::keep").expect("found");
        assert_eq!(first.body, "let b = Builder::new().keep(true);");
        assert_eq!((first.line, first.end), (12, 12));
        // The `text` block is not a test; the `no_run` one is the second example.
        let second = at("doc:x::src/lib.rs - Builder<'a, 'b>::keep #2").expect("found");
        assert_eq!(second.body, "second();");
        assert_eq!(at("doc:x::src/lib.rs - Builder<'a, 'b>::keep #3"), None);
        let other = at("doc:x::src/lib.rs - TempDir::keep").expect("found");
        assert_eq!(other.body, "other();");
        let krate = at("doc:x::src/lib.rs -").expect("found");
        assert_eq!(krate.body, "let x = 1;");
    }

    #[test]
    fn a_renamed_item_keeps_its_example_when_only_its_name_changed() {
        let def = |body: &str| FnDef {
            name: String::new(),
            line: 1,
            end: 1,
            body: body.into(),
            suites: Vec::new(),
        };
        let old = "doc:x::src/lib.rs - Builder<'a,'b>::keep";
        let new = "doc:x::src/lib.rs - Builder<'a,'b>::disable_cleanup";
        assert!(same_example(
            old,
            &def("Builder::new().keep(true)"),
            new,
            &def("Builder::new().disable_cleanup(true)")
        ));
        assert!(!same_example(
            old,
            &def("Builder::new().keep(true)"),
            new,
            &def("Builder::new().disable_cleanup(false)")
        ));
        // A moved file: the same item and code.
        assert!(same_example(
            "doc:x::src/dir.rs - dir::TempDir",
            &def("a()"),
            "doc:x::src/dir/mod.rs - dir::TempDir",
            &def("a()")
        ));
    }
}
