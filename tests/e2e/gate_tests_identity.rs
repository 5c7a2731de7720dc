//! Tests by identity through the built binary: `factory begin`, a commit in the
//! experiment's worktree, `factory precheck --exp N --json` — a skipped test is refused by
//! name; an honest change that adds a test and renames one keeps `tests_kept` green —
//! with unittest and with `go test` (CI installs Go: `.ci/run`).

use std::fs;

use crate::support::{GateProject as Project, commit_all, text};
use git2::Repository;
use serde_json::Value;

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_add_zero(self):\n        self.assertEqual(add(0, 5), 5)\n";

/// The language of a fixture project: its files and the tool its tests need.
struct Lang {
    tool: &'static str,
    files: &'static [(&'static str, &'static str)],
    test_file: &'static str,
    scope: &'static str,
}

const PYTHON: Lang = Lang {
    tool: "python3",
    files: &[("calc.py", CALC), ("test_calc.py", TESTS)],
    test_file: "test_calc.py",
    scope: "*.py",
};

const GO_MOD: &str = "module calc\n\ngo 1.19\n";
const GO_CALC: &str = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
const GO_TESTS: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 5) != 5 {\n\t\tt.Fatal(\"0+5\")\n\t}\n}\n";

const GO: Lang = Lang {
    tool: "go",
    files: &[
        ("go.mod", GO_MOD),
        ("calc.go", GO_CALC),
        ("calc_test.go", GO_TESTS),
    ],
    test_file: "calc_test.go",
    scope: "*.go",
};

/// A project in `lang` whose score is `score.txt`; its factory.md is committed.
fn project(lang: &Lang) -> Project {
    assert!(
        std::process::Command::new(lang.tool)
            .arg(if lang.tool == "go" {
                "version"
            } else {
                "--version"
            })
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs {} (.ci/run installs it)",
        lang.tool
    );
    let md = "# Calc\n\n## Goal\na higher score\n\n## Scope\n- SCOPE\n- score.txt\n\n## Guards\n\n## Eval command\nfactory eval\n\n## Eval threshold\n0.5\n\n## Constraints\n\n## Target branch\nmain\n\n## Project eval\n- name: quality\n  command: cat score.txt\n  parse: json\n  timeout: 10\n\n## Test timeout\n60\n"
        .replace("SCOPE", lang.scope);
    let mut files: Vec<(&str, &str)> = vec![(".gitignore", ".factory/\n"), ("score.txt", "0.7\n")];
    files.extend(lang.files.iter().copied());
    // The gate reads its configuration from factory.md at the base commit.
    files.push(("factory.md", &md));
    Project::init(&files)
}

fn experiment(p: &Project, lang: &Lang, hypothesis: &str, tests: &str) -> Value {
    let o = p.factory(&["begin", "--hypothesis", hypothesis]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id: u32 = text(&o.stdout).trim().parse().unwrap();
    let wt = p.worktree(id);
    fs::write(wt.join(lang.test_file), tests).unwrap();
    fs::write(wt.join("score.txt"), "0.8\n").unwrap();
    commit_all(&Repository::open(&wt).unwrap(), hypothesis);
    let o = p.factory(&["precheck", "--exp", &id.to_string(), "--json"]);
    let out = text(&o.stdout);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{}", text(&o.stderr)))
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name} in {report:#}"))
}

#[test]
fn precheck_refuses_a_skipped_test_by_name_and_passes_an_honest_rename() {
    let p = project(&PYTHON);
    let skipped = experiment(
        &p,
        &PYTHON,
        "skip the slow test",
        &TESTS.replace(
            "    def test_add(self):",
            "    @unittest.skip('slow')\n    def test_add(self):",
        ),
    );
    assert_eq!(skipped["passed"], false, "{skipped:#}");
    assert!(
        skipped["failures"]
            .as_array()
            .is_some_and(|f| f.iter().any(|n| n == "tests_kept")),
        "{skipped:#}"
    );
    let details = check(&skipped, "tests_kept")["details"].to_string();
    for needle in [
        "CalcTest",
        "test_add",
        "passed at base and is skipped at head",
        "test_calc.py:7",
        "new skip or expected-failure marker",
    ] {
        assert!(details.contains(needle), "{needle:?} not in {details}");
    }

    let honest = experiment(
        &p,
        &PYTHON,
        "rename a test and cover negatives",
        &format!(
            "{}\n    def test_add_negative(self):\n        self.assertEqual(add(-1, -2), -3)\n",
            TESTS.replace("test_add_zero", "test_zero_is_identity")
        ),
    );
    let kept = check(&honest, "tests_kept");
    assert_eq!(kept["passed"], true, "{honest:#}");
}

#[test]
fn go_test_identities_refuse_a_skip_and_keep_an_honest_rename() {
    let p = project(&GO);
    let skipped = experiment(
        &p,
        &GO,
        "skip the slow test",
        &GO_TESTS.replace(
            "func TestAdd(t *testing.T) {\n",
            "func TestAdd(t *testing.T) {\n\tt.Skip(\"slow\")\n",
        ),
    );
    assert_eq!(skipped["passed"], false, "{skipped:#}");
    let details = check(&skipped, "tests_kept")["details"].to_string();
    for needle in [
        "calc/TestAdd",
        "passed at base and is skipped at head",
        "calc_test.go:6",
        "new skip or expected-failure marker",
    ] {
        assert!(details.contains(needle), "{needle:?} not in {details}");
    }

    let honest = experiment(
        &p,
        &GO,
        "rename a test and cover negatives",
        &format!(
            "{}\nfunc TestAddNegative(t *testing.T) {{\n\tif Add(-1, -2) != -3 {{\n\t\tt.Fatal(\"neg\")\n\t}}\n}}\n",
            GO_TESTS.replace("TestAddZero", "TestZeroIsIdentity")
        ),
    );
    let kept = check(&honest, "tests_kept");
    assert_eq!(kept["passed"], true, "{honest:#}");

    let dropped = experiment(
        &p,
        &GO,
        "drop a test",
        &GO_TESTS[..GO_TESTS.find("func TestAddZero").unwrap()],
    );
    let gone = check(&dropped, "tests_kept");
    assert_eq!(gone["passed"], false, "{dropped:#}");
    assert!(
        gone["details"].to_string().contains("TestAddZero"),
        "{dropped:#}"
    );
}
