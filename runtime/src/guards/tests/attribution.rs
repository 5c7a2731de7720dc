//! Attributing test changes to the change (docs/gate.md, "Attribution"): repeated runs
//! tell a flaky test from a broken one, the base's tests run against the head's code
//! (an edited expectation shows as a base test failing there), and the head's new or
//! changed tests run against the base's code (a test that fails there shows the fix; one
//! that passes there too proves nothing about the change).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::locate::{Locator, def_text, locate};
use super::runners::{Outcome, Runner, TestRun};
use super::{Finding, Identity, source};

/// How often one test passed and failed over the runs of one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub passed: u32,
    pub failed: u32,
}

impl Tally {
    /// Failed in every run it was seen in.
    fn always_failed(self) -> bool {
        self.failed > 0 && self.passed == 0
    }
    fn flipped(self) -> bool {
        self.failed > 0 && self.passed > 0
    }
}

/// Each test's tally over `runs` (skips and expected failures count as neither).
pub fn tally(runs: &[&TestRun]) -> BTreeMap<String, Tally> {
    let mut out: BTreeMap<String, Tally> = BTreeMap::new();
    for run in runs {
        for (id, outcome) in &run.outcomes {
            let t = out.entry(id.clone()).or_default();
            match outcome {
                Outcome::Passed => t.passed += 1,
                Outcome::Failed => t.failed += 1,
                Outcome::Skipped | Outcome::ExpectedFailure => {}
            }
        }
    }
    out
}

/// A test whose runs disagree: it failed in some base run but not all, or flipped
/// between runs of one side. Reported, never blamed on the head, and never deciding the
/// verdict alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flaky {
    pub test: String,
    pub base: Tally,
    pub head: Tally,
}

impl Flaky {
    pub fn message(&self) -> String {
        format!(
            "test `{}` is flaky: base passed {} and failed {} of its runs, head passed {} and failed {}; not blamed on the change",
            self.test, self.base.passed, self.base.failed, self.head.passed, self.head.failed
        )
    }
}

/// The flaky tests among both sides' tallies.
pub fn flaky(base: &BTreeMap<String, Tally>, head: &BTreeMap<String, Tally>) -> Vec<Flaky> {
    let ids: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    ids.into_iter()
        .filter_map(|id| {
            let b = base.get(id).copied().unwrap_or_default();
            let h = head.get(id).copied().unwrap_or_default();
            (b.flipped() || h.flipped()).then(|| Flaky {
                test: id.clone(),
                base: b,
                head: h,
            })
        })
        .collect()
}

/// Tests that failed in every base run: a failure the head did not cause.
pub fn failing_at_base(base: &BTreeMap<String, Tally>) -> Vec<String> {
    base.iter()
        .filter(|(_, t)| t.always_failed())
        .map(|(id, _)| id.clone())
        .collect()
}

/// A base test whose own version fails on the head's code while the head's version
/// passes: the head changed what the test expects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EditedExpectation {
    pub test: String,
    pub file: String,
    pub line: usize,
    /// Lines of the base's version of the test the head no longer has.
    pub old: Vec<String>,
    /// Lines the head's version has instead.
    pub new: Vec<String>,
    /// The hypothesis declared this behaviour change and QA confirmed the test by name.
    pub confirmed: bool,
}

impl EditedExpectation {
    /// What the head changed, in one line: `was `a`; now `b``.
    pub fn change(&self) -> String {
        let join = |lines: &[String]| {
            if lines.is_empty() {
                "(nothing)".to_string()
            } else {
                lines
                    .iter()
                    .map(|l| format!("`{l}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        format!("was {}; now {}", join(&self.old), join(&self.new))
    }
}

/// Lines of `old` missing from `new` and lines of `new` missing from `old` (trimmed,
/// blank lines left out), at most three of each: the edit of one test in a sentence.
pub fn changed_lines(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let lines = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let (o, n) = (lines(old), lines(new));
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter()
            .filter(|l| !b.contains(l))
            .take(3)
            .cloned()
            .collect()
    };
    (only(&o, &n), only(&n, &o))
}

/// What the change declared about behaviour and what QA confirmed, by test name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// Tests the hypothesis says change behaviour (`Behaviour change: test_a, test_b`).
    pub changes: Vec<String>,
    /// Tests a QA role confirmed by name in its recorded review
    /// (`Confirmed behaviour change: test_a`).
    pub confirmed: Vec<String>,
}

static DECLARED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bbehaviou?r[ -]changes?\s*:\s*([^\n;]+)")
        .unwrap_or_else(|e| panic!("invalid built-in regex: {e}"))
});
static CONFIRMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bconfirmed\s+behaviou?r[ -]changes?\s*:\s*([^\n;]+)")
        .unwrap_or_else(|e| panic!("invalid built-in regex: {e}"))
});

/// Test names after a `Behaviour change:` in a hypothesis.
pub fn declared_changes(hypothesis: &str) -> Vec<String> {
    names_after(&DECLARED, hypothesis)
}

/// Test names after a `Confirmed behaviour change:` in a QA review.
pub fn confirmed_changes(review: &str) -> Vec<String> {
    names_after(&CONFIRMED, review)
}

fn names_after(re: &Regex, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(text) {
        // A name in backticks is taken whole: JavaScript tests are titled in words
        // (`Behaviour change: `mime.lookup > should return "text/html"``).
        let mut bare = String::new();
        let parts: Vec<&str> = c[1].split('`').collect();
        for (i, part) in parts.iter().enumerate() {
            // Odd parts sit between two backticks, unless the last one never closed.
            let quoted = i % 2 == 1 && i + 1 < parts.len();
            let name = part.trim();
            if quoted {
                if !name.is_empty() && !out.iter().any(|n| n == name) {
                    out.push(name.to_string());
                }
            } else {
                bare.push(' ');
                bare.push_str(part);
            }
        }
        for name in bare.split([',', ' ']) {
            let name = name
                .trim()
                .trim_matches(|ch: char| matches!(ch, '`' | '\'' | '"' | '*'))
                .trim_end_matches(['.', ')'])
                .trim_start_matches('(');
            if !name.is_empty() && name != "and" && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

impl Declared {
    /// Whether test `id` (leaf name `leaf`) was both declared and confirmed.
    pub fn allows(&self, id: &str, leaf: &str) -> bool {
        // A JavaScript id may be named from its describe blocks on, without its file.
        let named = |list: &[String]| {
            list.iter()
                .any(|n| n == id || n == leaf || id.ends_with(&format!(" > {n}")))
        };
        named(&self.changes) && named(&self.confirmed)
    }
}

/// A test the head added or changed, judged on the base's code.
pub fn passes(run: &TestRun, id: &str) -> bool {
    run.outcomes.get(id) == Some(&Outcome::Passed)
}

/// The test guard's runs that attribution reads.
pub(super) struct AttributionRuns<'a> {
    pub(super) base_tally: &'a BTreeMap<String, Tally>,
    pub(super) head_tally: &'a BTreeMap<String, Tally>,
    pub(super) base_tests_on_head: &'a TestRun,
    pub(super) head_tests_on_base: &'a TestRun,
}

/// Edited expectations (base tests failing on the head's code), fail-to-pass and
/// proves-nothing tests (the head's new or changed tests on the base's code).
pub(super) fn attribute(
    runner: Runner,
    runs: &AttributionRuns,
    changed: &BTreeSet<String>,
    flaky: &BTreeSet<String>,
    declared: &Declared,
    (base_loc, head_loc): (&mut Locator, &mut Locator),
    identity: &mut Identity,
) {
    let steady = |t: Option<&Tally>| t.is_some_and(|t| t.passed > 0 && t.failed == 0);
    for (id, tally) in runs.base_tally {
        if flaky.contains(id) || !steady(Some(tally)) || !steady(runs.head_tally.get(id)) {
            continue;
        }
        if runs.base_tests_on_head.outcomes.get(id) != Some(&Outcome::Failed) {
            continue;
        }
        let (file, line, old_def) = locate(runner, base_loc, id);
        let (head_file, _, new_def) = locate(runner, head_loc, id);
        let (old, new) = changed_lines(
            &def_text(base_loc.dir, &file, old_def.as_ref()),
            &def_text(head_loc.dir, &head_file, new_def.as_ref()),
        );
        let leaf = source::leaf_name(runner, id);
        let edited = EditedExpectation {
            test: id.clone(),
            file,
            line,
            old,
            new,
            confirmed: declared.allows(id, &leaf),
        };
        if !edited.confirmed {
            let changed_files: Vec<&str> = changed.iter().map(String::as_str).collect();
            identity.findings.push(Finding {
                test: Some(id.clone()),
                file: edited.file.clone(),
                line: edited.line,
                problem: format!(
                    "edited expectation: the base's version of this test fails on the head's code and the head changed what it expects ({}; test files changed: {})",
                    edited.change(),
                    changed_files.join(", ")
                ),
                expected: if leaf.contains(' ') {
                    // A title in words is declared in backticks, to be read whole.
                    format!(
                        "the old expectation kept, or the behaviour change declared in the hypothesis (Behaviour change: `{leaf}`) and confirmed by QA by name (Confirmed behaviour change: `{leaf}` in its review)"
                    )
                } else {
                    format!(
                        "the old expectation kept, or the behaviour change declared in the hypothesis (`Behaviour change: {leaf}`) and confirmed by QA by name (`Confirmed behaviour change: {leaf}` in its review)"
                    )
                },
            });
        }
        identity.evidence.edited.push(edited);
    }
    for (id, tally) in runs.head_tally {
        if flaky.contains(id) || !steady(Some(tally)) {
            continue;
        }
        // Only a test defined in a swapped file was run on the base's code as the head
        // has it (a new test in a file of code, say a Rust `mod tests`, was not).
        let is_new = !runs.base_tally.contains_key(id);
        let (file, _, _) = locate(runner, head_loc, id);
        if !changed.contains(&file) {
            continue;
        }
        if passes(runs.head_tests_on_base, id) {
            if is_new {
                identity.evidence.proves_nothing.push(id.clone());
            }
        } else {
            identity.evidence.fail_to_pass.push(id.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pairs: &[(&str, Outcome)]) -> TestRun {
        TestRun {
            outcomes: pairs.iter().map(|(i, o)| (i.to_string(), *o)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn flips_on_either_side_are_flaky_and_steady_base_failures_are_not() {
        use Outcome::{Failed, Passed};
        let b1 = run(&[("a", Passed), ("b", Failed), ("c", Failed), ("d", Passed)]);
        let b2 = run(&[("a", Passed), ("b", Passed), ("c", Failed), ("d", Passed)]);
        let h1 = run(&[("a", Failed), ("b", Passed), ("c", Failed), ("d", Failed)]);
        let h2 = run(&[("a", Passed), ("b", Passed), ("c", Failed), ("d", Failed)]);
        let (base, head) = (tally(&[&b1, &b2]), tally(&[&h1, &h2]));
        let f: Vec<String> = flaky(&base, &head).into_iter().map(|f| f.test).collect();
        assert_eq!(f, vec!["a", "b"], "a flips at head, b at base");
        assert_eq!(failing_at_base(&base), vec!["c"]);
        assert!(
            flaky(&base, &head)[0]
                .message()
                .contains("head passed 1 and failed 1")
        );
    }

    #[test]
    fn declarations_and_confirmations_are_read_by_name() {
        assert_eq!(
            declared_changes(
                "Make get() return the default. Behaviour change: `test_get_missing`, test_x."
            ),
            vec!["test_get_missing", "test_x"]
        );
        assert_eq!(
            declared_changes("behavior changes: tests/a.py::test_y and test_z; more"),
            vec!["tests/a.py::test_y", "test_z"]
        );
        assert!(declared_changes("no behaviour is changed").is_empty());
        assert_eq!(
            declared_changes(
                "Fix mp4. Behaviour change: `mime.extension(type) > should return mp4`, test_y"
            ),
            vec!["mime.extension(type) > should return mp4", "test_y"]
        );
        let review = "## Verdict\nPASS\nConfirmed behaviour change: test_get_missing\n";
        assert_eq!(confirmed_changes(review), vec!["test_get_missing"]);
        let d = Declared {
            changes: declared_changes("Behaviour change: test_get_missing"),
            confirmed: confirmed_changes(review),
        };
        assert!(d.allows("tests/test_c.py::test_get_missing", "test_get_missing"));
        assert!(!d.allows("tests/test_c.py::test_other", "test_other"));
        let undeclared = Declared {
            changes: vec![],
            confirmed: confirmed_changes(review),
        };
        assert!(
            !undeclared.allows("x", "test_get_missing"),
            "QA alone is not enough"
        );
    }

    #[test]
    fn an_edit_reads_as_what_was_and_what_is() {
        let (old, new) = changed_lines(
            "def test_get(self):\n    c = Cache()\n    assert c[2] == 4\n",
            "def test_get(self):\n    c = Cache()\n    assert c.get(2, 2) == 2\n",
        );
        assert_eq!(old, vec!["assert c[2] == 4"]);
        assert_eq!(new, vec!["assert c.get(2, 2) == 2"]);
        let e = EditedExpectation {
            test: "t".into(),
            file: "f".into(),
            line: 1,
            old,
            new,
            confirmed: false,
        };
        assert_eq!(
            e.change(),
            "was `assert c[2] == 4`; now `assert c.get(2, 2) == 2`"
        );
    }
}
