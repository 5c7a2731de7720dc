//! Project introspection (spec §8.6): which language and framework a project uses and
//! which commands build, test, lint, format and type-check it, found by looking at known
//! project files and at which tools are installed. Eval's hygiene dimensions run exactly
//! these commands, so discovery and eval never disagree about how a project is checked.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::process::{run_program, which};

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

/// The hygiene checks every project gets, plus coverage (a growth input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Build,
    Tests,
    Lint,
    Format,
    TypeCheck,
    Coverage,
}

impl CheckKind {
    pub const ALL: [CheckKind; 6] = [
        CheckKind::Build,
        CheckKind::Tests,
        CheckKind::Lint,
        CheckKind::Format,
        CheckKind::TypeCheck,
        CheckKind::Coverage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Build => "build",
            CheckKind::Tests => "tests",
            CheckKind::Lint => "lint",
            CheckKind::Format => "format",
            CheckKind::TypeCheck => "type_check",
            CheckKind::Coverage => "coverage",
        }
    }
}

/// How a check's output becomes a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputParser {
    /// Exit code 0 scores 1, anything else 0.
    ExitCode,
    /// Exit 0 *and* no output (gofmt -l lists unformatted files and still exits 0).
    EmptyOutput,
    /// Test-runner summary: the pass ratio, with the counts kept for growth.
    TestSummary,
    /// A coverage report's total percentage.
    CoveragePercent,
}

/// A check factory can run, or the reason it cannot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub kind: CheckKind,
    /// Shell command run from the project root; `None` when unavailable.
    pub command: Option<String>,
    pub parser: OutputParser,
    /// Why there is no command (tool missing, not applicable to the language, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl Check {
    fn run(kind: CheckKind, command: &str, parser: OutputParser) -> Self {
        Self {
            kind,
            command: Some(command.to_string()),
            parser,
            unavailable: None,
        }
    }

    fn missing(kind: CheckKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            command: None,
            parser: OutputParser::ExitCode,
            unavailable: Some(reason.into()),
        }
    }

    /// Runs `command` only when `tool` is on PATH.
    fn with_tool(
        kind: CheckKind,
        tool: &str,
        command: &str,
        parser: OutputParser,
        install: &str,
    ) -> Self {
        if which(tool).is_some() {
            Self::run(kind, command, parser)
        } else {
            Self::missing(kind, format!("`{tool}` is not installed ({install})"))
        }
    }
}

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
    {
        languages.push(Language::Python);
    }
    let language = languages.first().copied().unwrap_or(Language::Unknown);
    let (framework, checks) = match language {
        Language::Rust => rust(root),
        Language::Go => go(),
        Language::TypeScript | Language::JavaScript => node(root),
        Language::Python => python(root),
        Language::Unknown => (
            None,
            CheckKind::ALL
                .iter()
                .map(|k| {
                    Check::missing(
                        *k,
                        "no Cargo.toml, go.mod, package.json or Python project file at the root",
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

fn read(root: &Path, file: &str) -> String {
    fs::read_to_string(root.join(file)).unwrap_or_default()
}

fn rust(root: &Path) -> (Option<String>, Vec<Check>) {
    let manifest = read(root, "Cargo.toml");
    let ws = if manifest.contains("[workspace]") {
        " --workspace"
    } else {
        ""
    };
    let framework = ["axum", "actix-web", "rocket", "tokio", "bevy", "clap"]
        .iter()
        .find(|f| manifest.contains(&format!("\n{f} ")) || manifest.contains(&format!("\n{f}=")))
        .map(|f| f.to_string());
    let install = "rustup component add";
    let checks = vec![
        Check::with_tool(
            CheckKind::Build,
            "cargo",
            &format!("cargo build{ws} --all-targets"),
            OutputParser::ExitCode,
            "install Rust with rustup",
        ),
        Check::with_tool(
            CheckKind::Tests,
            "cargo",
            &format!("cargo test{ws}"),
            OutputParser::TestSummary,
            "install Rust with rustup",
        ),
        Check::with_tool(
            CheckKind::Lint,
            "cargo-clippy",
            &format!("cargo clippy{ws} --all-targets -- -D warnings"),
            OutputParser::ExitCode,
            &format!("{install} clippy"),
        ),
        Check::with_tool(
            CheckKind::Format,
            "cargo-fmt",
            "cargo fmt --all -- --check",
            OutputParser::ExitCode,
            &format!("{install} rustfmt"),
        ),
        Check::missing(
            CheckKind::TypeCheck,
            "not applicable: rustc type-checks during the build",
        ),
        Check::with_tool(
            CheckKind::Coverage,
            "cargo-llvm-cov",
            &format!("cargo llvm-cov{ws} --summary-only"),
            OutputParser::CoveragePercent,
            "cargo install cargo-llvm-cov",
        ),
    ];
    (framework, checks)
}

fn go() -> (Option<String>, Vec<Check>) {
    let install = "install Go from go.dev";
    let checks = vec![
        Check::with_tool(
            CheckKind::Build,
            "go",
            "go build ./...",
            OutputParser::ExitCode,
            install,
        ),
        Check::with_tool(
            CheckKind::Tests,
            "go",
            "go test -v -cover ./...",
            OutputParser::TestSummary,
            install,
        ),
        Check::with_tool(
            CheckKind::Lint,
            "go",
            "go vet ./...",
            OutputParser::ExitCode,
            install,
        ),
        Check::with_tool(
            CheckKind::Format,
            "gofmt",
            "gofmt -l .",
            OutputParser::EmptyOutput,
            install,
        ),
        Check::missing(
            CheckKind::TypeCheck,
            "not applicable: the Go compiler type-checks during the build",
        ),
        Check::with_tool(
            CheckKind::Coverage,
            "go",
            "go test -cover ./...",
            OutputParser::CoveragePercent,
            install,
        ),
    ];
    (None, checks)
}

fn node(root: &Path) -> (Option<String>, Vec<Check>) {
    let manifest: serde_json::Value =
        serde_json::from_str(&read(root, "package.json")).unwrap_or_default();
    let script = |name: &str| {
        manifest
            .pointer(&format!("/scripts/{}", name.replace('/', "~1")))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let has_dep = |name: &str| {
        ["dependencies", "devDependencies"]
            .iter()
            .any(|k| manifest.get(k).and_then(|d| d.get(name)).is_some())
    };
    let framework = ["next", "react", "vue", "svelte", "express", "fastify"]
        .iter()
        .find(|f| has_dep(f))
        .map(|f| f.to_string());
    let npm = which("npm").is_some();
    let npm_script = |kind: CheckKind, name: &str, parser: OutputParser| match script(name) {
        Some(_) if npm => Check::run(kind, &format!("npm run --silent {name}"), parser),
        Some(_) => Check::missing(kind, "`npm` is not installed"),
        None => Check::missing(kind, format!("package.json has no `{name}` script")),
    };
    let tests = match script("test") {
        Some(s) if s.contains("no test specified") => {
            Check::missing(CheckKind::Tests, "the `test` script is npm's placeholder")
        }
        Some(_) if npm => Check::run(
            CheckKind::Tests,
            "npm test --silent",
            OutputParser::TestSummary,
        ),
        _ => npm_script(CheckKind::Tests, "test", OutputParser::TestSummary),
    };
    let format = if script("format:check").is_some() {
        npm_script(CheckKind::Format, "format:check", OutputParser::ExitCode)
    } else if has_dep("prettier") {
        Check::run(
            CheckKind::Format,
            "npx --no-install prettier --check .",
            OutputParser::ExitCode,
        )
    } else {
        Check::missing(
            CheckKind::Format,
            "no `format:check` script and no prettier dependency",
        )
    };
    let type_check = if script("typecheck").is_some() {
        npm_script(CheckKind::TypeCheck, "typecheck", OutputParser::ExitCode)
    } else if root.join("tsconfig.json").is_file() {
        Check::run(
            CheckKind::TypeCheck,
            "npx --no-install tsc --noEmit",
            OutputParser::ExitCode,
        )
    } else {
        Check::missing(CheckKind::TypeCheck, "plain JavaScript: no tsconfig.json")
    };
    let checks = vec![
        npm_script(CheckKind::Build, "build", OutputParser::ExitCode),
        tests,
        npm_script(CheckKind::Lint, "lint", OutputParser::ExitCode),
        format,
        type_check,
        Check::missing(
            CheckKind::Coverage,
            "coverage for JavaScript projects is not measured yet",
        ),
    ];
    (framework, checks)
}

fn python_has(module: &str) -> bool {
    let dir = std::env::temp_dir();
    run_program(
        "python3",
        &["-c", &format!("import {module}")],
        &dir,
        Duration::from_secs(20),
    )
    .map(|o| o.success())
    .unwrap_or(false)
}

fn python(root: &Path) -> (Option<String>, Vec<Check>) {
    let text =
        read(root, "pyproject.toml") + &read(root, "requirements.txt") + &read(root, "setup.py");
    let framework = if root.join("manage.py").is_file() {
        Some("django".to_string())
    } else {
        ["fastapi", "flask", "django"]
            .iter()
            .find(|f| text.to_lowercase().contains(*f))
            .map(|f| f.to_string())
    };
    let py = which("python3").is_some();
    let pytest = py && python_has("pytest");
    let tests = if pytest {
        Check::run(
            CheckKind::Tests,
            "python3 -m pytest -q",
            OutputParser::TestSummary,
        )
    } else if py {
        Check::run(
            CheckKind::Tests,
            "python3 -m unittest discover -v",
            OutputParser::TestSummary,
        )
    } else {
        Check::missing(CheckKind::Tests, "`python3` is not installed")
    };
    let pick = |kind: CheckKind, options: &[(&str, &str)], why: &str| {
        options
            .iter()
            .find(|(tool, _)| which(tool).is_some())
            .map(|(_, cmd)| Check::run(kind, cmd, OutputParser::ExitCode))
            .unwrap_or_else(|| Check::missing(kind, why.to_string()))
    };
    let checks = vec![
        Check::with_tool(
            CheckKind::Build,
            "python3",
            "python3 -m compileall -q -x '(^|/)(\\.venv|venv|\\.git|node_modules)/' .",
            OutputParser::ExitCode,
            "install Python 3",
        ),
        tests,
        pick(
            CheckKind::Lint,
            &[("ruff", "ruff check ."), ("flake8", "flake8 .")],
            "neither ruff nor flake8 is installed (pip install ruff)",
        ),
        pick(
            CheckKind::Format,
            &[
                ("ruff", "ruff format --check ."),
                ("black", "black --check ."),
            ],
            "neither ruff nor black is installed (pip install ruff)",
        ),
        pick(
            CheckKind::TypeCheck,
            &[("mypy", "mypy ."), ("pyright", "pyright")],
            "neither mypy nor pyright is installed (pip install mypy)",
        ),
        if pytest && python_has("pytest_cov") {
            Check::run(
                CheckKind::Coverage,
                "python3 -m pytest -q --cov=. --cov-report=term",
                OutputParser::CoveragePercent,
            )
        } else {
            Check::missing(
                CheckKind::Coverage,
                "pytest-cov is not installed (pip install pytest-cov)",
            )
        },
    ];
    (framework, checks)
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
