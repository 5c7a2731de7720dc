//! Sacred Rule 1 (spec §16.1): no test deletion. A changed file that held tests at the
//! base commit must still exist and hold at least as many test functions and assertions.

use std::path::Path;
use std::sync::LazyLock;

use git2::Repository;
use regex::Regex;

use super::changes::{Change, ChangeKind};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("invalid built-in regex {pattern}: {e}"))
}

/// Test functions in Rust (`#[test]`, `#[tokio::test]`), Python, Go and JS/TS.
static TEST_FN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)#\[(?:[\w:]+::)?test\]|^\s*(?:async\s+)?def\s+test\w*\s*\(|^func\s+Test\w*\s*\(|\b(?:it|test)(?:\.\w+)?\s*\(\s*['`\x22]",
    )
});
/// Assertions: assert!/assert_eq!/assertEqual/assert, expect(...), t.Error/t.Fatal.
static ASSERT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bassert\w*\b|\bexpect\s*\(|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b")
});

/// Test functions and assertions in a file's text.
pub fn count(text: &str) -> (usize, usize) {
    (
        TEST_FN.find_iter(text).count(),
        ASSERT.find_iter(text).count(),
    )
}

/// A path that by convention holds tests.
pub fn looks_like_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let dirs: Vec<&str> = path.split('/').collect();
    dirs[..dirs.len() - 1]
        .iter()
        .any(|d| matches!(*d, "tests" | "test" | "__tests__" | "spec"))
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || [".test.", ".spec."].iter().any(|m| name.contains(m))
}

/// One message per deleted or weakened test file.
pub fn weakened_tests(repo: &Repository, root: &Path, changes: &[Change]) -> Vec<String> {
    let mut found = Vec::new();
    for change in changes {
        let Some(old_blob) = change.old_blob else {
            continue;
        };
        let Ok(blob) = repo.find_blob(old_blob) else {
            continue;
        };
        let before_text = String::from_utf8_lossy(blob.content());
        let before = count(&before_text);
        let old_path = change.old_path.as_deref().unwrap_or(&change.path);
        if before.0 == 0 && !looks_like_test(old_path) {
            continue;
        }
        if change.kind == ChangeKind::Deleted {
            found.push(format!(
                "{old_path}: test file deleted ({} tests, {} assertions)",
                before.0, before.1
            ));
            continue;
        }
        let after = match std::fs::read(root.join(&change.path)) {
            Ok(bytes) => count(&String::from_utf8_lossy(&bytes)),
            Err(_) => (0, 0),
        };
        if after.0 < before.0 || after.1 < before.1 {
            found.push(format!(
                "{}: tests weakened ({} → {} tests, {} → {} assertions)",
                change.path, before.0, after.0, before.1, after.1
            ));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_tests_and_asserts_across_languages() {
        assert_eq!(
            count(
                "#[test]\nfn a() { assert_eq!(1, 1); assert!(true); }\n#[tokio::test]\nasync fn b() {}"
            ),
            (2, 2)
        );
        assert_eq!(
            count(
                "def test_a():\n    assert x\n\nasync def test_b():\n    self.assertEqual(1, 1)\n"
            ),
            (2, 2)
        );
        assert_eq!(count("func TestA(t *testing.T) { t.Fatal(\"x\") }"), (1, 1));
        assert_eq!(
            count("it('adds', () => { expect(1).toBe(1) })\ntest.skip(\"x\", () => {})"),
            (2, 1)
        );
    }

    #[test]
    fn recognises_test_paths() {
        for p in [
            "tests/cli.rs",
            "pkg/foo_test.go",
            "test_app.py",
            "src/app.spec.ts",
            "web/__tests__/a.js",
        ] {
            assert!(looks_like_test(p), "{p}");
        }
        assert!(!looks_like_test("src/testing.rs"));
    }
}
