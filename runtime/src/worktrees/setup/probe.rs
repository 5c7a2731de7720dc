//! The provenance probe: before a side is scored, proof that the code under test comes
//! from that side's checkout.
//!
//! - **Python** (a `pyproject.toml`, `setup.py` or `setup.cfg`, or packages under `src/`):
//!   the side's interpreter ([`super::side_python`]) looks up each of the project's
//!   import packages from the checkout, as `python -m pytest` / `-m unittest` would (the
//!   checkout first on the path, pytest's `pythonpath` option applied), without running
//!   them; every one must resolve to a file inside the checkout. One that resolves
//!   elsewhere is refused with its cause: `PYTHONPATH`, an editable install's `.pth` or
//!   import finder pointing at another checkout, an installed copy in site-packages.
//! - **JavaScript** (a `package.json` declaring dependencies): each must resolve to a
//!   `node_modules` inside the checkout, after set-up. node looks in every parent
//!   directory and in `~/.node_modules` too, and the checkout sits in the system temp
//!   directory, so a package found only there (or nowhere) is refused, naming where
//!   node would have loaded it from.
//! - **Rust and Go** build the checkout's own sources by construction (cargo into a target
//!   directory of its own, `IsolatedBuilds`); nothing is probed.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{Checkout, PYTHON_SETUP, SideError, enter, side_python};
use crate::sys::process::run_program;

/// What the probe proved about one checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// What was shown to come from the checkout (`lru ← src/lru/__init__.py`).
    pub proofs: Vec<String>,
    /// What could not be probed, and why (not a refusal).
    pub notes: Vec<String>,
}

impl Provenance {
    /// One line: the proofs, then the notes.
    pub fn summary(&self) -> String {
        let mut parts = self.proofs.clone();
        parts.extend(self.notes.iter().map(|n| format!("({n})")));
        if parts.is_empty() {
            "nothing to probe (no Python package or npm dependency)".into()
        } else {
            parts.join("; ")
        }
    }
}

/// Proves the code under test in `c` comes from its checkout, or says why not.
pub fn probe(c: &Checkout<'_>, timeout: Duration) -> Result<Provenance, SideError> {
    let mut found = Provenance::default();
    let refuse = |reason: String| SideError::Provenance {
        side: c.side.to_string(),
        reason,
    };
    python(c, timeout, &mut found).map_err(refuse)?;
    node(c, &mut found).map_err(refuse)?;
    if c.code.join("Cargo.toml").is_file() {
        found
            .proofs
            .push("cargo builds the checkout's own sources (its own target directory)".into());
    }
    if c.code.join("go.mod").is_file() {
        found
            .proofs
            .push("go builds the checkout's own packages".into());
    }
    Ok(found)
}

/// Whether `path` lies inside `root`, both resolved (links followed) where they exist.
fn inside(path: &Path, root: &Path) -> bool {
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(path).starts_with(canon(root))
}

fn relative(path: &Path, root: &Path) -> String {
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (p, r) = (canon(path), canon(root));
    p.strip_prefix(&r)
        .map(|x| x.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

// ---------------------------------------------------------------- Python

/// Directories that hold no import package of the project's own.
const NOT_PACKAGES: &[&str] = &[
    "tests",
    "test",
    "testing",
    "docs",
    "doc",
    "examples",
    "example",
    "benchmarks",
    "bench",
    "scripts",
    "tools",
    "build",
    "dist",
    "eval",
    "node_modules",
    "target",
    "venv",
    "env",
    "site-packages",
];

/// The most packages probed per checkout.
const MAX_PACKAGES: usize = 8;

/// `My-Lib.x` → `my_lib_x`, the import name a distribution name usually has.
fn import_name(distribution: &str) -> String {
    distribution.trim().to_lowercase().replace(['-', '.'], "_")
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The project's own import packages: every package under `src/` (and module, for a
/// src layout), every package at the root but tests, docs and the like, and the
/// pyproject `[project] name` when a package or module of that name exists.
pub(super) fn python_packages(code: &Path) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: String| {
        if is_identifier(&n) && !names.contains(&n) {
            names.push(n);
        }
    };
    let list = |dir: &Path| -> Vec<(String, bool)> {
        let mut v: Vec<(String, bool)> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let is_dir = e.file_type().ok()?.is_dir();
                (!name.starts_with('.') && !name.starts_with("__")).then_some((name, is_dir))
            })
            .collect();
        v.sort();
        v
    };
    let src = code.join("src");
    for (name, is_dir) in list(&src) {
        if is_dir && src.join(&name).join("__init__.py").is_file() {
            add(name);
        } else if !is_dir
            && let Some(module) = name.strip_suffix(".py")
            && !module.starts_with("test")
            && module != "conftest"
            && module != "setup"
        {
            add(module.to_string());
        }
    }
    for (name, is_dir) in list(code) {
        if is_dir
            && !NOT_PACKAGES.contains(&name.as_str())
            && code.join(&name).join("__init__.py").is_file()
        {
            add(name);
        }
    }
    if let Some(dist) = pyproject_name(code) {
        let n = import_name(&dist);
        let exists = ["", "src/"].iter().any(|p| {
            code.join(format!("{p}{n}")).is_dir() || code.join(format!("{p}{n}.py")).is_file()
        });
        if exists {
            add(n);
        }
    }
    names.truncate(MAX_PACKAGES);
    names
}

fn read_toml(path: &Path) -> Option<toml::Table> {
    fs::read_to_string(path).ok()?.parse::<toml::Table>().ok()
}

fn pyproject_name(code: &Path) -> Option<String> {
    let t = read_toml(&code.join("pyproject.toml"))?;
    t.get("project")?.get("name")?.as_str().map(str::to_string)
}

/// pytest's `pythonpath` option (pyproject `[tool.pytest.ini_options]`, `pytest.ini`,
/// `tox.ini`'s `[pytest]`, `setup.cfg`'s `[tool:pytest]`): directories pytest puts first
/// on the path, so the probe does too.
pub(super) fn pytest_pythonpath(code: &Path) -> Vec<String> {
    if let Some(t) = read_toml(&code.join("pyproject.toml"))
        && let Some(v) = t
            .get("tool")
            .and_then(|t| t.get("pytest"))
            .and_then(|p| p.get("ini_options"))
            .and_then(|o| o.get("pythonpath"))
    {
        return match v {
            toml::Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
            toml::Value::Array(a) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
    }
    for (file, section) in [
        ("pytest.ini", "[pytest]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ] {
        let Ok(text) = fs::read_to_string(code.join(file)) else {
            continue;
        };
        let mut in_section = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                in_section = t == section;
            } else if in_section
                && let Some((k, v)) = t.split_once('=')
                && k.trim() == "pythonpath"
            {
                return v.split_whitespace().map(str::to_string).collect();
            }
        }
    }
    Vec::new()
}

/// Looks each name up with `importlib.util.find_spec` (nothing is executed but the
/// interpreter's own start-up) and reports where it resolves, with what explains a path:
/// `PYTHONPATH`, the site directories and the `.pth` lines in them.
const PYTHON_PROBE: &str = r##"
import importlib.util, json, os, site, sys
paths, names, args = [], [], iter(sys.argv[1:])
for a in args:
    if a == "--path":
        paths.append(os.path.abspath(next(args)))
    else:
        names.append(a)
sys.path[0:0] = paths
sites = []
try:
    sites += site.getsitepackages()
except Exception:
    pass
try:
    sites.append(site.getusersitepackages())
except Exception:
    pass
pth = []
for d in sites:
    try:
        files = sorted(os.listdir(d))
    except OSError:
        continue
    for f in files:
        if f.endswith(".pth"):
            try:
                with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                    lines = [l.strip() for l in fh if l.strip() and not l.startswith(("#", "import"))]
            except OSError:
                continue
            pth.append({"file": os.path.join(d, f), "paths": lines})
mods = []
for n in names:
    m = {"name": n}
    try:
        spec = importlib.util.find_spec(n)
    except Exception as e:
        m["error"] = type(e).__name__ + ": " + str(e)
    else:
        if spec is None:
            m["error"] = "not found"
        else:
            m["origin"] = spec.origin if spec.has_location else None
            m["locations"] = list(spec.submodule_search_locations or [])
            m["loader"] = type(spec.loader).__module__ if spec.loader is not None else None
    mods.append(m)
print(json.dumps({"executable": sys.executable, "pythonpath": os.environ.get("PYTHONPATH", ""),
                  "sys_path": [os.path.abspath(p) for p in sys.path], "sites": sites, "pth": pth,
                  "modules": mods}))
"##;

#[derive(Debug, Deserialize)]
struct PyProbe {
    executable: String,
    #[serde(default)]
    pythonpath: String,
    #[serde(default)]
    sys_path: Vec<String>,
    #[serde(default)]
    sites: Vec<String>,
    #[serde(default)]
    pth: Vec<PthFile>,
    modules: Vec<PyModule>,
}

#[derive(Debug, Deserialize)]
struct PthFile {
    file: String,
    paths: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct PyModule {
    name: String,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    locations: Vec<String>,
    #[serde(default)]
    loader: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

fn is_python_project(code: &Path) -> bool {
    ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .any(|f| code.join(f).is_file())
        || code.join("src").is_dir()
}

fn python(c: &Checkout<'_>, timeout: Duration, found: &mut Provenance) -> Result<(), String> {
    if !is_python_project(c.code) {
        return Ok(());
    }
    let names = python_packages(c.code);
    if names.is_empty() {
        if c.code.join("pyproject.toml").is_file() || c.code.join("setup.py").is_file() {
            found
                .notes
                .push("Python: no import package found to probe".into());
        }
        return Ok(());
    }
    let Some(python) = side_python(c.code) else {
        found
            .notes
            .push("Python: no python3 to probe the packages with".into());
        return Ok(());
    };
    let py = python.to_string_lossy().into_owned();
    let mut args: Vec<String> = vec!["-c".into(), PYTHON_PROBE.into()];
    for p in pytest_pythonpath(c.code) {
        args.push("--path".into());
        args.push(p);
    }
    args.extend(names.iter().cloned());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = {
        let _env = enter(c.code);
        run_program(&py, &argv, c.code, timeout.min(Duration::from_secs(120)))
            .map_err(|e| format!("the Python provenance probe could not run: {e}"))?
    };
    let report: PyProbe = out
        .stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l.trim()).ok())
        .ok_or_else(|| {
            format!(
                "the Python provenance probe ({py}) printed no report ({}): {}",
                out.exit_text(),
                out.tail(3)
            )
        })?;
    let mut outside = Vec::new();
    for m in &report.modules {
        let at = m
            .origin
            .as_deref()
            .or(m.locations.first().map(String::as_str));
        match (at, &m.error) {
            (Some(at), _) => {
                let path = if Path::new(at).is_absolute() {
                    PathBuf::from(at)
                } else {
                    c.code.join(at)
                };
                if inside(&path, c.root) {
                    found
                        .proofs
                        .push(format!("`{}` ← {}", m.name, relative(&path, c.root)));
                } else {
                    outside.push(format!(
                        "{} imports `{}` from {}, outside the checkout: {}",
                        report.executable,
                        m.name,
                        path.display(),
                        python_cause(&report, m, &path)
                    ));
                }
            }
            (None, Some(e)) => found.notes.push(format!(
                "`{}` is not importable by {} from the checkout's directory ({e}); the tests must put it on the path themselves",
                m.name, report.executable
            )),
            (None, None) => found.notes.push(format!(
                "`{}` has no location (a built-in or frozen module?)",
                m.name
            )),
        }
    }
    if outside.is_empty() {
        return Ok(());
    }
    let unset = if report.pythonpath.is_empty() {
        ""
    } else {
        ", and run factory without PYTHONPATH"
    };
    Err(format!(
        "{}. Give each side its own environment: `## Setup` with `{PYTHON_SETUP}` (the gate then runs the checkout's .venv/bin/python){unset}",
        outside.join("; ")
    ))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Why `module` resolved to `path`, outside the checkout.
fn python_cause(report: &PyProbe, module: &PyModule, path: &Path) -> String {
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let path = canon(path);
    let under = |entry: &str| !entry.is_empty() && path.starts_with(canon(Path::new(entry)));
    if let Some(entry) = report.pythonpath.split(':').find(|e| under(e)) {
        return format!(
            "`PYTHONPATH` ({}) puts {entry} on the path before the checkout's own code",
            report.pythonpath
        );
    }
    if let Some(loader) = module
        .loader
        .as_deref()
        .filter(|l| l.starts_with("__editable__"))
    {
        return format!(
            "an editable install (`pip install -e` of another checkout): its import finder `{loader}` in {} maps `{}` there",
            report
                .sites
                .first()
                .map(String::as_str)
                .unwrap_or("site-packages"),
            module.name
        );
    }
    let entry = report
        .sys_path
        .iter()
        .filter(|e| under(e))
        .max_by_key(|e| e.len());
    if let Some(entry) = entry {
        if let Some(pth) = report.pth.iter().find(|p| {
            p.paths
                .iter()
                .any(|l| canon(Path::new(l)) == canon(Path::new(entry)))
        }) {
            return format!(
                "an editable install (`pip install -e` of another checkout): {} adds {entry} to the interpreter's path",
                pth.file
            );
        }
        if report
            .sites
            .iter()
            .any(|s| canon(Path::new(s)) == canon(Path::new(entry)))
        {
            return format!(
                "a copy installed into {entry} (`pip install` without `-e`, or an old install) is imported instead of the checkout's code"
            );
        }
        return format!("{entry} is on the interpreter's path before the checkout");
    }
    "the interpreter's import system resolves it there".into()
}

// ---------------------------------------------------------------- JavaScript

/// Every dependency package.json declares (`dependencies`, `devDependencies`).
pub(super) fn npm_dependencies(code: &Path) -> Vec<String> {
    let Ok(text) = fs::read_to_string(code.join("package.json")) else {
        return Vec::new();
    };
    let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    let mut deps: Vec<String> = ["dependencies", "devDependencies"]
        .iter()
        .filter_map(|k| manifest.get(k).and_then(|d| d.as_object()))
        .flat_map(|d| d.keys().cloned())
        .collect();
    deps.sort();
    deps.dedup();
    deps
}

/// Where node would find `dep` outside the checkout: a `node_modules` in a directory
/// above it, `NODE_PATH` (of factory's caller), `~/.node_modules`, `~/.node_libraries`.
fn found_elsewhere(dep: &str, root: &Path) -> Option<(PathBuf, &'static str)> {
    let mut dir = root.parent();
    while let Some(d) = dir {
        let p = d.join("node_modules").join(dep);
        if p.exists() {
            return Some((p, "a node_modules above the checkout"));
        }
        dir = d.parent();
    }
    if let Some(paths) = std::env::var_os("NODE_PATH") {
        for d in std::env::split_paths(&paths) {
            let p = d.join(dep);
            if p.exists() {
                return Some((
                    p,
                    "NODE_PATH (factory removes it for the checkout's commands)",
                ));
            }
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        for d in [".node_modules", ".node_libraries"] {
            let p = Path::new(&home).join(d).join(dep);
            if p.exists() {
                return Some((p, "a global folder node searches"));
            }
        }
    }
    None
}

fn node(c: &Checkout<'_>, found: &mut Provenance) -> Result<(), String> {
    let deps = npm_dependencies(c.code);
    if deps.is_empty() {
        return Ok(());
    }
    if c.code.join(".pnp.cjs").is_file() || c.code.join(".pnp.js").is_file() {
        found
            .notes
            .push("Yarn Plug'n'Play resolves packages itself: not probed".into());
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut linked_out = Vec::new();
    for dep in &deps {
        // node's own walk: the project's directory, then each parent within the checkout.
        let mut dir = Some(c.code);
        let mut hit = None;
        while let Some(d) = dir.filter(|d| d.starts_with(c.root)) {
            let p = d.join("node_modules").join(dep);
            if p.exists() {
                hit = Some(p);
                break;
            }
            dir = d.parent();
        }
        match hit {
            Some(p) if inside(&p, c.root) => {}
            Some(p) => linked_out.push(format!(
                "{} links to {}, outside the checkout (`npm link`?)",
                relative(&p, c.root),
                fs::canonicalize(&p).unwrap_or(p.clone()).display()
            )),
            None => missing.push(match found_elsewhere(dep, c.root) {
                Some((p, what)) => format!("`{dep}` (node would load {}, {what})", p.display()),
                None => format!("`{dep}` (installed nowhere node looks: the tests cannot start)"),
            }),
        }
    }
    if missing.is_empty() && linked_out.is_empty() {
        found.proofs.push(format!(
            "{} from the checkout's own node_modules",
            plural(deps.len(), "npm dependency", "npm dependencies")
        ));
        return Ok(());
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!(
            "package.json declares {} the checkout's own node_modules lacks after set-up: {}",
            plural(missing.len(), "dependency", "dependencies"),
            missing.join(", ")
        ));
    }
    why.extend(linked_out);
    Err(format!(
        "{}. Declare `## Setup` with `npm ci` (with a committed package-lock.json) or `npm install`, so each side installs its own node_modules",
        why.join("; ")
    ))
}
