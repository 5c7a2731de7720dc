//! Project introspection (spec §8.6): which language and framework a project uses and
//! which commands build, test, lint, format and type-check it, found by looking at known
//! project files and at which tools are installed. Eval's hygiene dimensions run exactly
//! these commands, so discovery and eval never disagree about how a project is checked.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::toolchains;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Go,
    TypeScript,
    JavaScript,
    Python,
    Unknown,
}

impl Language {
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Go => "go",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::Unknown => "unknown",
        }
    }
}

pub use super::check::{Check, CheckKind, NOT_APPLICABLE, OutputParser};

/// What introspection found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectProfile {
    pub language: Language,
    /// Every language whose marker file is at the root, primary first.
    pub languages: Vec<Language>,
    pub framework: Option<String>,
    pub checks: Vec<Check>,
    /// CI configuration files found (e.g. `.github/workflows/ci.yml`).
    pub ci: Vec<String>,
}

impl ProjectProfile {
    pub fn check(&self, kind: CheckKind) -> Option<&Check> {
        self.checks.iter().find(|c| c.kind == kind)
    }
}

/// A project without a manifest is still Python when it has `.py` files at its root or
/// in a `tests/` (or `test/`) directory: many small projects have no pyproject.toml.
fn has_python_files(root: &Path) -> bool {
    let has_py = |dir: &Path| {
        fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "py") && e.path().is_file())
    };
    has_py(root) || ["tests", "test"].iter().any(|d| has_py(&root.join(d)))
}

/// Looks at `root` and returns its profile. Never fails: an unknown project gets a
/// profile whose checks all say why they are unavailable.
pub fn introspect(root: &Path) -> ProjectProfile {
    let mut languages = Vec::new();
    if root.join("Cargo.toml").is_file() {
        languages.push(Language::Rust);
    }
    if root.join("go.mod").is_file() {
        languages.push(Language::Go);
    }
    if root.join("package.json").is_file() {
        languages.push(if root.join("tsconfig.json").is_file() {
            Language::TypeScript
        } else {
            Language::JavaScript
        });
    }
    if [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
    ]
    .iter()
    .any(|f| root.join(f).is_file())
        || has_python_files(root)
    {
        languages.push(Language::Python);
    }
    let language = languages.first().copied().unwrap_or(Language::Unknown);
    let (framework, checks) = match language {
        Language::Rust => toolchains::rust(root),
        Language::Go => toolchains::go(),
        Language::TypeScript | Language::JavaScript => toolchains::node(root),
        Language::Python => toolchains::python(root),
        Language::Unknown => (
            None,
            CheckKind::ALL
                .iter()
                .map(|k| {
                    Check::missing(
                        *k,
                        "no Cargo.toml, go.mod, package.json or Python files at the root \
                         (declare the project's own checks under `## Project eval` in factory.md)",
                    )
                })
                .collect(),
        ),
    };
    ProjectProfile {
        language,
        languages,
        framework,
        checks,
        ci: detect_ci(root),
    }
}

fn detect_ci(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(entries) = fs::read_dir(root.join(".github/workflows")) {
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
            .map(|n| format!(".github/workflows/{n}"))
            .collect();
        names.sort();
        found.extend(names);
    }
    for f in [
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        "Jenkinsfile",
        ".travis.yml",
        "azure-pipelines.yml",
        ".ci/run",
    ] {
        if root.join(f).is_file() {
            found.push(f.to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::process::which;

    #[test]
    fn rust_project_gets_cargo_commands_and_no_type_check() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
        fs::write(dir.path().join(".github/workflows/ci.yml"), "on: push").unwrap();
        let p = introspect(dir.path());
        assert_eq!(p.language, Language::Rust);
        assert_eq!(
            p.check(CheckKind::Tests).unwrap().command.as_deref(),
            Some("cargo test")
        );
        assert!(
            p.check(CheckKind::TypeCheck)
                .unwrap()
                .unavailable
                .as_deref()
                .unwrap()
                .contains("not applicable")
        );
        assert_eq!(p.ci, vec![".github/workflows/ci.yml"]);
    }

    #[test]
    fn node_project_uses_its_scripts_and_skips_the_placeholder_test() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("package.json"),
            r#"{"scripts":{"lint":"eslint .","test":"echo \"Error: no test specified\" && exit 1"},"dependencies":{"react":"18"}}"#,
        )
        .unwrap();
        fs::write(dir.path().join("tsconfig.json"), "{}").unwrap();
        let p = introspect(dir.path());
        assert_eq!(p.language, Language::TypeScript);
        assert_eq!(p.framework.as_deref(), Some("react"));
        assert!(p.check(CheckKind::Tests).unwrap().command.is_none());
        assert!(
            p.check(CheckKind::Build)
                .unwrap()
                .unavailable
                .as_deref()
                .unwrap()
                .contains("`build` script")
        );
        assert_eq!(
            p.check(CheckKind::TypeCheck).unwrap().command.as_deref(),
            Some("npx --no-install tsc --noEmit")
        );
    }

    #[test]
    fn go_and_python_are_detected() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
        let p = introspect(dir.path());
        assert_eq!(p.language, Language::Go);
        let format = p.check(CheckKind::Format).unwrap();
        if which("gofmt").is_some() {
            assert_eq!(format.parser, OutputParser::EmptyOutput);
        } else {
            assert!(
                format
                    .unavailable
                    .as_deref()
                    .unwrap()
                    .contains("`gofmt` is not installed")
            );
        }

        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname='x'\ndependencies=['flask']\n",
        )
        .unwrap();
        let p = introspect(dir.path());
        assert_eq!(p.language, Language::Python);
        assert_eq!(p.framework.as_deref(), Some("flask"));
    }

    #[test]
    fn unknown_project_explains_every_missing_check() {
        let dir = tempfile::tempdir().unwrap();
        let p = introspect(dir.path());
        assert_eq!(p.language, Language::Unknown);
        assert!(
            p.checks
                .iter()
                .all(|c| c.command.is_none() && c.unavailable.is_some())
        );
    }
}
