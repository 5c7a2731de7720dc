//! The `## Setup` discovery proposes: what a pristine checkout of this project needs
//! before anything in it can be measured — its npm dependencies installed, its own
//! Python environment with the project installed from that checkout, its Go modules
//! downloaded. Rust needs nothing (cargo fetches and builds by itself).

use std::fs;
use std::path::Path;

use crate::worktrees::setup::PYTHON_SETUP;

/// One proposed `## Setup` command and why the project needs it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SetupStep {
    pub command: String,
    pub why: String,
}

/// The set-up a project at `root` needs, in the order it should run; empty when it
/// needs none.
pub fn propose_setup(root: &Path) -> Vec<SetupStep> {
    let mut steps = Vec::new();
    let has = |f: &str| root.join(f).is_file();
    let manifest = fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let npm_deps = manifest.as_ref().is_some_and(|m| {
        ["dependencies", "devDependencies"].iter().any(|k| {
            m.get(k)
                .and_then(|d| d.as_object())
                .is_some_and(|d| !d.is_empty())
        })
    });
    if npm_deps {
        let (command, why) = if has("package-lock.json") || has("npm-shrinkwrap.json") {
            (
                "npm ci",
                "package.json declares dependencies and its lockfile pins them: each checkout installs exactly those into its own node_modules",
            )
        } else {
            (
                "npm install",
                "package.json declares dependencies (no package-lock.json: commit one and use `npm ci` to pin them): each checkout installs its own node_modules",
            )
        };
        steps.push(SetupStep {
            command: command.into(),
            why: why.into(),
        });
    }
    if has("pyproject.toml") || has("setup.py") || has("setup.cfg") {
        steps.push(SetupStep {
            command: PYTHON_SETUP.into(),
            why: "a Python package: each checkout gets its own venv with the project installed from that checkout, never an install (editable or not) of another copy".into(),
        });
    } else if has("requirements.txt") {
        steps.push(SetupStep {
            command: "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt".into(),
            why: "requirements.txt: each checkout gets its own venv with them installed".into(),
        });
    }
    let go_requires = fs::read_to_string(root.join("go.mod"))
        .is_ok_and(|t| t.lines().any(|l| l.trim_start().starts_with("require")));
    if go_requires {
        steps.push(SetupStep {
            command: "go mod download".into(),
            why: "go.mod requires modules: fetched into the shared module cache (GOMODCACHE) before the first build, so a build never waits on the network mid-measurement".into(),
        });
    }
    steps
}

/// The proposal as the factory.md section to paste.
pub fn render_section(steps: &[SetupStep]) -> String {
    let mut out = String::from("## Setup\n");
    for s in steps {
        out.push_str(&format!("- {}\n", s.command));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposes_what_each_ecosystem_needs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(propose_setup(d).is_empty());
        fs::write(d.join("package.json"), r#"{"name": "x", "scripts": {}}"#).unwrap();
        assert!(
            propose_setup(d).is_empty(),
            "no dependencies, nothing to install"
        );
        fs::write(
            d.join("package.json"),
            r#"{"dependencies": {"dep": "file:./vendor-dep"}}"#,
        )
        .unwrap();
        assert_eq!(propose_setup(d)[0].command, "npm install");
        fs::write(d.join("package-lock.json"), "{}").unwrap();
        assert_eq!(propose_setup(d)[0].command, "npm ci");
        fs::write(d.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        fs::write(
            d.join("go.mod"),
            "module x\n\nrequire example.com/y v1.0.0\n",
        )
        .unwrap();
        let commands: Vec<String> = propose_setup(d).into_iter().map(|s| s.command).collect();
        assert_eq!(commands, vec!["npm ci", PYTHON_SETUP, "go mod download"]);
        assert_eq!(
            render_section(&propose_setup(d)),
            format!("## Setup\n- npm ci\n- {PYTHON_SETUP}\n- go mod download\n")
        );
        let req = tempfile::tempdir().unwrap();
        fs::write(req.path().join("requirements.txt"), "requests\n").unwrap();
        assert!(
            propose_setup(req.path())[0]
                .command
                .contains("-r requirements.txt")
        );
        fs::write(req.path().join("go.mod"), "module x\n\ngo 1.21\n").unwrap();
        assert_eq!(
            propose_setup(req.path()).len(),
            1,
            "a go.mod without requires"
        );
    }
}
