//! Shared by the `factory run` end-to-end tests: a demo project in a temp git
//! repository, and replay scripts derived from the demo's own.

#![allow(dead_code)]

mod gate;
pub use gate::{GateProject, check, details};

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use factory_runtime::events;
use factory_runtime::project::layout::FactoryPaths;
use git2::Repository;

pub const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo");
pub const WORKFLOW: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/run/experiment.fwf"
);

pub struct Project {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    /// Shared by every eval of a test, so cargo builds the demo incrementally.
    target: PathBuf,
}

impl Project {
    /// The demo, committed on `main`, with config and a baseline eval.
    pub fn demo(target: &Path) -> Project {
        let p = Project::committed(target);
        assert!(p.factory(&["eval", "--record-baseline"]).status.success());
        fs::create_dir_all(p.path().join(".factory/strategy")).unwrap();
        fs::write(
            p.path().join(".factory/strategy/research-local.md"),
            "## Candidates\n1. a HashMap\n",
        )
        .unwrap();
        p
    }

    /// The demo committed on `main` with its config, no eval run: for workflows of
    /// plain commands.
    pub fn committed(target: &Path) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for rel in ["Cargo.toml", ".gitignore", "factory.md", "src/lib.rs"] {
            let to = dir.path().join(rel);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(Path::new(DEMO).join(rel), &to).unwrap();
        }
        Project::init(dir, target)
    }

    /// A copy of the fixture project `src` (its `gitignore` becomes `.gitignore`),
    /// committed on `main` with its config.
    pub fn fixture(src: &Path, target: &Path) -> Project {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(src, dir.path());
        if dir.path().join("gitignore").exists() {
            fs::rename(dir.path().join("gitignore"), dir.path().join(".gitignore")).unwrap();
        }
        Project::init(dir, target)
    }

    fn init(dir: tempfile::TempDir, target: &Path) -> Project {
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head("main");
        let repo = Repository::init_opts(dir.path(), &opts).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        // On disk too, as `git commit` leaves it: git run in the checkout sees it.
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "demo", &tree, &[])
            .unwrap();
        let p = Project {
            dir,
            home: tempfile::tempdir().unwrap(),
            target: target.to_path_buf(),
        };
        assert!(p.factory(&["init"]).status.success());
        p
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The `FACTORY_HOME` the binary runs with (where the event log's key is kept).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("factory").unwrap();
        c.current_dir(self.path())
            .env("FACTORY_HOME", self.home.path())
            .env("CARGO_TARGET_DIR", &self.target)
            .env_remove("FACTORY_RUN_ID")
            .env_remove("FACTORY_RUNNER")
            .env_remove("FACTORY_RUN_PLACEMENT")
            .args(args);
        c
    }

    pub fn factory(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs the experiment workflow with `script` as the agents.
    pub fn run(&self, script: &str) -> Output {
        self.run_workflow(WORKFLOW, script)
    }

    /// Runs `workflow` (a mode name or a file) with `script` as the agents.
    pub fn run_workflow(&self, workflow: &str, script: &str) -> Output {
        let path = self.path().join(".factory/script.yaml");
        fs::write(&path, script).unwrap();
        self.factory(&[
            "run",
            workflow,
            "--runner",
            "replay",
            "--script",
            path.to_str().unwrap(),
        ])
    }

    pub fn results(&self) -> Vec<BTreeMap<String, String>> {
        let text = fs::read_to_string(self.path().join(".factory/results.tsv")).unwrap_or_default();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
        lines
            .map(|l| {
                header
                    .iter()
                    .map(|h| h.to_string())
                    .zip(l.split('\t').map(str::to_string))
                    .collect()
            })
            .collect()
    }

    pub fn branches(&self) -> BTreeSet<String> {
        let repo = Repository::open(self.path()).unwrap();
        repo.branches(Some(git2::BranchType::Local))
            .unwrap()
            .filter_map(|b| b.ok()?.0.name().ok()?.map(str::to_string))
            .collect()
    }

    pub fn events(&self) -> Vec<events::Event> {
        events::read(&FactoryPaths::new(self.path()))
            .unwrap()
            .events
    }
}

/// A replay builder step for the demo that commits a file outside factory.md's scope
/// and reports it as fine: only the guards can catch it.
pub const OUTSIDE_SCOPE_BUILDER: &str = r##"    - write:
        README.md: "# demo\n"
      run:
        - git add -A
        - git -c user.name=t -c user.email=t@t commit -qm "Add a README"
      print: |
        ## Commits
        - Add a README: documents the crate for new readers. The file is outside src/, which the factory.md scope allows; the precheck must notice from git, not from this report, which claims all is well.
          It goes on at length, as reports do, so the builder's own size check passes and
          only the guards can catch it.
"##;

/// The demo's script with the given agents' blocks replaced (`(key, yaml list)`).
pub fn script(overrides: &[(&str, &str)]) -> String {
    script_from(&Path::new(DEMO).join("replay.yaml"), overrides)
}

/// The replay script at `path` with the given agents' blocks replaced or added.
pub fn script_from(path: &Path, overrides: &[(&str, &str)]) -> String {
    let text = fs::read_to_string(path).unwrap();
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(key) = line
            .strip_prefix("  ")
            .and_then(|l| l.strip_suffix(':'))
            .filter(|k| !k.starts_with(' '))
        {
            blocks.push((key.to_string(), String::new()));
        } else if let Some((_, body)) = blocks.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    let mut out = String::from("agents:\n");
    for (key, body) in &blocks {
        let body = overrides
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, b)| b.to_string())
            .unwrap_or_else(|| body.clone());
        out.push_str(&format!("  {key}:\n{body}\n"));
    }
    for (key, body) in overrides {
        if !blocks.iter().any(|(k, _)| k == key) {
            out.push_str(&format!("  {key}:\n{body}\n"));
        }
    }
    out
}

pub fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&dest).unwrap();
            copy_tree(&entry.path(), &dest);
        } else {
            fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Bytes of a command's output as text.
pub fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

/// Stages everything in `repo`'s working tree and commits it on HEAD, as a builder would.
pub fn commit_all(repo: &Repository, message: &str) -> git2::Oid {
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
}

/// Fails (never skips) a test whose tool is missing: `.ci/run` installs it.
pub fn needs(tool: &str) {
    assert!(
        std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs {tool} (.ci/run installs it)"
    );
}

/// A command's stdout then stderr, as text.
pub fn output(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The commit `HEAD` of the repository at `dir` points at (hex).
pub fn head_commit(dir: &Path) -> String {
    Repository::open(dir)
        .unwrap()
        .head()
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
        .to_string()
}

/// `PATH` with a standard-library-only `python3` first: the gate and the eval pick
/// pytest when it is installed, and these tests pin the unittest runner (and a missing
/// pytest) whatever the machine has.
pub fn plain_python_path() -> String {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let bin = BIN.get_or_init(|| {
        let venv = std::env::temp_dir().join("factory-test-plain-venv");
        if !venv.join("bin/python3").exists() {
            let made = std::process::Command::new("python3")
                .args(["-m", "venv", "--without-pip"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success());
            assert!(made, "these tests need python3 with venv");
        }
        venv.join("bin")
    });
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `factory dashboard` on a free port for `p`; killed on drop.
pub struct Dashboard {
    child: std::process::Child,
    pub url: String,
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dashboard {
    pub fn start(p: &Project) -> Dashboard {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("factory"))
            .args(["dashboard", "--port", "0", "--project"])
            .arg(p.path())
            .env("FACTORY_HOME", p.home())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        // Keep reading: a closed pipe would end the dashboard at its next line.
        std::thread::spawn(move || for _ in out.lines() {});
        let url = line
            .trim()
            .strip_prefix("factory dashboard on ")
            .unwrap_or_else(|| panic!("the URL is printed first: {line:?}"))
            .trim_end_matches('/')
            .to_string();
        Dashboard { child, url }
    }

    pub fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }
}
