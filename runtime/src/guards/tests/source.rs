//! What the runner cannot see, read from the source at both commits: test function
//! bodies (to tell an honest rename from a rewrite), skip and expected-failure markers,
//! assertions replaced by tautologies, and files that shadow a module the tests import.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::runners::Runner;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("invalid built-in regex {pattern}: {e}"))
}

/// One function (or JS `test('name', ...)` block) in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnDef {
    pub name: String,
    /// 1-based line of its definition.
    pub line: usize,
    /// 1-based last line of its body.
    pub end: usize,
    /// The body with its own name, comments and layout removed.
    pub body: String,
}

static PY_DEF: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\("));
static BRACE_FN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\bfn\s+(\w+)\s*[<(]|(?m)^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\(|\b(?:it|test)(?:\.(?:skip|only|todo))?\s*\(\s*['"`]([^'"`]+)['"`]"#,
    )
});

/// The functions defined in `path`'s `text`, by its extension.
pub fn functions(path: &str, text: &str) -> Vec<FnDef> {
    if path.ends_with(".py") {
        python_functions(text)
    } else if [".rs", ".go", ".js", ".mjs", ".cjs", ".ts"]
        .iter()
        .any(|e| path.ends_with(e))
    {
        brace_functions(text)
    } else {
        Vec::new()
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn python_functions(text: &str) -> Vec<FnDef> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = PY_DEF.captures(line) else {
            continue;
        };
        let indent = c[1].len();
        let name = c[2].to_string();
        let mut end = i;
        for (j, l) in lines.iter().enumerate().skip(i + 1) {
            if l.trim().is_empty() {
                continue;
            }
            if indent_of(l) <= indent {
                break;
            }
            end = j;
        }
        let mut body = vec![normalise_line(&line.replacen(&name, "_", 1), "#")];
        body.extend(lines[i + 1..=end].iter().map(|l| normalise_line(l, "#")));
        body.retain(|l| !l.is_empty());
        out.push(FnDef {
            name,
            line: i + 1,
            end: end + 1,
            body: body.join("\n"),
        });
    }
    out
}

/// Trims and drops a trailing comment (a comment marker inside a string is rare enough in
/// test code to accept a false "changed").
fn normalise_line(line: &str, comment: &str) -> String {
    let code = match line.find(comment) {
        Some(at) => &line[..at],
        None => line,
    };
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn brace_functions(text: &str) -> Vec<FnDef> {
    let mut out = Vec::new();
    for c in BRACE_FN.captures_iter(text) {
        let Some(m) = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)) else {
            continue;
        };
        let Some(whole) = c.get(0) else { continue };
        let name = m.as_str().to_string();
        let Some(open) = text[whole.end()..].find('{').map(|o| o + whole.end()) else {
            continue;
        };
        let mut depth = 0usize;
        let mut close = None;
        for (k, ch) in text[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = Some(open + k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let header = text[whole.start()..open].replacen(&name, "_", 1);
        let body: Vec<String> = header
            .lines()
            .chain(text[open..=close].lines())
            .map(|l| normalise_line(l, "//"))
            .filter(|l| !l.is_empty())
            .collect();
        out.push(FnDef {
            name,
            line: line_of(text, whole.start()),
            end: line_of(text, close),
            body: body.join(" "),
        });
    }
    out
}

/// The function a test id names (its last path segment, parameters dropped).
pub fn leaf_name(runner: Runner, id: &str) -> String {
    let id = id.split('[').next().unwrap_or(id);
    let leaf = match runner {
        Runner::Pytest | Runner::Cargo => id.rsplit("::").next(),
        Runner::Unittest => id.rsplit('.').next(),
        Runner::Go => id.rsplit('/').next(),
        Runner::Node => id.rsplit(" > ").next(),
    };
    leaf.unwrap_or(id).trim().to_string()
}

static SKIP_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"#\[ignore\b|@(?:unittest\.)?skip(?:If|Unless)?\b|@pytest\.mark\.(?:skip|skipif|xfail)\b",
        r"|\bpytest\.(?:skip|xfail|importorskip)\s*\(|\.skipTest\s*\(|\bSkipTest\b",
        r"|@(?:unittest\.)?expectedFailure\b|\bt\.Skip(?:f|Now)?\s*\(",
        r"|\b(?:it|test|describe)\.(?:skip|todo)\s*\(|\{\s*(?:skip|todo)\s*:\s*true|\bx(?:it|describe)\s*\(",
    ))
});

/// Lines (1-based, trimmed text) holding a skip or expected-failure marker.
pub fn skip_markers(text: &str) -> Vec<(usize, String)> {
    marked_lines(text, |l| SKIP_MARKER.is_match(l))
}

fn marked_lines(text: &str, pred: impl Fn(&str) -> bool) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| pred(l))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
        .collect()
}

/// Lines of `head` matching `pred` beyond those already in `base` (a multiset difference
/// by trimmed text, so moving a line is not "new").
pub fn new_lines(
    base: &str,
    head: &str,
    find: fn(&str) -> Vec<(usize, String)>,
) -> Vec<(usize, String)> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (_, l) in find(base) {
        *seen.entry(l).or_default() += 1;
    }
    find(head)
        .into_iter()
        .filter(|(_, l)| match seen.get_mut(l) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

static PY_ASSERT_LITERAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^assert\s*\(?\s*(?:True|not\s+False|not\s+None|[1-9]\d*|"[^"]+"|'[^']+')\s*\)?\s*(?:,.*)?$"#,
    )
});
static PY_ASSERT_CMP: LazyLock<Regex> =
    LazyLock::new(|| re(r"^assert\s+(.+?)\s*(?:==|\bis\b|>=|<=)\s*(.+?)\s*(?:,.*)?$"));
static CALL_TRUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:self\.)?(?:assertTrue|assert_?|assert!|assert\.ok|assert\.equal\(true,)\s*\(?\s*(?:true|True|1)\s*\)?\s*\)?\s*;?$|^(?:self\.)?assertFalse\s*\(\s*(?:False|0|None)\s*\)$|^(?:self\.)?assertIsNotNone\s*\(\s*(?:True|1|'[^']*'|\x22[^\x22]*\x22)\s*\)$",
    )
});
static CALL_BINARY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:self\.)?(?:assert_eq!|assert\.(?:equal|strictEqual|deepEqual|deepStrictEqual)|assert(?:Equal|Equals|Is|CountEqual|ListEqual|DictEqual)|assert\.Equal|require\.Equal)\s*\((.*)\)\s*;?$",
    )
});
static CALL_UNARY_CMP: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:assert!|self\.assertTrue)\s*\((.+?)\s*(?:==|>=|<=)\s*(.+?)\)\s*;?$"));
static EXPECT_SAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^expect\((.+)\)\.(?:toBe|toEqual|toStrictEqual)\((.+)\)\s*;?$|^expect\((?:true|1)\)\.(?:toBeTruthy|toBe\(true\))\(?\)?\s*;?$",
    )
});

/// Go's equality calls, wherever they sit in a line (`if !reflect.DeepEqual(got, got) {`).
static GO_EQUAL_CALL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:reflect\.DeepEqual|cmp\.Equal|bytes\.Equal|assert\.ObjectsAreEqual)\s*\(")
});
/// Go's testify truths: `assert.True(t, true)`, `require.False(t, false)`.
static GO_TRUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:assert|require)\.(?:True\(\s*t\s*,\s*true|False\(\s*t\s*,\s*false|NotNil\(\s*t\s*,\s*(?:true|1|\x22[^\x22]*\x22))\s*[,)]",
    )
});

/// The text inside the parenthesis that opens at byte `open` (exclusive), up to its match.
fn inside_parens(s: &str, open: usize) -> Option<&str> {
    let mut depth = 0i32;
    for (i, ch) in s[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits `a, b, c` at top-level commas.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    for ch in s.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(ch),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// An assertion that cannot fail: `assert True`, `assert x == x`, `assert_eq!(1, 1)`,
/// `assert!(true)`, `self.assertTrue(True)`, `expect(x).toBe(x)`.
pub fn is_tautology(line: &str) -> bool {
    let l = line.trim().trim_end_matches(';').trim();
    if PY_ASSERT_LITERAL.is_match(l) || CALL_TRUE.is_match(l) || GO_TRUE.is_match(l) {
        return true;
    }
    let same = |a: &str, b: &str| {
        let n = |s: &str| s.split_whitespace().collect::<String>();
        !a.trim().is_empty() && n(a) == n(b)
    };
    if let Some(c) = PY_ASSERT_CMP
        .captures(l)
        .or_else(|| CALL_UNARY_CMP.captures(l))
        && same(&c[1], &c[2])
    {
        return true;
    }
    if let Some(c) = CALL_BINARY.captures(l) {
        let args = split_args(&c[1]);
        // testify's assert.Equal(t, a, b) takes t first.
        let args: Vec<&String> = if args.first().is_some_and(|a| a == "t") {
            args.iter().skip(1).collect()
        } else {
            args.iter().collect()
        };
        if args.len() >= 2 && same(args[0], args[1]) {
            return true;
        }
    }
    for m in GO_EQUAL_CALL.find_iter(l) {
        if let Some(args) = inside_parens(l, m.end() - 1) {
            let args = split_args(args);
            if args.len() == 2 && same(&args[0], &args[1]) {
                return true;
            }
        }
    }
    if let Some(c) = EXPECT_SAME.captures(l) {
        return match (c.get(1), c.get(2)) {
            (Some(a), Some(b)) => same(a.as_str(), b.as_str()),
            _ => true,
        };
    }
    false
}

/// Lines (1-based, trimmed) holding a tautological assertion.
pub fn tautologies(text: &str) -> Vec<(usize, String)> {
    marked_lines(text, is_tautology)
}

static CONFTEST_PATCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bmonkeypatch\b|\bsetattr\s*\(|\bsys\.modules\b|\bbuiltins\b|__import__|\bpytest_collection_modifyitems\b|\bpytest_runtest_\w+",
    )
});

/// conftest.py lines that patch modules or rewrite collection/results.
pub fn conftest_patches(text: &str) -> Vec<(usize, String)> {
    marked_lines(text, |l| CONFTEST_PATCH.is_match(l))
}

static DEP_REDIRECT: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(?:replace\b|\[patch\b|\[replace\b|paths\s*=)"));

/// go.mod `replace`, Cargo.toml `[patch]`/`[replace]` lines: a dependency swapped for local code.
pub fn dependency_redirects(text: &str) -> Vec<(usize, String)> {
    marked_lines(text, |l| DEP_REDIRECT.is_match(l))
}

/// Python's top-level module names for shadowing: asks the interpreter (isolated, so the
/// project is not on its path) for the standard library and what is installed.
pub fn python_module_names(python: Option<&std::path::Path>) -> Vec<String> {
    const FALLBACK: &[&str] = &[
        "abc",
        "argparse",
        "array",
        "ast",
        "asyncio",
        "base64",
        "builtins",
        "collections",
        "contextlib",
        "copy",
        "csv",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "functools",
        "glob",
        "hashlib",
        "heapq",
        "inspect",
        "io",
        "itertools",
        "json",
        "logging",
        "math",
        "operator",
        "os",
        "pathlib",
        "pickle",
        "random",
        "re",
        "shutil",
        "socket",
        "sqlite3",
        "string",
        "struct",
        "subprocess",
        "sys",
        "tempfile",
        "threading",
        "time",
        "types",
        "typing",
        "unittest",
        "urllib",
        "uuid",
        "warnings",
        "pytest",
        "_pytest",
    ];
    let mut names: Vec<String> = FALLBACK.iter().map(|s| s.to_string()).collect();
    if let Some(py) = python.and_then(|p| p.to_str()) {
        let script = "import sys, pkgutil\nnames = set(getattr(sys, 'stdlib_module_names', ())) | set(sys.builtin_module_names)\nnames |= {m.name for m in pkgutil.iter_modules()}\nprint('\\n'.join(sorted(names)))";
        if let Ok(out) = crate::sys::process::run_program(
            py,
            &["-I", "-c", script],
            &std::env::temp_dir(),
            std::time::Duration::from_secs(30),
        ) && out.success()
        {
            names.extend(out.stdout.lines().map(|l| l.trim().to_string()));
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Dependency names declared in requirements*.txt (`quoted: false`) or as quoted strings
/// in pyproject.toml (`quoted: true`), lower-case with `-` as `_`.
pub fn declared_python_deps(text: &str, quoted: bool) -> Vec<String> {
    static BARE: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s*([A-Za-z][A-Za-z0-9_.-]*)\s*(?:[<>=!~\[;]|$)"));
    static QUOTED: LazyLock<Regex> =
        LazyLock::new(|| re(r#"^\s*["']([A-Za-z][A-Za-z0-9_.-]*)\s*(?:[<>=!~\[;"'])"#));
    let dep = if quoted { &*QUOTED } else { &*BARE };
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            dep.captures(l)
                .map(|c| c[1].to_lowercase().replace('-', "_"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tautologies_are_recognised_and_real_assertions_are_not() {
        for t in [
            "assert True",
            "assert 1 == 1",
            "assert x == x",
            "assert result == result, 'same'",
            "self.assertTrue(True)",
            "self.assertEqual(total, total)",
            "assert_eq!(1, 1);",
            "assert_eq!(add(1, 2), add(1, 2));",
            "assert!(true);",
            "assert!(x == x);",
            "expect(x).toBe(x);",
            "assert.Equal(t, got, got)",
            "if !reflect.DeepEqual(x, x) {",
            "if !reflect.DeepEqual(parse(in), parse(in)) {",
            "\tif !cmp.Equal(got, got) { t.Fatal(\"x\") }",
            "assert.True(t, true)",
            "require.True(t, true, \"always\")",
            "self.assertIs(x, x)",
            "expect(a).toEqual(a);",
        ] {
            assert!(is_tautology(t), "{t}");
        }
        for t in [
            "assert add(1, 2) == 3",
            "self.assertEqual(total, 6)",
            "assert_eq!(add(1, 2), 3);",
            "assert!(ok);",
            "expect(x).toBe(3);",
            "assert x",
            "if !reflect.DeepEqual(got, want) {",
            "if !reflect.DeepEqual(f(x), f(y)) {",
            "assert.True(t, ok)",
        ] {
            assert!(!is_tautology(t), "{t}");
        }
    }

    #[test]
    fn bodies_ignore_name_comments_and_layout() {
        let a = functions(
            "t.py",
            "def test_a():\n    x = 1  # one\n    assert x == 1\n\ndef helper():\n    pass\n",
        );
        let b = functions("t.py", "def test_b():\n    x = 1\n\n    assert x == 1\n");
        assert_eq!(a[0].body, b[0].body);
        assert_eq!((a[0].line, a[0].end), (1, 3));
        let r = functions(
            "a.rs",
            "#[test]\nfn one() {\n    // c\n    assert_eq!(f(), 2);\n}\n#[test]\nfn two() { assert_eq!(f(), 2); }\n",
        );
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].body, r[1].body);
        assert_eq!(r[1].line, 7);
    }

    #[test]
    fn new_markers_are_a_multiset_difference() {
        let base = "@unittest.skip('x')\ndef a(): pass\n";
        let head = "@unittest.skip('x')\ndef a(): pass\n@unittest.skip('x')\ndef b(): pass\n";
        assert_eq!(
            new_lines(base, head, skip_markers),
            vec![(3, "@unittest.skip('x')".to_string())]
        );
        assert!(new_lines(head, base, skip_markers).is_empty());
        assert_eq!(skip_markers("#[ignore = \"slow\"]\nfn x() {}").len(), 1);
    }
}
