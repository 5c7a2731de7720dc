//! Sacred Rule 1 (spec §16.1): tests are kept, by identity. The project's own runner lists
//! and runs its tests in pristine checkouts of the base and head commits (outside the
//! project, no untracked files); every test that passed at base must still exist (same id,
//! or a rename with an unchanged body) and pass; no new skips or expected failures; no
//! fewer tests executed; no assertion replaced by a tautology; no new file that shadows a
//! module the tests import. Without a runner factory knows, the older count of test
//! functions and assertions per changed file applies.

#[path = "tests/attribution.rs"]
pub mod attribution;
#[path = "tests/doctest.rs"]
mod doctest;
#[path = "tests/js.rs"]
pub mod js;
#[path = "tests/locate.rs"]
mod locate;
#[path = "tests/runners.rs"]
pub mod runners;
#[path = "tests/source.rs"]
pub mod source;
#[path = "tests/static_checks.rs"]
mod static_checks;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

use git2::{DiffFindOptions, Oid, Repository};
use regex::Regex;
use serde::Serialize;

use super::changes::{Change, ChangeKind};
use crate::sys::pattern::re;
use crate::worktrees::scratch::{write_commit, write_commit_with};
use attribution::{AttributionRuns, Declared, EditedExpectation, Flaky, attribute};
use locate::{Locator, locate};
use runners::{Outcome, Runner, TestRun, Tools};
use static_checks::static_findings;

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

/// One refusal: which test, where, what happened and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub test: Option<String>,
    /// Path relative to the repository (or the runner, for whole-run findings).
    pub file: String,
    /// 1-based; 0 when the finding has no line.
    pub line: usize,
    pub problem: String,
    pub expected: String,
}

impl Finding {
    pub fn message(&self) -> String {
        let at = if self.line > 0 {
            format!("{}:{}", self.file, self.line)
        } else {
            self.file.clone()
        };
        let test = self
            .test
            .as_deref()
            .map(|t| format!("test `{t}` "))
            .unwrap_or_default();
        format!("{at}: {test}{}; expected {}", self.problem, self.expected)
    }
}

/// The outcome of comparing base and head.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// The runner used; `None` when the project has no tests factory can run.
    pub runner: Option<Runner>,
    pub findings: Vec<Finding>,
    pub base_executed: usize,
    pub head_executed: usize,
    /// What the tests say about the change beyond the findings.
    pub evidence: Evidence,
}

/// What running the tests across sides showed (docs/gate.md, "Attribution"): what the
/// verdict may rest on besides the score, and what it must not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// Tests that passed in every base run.
    pub base_passed: usize,
    /// Tests the head added or changed that do not pass on the base's code and pass on
    /// the head's: the change does what they check (a fix, a feature).
    pub fail_to_pass: Vec<String>,
    /// Tests the head added that pass on the base's code too: they prove nothing about
    /// the change, and do not count as growth.
    pub proves_nothing: Vec<String>,
    /// Base tests whose own version fails on the head's code (the head edited them).
    pub edited: Vec<EditedExpectation>,
    /// Tests whose runs disagreed.
    pub flaky: Vec<Flaky>,
    /// Tests failing in every base run (not the change's doing).
    pub failing_at_base: Vec<String>,
    /// Base tests the head rewrote into a new test (`old → new`): the old version still
    /// passes on the head's code, the new one fails on the base's.
    pub retired: Vec<String>,
    /// Test files (or files under test directories) the head added, changed or deleted.
    pub changed_test_files: Vec<String>,
    /// The first run of each side (base, head) as the eval's `tests` check can use it,
    /// when the runs were made in the gate's own checkouts.
    #[serde(skip)]
    pub side_runs: Option<[crate::eval::hygiene::KnownTests; 2]>,
}

impl Evidence {
    /// One line per fact worth a reader's attention, for the check's details.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let list = |ids: &[String]| {
            let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
            let more = ids.len().saturating_sub(shown.len());
            if more > 0 {
                format!("{} and {more} more", shown.join(", "))
            } else {
                shown.join(", ")
            }
        };
        if !self.fail_to_pass.is_empty() {
            notes.push(format!(
                "fail-to-pass: {} new or changed test(s) fail on the base's code and pass on the head's: {}",
                self.fail_to_pass.len(),
                list(&self.fail_to_pass)
            ));
        }
        if !self.proves_nothing.is_empty() {
            notes.push(format!(
                "{} new test(s) pass on the base's code too, so they prove nothing about the change and do not count as growth: {}",
                self.proves_nothing.len(),
                list(&self.proves_nothing)
            ));
        }
        for e in self.edited.iter().filter(|e| e.confirmed) {
            notes.push(format!(
                "{}:{}: test `{}` changed expectation, declared in the hypothesis and confirmed by QA: {}",
                e.file,
                e.line,
                e.test,
                e.change()
            ));
        }
        if !self.retired.is_empty() {
            notes.push(format!(
                "{} test(s) rewritten: gone from the head, but the base's version passes on the head's code and the new test in its file fails on the base's: {}",
                self.retired.len(),
                list(&self.retired)
            ));
        }
        notes.extend(self.flaky.iter().map(Flaky::message));
        if !self.failing_at_base.is_empty() {
            notes.push(format!(
                "{} test(s) already fail at the base (not blamed on the change): {}",
                self.failing_at_base.len(),
                list(&self.failing_at_base)
            ));
        }
        notes
    }
}

/// (old path, new path) of one path that differs between the two trees.
type PathPair = (Option<String>, Option<String>);

/// Every path that differs between the two trees.
fn tree_diff(repo: &Repository, base: Oid, head: Oid) -> Result<Vec<PathPair>, String> {
    let tree = |id: Oid| {
        repo.find_commit(id)
            .and_then(|c| c.tree())
            .map_err(|e| format!("cannot read commit {id}: {}", e.message()))
    };
    let (bt, ht) = (tree(base)?, tree(head)?);
    let mut diff = repo
        .diff_tree_to_tree(Some(&bt), Some(&ht), None)
        .map_err(|e| e.message().to_string())?;
    let mut find = DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))
        .map_err(|e| e.message().to_string())?;
    let path = |f: git2::DiffFile| f.path().map(|p| p.to_string_lossy().into_owned());
    Ok(diff
        .deltas()
        .map(|d| match d.status() {
            git2::Delta::Added => (None, path(d.new_file())),
            git2::Delta::Deleted => (path(d.old_file()), None),
            _ => (path(d.old_file()), path(d.new_file())),
        })
        .filter(|(o, n)| {
            o.iter()
                .chain(n.iter())
                .all(|p| p != ".factory" && !p.starts_with(".factory/"))
        })
        .collect())
}

/// Compares the tests of `base` and `head` (both commits of `repo`) by identity, with
/// no behaviour change declared.
pub fn check_identity(
    repo: &Repository,
    base: Oid,
    head: Oid,
    tools: &Tools,
) -> Result<Identity, String> {
    check_identity_declared(repo, base, head, tools, &Declared::default())
}

/// Compares the tests of `base` and `head` by identity and attributes every test change
/// (module docs of [`attribution`]); `declared` names the behaviour changes the
/// hypothesis declared and QA confirmed.
pub fn check_identity_declared(
    repo: &Repository,
    base: Oid,
    head: Oid,
    tools: &Tools,
    declared: &Declared,
) -> Result<Identity, String> {
    check_identity_in(repo, base, head, tools, declared, None)
}

/// The base's test run kept between experiments on one base (the gate's base cache,
/// `.factory/cache/base/`): a base measured before under the same configuration,
/// set-up and toolchain is not run again unless a failure at the head must be
/// confirmed on it.
#[derive(Debug, Clone)]
pub struct KeptBaseTests {
    /// Where it is kept: read when present, written when the base's suite ran.
    pub file: std::path::PathBuf,
    /// The base checkout's `## Setup` has not run (everything the gate needed of the
    /// base was kept): it runs, and the checkout is probed, before the suite must run.
    pub set_up_first: bool,
}

#[derive(Serialize, serde::Deserialize)]
struct KeptRun {
    runner: Runner,
    run: TestRun,
}

impl KeptBaseTests {
    fn load(&self) -> Option<(Runner, TestRun)> {
        let text = std::fs::read_to_string(&self.file).ok()?;
        let kept: KeptRun = serde_json::from_str(&text).ok()?;
        Some((kept.runner, kept.run))
    }

    /// Keeps a finished run; a failure to write costs only the next experiment a run.
    fn save(&self, runner: Runner, run: &TestRun) {
        if run.timed_out {
            return;
        }
        let kept = KeptRun {
            runner,
            run: run.clone(),
        };
        if let (Ok(text), Some(dir)) = (serde_json::to_string(&kept), self.file.parent())
            && std::fs::create_dir_all(dir).is_ok()
            && let Err(e) = crate::sys::files::atomic_write(&self.file, text.as_bytes())
        {
            tracing::warn!(path = %self.file.display(), "cannot keep the base's test run: {e}");
        }
    }
}

/// The gate's own checkouts of base and head (repository roots, set up and probed,
/// but for a base whose results are all kept).
#[derive(Clone, Copy)]
pub struct Prepared<'a> {
    pub base: &'a Path,
    pub head: &'a Path,
    pub kept_base: Option<&'a KeptBaseTests>,
}

/// [`check_identity_declared`] in `prepared` checkouts of base and head, when given,
/// instead of writing and setting up its own; each then builds into its own `target/`,
/// as the gate's eval did there, so a build is shared rather than repeated.
pub fn check_identity_in(
    repo: &Repository,
    base: Oid,
    head: Oid,
    tools: &Tools,
    declared: &Declared,
    prepared: Option<Prepared<'_>>,
) -> Result<Identity, String> {
    let scratch = tempfile::Builder::new()
        .prefix("factory-tests-")
        .tempdir()
        .map_err(|e| format!("scratch directory: {e}"))?;
    let (base_dir, head_dir) = match prepared {
        Some(p) => (p.base.to_path_buf(), p.head.to_path_buf()),
        None => (scratch.path().join("base"), scratch.path().join("head")),
    };
    if prepared.is_none() {
        write_commit(repo, base, &base_dir)?;
        crate::worktrees::setup::prepare_checkout(&base_dir, &tools.setup, "base", tools.timeout)?;
    }
    let kept_base = prepared.and_then(|p| p.kept_base);
    // The base checkout is set up once, when its suite must run after all.
    let base_set_up = std::cell::Cell::new(kept_base.is_none_or(|k| !k.set_up_first));
    let set_up_base = || -> Result<(), String> {
        if !base_set_up.replace(true) {
            crate::worktrees::setup::prepare_checkout(
                &base_dir,
                &tools.setup,
                "base",
                tools.timeout,
            )?;
        }
        Ok(())
    };
    let diff = tree_diff(repo, base, head)?;
    let kept = kept_base.and_then(KeptBaseTests::load);
    let runner = match &kept {
        Some((r, _)) => Ok(Some(*r)),
        None => {
            set_up_base()?;
            runners::detect(&base_dir, tools)
        }
    };
    let run = |runner: Runner, dir: &Path, side: &str| {
        let own_target;
        let tools = if prepared.is_some() && (dir == base_dir || dir == head_dir) {
            own_target = Tools {
                cargo_target_dir: Some(dir.join("target")),
                ..tools.clone()
            };
            &own_target
        } else {
            tools
        };
        runners::run(runner, dir, tools, scratch.path())
            .map_err(|e| format!("{} could not run at {side}: {e}", runner.name()))
    };
    // Base runs before head is written: head's files are then newer than anything base
    // built, so a shared build directory never serves head a stale base artefact.
    let before = match (&runner, kept) {
        (_, Some((_, kept))) => Some(kept),
        (Ok(Some(r)), None) => {
            let before = run(*r, &base_dir, "base")?;
            if let Some(k) = kept_base {
                k.save(*r, &before);
            }
            Some(before)
        }
        _ => None,
    };
    if prepared.is_none() {
        write_commit(repo, head, &head_dir)?;
        crate::worktrees::setup::prepare_checkout(&head_dir, &tools.setup, "head", tools.timeout)?;
    }
    let mut identity = Identity {
        findings: static_findings(&diff, &base_dir, &head_dir, tools),
        ..Default::default()
    };
    let (runner, before) = match (runner, before) {
        (Ok(Some(r)), Some(b)) => (r, b),
        (Err(why), _) => {
            identity.findings.push(Finding {
                test: None,
                file: "(tests)".into(),
                line: 0,
                problem: why,
                expected: "the project's test runner installed so its tests can be listed".into(),
            });
            return Ok(identity);
        }
        _ => return Ok(identity),
    };
    identity.runner = Some(runner);
    let after = run(runner, &head_dir, "head")?;
    for (side, r) in [("base", &before), ("head", &after)] {
        if r.timed_out {
            identity.findings.push(Finding {
                test: None,
                file: runner.name().into(),
                line: 0,
                problem: format!(
                    "{side}: {} (killed; its tests could not all be compared)",
                    r.tail.replace('\n', " | ")
                ),
                expected: "the test run to finish within factory.md's `test_timeout`".into(),
            });
        }
    }
    // A failure the head would be blamed for is confirmed by a second run of each side,
    // so a flaky test is told from a broken one before it decides anything.
    let blamable = after.outcomes.iter().any(|(id, o)| {
        *o == Outcome::Failed
            && before
                .outcomes
                .get(id)
                .is_none_or(|b| *b == Outcome::Passed)
    });
    let mut base_runs = vec![before];
    let mut head_runs = vec![after];
    if blamable {
        // Each side's files are made newer than the other side's build before it runs
        // again, so a build directory shared by same-named crates rebuilds this side.
        set_up_base()?;
        freshen(&base_dir);
        base_runs.push(run(runner, &base_dir, "base")?);
        freshen(&head_dir);
        head_runs.push(run(runner, &head_dir, "head")?);
    }
    let base_tally = attribution::tally(&base_runs.iter().collect::<Vec<_>>());
    let head_tally = attribution::tally(&head_runs.iter().collect::<Vec<_>>());
    identity.evidence.flaky = attribution::flaky(&base_tally, &head_tally);
    identity.evidence.failing_at_base = attribution::failing_at_base(&base_tally);
    identity.evidence.base_passed = base_tally
        .values()
        .filter(|t| t.passed > 0 && t.failed == 0)
        .count();
    let flaky: BTreeSet<String> = identity
        .evidence
        .flaky
        .iter()
        .map(|f| f.test.clone())
        .collect();
    let (before, after) = (&base_runs[0], &head_runs[0]);
    if prepared.is_some() {
        let known = |r: &TestRun, dir: &Path| crate::eval::hygiene::KnownTests {
            runner: runner.name().to_string(),
            npm_test: runners::npm_test_runs(runner, dir),
            passed: r
                .outcomes
                .values()
                .filter(|o| **o == Outcome::Passed)
                .count() as u64,
            failed: r
                .outcomes
                .values()
                .filter(|o| **o == Outcome::Failed)
                .count() as u64,
            timed_out: r.timed_out,
        };
        identity.evidence.side_runs = Some([known(before, &base_dir), known(after, &head_dir)]);
    }
    identity.base_executed = before.executed();
    identity.head_executed = after.executed();
    let old_paths: Vec<String> = diff.iter().filter_map(|(o, _)| o.clone()).collect();
    let new_paths: Vec<String> = diff.iter().filter_map(|(_, n)| n.clone()).collect();
    let mut base_loc = Locator::new(&base_dir, old_paths, runner);
    let mut head_loc = Locator::new(&head_dir, new_paths, runner);
    let (found, vanished) =
        compare_runs(runner, before, after, &flaky, &mut base_loc, &mut head_loc);
    identity.findings.extend(found);

    // Across sides: only when the head touched tests (a change to code alone is judged
    // by the base's tests at the head, above).
    let changed: BTreeSet<String> = diff
        .iter()
        .flat_map(|(o, n)| o.iter().chain(n.iter()))
        .filter(|p| looks_like_test(p))
        .cloned()
        .collect();
    identity.evidence.changed_test_files = changed.iter().cloned().collect();
    if changed.is_empty() {
        identity.findings.extend(vanished);
        return Ok(identity);
    }
    let take = |p: &str| changed.contains(p);
    let base_tests_dir = scratch.path().join("head-code-base-tests");
    write_commit_with(repo, head, base, &take, &base_tests_dir)?;
    // Each checkout gets its own environment, set up as the sides were.
    crate::worktrees::setup::prepare_checkout(
        &base_tests_dir,
        &tools.setup,
        "head",
        tools.timeout,
    )?;
    let base_tests_on_head = run(
        runner,
        &base_tests_dir,
        "the head's code with the base's tests",
    )?;
    let head_tests_dir = scratch.path().join("base-code-head-tests");
    write_commit_with(repo, base, head, &take, &head_tests_dir)?;
    crate::worktrees::setup::prepare_checkout(
        &head_tests_dir,
        &tools.setup,
        "base",
        tools.timeout,
    )?;
    let head_tests_on_base = run(
        runner,
        &head_tests_dir,
        "the base's code with the head's tests",
    )?;
    attribute(
        runner,
        &AttributionRuns {
            base_tally: &base_tally,
            head_tally: &head_tally,
            base_tests_on_head: &base_tests_on_head,
            head_tests_on_base: &head_tests_on_base,
        },
        &changed,
        &flaky,
        declared,
        (&mut base_loc, &mut head_loc),
        &mut identity,
    );
    retire_rewritten(
        runner,
        vanished,
        (before, &base_tests_on_head),
        &mut head_loc,
        &mut identity,
    );
    Ok(identity)
}

/// A test gone from the head is *rewritten*, not deleted, when its own (base) version
/// still passes on the head's code — it hid no failure of the change — and a new test
/// in the same file shows the change (fail-to-pass: padding that passes on the base
/// too is no replacement). Reported; every other vanished test is a finding.
fn retire_rewritten(
    runner: Runner,
    vanished: Vec<Finding>,
    (before, base_tests_on_head): (&TestRun, &TestRun),
    head_loc: &mut Locator,
    identity: &mut Identity,
) {
    let mut successors: Vec<(String, String)> = identity
        .evidence
        .fail_to_pass
        .iter()
        .filter(|id| !before.outcomes.contains_key(*id))
        .map(|id| (locate(runner, head_loc, id).0, id.clone()))
        .collect();
    for f in vanished {
        let passes_on_head = f
            .test
            .as_ref()
            .is_some_and(|t| attribution::passes(base_tests_on_head, t));
        let successor = successors.iter().position(|(file, _)| *file == f.file);
        match (passes_on_head, successor, &f.test) {
            (true, Some(i), Some(t)) => {
                let (_, new) = successors.remove(i);
                identity.evidence.retired.push(format!("{t} → {new}"));
            }
            _ => identity.findings.push(f),
        }
    }
}

/// Sets every file's modification time under `dir` to now (best effort): what build
/// tools compare with their outputs to decide what is stale.
fn freshen(dir: &Path) {
    let now = std::time::SystemTime::now();
    for rel in runners::files_under(dir) {
        if let Ok(f) = std::fs::OpenOptions::new().append(true).open(dir.join(rel)) {
            let _ = f.set_modified(now);
        }
    }
}

/// What differs between the base's and the head's runs: the findings, and apart from
/// them those of tests that passed at base and no longer exist (no rename found), which
/// the cross-side runs may show retired rather than hidden.
fn compare_runs(
    runner: Runner,
    before: &TestRun,
    after: &TestRun,
    flaky: &BTreeSet<String>,
    base_loc: &mut Locator,
    head_loc: &mut Locator,
) -> (Vec<Finding>, Vec<Finding>) {
    let mut found = Vec::new();
    let mut vanished = Vec::new();
    let locate = |loc: &mut Locator, id: &str| locate(runner, loc, id);
    let new_ids: Vec<&String> = after
        .outcomes
        .keys()
        .filter(|id| !before.outcomes.contains_key(*id))
        .collect();
    let mut renamed_to: BTreeSet<&String> = BTreeSet::new();
    for (id, was) in &before.outcomes {
        if *was != Outcome::Passed {
            continue;
        }
        match after.outcomes.get(id) {
            Some(Outcome::Passed) => {}
            // A flaky test's failure is reported, never blamed.
            Some(Outcome::Failed) if flaky.contains(id) => {}
            Some(now) => {
                let (file, line, _) = locate(head_loc, id);
                let expected = if *now == Outcome::Failed {
                    "it still passes"
                } else {
                    "no new skips or expected failures"
                };
                found.push(Finding {
                    test: Some(id.clone()),
                    file,
                    line,
                    problem: format!("passed at base and is {} at head", now.as_str()),
                    expected: expected.into(),
                });
            }
            None => {
                let (file, line, def) = locate(base_loc, id);
                let renamed = def.as_ref().and_then(|old| {
                    new_ids.iter().copied().find(|nid| {
                        !renamed_to.contains(nid)
                            && after.outcomes.get(*nid) == Some(&Outcome::Passed)
                            && locate(head_loc, nid).2.is_some_and(|new| {
                                new.body == old.body
                                    || doctest::is_doc_test(id)
                                        && doctest::same_example(id, old, nid, &new)
                            })
                    })
                });
                match renamed {
                    Some(nid) => {
                        renamed_to.insert(nid);
                    }
                    None => vanished.push(Finding {
                        test: Some(id.clone()),
                        file,
                        line,
                        problem:
                            "passed at base and no longer exists at head (no new test has its body, nor rewrites it)"
                                .into(),
                        expected: "the same test id, a rename whose body is unchanged, or a rewrite (the old version still passes on the head's code, a new test in its file fails on the base's)".into(),
                    }),
                }
            }
        }
    }
    for id in &new_ids {
        let now = after.outcomes.get(*id);
        let expected = match now {
            // A new ```ignore example documents; it silences nothing.
            Some(Outcome::Skipped) if doctest::is_doc_test(id) => continue,
            Some(Outcome::Skipped | Outcome::ExpectedFailure) => {
                "no new skips or expected failures"
            }
            // Correctness is a hard check: a new test that fails is a failing head.
            Some(Outcome::Failed) if !flaky.contains(*id) => "every test at the head passes",
            _ => continue,
        };
        let (file, line, _) = locate(head_loc, id);
        found.push(Finding {
            test: Some((*id).clone()),
            file,
            line,
            problem: format!("is new and {}", now.map_or("missing", |o| o.as_str())),
            expected: expected.into(),
        });
    }
    // A test failing at base that the head no longer runs (removed, or an example
    // marked `ignore`) protected nothing: its going is not a test lost.
    let dropped_failures = before
        .outcomes
        .iter()
        .filter(|(id, o)| {
            **o == Outcome::Failed && !after.outcomes.get(*id).is_some_and(|a| a.executed())
        })
        .count();
    if after.executed() + dropped_failures < before.executed() {
        let mut tail = if after.outcomes.is_empty() {
            format!(
                " (the runner reported no tests: {})",
                after.tail.replace('\n', " | ")
            )
        } else {
            String::new()
        };
        if dropped_failures > 0 {
            tail.push_str(&format!(
                " ({dropped_failures} of the base's failing no longer run, not counted)"
            ));
        }
        found.push(Finding {
            test: None,
            file: runner.name().into(),
            line: 0,
            problem: format!(
                "{} tests executed at head, {} at base{tail}",
                after.executed(),
                before.executed()
            ),
            expected: "at least as many tests executed as at base".into(),
        });
    }
    (found, vanished)
}

/// What the `tests_kept` guard found: its violations, and the evidence the tests gave
/// (absent without a runner).
#[derive(Debug, Clone, Default)]
pub struct TestsKept {
    pub violations: Vec<String>,
    pub evidence: Option<Evidence>,
}

/// The `tests_kept` guard: tests by identity between `base` and the repository's HEAD
/// commit, every test change attributed; the per-file counts when no runner applies.
pub fn tests_kept(
    repo: &Repository,
    root: &Path,
    base: Oid,
    changes: &[Change],
    inputs: &super::GuardInputs,
) -> TestsKept {
    let mut tools = Tools {
        setup: inputs.setup.clone(),
        ..Tools::default()
    };
    if let Some(t) = inputs.test_timeout {
        tools.timeout = t;
    }
    let declared = &inputs.declared;
    let prepared = inputs.checkouts.as_ref().map(|(b, h)| Prepared {
        base: b,
        head: h,
        kept_base: inputs.kept_base_tests.as_ref(),
    });
    let head = match repo.head().and_then(|h| h.peel_to_commit()) {
        Ok(c) => c.id(),
        Err(e) => {
            return TestsKept {
                violations: vec![format!("cannot read HEAD: {}", e.message())],
                evidence: None,
            };
        }
    };
    match check_identity_in(repo, base, head, &tools, declared, prepared) {
        Ok(identity) => {
            let mut violations: Vec<String> =
                identity.findings.iter().map(Finding::message).collect();
            if identity.runner.is_none() {
                violations.extend(weakened_tests(repo, root, changes));
            }
            TestsKept {
                violations,
                evidence: identity.runner.is_some().then_some(identity.evidence),
            }
        }
        Err(e) => TestsKept {
            violations: vec![format!("tests could not be compared by identity: {e}")],
            evidence: None,
        },
    }
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

#[cfg(test)]
#[path = "tests/identity_tests.rs"]
mod identity_tests;
