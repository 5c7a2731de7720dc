//! Measure the candidate, provably (docs/gate.md, "Set-up and provenance"), through the
//! built binary on real projects the tests create: an editable install pointing at the
//! user's checkout is refused by the provenance probe, and with the documented per-side
//! `## Setup` the candidate is measured; a JavaScript project without `node_modules` is
//! refused, then set up by `## Setup` and measured; a failing set-up command and a test
//! runner that cannot start are errors, never a revert; `factory doctor` runs the same
//! set-up and probe in a clean checkout; `factory discover` proposes the `## Setup`.
//! CI has python3 with venv, node and npm (`.ci/run`); nothing here uses the network.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{GateProject as Project, check, commit_all, needs, text};
use git2::Repository;
use serde_json::Value;

/// The set-up docs/configuration.md recommends for a Python project.
const PYTHON_SETUP: &str = "python3 -m venv .venv && .venv/bin/pip install -e .";

/// A repository on `main` holding `files`, committed; pip and npm kept offline and quiet.
fn new_project(files: &[(&str, &str)]) -> Project {
    let mut p = Project::init(files);
    for (k, v) in [
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
        ("PIP_NO_INDEX", "1"),
        ("NPM_CONFIG_UPDATE_NOTIFIER", "false"),
        ("NPM_CONFIG_AUDIT", "false"),
        ("NPM_CONFIG_FUND", "false"),
        ("NPM_CONFIG_OFFLINE", "true"),
    ] {
        p.env.push((k.into(), v.into()));
    }
    p
}

/// What only these tests need of the gate's project.
impl Project {
    /// Runs factory as `source venv/bin/activate` leaves a shell: `PATH` and `VIRTUAL_ENV`.
    fn activate(&mut self, venv: &Path) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(
            std::iter::once(venv.join("bin")).chain(std::env::split_paths(&path)),
        )
        .unwrap();
        self.env
            .push(("PATH".into(), joined.to_string_lossy().into_owned()));
        self.env
            .push(("VIRTUAL_ENV".into(), venv.display().to_string()));
    }

    /// Commits `rel` with `body` on `main`, in the user's checkout.
    fn commit_on_main(&self, rel: &str, body: &str) {
        write(self.path(), rel, body);
        commit_all(&Repository::open(self.path()).unwrap(), "update");
    }

    /// `factory doctor --json`'s finding for `check`.
    fn doctor(&self, check: &str) -> Value {
        let o = self.factory(&["doctor", "--json"]);
        let all: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&o.stdout), text(&o.stderr)));
        all.as_array()
            .and_then(|a| a.iter().find(|f| f["check"] == check).cloned())
            .unwrap_or_else(|| panic!("no {check} finding in {all:#}"))
    }
}

fn write(root: &Path, rel: &str, body: &str) {
    let to = root.join(rel);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::write(to, body).unwrap();
}

fn factory_md(eval_command: &str, extra: &str) -> String {
    format!(
        "# Levels\n\n## Goal\na higher level\n\n## Scope\n- src/**\n\n## Guards\n\n## Eval command\n{eval_command}\n\n## Eval threshold\n0.1\n\n## Constraints\n- none\n\n## Eval runs\n1\n\n## Test timeout\n120\n{extra}"
    )
}

// ------------------------------------------------------------------------- Python

/// A PEP 517/660 build backend in the project itself (`requires = []`), so `pip install
/// -e .` works offline: an editable install is a `.pth` naming the checkout's `src`, as
/// setuptools writes for a src layout.
const BACKEND: &str = r#"import base64, hashlib, os, zipfile

DIST = "lru-0.1"


def _wheel(directory, files):
    files = dict(files)
    files[DIST + ".dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: lru\nVersion: 0.1\n"
    files[DIST + ".dist-info/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = DIST + ".dist-info/RECORD"
    lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    files[record] = ("\n".join(lines + [record + ",,"]) + "\n").encode()
    name = DIST + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    src = os.path.abspath("src") + "\n"
    return _wheel(wheel_directory, {"__editable__.lru-0.1.pth": src.encode()})


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for root, _, names in os.walk("src"):
        for n in names:
            full = os.path.join(root, n)
            with open(full, "rb") as f:
                files[os.path.relpath(full, "src")] = f.read()
    return _wheel(wheel_directory, files)
"#;

const PYPROJECT: &str = "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\"_build\"]\n\n[project]\nname = \"lru\"\nversion = \"0.1\"\n";

const LRU_TESTS: &str = "import unittest\n\nimport lru\n\n\nclass LevelTest(unittest.TestCase):\n    def test_level_is_a_fraction(self):\n        self.assertTrue(0 <= lru.LEVEL <= 1)\n";

/// The eval reads the level of the `lru` the interpreter imports.
const READS_LEVEL: &str = "python3 -c \"import lru; print(lru.LEVEL)\"";

fn python_project(extra_md: &str) -> Project {
    new_project(&[
        (".gitignore", ".factory/\n"),
        ("pyproject.toml", PYPROJECT),
        ("_build/backend.py", BACKEND),
        ("src/lru/__init__.py", "LEVEL = 0.3\n"),
        ("test_lru.py", LRU_TESTS),
        ("factory.md", &factory_md(READS_LEVEL, extra_md)),
    ])
}

/// A venv in `dir` with `project` installed editable (`pip install -e`), as a developer
/// sets one up: its python imports `lru` from the project's own working copy.
fn editable_venv(dir: &Path, project: &Path) -> PathBuf {
    let venv = dir.join("uservenv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let pip = std::process::Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index", "-e"])
        .arg(project)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
        .unwrap();
    assert!(pip.status.success(), "{}", text(&pip.stderr));
    venv
}

#[test]
fn an_editable_install_of_the_users_checkout_is_refused_and_a_per_side_venv_measures_the_candidate()
{
    needs("python3");
    let mut p = python_project("");
    let users = tempfile::tempdir().unwrap();
    let venv = editable_venv(users.path(), p.path());
    p.activate(&venv);

    // Without a set-up, both checkouts would import the user's working copy.
    let id = p.begin("raise the level");
    p.build(id, &[("src/lru/__init__.py", "LEVEL = 0.4\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v:#}");
    assert!(v.get("passed").is_none(), "an error, not a verdict: {v:#}");
    let err = v["error"].as_str().unwrap();
    let users_src = p.path().canonicalize().unwrap().join("src/lru/__init__.py");
    for needle in [
        "could not measure the base commit",
        "does not come from its checkout",
        "imports `lru` from",
        &users_src.display().to_string(),
        "an editable install",
        "__editable__.lru-0.1.pth",
        PYTHON_SETUP,
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    let o = p.factory(&["finalize", "--id", &id.to_string(), "--verdict", "keep"]);
    assert_eq!(o.status.code(), Some(1), "no keep after an error");

    // `factory doctor` finds the same in a clean checkout of HEAD.
    let doc = p.doctor("checkout");
    assert_eq!(doc["ok"], false, "{doc:#}");
    let found = doc["found"].as_str().unwrap();
    assert!(
        found.contains("an editable install") && found.contains("HEAD"),
        "{doc:#}"
    );
    assert!(doc["fix"].as_str().unwrap().contains("## Setup"), "{doc:#}");

    // With the documented set-up each side has its own venv, installed from itself.
    p.commit_on_main(
        "factory.md",
        &factory_md(READS_LEVEL, &format!("\n## Setup\n- {PYTHON_SETUP}\n")),
    );
    let id = p.begin("raise the level, measured");
    p.build(id, &[("src/lru/__init__.py", "LEVEL = 0.4\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["passed"], true, "{v:#}");
    let provenance = check(&v, "provenance")["details"].to_string();
    for needle in [
        PYTHON_SETUP,
        "base: `lru` ← src/lru/__init__.py",
        "head: `lru` ← src/lru/__init__.py",
    ] {
        assert!(
            provenance.contains(needle),
            "{needle:?} not in {provenance}"
        );
    }
    // The candidate's code was what ran: its eval command read 0.4, the base's 0.3.
    let cmp = &v["comparison"];
    assert!(
        cmp["head"]["mean"].as_f64().unwrap() > cmp["base"]["mean"].as_f64().unwrap(),
        "{cmp:#}"
    );
    assert_eq!(check(&v, "tests_kept")["passed"], true, "{v:#}");
    assert!(p.scratch_left().is_empty(), "{:?}", p.scratch_left());

    let doc = p.doctor("checkout");
    assert_eq!(doc["ok"], true, "{doc:#}");
    assert!(
        doc["found"]
            .as_str()
            .unwrap()
            .contains("`lru` ← src/lru/__init__.py"),
        "{doc:#}"
    );
}

#[test]
fn a_test_runner_that_cannot_start_is_an_error_not_a_revert() {
    needs("python3");
    // A src layout installed nowhere: the tests cannot import the package at the base.
    let p = python_project("");
    let id = p.begin("raise the level");
    p.build(id, &[("src/lru/__init__.py", "LEVEL = 0.4\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v:#}");
    assert!(v.get("passed").is_none(), "{v:#}");
    let err = v["error"].as_str().unwrap();
    for needle in [
        "could not measure the base commit",
        "the tests check `python3 -m ",
        "could not start",
        "No module named 'lru'",
        "## Setup",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    let record: Value = serde_json::from_str(
        &fs::read_to_string(p.path().join(".factory/experiments/001/precheck.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["passed"], false);
    assert!(
        record["error"]
            .as_str()
            .unwrap()
            .contains("could not start")
    );
}

#[test]
fn a_module_the_change_deletes_is_scored_as_its_regression_not_an_error() {
    needs("python3");
    let p = new_project(&[
        (".gitignore", ".factory/\n"),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "test_calc.py",
            "import unittest\n\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
        ),
        ("src/level.txt", "0.3\n"),
        (
            "factory.md",
            &factory_md("cat src/level.txt", "").replace("- src/**", "- src/**\n- *.py"),
        ),
    ]);
    let id = p.begin("drop the calculator");
    let wt = p.path().join(format!(".factory/worktrees/exp-{id:03}"));
    fs::remove_file(wt.join("calc.py")).unwrap();
    let repo = Repository::open(&wt).unwrap();
    let mut index = repo.index().unwrap();
    index.remove_path(Path::new("calc.py")).unwrap();
    index.write().unwrap();
    p.build(id, &[("src/level.txt", "0.9\n")]);
    p.qa_done(id);
    // At the head the tests cannot import `calc`, which the base has: the change broke
    // it, so it is measured (and refused), not "could not measure".
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(1), "{v:#}");
    assert!(v.get("error").is_none(), "{v:#}");
    assert_eq!(v["passed"], false, "{v:#}");
    assert_eq!(check(&v, "tests_kept")["passed"], false, "{v:#}");
}

#[test]
fn pythonpath_pointing_at_the_users_checkout_is_refused_by_name() {
    needs("python3");
    let mut p = python_project("");
    let src = p.path().join("src").display().to_string();
    p.env.push(("PYTHONPATH".into(), src.clone()));
    let id = p.begin("raise the level");
    p.build(id, &[("src/lru/__init__.py", "LEVEL = 0.4\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v:#}");
    let err = v["error"].as_str().unwrap();
    for needle in [
        "does not come from its checkout",
        &format!("`PYTHONPATH` ({src}) puts"),
        "run factory without PYTHONPATH",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}

#[test]
fn a_failing_setup_command_is_an_error_naming_command_side_exit_and_cause() {
    let p = new_project(&[
        (".gitignore", ".factory/\n"),
        ("src/level.txt", "0.3\n"),
        (
            "factory.md",
            &factory_md(
                "cat src/level.txt",
                "\n## Setup\n- echo resolving; echo 'E: the mirror is unreachable' >&2; exit 4\n",
            ),
        ),
    ]);
    let id = p.begin("raise the level");
    p.build(id, &[("src/level.txt", "0.9\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v:#}");
    assert!(
        v.get("passed").is_none() && v.get("verdict").is_none(),
        "{v:#}"
    );
    let err = v["error"].as_str().unwrap();
    for needle in [
        "could not measure the base commit",
        "`## Setup` command `echo resolving;",
        "exit code 4",
        "E: the mirror is unreachable",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    let o = p.factory(&["finalize", "--id", &id.to_string(), "--verdict", "keep"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(p.scratch_left().is_empty(), "{:?}", p.scratch_left());
}

// --------------------------------------------------------------------- JavaScript

const SCORE_JS: &str = "const { double } = require('dep');\nconsole.log(JSON.stringify({ score: double(require('./src/level.js')) }));\n";
const JS_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { double } = require('dep');\n\ntest('doubles', () => {\n  assert.strictEqual(double(2), 4);\n});\n";

fn js_project() -> Project {
    new_project(&[
        (".gitignore", ".factory/\nnode_modules/\n"),
        (
            "package.json",
            "{\n  \"name\": \"levels\",\n  \"version\": \"1.0.0\",\n  \"scripts\": { \"test\": \"node --test\" },\n  \"dependencies\": { \"dep\": \"file:./vendor-dep\" }\n}\n",
        ),
        (
            "vendor-dep/package.json",
            "{ \"name\": \"dep\", \"version\": \"1.0.0\", \"main\": \"index.js\" }\n",
        ),
        (
            "vendor-dep/index.js",
            "exports.double = (x) => Math.round(x * 20) / 10;\n",
        ),
        ("src/level.js", "module.exports = 0.3;\n"),
        ("test/double.test.js", JS_TEST),
        ("score.js", SCORE_JS),
        ("factory.md", &factory_md("node score.js", "")),
    ])
}

#[test]
fn a_js_project_without_node_modules_is_refused_then_set_up_by_setup_and_measured() {
    needs("node");
    needs("npm");
    let p = js_project();
    // What node would otherwise find: a node_modules in the temp directory above the
    // scratch checkouts, whose `dep` scores everything 3 (out of range).
    write(
        p.tmp.path(),
        "node_modules/dep/index.js",
        "exports.double = () => 3;\n",
    );
    let id = p.begin("raise the level");
    p.build(id, &[("src/level.js", "module.exports = 0.4;\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v:#}");
    assert!(
        v.get("passed").is_none(),
        "could not measure, not revert: {v:#}"
    );
    let err = v["error"].as_str().unwrap();
    for needle in [
        "could not measure the base commit",
        "declares 1 dependency the checkout's own node_modules lacks after set-up: `dep`",
        "a node_modules above the checkout",
        "npm install",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }

    // discover proposes the set-up the project needs.
    let o = p.factory(&["discover"]);
    let said = text(&o.stdout);
    assert!(
        said.contains("## Setup\n- npm install\n"),
        "{said}\n{}",
        text(&o.stderr)
    );
    // Its profile would await review; this test measures without one.
    fs::remove_file(p.path().join(".factory/eval_profile.json")).unwrap();

    p.commit_on_main(
        "factory.md",
        &factory_md("node score.js", "\n## Setup\n- npm install\n"),
    );
    let id = p.begin("raise the level, set up");
    p.build(id, &[("src/level.js", "module.exports = 0.4;\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(0), "{v:#}");
    let provenance = check(&v, "provenance")["details"].to_string();
    assert!(
        provenance.contains("`npm install`")
            && provenance.contains("1 npm dependency from the checkout's own node_modules"),
        "{provenance}"
    );
    let cmp = &v["comparison"];
    assert!(
        cmp["head"]["mean"].as_f64().unwrap() > cmp["base"]["mean"].as_f64().unwrap(),
        "{cmp:#}"
    );
    assert_eq!(v["passed"], true, "{v:#}");
    let tests = check(&v, "tests_kept");
    assert_eq!(tests["passed"], true, "{v:#}");
    assert!(p.scratch_left().is_empty(), "{:?}", p.scratch_left());
}

#[test]
fn a_js_test_command_that_is_not_installed_is_an_error_not_a_revert() {
    needs("npm");
    let p = new_project(&[
        (".gitignore", ".factory/\n"),
        (
            "package.json",
            "{ \"name\": \"x\", \"version\": \"1.0.0\", \"scripts\": { \"test\": \"definitely-not-jest-xyz --ci\" } }\n",
        ),
        ("src/level.txt", "0.3\n"),
        ("factory.md", &factory_md("cat src/level.txt", "")),
    ]);
    let id = p.begin("raise the level");
    p.build(id, &[("src/level.txt", "0.9\n")]);
    p.qa_done(id);
    let (code, v) = p.precheck(id);
    assert_eq!(code, Some(2), "{v:#}");
    let err = v["error"].as_str().unwrap();
    for needle in [
        "could not measure the base commit",
        "the tests check `npm test --silent`",
        "not installed",
        "definitely-not-jest-xyz",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}
