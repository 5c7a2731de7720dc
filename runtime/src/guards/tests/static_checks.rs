//! Findings read from the changed files themselves, without running anything:
//! tautologies and new skip markers in test files, conftest.py patches, dependency
//! redirects, and new files that shadow a module the tests import.

use std::collections::BTreeSet;
use std::path::Path;

use super::locate::{file_name, function_at, parent_dir, read};
use super::runners::Tools;
use super::{Finding, PathPair, count, looks_like_test, source};

/// Findings read from the changed files themselves.
pub(super) fn static_findings(
    diff: &[PathPair],
    base_dir: &Path,
    head_dir: &Path,
    tools: &Tools,
) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut py_names: Option<BTreeSet<String>> = None;
    for (old, new) in diff {
        let Some(new) = new else { continue };
        let before = old
            .as_deref()
            .map(|o| read(base_dir, o))
            .unwrap_or_default();
        let after = read(head_dir, new);
        let defs = source::functions(new, &after);
        let name = file_name(new);
        let holds_tests = looks_like_test(new) || count(&after).0 > 0;
        if holds_tests {
            for (line, text) in source::new_lines(&before, &after, source::tautologies) {
                found.push(Finding {
                    test: function_at(&defs, line).map(|d| d.name.clone()),
                    file: new.clone(),
                    line,
                    problem: format!("assertion replaced by a tautology `{text}`"),
                    expected: "an assertion that can fail".into(),
                });
            }
            for (line, text) in source::new_lines(&before, &after, source::skip_markers) {
                found.push(Finding {
                    test: function_at(&defs, line).map(|d| d.name.clone()),
                    file: new.clone(),
                    line,
                    problem: format!("new skip or expected-failure marker `{text}`"),
                    expected: "no new skips or expected failures".into(),
                });
            }
        }
        if name == "conftest.py" {
            for (line, text) in source::new_lines(&before, &after, source::conftest_patches) {
                found.push(Finding {
                    test: None,
                    file: new.clone(),
                    line,
                    problem: format!("conftest.py patches what the tests see: `{text}`"),
                    expected: "no new monkeypatching or result rewriting in conftest.py".into(),
                });
            }
        }
        if matches!(name, "Cargo.toml" | "go.mod") {
            for (line, text) in source::new_lines(&before, &after, source::dependency_redirects) {
                found.push(Finding {
                    test: None,
                    file: new.clone(),
                    line,
                    problem: format!("a dependency is redirected to other code: `{text}`"),
                    expected: "dependencies resolved as at base".into(),
                });
            }
        }
        if old.is_some() {
            continue;
        }
        let shadow = |problem: String| Finding {
            test: None,
            file: new.clone(),
            line: 0,
            problem,
            expected: "no new file that shadows a standard-library or dependency module".into(),
        };
        let top = new.split('/').next().unwrap_or("");
        if matches!(name, "sitecustomize.py" | "usercustomize.py") || name.ends_with(".pth") {
            found.push(shadow(format!(
                "`{name}` runs inside every Python interpreter"
            )));
        } else if top == "node_modules" || top == "vendor" || new.contains("/node_modules/") {
            found.push(shadow(format!("vendors dependency code under `{top}/`")));
        } else if new.starts_with(".cargo/config") {
            found.push(shadow("overrides cargo's configuration".into()));
        } else if let Some(module) = python_module(new) {
            let importable_dir = if name == "__init__.py" {
                parent_dir(parent_dir(new))
            } else {
                parent_dir(new)
            };
            let in_package = head_dir.join(importable_dir).join("__init__.py").is_file()
                && !importable_dir.is_empty();
            let names = py_names.get_or_insert_with(|| python_names(base_dir, tools));
            if !in_package && names.contains(module) {
                found.push(shadow(format!(
                    "shadows the Python module `{module}` for code run from `{}`",
                    if importable_dir.is_empty() {
                        "."
                    } else {
                        importable_dir
                    }
                )));
            }
        }
    }
    found
}

/// `json` for `json.py` or `json/__init__.py`.
fn python_module(path: &str) -> Option<&str> {
    let name = file_name(path);
    if name == "__init__.py" {
        let dir = parent_dir(path);
        return Some(file_name(dir)).filter(|d| !d.is_empty());
    }
    name.strip_suffix(".py")
}

/// The standard library, what the interpreter has installed, and what the base commit's
/// requirements declare.
fn python_names(base_dir: &Path, tools: &Tools) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = source::python_module_names(tools.python.as_deref())
        .into_iter()
        .collect();
    for f in [
        "requirements.txt",
        "requirements-dev.txt",
        "dev-requirements.txt",
    ] {
        names.extend(source::declared_python_deps(&read(base_dir, f), false));
    }
    names.extend(source::declared_python_deps(
        &read(base_dir, "pyproject.toml"),
        true,
    ));
    names.remove("conftest");
    names
}
