//! The commands each supported toolchain is checked with: Rust (cargo), Go, Node
//! (package.json scripts, prettier, tsc) and Python (compileall, pytest/unittest, ruff,
//! flake8, black, mypy, pyright, pytest-cov). A tool that is not installed becomes an
//! unavailable check that says how to install it.

use std::fs;
use std::path::Path;
use std::time::Duration;

use super::check::{Check, CheckKind, NOT_APPLICABLE, OutputParser};
use crate::sys::process::{run_program, which};

pub(super) fn read(root: &Path, file: &str) -> String {
    fs::read_to_string(root.join(file)).unwrap_or_default()
}

pub(super) fn rust(root: &Path) -> (Option<String>, Vec<Check>) {
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
            format!("{NOT_APPLICABLE}: rustc type-checks during the build"),
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

pub(super) fn go() -> (Option<String>, Vec<Check>) {
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
            format!("{NOT_APPLICABLE}: the Go compiler type-checks during the build"),
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

pub(super) fn node(root: &Path) -> (Option<String>, Vec<Check>) {
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

pub(super) fn python(root: &Path) -> (Option<String>, Vec<Check>) {
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
            "python3 -m pytest -q -p no:cacheprovider",
            OutputParser::TestSummary,
        )
    } else if let Some(why) = py
        .then(|| {
            let files = super::test_files::files_under(root);
            super::test_files::pytest_needed(root, &files)
        })
        .flatten()
    {
        // Tests that exist and cannot run are a failure, never "no tests found".
        Check::unrunnable(
            CheckKind::Tests,
            format!(
                "the tests need pytest ({why}), which is not installed for python3 (pip install pytest)"
            ),
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
