//! run_eval on real projects: a hanging hygiene check and a crashing eval/score.py each
//! score 0 with the reason while every other dimension still runs.

use std::fs;
use std::time::{Duration, Instant};

use factory_runtime::eval::{EvalSettings, run_eval};

#[test]
fn hanging_tests_and_crashing_score_py_score_zero_and_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("pyproject.toml"), "[project]\nname = \"demo\"\n").unwrap();
    fs::write(root.join("app.py"), "def add(a, b):\n    return a + b\n").unwrap();
    // Both unittest and pytest collect this file; it never finishes on its own.
    fs::write(
        root.join("test_app.py"),
        "import time, unittest\n\nclass T(unittest.TestCase):\n    def test_hangs(self):\n        time.sleep(60)\n",
    )
    .unwrap();
    fs::create_dir(root.join("eval")).unwrap();
    fs::write(
        root.join("eval/score.py"),
        "import sys\nsys.exit('score data missing')\n",
    )
    .unwrap();
    fs::create_dir(root.join(".factory")).unwrap();

    let settings = EvalSettings {
        test_timeout: Duration::from_secs(3),
        ..EvalSettings::default()
    };
    let start = Instant::now();
    let report = run_eval(root, &settings).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "took {:?}",
        start.elapsed()
    );

    let get = |name: &str| report.composite.results.iter().find(|r| r.name == name);
    let tests = get("tests").expect("tests dimension");
    assert_eq!(tests.score, 0.0);
    assert!(tests.details.contains("timed out"), "{}", tests.details);
    let score_py = get("eval/score.py").expect("eval/score.py dimension");
    assert_eq!(score_py.score, 0.0);
    assert!(
        score_py.details.contains("score data missing"),
        "{}",
        score_py.details
    );
    // The build check ran and passed regardless.
    let build = get("build").expect("build dimension");
    assert_eq!(build.score, 1.0, "{}", build.details);
    assert_eq!(report.language, "python");
    // last_eval.json is written because .factory/ exists.
    let last = fs::read_to_string(root.join(".factory/last_eval.json")).unwrap();
    assert!(last.contains("\"eval/score.py\""));
}

/// After a keep that grew the tests, an unchanged next state must not read as a
/// regression: the recorded baseline composite is the parity score, not the grown one.
#[test]
fn baseline_records_the_parity_composite() {
    use factory_runtime::eval::{CompositeScore, EvalResult, Tier, parity_total};
    let composite = CompositeScore {
        total: 0.5 * 1.0 + 0.5 * 1.0,
        results: vec![
            EvalResult::new("build", Tier::Hygiene, 1.0, 0.5, true, ""),
            EvalResult::new("test_count", Tier::Growth, 1.0, 0.5, true, "grew"),
        ],
        guard_violations: vec![],
        threshold: 0.0,
        passed: true,
        below_floors: vec![],
    };
    assert!((parity_total(&composite) - 0.75).abs() < 1e-9);
}

#[test]
fn unchanged_project_scores_its_recorded_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("pyproject.toml"), "[project]\nname = \"demo\"\n").unwrap();
    fs::write(
        root.join("test_app.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(True)\n\n    def test_b(self):\n        self.assertTrue(True)\n",
    )
    .unwrap();
    fs::create_dir(root.join(".factory")).unwrap();
    let settings = EvalSettings {
        test_timeout: Duration::from_secs(60),
        ..EvalSettings::default()
    };
    let first = run_eval(root, &settings).unwrap();
    assert_eq!(first.test_count, Some(2));
    factory_runtime::eval::record_baseline(root, &first, "kept experiment 1").unwrap();

    // A third test is growth...
    fs::write(
        root.join("test_more.py"),
        "import unittest\n\nclass U(unittest.TestCase):\n    def test_c(self):\n        self.assertTrue(True)\n",
    )
    .unwrap();
    let grown = run_eval(root, &settings).unwrap();
    let growth = grown
        .composite
        .results
        .iter()
        .find(|r| r.name == "test_count")
        .unwrap();
    assert_eq!(growth.score, 1.0, "{}", growth.details);
    assert!(grown.composite.total > first.composite.total);
    let kept = factory_runtime::eval::record_baseline(root, &grown, "kept experiment 2").unwrap();

    // ...and the next, unchanged state scores exactly the recorded baseline.
    let again = run_eval(root, &settings).unwrap();
    assert!(
        (again.composite.total - kept.composite.unwrap()).abs() < 1e-9,
        "{} vs {:?}",
        again.composite.total,
        kept.composite
    );
}
