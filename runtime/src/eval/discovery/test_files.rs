//! Which files of a checkout are the project's (hidden, build and dependency
//! directories skipped), and whether its Python tests need pytest: facts the eval's
//! tests check and the test guard share.

use std::path::Path;

/// Directories never searched for project files.
pub fn skipped_dir(name: &str) -> bool {
    name.starts_with('.')
        || matches!(
            name,
            "node_modules" | "target" | "venv" | "__pycache__" | "vendor" | "dist" | "build"
        )
}

/// Relative paths of the files under `dir` (hidden, build and dependency dirs skipped).
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>, depth: usize) {
        if depth > 12 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !skipped_dir(&name) {
                    walk(root, &path, out, depth + 1);
                }
            } else if ft.is_file()
                && let Ok(rel) = path.strip_prefix(root)
            {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out, 0);
    out
}

/// Why the Python tests among `files` (relative to `dir`) can only run under pytest —
/// a `conftest.py`, an `import pytest`, or a test function outside any class, which
/// unittest never collects — or `None` when unittest runs them. The one rule the test
/// guard and the eval's tests check share.
pub fn pytest_needed(dir: &Path, files: &[String]) -> Option<String> {
    let name_of = |f: &String| f.rsplit('/').next().unwrap_or(f).to_string();
    if let Some(c) = files.iter().find(|f| name_of(f) == "conftest.py") {
        return Some(format!("{c} is pytest configuration"));
    }
    for f in files.iter().filter(|f| {
        let n = name_of(f);
        n.ends_with(".py") && (n.starts_with("test") || n.ends_with("_test.py"))
    }) {
        let Ok(text) = std::fs::read_to_string(dir.join(f)) else {
            continue;
        };
        if text.contains("import pytest") || text.contains("from pytest") {
            return Some(format!("{f} imports pytest"));
        }
        if text.lines().any(|l| l.starts_with("def test")) {
            return Some(format!(
                "{f} has test functions outside a unittest.TestCase, which only pytest collects"
            ));
        }
    }
    None
}
