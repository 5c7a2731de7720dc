//! `factory check --fix`: applies the machine-applicable fixes the compiler attaches to
//! diagnostics (the same edits the language server offers as quick fixes), re-checks,
//! and repeats while fixes remain. Only files that were checked are edited, and only
//! prompt files are created; nothing else on disk changes.

use std::collections::BTreeMap;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use factory_compiler::diagnostic::Located;
use factory_compiler::diagnostic::{FixEdits, LineIndex, TextEdit};
use factory_compiler::driver::{self, Checked};
use factory_compiler::host;
use factory_runtime::sys::files::atomic_write;

/// Rounds of fix, re-check: a fix can reveal another (a bounded reloop lets the graph
/// rules run), but fixes never feed each other for long.
const MAX_ROUNDS: usize = 5;

/// Checks `paths`, applies every fix and checks again, up to [`MAX_ROUNDS`] times.
/// Returns the last check and one line per change made.
pub fn fix_paths(paths: &[PathBuf]) -> io::Result<(Checked, Vec<String>)> {
    let files: BTreeMap<String, PathBuf> = host::collect_sources(paths)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "fwf"))
        .map(|p| (driver::key_of(&p), p))
        .collect();
    let mut changes = Vec::new();
    let mut checked = driver::check_paths(paths)?;
    for _ in 0..MAX_ROUNDS {
        let made = apply(&checked, &files)?;
        if made.is_empty() {
            break;
        }
        changes.extend(made);
        checked = driver::check_paths(paths)?;
    }
    Ok((checked, changes))
}

/// The fixes chosen in one file: their edits never overlap.
#[derive(Default)]
struct FileFixes<'a> {
    source: Option<&'a str>,
    edits: Vec<&'a TextEdit>,
    titles: Vec<String>,
}

/// Applies the fixes of one check; a fix whose edits would overlap one already taken
/// waits for the next round (it is found again on the re-checked text).
fn apply(checked: &Checked, files: &BTreeMap<String, PathBuf>) -> io::Result<Vec<String>> {
    let mut by_file: BTreeMap<&str, FileFixes<'_>> = BTreeMap::new();
    let mut creates: BTreeMap<PathBuf, (&str, String)> = BTreeMap::new();
    for l in &checked.diagnostics {
        let Some(fix) = &l.diagnostic.fix else {
            continue;
        };
        if !applicable(fix, files) {
            continue;
        }
        let here = format!("{} {}", place(l), l.diagnostic.code.as_str());
        for c in &fix.creates {
            creates
                .entry(PathBuf::from(&c.path))
                .or_insert((c.contents.as_str(), format!("{here}: {}", fix.title)));
        }
        if fix.edits.is_empty() {
            continue;
        }
        let entry = by_file.entry(l.diagnostic.file.as_str()).or_default();
        entry.source = Some(l.source.as_str());
        let clashes = fix
            .edits
            .iter()
            .any(|e| entry.edits.iter().any(|t| overlap(&e.range, &t.range)));
        if !clashes {
            entry.edits.extend(fix.edits.iter());
            entry.titles.push(format!("{here}: {}", fix.title));
        }
    }
    let mut made = Vec::new();
    for (key, fixes) in by_file {
        let (Some(path), Some(source)) = (files.get(key), fixes.source) else {
            continue;
        };
        // The spans index the text that was checked; a file changed since is left alone.
        let on_disk = std::fs::read_to_string(path).map_err(|e| in_file(path, e))?;
        if on_disk != source {
            continue;
        }
        atomic_write(path, edited(source, fixes.edits).as_bytes()).map_err(|e| in_file(path, e))?;
        made.extend(fixes.titles);
    }
    for (path, (contents, title)) in creates {
        if path.exists() {
            continue;
        }
        atomic_write(&path, contents.as_bytes()).map_err(|e| in_file(&path, e))?;
        made.push(title);
    }
    Ok(made)
}

/// A fix is applied only when it edits checked `.fwf` files and creates nothing but
/// prompts (`prompts/<role>.md`).
fn applicable(fix: &FixEdits, files: &BTreeMap<String, PathBuf>) -> bool {
    fix.edits.iter().all(|e| files.contains_key(&e.file))
        && fix.creates.iter().all(|c| {
            let path = Path::new(&c.path);
            path.parent().and_then(Path::file_name) == Some("prompts".as_ref())
                && path.extension().is_some_and(|e| e == "md")
        })
}

/// Whether two edits touch the same text (two insertions at one place count: their
/// order would be a guess).
fn overlap(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start == b.start || (a.start < b.end && b.start < a.end)
}

/// `source` with `edits` applied, from the last to the first so earlier offsets hold.
fn edited(source: &str, mut edits: Vec<&TextEdit>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    let mut out = source.to_string();
    for e in edits {
        if e.range.end <= out.len()
            && out.is_char_boundary(e.range.start)
            && out.is_char_boundary(e.range.end)
        {
            out.replace_range(e.range.clone(), &e.replacement);
        }
    }
    out
}

/// `file:line:column` of a diagnostic.
fn place(l: &Located) -> String {
    let (line, column) = LineIndex::new(&l.source).line_col(l.diagnostic.span.start);
    format!("{}:{line}:{column}", l.diagnostic.file)
}

fn in_file(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}
