//! Where a test is defined: a test id's file, line and function in a checkout, found by
//! name in the files a change touched first, then in every file of the runner's language.

use std::collections::BTreeMap;
use std::path::Path;

use super::runners::{self, Runner};
use super::source::{self, FnDef};

pub(super) fn read(dir: &Path, rel: &str) -> String {
    std::fs::read(dir.join(rel))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

pub(super) fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// The function containing (or, for a decorator or attribute, following) `line`.
pub(super) fn function_at(defs: &[FnDef], line: usize) -> Option<&FnDef> {
    defs.iter()
        .filter(|d| d.line <= line && line <= d.end)
        .min_by_key(|d| d.end - d.line)
        .or_else(|| {
            defs.iter()
                .filter(|d| d.line > line && d.line <= line + 3)
                .min_by_key(|d| d.line)
        })
}

/// Where a function named `name` is defined: the listed files first, then every file of
/// the runner's language.
pub(super) struct Locator<'a> {
    pub(super) dir: &'a Path,
    preferred: Vec<String>,
    extensions: &'static [&'static str],
    cache: BTreeMap<String, Vec<FnDef>>,
    all: Option<Vec<String>>,
}

impl<'a> Locator<'a> {
    pub(super) fn new(dir: &'a Path, preferred: Vec<String>, runner: Runner) -> Self {
        let extensions = runner.extensions();
        let preferred = preferred
            .into_iter()
            .filter(|p| extensions.iter().any(|e| p.ends_with(&format!(".{e}"))))
            .collect();
        Self {
            dir,
            preferred,
            extensions,
            cache: BTreeMap::new(),
            all: None,
        }
    }

    fn defs(&mut self, file: &str) -> &[FnDef] {
        let dir = self.dir;
        self.cache
            .entry(file.to_string())
            .or_insert_with(|| source::functions(file, &read(dir, file)))
    }

    /// A definition of `name`, in `hint` first; among same-named ones in a file, the one
    /// inside the `suites` (JavaScript's describe blocks) when there is one.
    fn find(
        &mut self,
        name: &str,
        hint: Option<&str>,
        suites: &[String],
    ) -> Option<(String, FnDef)> {
        let mut files: Vec<String> = hint
            .filter(|h| self.dir.join(h).is_file())
            .map(str::to_string)
            .into_iter()
            .collect();
        files.extend(self.preferred.iter().cloned());
        if let Some(found) = self.search(&files, name, suites) {
            return Some(found);
        }
        let extensions = self.extensions;
        let all = self
            .all
            .get_or_insert_with(|| {
                runners::files_under(self.dir)
                    .into_iter()
                    .filter(|p| extensions.iter().any(|e| p.ends_with(&format!(".{e}"))))
                    .collect()
            })
            .clone();
        self.search(&all, name, suites)
    }

    fn search(
        &mut self,
        files: &[String],
        name: &str,
        suites: &[String],
    ) -> Option<(String, FnDef)> {
        files.iter().find_map(|f| {
            let defs = self.defs(f);
            let mut named = defs.iter().filter(|d| d.name == name);
            let first = named.clone().next();
            named
                .find(|d| d.suites == suites)
                .or(first)
                .map(|d| (f.clone(), d.clone()))
        })
    }
}

/// The file a test id names, when it does (pytest `path::...`, cargo `tests/x.rs::...`,
/// unittest `pkg.mod.Class.test`).
pub(super) fn id_file(runner: Runner, id: &str) -> Option<String> {
    match runner {
        Runner::Pytest | Runner::Cargo => id
            .split("::")
            .next()
            .filter(|f| f.contains('.'))
            .map(str::to_string),
        Runner::Unittest => {
            let parts: Vec<&str> = id.split('.').collect();
            (parts.len() > 2).then(|| format!("{}.py", parts[..parts.len() - 2].join("/")))
        }
        Runner::Node(fw) if fw.ids_name_files() => id
            .split(" > ")
            .next()
            .filter(|f| {
                runner
                    .extensions()
                    .iter()
                    .any(|e| f.ends_with(&format!(".{e}")))
            })
            .map(str::to_string),
        Runner::Go | Runner::Node(_) => None,
    }
}

/// The describe blocks a JavaScript test id names around its test (`file > a > b > t`
/// → `[a, b]`); empty for other runners.
fn id_suites(runner: Runner, id: &str) -> Vec<String> {
    let Runner::Node(_) = runner else {
        return Vec::new();
    };
    let mut parts: Vec<&str> = id.split(" > ").collect();
    parts.pop();
    if id_file(runner, id).is_some() && !parts.is_empty() {
        parts.remove(0);
    }
    parts.into_iter().map(str::to_string).collect()
}

/// Where test `id` is defined: its file, line and definition when found.
pub(super) fn locate(
    runner: Runner,
    loc: &mut Locator,
    id: &str,
) -> (String, usize, Option<FnDef>) {
    if runner == Runner::Cargo
        && let Some((file, def)) = super::doctest::locate(loc.dir, id)
    {
        return (file, def.as_ref().map_or(0, |d| d.line), def);
    }
    let name = source::leaf_name(runner, id);
    match loc.find(
        &name,
        id_file(runner, id).as_deref(),
        &id_suites(runner, id),
    ) {
        Some((file, def)) => (file, def.line, Some(def)),
        None => (
            id_file(runner, id).unwrap_or_else(|| runner.name().into()),
            0,
            None,
        ),
    }
}

/// The text of a definition's lines in `dir/file`.
pub(super) fn def_text(dir: &Path, file: &str, def: Option<&FnDef>) -> String {
    let Some(def) = def else {
        return String::new();
    };
    read(dir, file)
        .lines()
        .skip(def.line.saturating_sub(1))
        .take(def.end.saturating_sub(def.line) + 1)
        .collect::<Vec<_>>()
        .join("\n")
}
