//! Reading test-runner summaries and coverage totals out of tool output.
//! Each runner prints its own summary line; we recognise the common ones
//! (cargo test, pytest, unittest, jest, vitest, mocha, node --test, go test -v).

use std::sync::LazyLock;

use crate::sys::pattern::re;
use regex::Regex;

/// How many tests ran and how many failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
}

impl TestCounts {
    pub fn total(&self) -> u64 {
        self.passed + self.failed
    }
}

static CARGO: LazyLock<Regex> =
    LazyLock::new(|| re(r"test result: \w+\. (\d+) passed; (\d+) failed"));
static JEST: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*Tests:\s+(.*)$"));
static VITEST: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*Tests\s+(.*\(\d+\))\s*$"));
static PYTEST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)[, ]*)+)(?:in [\d.]+s)?",
    )
});
static UNITTEST_RAN: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Ran (\d+) tests?"));
static UNITTEST_FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"FAILED \(([^)]*)\)"));
static MOCHA: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*(\d+) (passing|failing)"));
static NODE_TEST: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(?:#|ℹ) (pass|fail) (\d+)\s*$"));
static GO_CASE: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*--- (PASS|FAIL):"));
static COUNT_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"(\d+) (passed|failed|errors?|error)"));
static GO_COVER: LazyLock<Regex> = LazyLock::new(|| re(r"coverage: ([\d.]+)% of statements"));
static TOTAL_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^TOTAL\s.*$"));
static PERCENT: LazyLock<Regex> = LazyLock::new(|| re(r"([\d.]+)%"));

fn num(s: &str) -> u64 {
    s.parse().unwrap_or(0)
}

/// Adds up "N passed / N failed / N errors" phrases in one summary fragment.
fn count_words(fragment: &str) -> TestCounts {
    let mut c = TestCounts {
        passed: 0,
        failed: 0,
    };
    for cap in COUNT_WORD.captures_iter(fragment) {
        match &cap[2] {
            "passed" => c.passed += num(&cap[1]),
            _ => c.failed += num(&cap[1]),
        }
    }
    c
}

/// Finds the test counts in a runner's combined output, if it printed a known summary.
pub fn test_counts(output: &str) -> Option<TestCounts> {
    let cargo: Vec<_> = CARGO.captures_iter(output).collect();
    if !cargo.is_empty() {
        return Some(cargo.iter().fold(
            TestCounts {
                passed: 0,
                failed: 0,
            },
            |acc, c| TestCounts {
                passed: acc.passed + num(&c[1]),
                failed: acc.failed + num(&c[2]),
            },
        ));
    }
    let go: Vec<_> = GO_CASE.captures_iter(output).collect();
    if !go.is_empty() {
        let failed = go.iter().filter(|c| &c[1] == "FAIL").count() as u64;
        return Some(TestCounts {
            passed: go.len() as u64 - failed,
            failed,
        });
    }
    if let Some(line) = JEST
        .captures_iter(output)
        .last()
        .or_else(|| VITEST.captures_iter(output).last())
    {
        return Some(count_words(&line[1]));
    }
    if let Some(ran) = UNITTEST_RAN.captures_iter(output).last() {
        let total = num(&ran[1]);
        let failed = UNITTEST_FAILED
            .captures_iter(output)
            .last()
            .map(|c| {
                c[1].split(',')
                    .filter_map(|kv| kv.split_once('='))
                    .filter(|(k, _)| matches!(k.trim(), "failures" | "errors"))
                    .map(|(_, v)| num(v.trim()))
                    .sum()
            })
            .unwrap_or(0);
        return Some(TestCounts {
            passed: total.saturating_sub(failed),
            failed,
        });
    }
    let node: Vec<_> = NODE_TEST.captures_iter(output).collect();
    if !node.is_empty() {
        let get = |k: &str| {
            node.iter()
                .rev()
                .find(|c| &c[1] == k)
                .map(|c| num(&c[2]))
                .unwrap_or(0)
        };
        return Some(TestCounts {
            passed: get("pass"),
            failed: get("fail"),
        });
    }
    let mocha: Vec<_> = MOCHA.captures_iter(output).collect();
    if !mocha.is_empty() {
        let get = |k: &str| {
            mocha
                .iter()
                .filter(|c| &c[2] == k)
                .map(|c| num(&c[1]))
                .sum()
        };
        return Some(TestCounts {
            passed: get("passing"),
            failed: get("failing"),
        });
    }
    PYTEST
        .captures_iter(output)
        .last()
        .map(|c| count_words(&c[1]))
}

/// The total coverage percentage a report printed, if any.
///
/// `go test -cover` prints one percentage per package (averaged); pytest-cov and
/// cargo llvm-cov print a `TOTAL` row — llvm-cov's has region, function and line columns,
/// and we take lines (the third), which is what pytest-cov's single column measures too.
pub fn coverage_percent(output: &str) -> Option<f64> {
    let go: Vec<f64> = GO_COVER
        .captures_iter(output)
        .filter_map(|c| c[1].parse().ok())
        .collect();
    if !go.is_empty() {
        return Some(go.iter().sum::<f64>() / go.len() as f64);
    }
    let total = TOTAL_LINE.find_iter(output).last()?;
    let percents: Vec<f64> = PERCENT
        .captures_iter(total.as_str())
        .filter_map(|c| c[1].parse().ok())
        .collect();
    match percents.len() {
        0 => None,
        n if n >= 3 => Some(percents[2]),
        n => Some(percents[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(p: u64, f: u64) -> Option<TestCounts> {
        Some(TestCounts {
            passed: p,
            failed: f,
        })
    }

    #[test]
    fn recognises_each_runner() {
        let cargo = "running 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored\n\ntest result: FAILED. 3 passed; 1 failed; 0 ignored";
        assert_eq!(test_counts(cargo), counts(5, 1));
        assert_eq!(
            test_counts("..F\n===== 1 failed, 2 passed in 0.12s ====="),
            counts(2, 1)
        );
        assert_eq!(test_counts("3 passed in 0.01s"), counts(3, 0));
        assert_eq!(
            test_counts("Ran 4 tests in 0.001s\n\nFAILED (failures=1, errors=1)"),
            counts(2, 2)
        );
        assert_eq!(test_counts("Ran 4 tests in 0.001s\n\nOK"), counts(4, 0));
        assert_eq!(
            test_counts("Tests:       1 failed, 3 passed, 4 total"),
            counts(3, 1)
        );
        assert_eq!(
            test_counts(" Tests  1 failed | 2 passed (3)\n"),
            counts(2, 1)
        );
        assert_eq!(
            test_counts("  5 passing (10ms)\n  2 failing\n"),
            counts(5, 2)
        );
        assert_eq!(test_counts("# tests 3\n# pass 2\n# fail 1\n"), counts(2, 1));
        assert_eq!(
            test_counts(
                "=== RUN TestA\n--- PASS: TestA (0.00s)\n    --- FAIL: TestA/sub (0.00s)\n"
            ),
            counts(1, 1)
        );
        assert_eq!(test_counts("error: could not compile `x`"), None);
    }

    #[test]
    fn reads_coverage_totals() {
        assert_eq!(
            coverage_percent(
                "ok a 0.1s coverage: 50.0% of statements\nok b coverage: 70.0% of statements"
            ),
            Some(60.0)
        );
        assert_eq!(
            coverage_percent("Name Stmts Miss Cover\nTOTAL 100 20 80%"),
            Some(80.0)
        );
        assert_eq!(
            coverage_percent("TOTAL  10  2  80.00%  4  1  75.00%  50  5  90.00%  0  0  -"),
            Some(90.0)
        );
        assert_eq!(coverage_percent("no coverage here"), None);
    }
}
