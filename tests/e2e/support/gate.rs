//! A project the gate tests drive through the binary: a git repository in a temp dir,
//! its own `FACTORY_HOME`, and its own `TMPDIR` (where the gate's scratch checkouts go,
//! so a test can see them removed). Each test file adds what only it needs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use factory_runtime::events::{self, Event};
use factory_runtime::project::layout::FactoryPaths;
use git2::{Oid, Repository};
use serde_json::Value;

use super::{commit_all, text};

pub struct GateProject {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub tmp: tempfile::TempDir,
    /// Set for every command (a stdlib-only `PATH`, say).
    pub env: Vec<(String, String)>,
}

/// The QA roles whose completion precheck requires.
const QA: [&str; 3] = ["health_checker", "code_reviewer", "adversarial_tester"];

impl GateProject {
    /// `files` written (directories made) and committed on `main`.
    pub fn init(files: &[(&str, &str)]) -> GateProject {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        repo.set_head("refs/heads/main").unwrap();
        for (rel, body) in files {
            let to = dir.path().join(rel);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::write(to, body).unwrap();
        }
        commit_all(&repo, "init");
        GateProject {
            dir,
            home: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `factory ARGS` in the project, with `env` on top of the project's own.
    pub fn factory_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::cargo_bin("factory").expect("binary");
        c.current_dir(self.path())
            .env("FACTORY_HOME", self.home.path())
            .env("TMPDIR", self.tmp.path())
            .env_remove("FACTORY_RUN_ID")
            .env_remove("FACTORY_RUNNER")
            .env_remove("GATE_TOOL")
            .env_remove("NODE_PATH")
            .env_remove("PYTHONPATH")
            .args(args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("factory runs")
    }

    pub fn factory(&self, args: &[&str]) -> Output {
        self.factory_with(args, &[])
    }

    pub fn worktree(&self, id: u32) -> PathBuf {
        self.path().join(format!(".factory/worktrees/exp-{id:03}"))
    }

    pub fn begin(&self, hypothesis: &str) -> u32 {
        let o = self.factory(&["begin", "--hypothesis", hypothesis]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout).trim().parse().unwrap()
    }

    /// Writes `files` into experiment `id`'s worktree and commits them, as a builder would.
    pub fn build(&self, id: u32, files: &[(&str, &str)]) -> Oid {
        let wt = self.worktree(id);
        for (rel, body) in files {
            let to = wt.join(rel);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::write(to, body).unwrap();
        }
        let commit = commit_all(&Repository::open(&wt).unwrap(), "change");
        // The executor brings an agent's commits home when its node ends.
        factory_runtime::worktrees::repo::import(self.path(), id).unwrap();
        commit
    }

    /// The three QA completions for experiment `id`, chained under the binary's key as
    /// factory writes them.
    pub fn qa_done(&self, id: u32) {
        self.qa_confirming(id, &[]);
    }

    /// [`GateProject::qa_done`], each review confirming the tests named in `confirmed`.
    pub fn qa_confirming(&self, id: u32, confirmed: &[&str]) {
        for role in QA {
            let mut event = Event::raw("agent.completed")
                .with("role", role)
                .with("exp_id", id);
            if !confirmed.is_empty() {
                event = event.with("confirmed", serde_json::json!(confirmed));
            }
            events::append_in_home(&FactoryPaths::new(self.path()), self.home.path(), &event)
                .unwrap();
        }
    }

    /// `factory precheck --exp id --json` with `env`: exit code and the JSON printed.
    pub fn precheck_with(&self, id: u32, env: &[(&str, &str)]) -> (Option<i32>, Value) {
        let o = self.factory_with(&["precheck", "--exp", &id.to_string(), "--json"], env);
        let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}\n{}", text(&o.stdout), text(&o.stderr));
        });
        (o.status.code(), v)
    }

    pub fn precheck(&self, id: u32) -> (Option<i32>, Value) {
        self.precheck_with(id, &[])
    }

    /// Begins `hypothesis`, commits `files`, completes QA (confirming `confirmed`) and
    /// prechecks: exit code and the JSON printed.
    pub fn judge(
        &self,
        hypothesis: &str,
        files: &[(&str, &str)],
        confirmed: &[&str],
    ) -> (i32, Value) {
        let id = self.begin(hypothesis);
        self.build(id, files);
        self.qa_confirming(id, confirmed);
        let (code, v) = self.precheck(id);
        (code.unwrap_or(-1), v)
    }

    /// The gate's scratch checkouts still in the project's TMPDIR.
    pub fn scratch_left(&self) -> Vec<String> {
        fs::read_dir(self.tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                ["factory-gate-", "factory-tests-", "factory-pristine-"]
                    .iter()
                    .any(|prefix| n.starts_with(prefix))
            })
            .collect()
    }
}

/// The check `name` of a precheck report; panics naming it when the report has none.
pub fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no {name} check in {report:#}"))
}

/// The details of check `name` as JSON text (empty when the report has no such check).
pub fn details(report: &Value, name: &str) -> String {
    report["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .map(|c| c["details"].to_string())
        .unwrap_or_default()
}
