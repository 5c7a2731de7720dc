//! What the runner cannot see, read from the source at both commits: test function
//! bodies (to tell an honest rename from a rewrite), skip and expected-failure markers,
//! assertions replaced by tautologies, and files that shadow a module the tests import.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::runners::Runner;
use crate::sys::pattern::re;

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
    /// The titles of the `describe` blocks a JavaScript test sits in, outermost first
    /// (empty elsewhere): what tells apart same-named tests in one file.
    pub suites: Vec<String>,
}

static PY_DEF: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\("));
static BRACE_FN: LazyLock<Regex> =
    LazyLock::new(|| re(r#"\bfn\s+(\w+)\s*[<(]|(?m)^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\("#));
/// A string literal in any of JavaScript's three quotes (escapes allowed inside).
const JS_STRING: &str = r#"(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`)"#;
/// Modifiers between a test function and its call: `it.skip(`, `test.concurrent.only(`,
/// `it.skipIf(cond)(`.
const JS_MODIFIERS: &str =
    r"(?:\.(?:skip|only|todo|failing|serial|concurrent|sequential|(?:skip|run)If\([^)]*\)))*";
/// `it('title', …)`, `test("title", …)`, `specify(…)`, `xit(…)` (mocha, jest, vitest, ava,
/// tape, node:test).
static JS_TEST: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"\b(?:x?it|x?test|x?specify){JS_MODIFIERS}\s*\(\s*{JS_STRING}"
    ))
});
/// `describe('title', …)`, `context(…)`, `suite(…)`.
static JS_SUITE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"\b(?:x?describe|x?context|suite){JS_MODIFIERS}\s*\(\s*{JS_STRING}"
    ))
});

/// The functions defined in `path`'s `text`, by its extension.
pub fn functions(path: &str, text: &str) -> Vec<FnDef> {
    if path.ends_with(".py") {
        python_functions(text)
    } else if path.ends_with(".rs") || path.ends_with(".go") {
        brace_functions(text)
    } else if [".js", ".mjs", ".cjs", ".ts", ".jsx", ".tsx", ".mts", ".cts"]
        .iter()
        .any(|e| path.ends_with(e))
    {
        js_functions(text)
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
            suites: Vec::new(),
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
        let Some(m) = c.get(1).or_else(|| c.get(2)) else {
            continue;
        };
        let Some(whole) = c.get(0) else { continue };
        let name = m.as_str().to_string();
        let Some(open) = text[whole.end()..].find('{').map(|o| o + whole.end()) else {
            continue;
        };
        let Some(close) = matching_brace(text, open) else {
            continue;
        };
        out.push(FnDef {
            body: normalised_body(text, whole.start(), open, close, m.as_str()),
            name,
            line: line_of(text, whole.start()),
            end: line_of(text, close),
            suites: Vec::new(),
        });
    }
    out
}

/// The offset of the `}` closing the `{` at `open`.
fn matching_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(open + k);
                }
            }
            _ => {}
        }
    }
    None
}

/// A definition's text from `start` to `close` with its name (first found in the
/// header before `open`) replaced, comments and layout removed.
fn normalised_body(text: &str, start: usize, open: usize, close: usize, name: &str) -> String {
    let header = text[start..open].replacen(name, "_", 1);
    let body: Vec<String> = header
        .lines()
        .chain(text[open..=close].lines())
        .map(|l| normalise_line(l, "//"))
        .filter(|l| !l.is_empty())
        .collect();
    body.join(" ")
}

/// A JavaScript string literal's text as the program sees it (the usual escapes).
fn unescape_js(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Where the call whose arguments start at `from` (just after its title) has its body:
/// the callback's braces, or, for an arrow function without braces
/// (`it('x', () => expect(f()).toBe(1))`), the rest of the call. `(start, end)` offsets,
/// both inclusive.
fn js_call_body(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut depth = 1i32;
    for (k, ch) in text[from..].char_indices() {
        match ch {
            '{' => return Some((from + k, matching_brace(text, from + k)?)),
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((from, from + k));
                }
            }
            _ => {}
        }
    }
    None
}

/// JavaScript tests (`it`, `test`, `specify`), each with the `describe` blocks around it.
fn js_functions(text: &str) -> Vec<FnDef> {
    let title = |c: &regex::Captures| -> Option<(String, String)> {
        let m = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3))?;
        Some((m.as_str().to_string(), unescape_js(m.as_str())))
    };
    let suites: Vec<(String, usize, usize)> = JS_SUITE
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let (_, name) = title(&c)?;
            let (_, end) = js_call_body(text, whole.end())?;
            Some((name, whole.start(), end))
        })
        .collect();
    let mut out = Vec::new();
    for c in JS_TEST.captures_iter(text) {
        let (Some(whole), Some((raw, name))) = (c.get(0), title(&c)) else {
            continue;
        };
        let Some((open, close)) = js_call_body(text, whole.end()) else {
            continue;
        };
        let around = suites
            .iter()
            .filter(|(_, s, e)| *s < whole.start() && whole.start() < *e)
            .map(|(n, _, _)| n.clone())
            .collect();
        out.push(FnDef {
            body: normalised_body(text, whole.start(), open, close, &raw),
            name,
            line: line_of(text, whole.start()),
            end: line_of(text, close),
            suites: around,
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
        Runner::Node(_) => id.rsplit(" > ").next(),
    };
    leaf.unwrap_or(id).trim().to_string()
}

static SKIP_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"#\[ignore\b|@(?:unittest\.)?skip(?:If|Unless)?\b|@pytest\.mark\.(?:skip|skipif|xfail)\b",
        r"|\bpytest\.(?:skip|xfail|importorskip)\s*\(|\.skipTest\s*\(|\bSkipTest\b",
        r"|@(?:unittest\.)?expectedFailure\b|\bt\.Skip(?:f|Now)?\s*\(",
        // JavaScript: mocha, jest, vitest, ava, tape and node:test.
        r"|\b(?:it|test|describe|context|suite|specify)(?:\.\w+)*\.(?:skip|todo|failing|skipIf)\b",
        r"|\{\s*(?:skip|todo)\s*:\s*(?:true|'|\x22|`)|\bx(?:it|describe|test|context|specify)\s*\(",
        r"|\bthis\.skip\s*\(|\bt\.(?:skip|todo)\s*\(|\bt\.\w+\.skip\s*\(|\b(?:ctx|context)\.skip\s*\(",
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

/// JavaScript assertions comparing two arguments, wherever they sit in a line: node's
/// and chai's `assert.*`, ava's and tape's `t.*`.
static JS_BINARY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:assert\.(?:equal|strictEqual|deepEqual|deepStrictEqual|eql|sameMembers|sameDeepMembers)|t\.(?:is|deepEqual|deepEquals|equal|equals|strictEqual|strictEquals|same|looseEqual|like))\s*\(",
    )
});
/// JavaScript assertions that a value is truthy (`assert(v)`, `assert.ok`, chai's
/// `assert.isTrue`, ava's `t.true`, tape's `t.ok`) or falsy.
static JS_TRUTHY: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|[^\w.])(?:assert(?:\.ok|\.isTrue|\.isOk)?|t\.(?:ok|true|truthy|assert))\s*\(")
});
static JS_FALSY: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:assert\.(?:isFalse|isNotOk|notOk)|t\.(?:notOk|false|falsy))\s*\("));
static JS_EXPECT: LazyLock<Regex> = LazyLock::new(|| re(r"\bexpect\s*\("));
/// What follows `expect(a)` to compare it with `b`: jest's and vitest's matchers, chai's.
static JS_EXPECT_EQUAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*\.(?:toBe|toEqual|toStrictEqual|to(?:\.be|\.deep)*\.(?:equal|equals|eql|eq|strictEqual))\s*\(",
    )
});
/// What follows `expect(a)` to say it is truthy, or falsy.
static JS_EXPECT_TRUTHY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*\.(?:toBeTruthy\s*\(\s*\)|toBeDefined\s*\(\s*\)|toBe\s*\(\s*true\s*\)|to\.be\.(?:true|ok)\b|to\.exist\b|to\.be\.not\.undefined\b)",
    )
});
static JS_EXPECT_FALSY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*\.(?:toBeFalsy\s*\(\s*\)|toBeNull\s*\(\s*\)|toBeUndefined\s*\(\s*\)|toBe\s*\(\s*false\s*\)|to\.be\.(?:false|null|undefined|not\.ok)\b|to\.not\.be\.ok\b|to\.not\.exist\b)",
    )
});

/// A JavaScript literal that is always truthy: `true`, `1`, `'x'`, `[]`, `{}`, `!0`.
fn js_truthy_literal(s: &str) -> bool {
    let s = s.trim();
    matches!(
        s,
        "true" | "!false" | "!0" | "!null" | "!undefined" | "[]" | "{}"
    ) || s.parse::<f64>().is_ok_and(|n| n != 0.0)
        || (s.len() > 2
            && ['\'', '"', '`']
                .iter()
                .any(|q| s.starts_with(*q) && s.ends_with(*q)))
}

/// A JavaScript literal that is always falsy: `false`, `0`, `null`, `undefined`, `''`.
fn js_falsy_literal(s: &str) -> bool {
    matches!(
        s.trim(),
        "false" | "0" | "null" | "undefined" | "''" | "\"\"" | "``" | "!true" | "!1" | "NaN"
    )
}

/// A JavaScript assertion in `l` that cannot fail: `assert.equal(a, a)`, `t.is(a, a)`,
/// `assert.ok(true)`, `t.true(true)`, `expect(a).toBe(a)`, `expect(a).to.deep.equal(a)`,
/// `expect(true).toBeTruthy()`, `expect(true).to.be.true`, `expect(null).toBeNull()`.
fn js_tautology(l: &str, same: impl Fn(&str, &str) -> bool) -> bool {
    let args_at = |paren: usize| inside_parens(l, paren).map(split_args);
    for m in JS_BINARY.find_iter(l) {
        if let Some(args) = args_at(m.end() - 1)
            && args.len() >= 2
            && same(&args[0], &args[1])
        {
            return true;
        }
    }
    let first = |re: &Regex, lit: fn(&str) -> bool| {
        re.find_iter(l).any(|m| {
            args_at(m.end() - 1)
                .and_then(|a| a.first().cloned())
                .is_some_and(|a| lit(&a))
        })
    };
    if first(&JS_TRUTHY, js_truthy_literal) || first(&JS_FALSY, js_falsy_literal) {
        return true;
    }
    for m in JS_EXPECT.find_iter(l) {
        let paren = m.end() - 1;
        let Some(actual) = inside_parens(l, paren) else {
            continue;
        };
        let after = paren + actual.len() + 2;
        let rest = l.get(after..).unwrap_or("");
        if let Some(e) = JS_EXPECT_EQUAL.find(rest) {
            if let Some(expected) = inside_parens(rest, e.end() - 1)
                && same(actual, expected)
            {
                return true;
            }
        } else if (JS_EXPECT_TRUTHY.is_match(rest) && js_truthy_literal(actual))
            || (JS_EXPECT_FALSY.is_match(rest) && js_falsy_literal(actual))
        {
            return true;
        }
    }
    false
}

/// An assertion that cannot fail: `assert True`, `assert x == x`, `assert_eq!(1, 1)`,
/// `assert!(true)`, `self.assertTrue(True)`, `expect(x).toBe(x)`, `assert.equal(x, x)`,
/// `t.is(x, x)`, `expect(true).to.be.true`.
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
    if js_tautology(l, same) {
        return true;
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
            // JavaScript: node's assert, chai, jest/vitest, ava, tape.
            "assert.equal(x, x)",
            "assert.strictEqual(mime.lookup('html'), mime.lookup('html'));",
            "assert.deepStrictEqual(parse(s), parse(s))",
            "assert.ok(true)",
            "assert(true);",
            "assert.isTrue(true)",
            "assert.ok('text/html')",
            "expect(true).to.be.true;",
            "expect(1).to.be.ok",
            "expect(result).to.equal(result);",
            "expect(result).to.deep.equal(result)",
            "expect(a).to.eql(a)",
            "expect(true).toBeTruthy();",
            "expect(null).toBeNull()",
            "expect(f(x)).toStrictEqual(f(x))",
            "it('works', () => { expect(a).toBe(a) })",
            "t.is(a, a);",
            "t.deepEqual(parse(s), parse(s))",
            "t.true(true)",
            "t.ok(1, 'always')",
            "t.equal(x, x, 'same')",
            "t.falsy(0)",
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
            "assert.equal(mime.lookup('html'), 'text/html')",
            "assert.strictEqual(mimeTypes.charset('text/x-bogus'), false)",
            "assert.ok(mime.lookup('.html'))",
            "assert(ok)",
            "expect(result).to.equal(6)",
            "expect(result).to.not.equal(result)",
            "expect(ok).toBeTruthy()",
            "expect(parse('')).toBeNull()",
            "t.is(add(1, 2), 3)",
            "t.true(isValid(x))",
            "t.ok(res.headers['vary'])",
            "t.pass()",
            "assert.ok(!false === ok)",
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
    fn js_tests_are_named_as_their_runner_names_them_inside_their_describe_blocks() {
        let text = "describe('mime.lookup(extension)', function () {\n  it('should return mime type for \".html\"', function () {\n    assert.equal(lookup('.html'), 'text/html')\n  })\n\n  describe(\"nested\", () => {\n    it('isn\\'t confused', () => expect(f()).toBe(1))\n  })\n\n  it('should return false for unknown extension', function () {\n    assert.strictEqual(lookup('.bogus'), false)\n  })\n})\n\ndescribe('mime.extension(type)', function () {\n  it('should return false for unknown extension', function () {\n    assert.strictEqual(extension('x/bogus'), false)\n  })\n})\n";
        let defs = functions("test/test.js", text);
        let found: Vec<(&str, usize, usize, Vec<&str>)> = defs
            .iter()
            .map(|d| {
                (
                    d.name.as_str(),
                    d.line,
                    d.end,
                    d.suites.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    "should return mime type for \".html\"",
                    2,
                    4,
                    vec!["mime.lookup(extension)"]
                ),
                (
                    "isn't confused",
                    7,
                    7,
                    vec!["mime.lookup(extension)", "nested"]
                ),
                (
                    "should return false for unknown extension",
                    10,
                    12,
                    vec!["mime.lookup(extension)"]
                ),
                (
                    "should return false for unknown extension",
                    16,
                    18,
                    vec!["mime.extension(type)"]
                ),
            ]
        );
        // An arrow function without braces is its own body, not the next test's.
        assert!(
            defs[1].body.contains("expect(f()).toBe(1)"),
            "{}",
            defs[1].body
        );
        assert!(!defs[1].body.contains("bogus"), "{}", defs[1].body);
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
        for marked in [
            "it.skip('x', () => {})",
            "describe.skip('suite', function () {",
            "xit('x', function () {})",
            "xdescribe('s', () => {})",
            "test.todo('later')",
            "test.failing('known bug', t => {",
            "it.skipIf(process.env.CI)('x', () => {})",
            "test.serial.skip('x', t => {})",
            "this.skip();",
            "t.skip('not now')",
            "test('x', { skip: 'flaky' }, () => {})",
            "t.is.skip(a, b)",
            "ctx.skip()",
        ] {
            assert_eq!(skip_markers(marked).len(), 1, "{marked}");
        }
        for unmarked in [
            "it('skips empty lines', () => {})",
            "const skip = opts.skip;",
            "test('x', t => { t.is(a, b) })",
        ] {
            assert!(skip_markers(unmarked).is_empty(), "{unmarked}");
        }
    }
}
