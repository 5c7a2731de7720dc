//! The layering of the runtime and the compiler, checked. Each crate's `lib.rs` lists
//! its rooms (its top-level modules) in order, lowest first, as `//! - [`room`]: …`
//! lines; code in a room may use only rooms listed before it. Test code (modules under
//! `#[cfg(test)]`) may use anything. Every `crate::room` path counts, in `use` lines
//! and inline, found by walking each crate's module tree from `lib.rs` (so `#[path]`
//! modules count, and files no module declares do not).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

#[test]
fn the_runtime_uses_only_rooms_below_each_room() {
    assert_layered("runtime");
}

#[test]
fn the_compiler_uses_only_rooms_below_each_room() {
    assert_layered("compiler");
}

fn assert_layered(krate: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate)
        .join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let order = declared_order(&lib);
    let modules = declared_modules(&lib);
    let listed: BTreeSet<String> = order.iter().cloned().collect();
    assert_eq!(
        listed, modules,
        "{krate}/src/lib.rs must list every room it declares, once, in its `//! - [`room`]` lines"
    );
    let mut files = Vec::new();
    for room in &order {
        for file in [
            src.join(format!("{room}.rs")),
            src.join(room).join("mod.rs"),
        ] {
            if file.exists() {
                walk(&file, room, &mut files);
            }
        }
    }
    let rank = |room: &str| order.iter().position(|r| r == room);
    let mut wrong = Vec::new();
    for (room, file) in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, used) in crate_uses(&production_code(&text)) {
            let (Some(from), Some(to)) = (rank(room), rank(&used)) else {
                continue; // `crate::` paths into the crate root (macros, re-exports)
            };
            if to >= from && used != *room {
                wrong.push(format!(
                    "{}:{line}: `{room}` uses `{used}`, which lib.rs lists after it",
                    file.strip_prefix(&src).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{krate}: {} uses against the order {order:?}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The rooms in the order `lib.rs` lists them.
fn declared_order(lib: &str) -> Vec<String> {
    let item = Regex::new(r"^//! - \[`(\w+)`\]").unwrap();
    lib.lines()
        .filter_map(|l| item.captures(l).map(|c| c[1].to_string()))
        .collect()
}

/// The modules `lib.rs` declares (test-only ones aside).
fn declared_modules(lib: &str) -> BTreeSet<String> {
    children(lib)
        .into_iter()
        .filter(|c| !c.test_only)
        .map(|c| c.name)
        .collect()
}

struct Child {
    name: String,
    path: Option<String>,
    test_only: bool,
}

/// The `mod name;` declarations of a file, with their `#[path]` and `#[cfg(test)]`.
fn children(text: &str) -> Vec<Child> {
    let decl = Regex::new(r"^\s*(?:pub(?:\([^)]*\))? )?mod (\w+);").unwrap();
    let path = Regex::new(r#"^\s*#\[path = "([^"]+)"\]"#).unwrap();
    let mut out = Vec::new();
    let (mut pending_path, mut pending_test) = (None, false);
    for line in text.lines() {
        if let Some(c) = path.captures(line) {
            pending_path = Some(c[1].to_string());
            continue;
        }
        if line.trim_start().starts_with("#[cfg(test)]") || line.contains("#[cfg(all(test") {
            pending_test = true;
            continue;
        }
        if line.trim_start().starts_with("#[") {
            continue;
        }
        if let Some(c) = decl.captures(line) {
            out.push(Child {
                name: c[1].to_string(),
                path: pending_path.take(),
                test_only: pending_test,
            });
        }
        pending_path = None;
        pending_test = false;
    }
    out
}

/// Every file of `room`'s module tree under `file`, test-only modules left out.
fn walk(file: &Path, room: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    out.push((room.to_string(), file.to_path_buf()));
    let dir = file.parent().unwrap_or(Path::new("."));
    let own = match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs") => dir.to_path_buf(),
        _ => dir.join(file.file_stem().unwrap_or_default()),
    };
    for child in children(&text) {
        if child.test_only {
            continue;
        }
        let candidates = match &child.path {
            Some(p) => vec![dir.join(p)],
            None => vec![
                own.join(format!("{}.rs", child.name)),
                own.join(&child.name).join("mod.rs"),
            ],
        };
        if let Some(found) = candidates.into_iter().find(|c| c.exists()) {
            walk(&found, room, out);
        }
    }
}

/// The text without comments and without the inline `#[cfg(test)] mod … { … }` that
/// ends a file (where this codebase keeps its unit tests).
fn production_code(text: &str) -> String {
    let inline_tests = Regex::new(r"(?m)^#\[cfg\(test\)\]\s*\n\s*mod \w+\s*\{").unwrap();
    let text = match inline_tests.find(text) {
        Some(m) => &text[..m.start()],
        None => text,
    };
    text.lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(line, room)` for every `crate::room` path, braces groups included.
fn crate_uses(code: &str) -> Vec<(usize, String)> {
    let single = Regex::new(r"\bcrate::(\w+)").unwrap();
    let group = Regex::new(r"\bcrate::\{([^}]*)\}").unwrap();
    let head = Regex::new(r"(?:^|,)\s*(\w+)").unwrap();
    let nested = Regex::new(r"\{[^{}]*\}").unwrap();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    for c in single.captures_iter(code) {
        let m = c.get(1).unwrap();
        out.push((line_of(m.start()), m.as_str().to_string()));
    }
    for c in group.captures_iter(code) {
        let m = c.get(1).unwrap();
        // Each entry's first segment (nested groups `a::{b, c}` name `a` first).
        let flat = nested.replace_all(m.as_str(), "");
        for h in head.captures_iter(&flat) {
            out.push((line_of(m.start()), h[1].to_string()));
        }
    }
    out
}
