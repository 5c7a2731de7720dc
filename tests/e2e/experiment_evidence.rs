//! Each experiment keeps its own evidence, and agents are told where they are.
//!
//! Three runs of `improve` on the demo, each builder writing a report of its own to the
//! same fixed path (`.factory/reviews/builder-latest.md`): every experiment's dashboard
//! page, `factory history` and the MCP resource show that experiment's report, not the
//! last run's. Each agent's task names its node and visit, its working directory (the
//! worktree it really runs in), the experiment, its branch and base, and its records.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{DEMO, Dashboard, Project, head_commit, output as text};

/// The demo's script, with each of `roles` saving its task and working directory to
/// `capture/<role>-<run>.{task,pwd}` first, and the builder's report marked `run-<run>`.
fn script(capture: &Path, run: u32) -> String {
    let text = fs::read_to_string(Path::new(DEMO).join("replay.yaml")).unwrap();
    let save = |role: &str| {
        format!(
            "printf '%s' \"$FACTORY_TASK\" > {dir}/{role}-{run}.task && pwd > {dir}/{role}-{run}.pwd",
            dir = capture.display()
        )
    };
    let builder = text.replacen(
        "      run:\n        - git add -A\n",
        &format!(
            "      run:\n        - {}\n        - git add -A\n",
            save("builder")
        ),
        1,
    );
    assert_ne!(builder, text, "the demo builder runs `git add -A`");
    let marked = builder.replacen(
        "# Build report\n",
        &format!("# Build report run-{run}\n"),
        1,
    );
    let mut out = marked;
    for role in ["health_checker", "archivist"] {
        let from = format!("  {role}:\n    - write:\n");
        let to = format!(
            "  {role}:\n    - run:\n        - {}\n      write:\n",
            save(role)
        );
        assert!(out.contains(&from), "{role} block");
        out = out.replacen(&from, &to, 1);
    }
    out
}

fn get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

#[test]
fn three_experiments_each_keep_their_own_reports_and_agents_know_where_they_are() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let capture = tempfile::tempdir().unwrap();
    let base = head_commit(p.path());
    for run in 1..=3 {
        let out = p.run_workflow("improve", &script(capture.path(), run));
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "run {run} judged its experiment: {}",
            text(&out)
        );
    }
    // The fixed path holds only the last run's report ...
    let latest = fs::read_to_string(p.path().join(".factory/reviews/builder-latest.md")).unwrap();
    assert!(latest.contains("run-3"), "{latest}");

    // ... while each experiment's page shows its own.
    let dash = Dashboard::start(&p);
    for id in 1..=3u32 {
        let page = get(dash.port(), &format!("/p/0/exp/{id}"));
        assert!(
            page.contains(&format!("Build report run-{id}")),
            "exp {id}: {page}"
        );
        for other in (1..=3).filter(|o| *o != id) {
            assert!(
                !page.contains(&format!("Build report run-{other}")),
                "exp {id} shows run {other}'s report"
            );
        }
        assert!(
            page.contains("experiment.trial.builder · visit 1"),
            "{page}"
        );
        assert!(!page.contains("predates it"), "{page}");
    }

    // `factory history` names each experiment's evidence; the copies are the reports.
    let history = text(&p.factory(&["history"]));
    for id in 1..=3u32 {
        assert!(
            history.contains(&format!(
                "evidence: .factory/experiments/{id:03}/evidence.jsonl"
            )),
            "{history}"
        );
    }
    let json: serde_json::Value =
        serde_json::from_slice(&p.factory(&["history", "--json"]).stdout).unwrap();
    let kept = json["evidence"]["2"].as_array().unwrap();
    assert!(
        kept.iter()
            .any(|f| f["path"] == ".factory/reviews/builder-latest.md"),
        "{json:#}"
    );

    // Every agent's task says where it is, and it is there.
    for run in 1..=3u32 {
        let exp = format!("- Experiment: {run}, branch `factory/exp-{run:03}`");
        let records = format!(
            "- Its records: {}",
            p.path()
                .join(format!(".factory/experiments/{run:03}"))
                .display()
        );
        for role in ["builder", "health_checker"] {
            let task =
                fs::read_to_string(capture.path().join(format!("{role}-{run}.task"))).unwrap();
            let pwd = fs::read_to_string(capture.path().join(format!("{role}-{run}.pwd"))).unwrap();
            let pwd = PathBuf::from(pwd.trim());
            assert!(
                pwd.ends_with(format!("exp-{run:03}")),
                "{role} ran in {pwd:?}"
            );
            assert!(task.contains("\n## Where you are\n"), "{task}");
            assert!(
                task.contains(&format!(
                    "- Working directory: {} (the experiment's worktree",
                    pwd.display()
                )),
                "{task}"
            );
            assert!(task.contains(&exp), "{task}");
            assert!(task.contains(&format!("- Base commit: {base} ")), "{task}");
            assert!(task.contains(&records), "{task}");
            assert!(task.contains(", visit 1\n"), "{task}");
        }
        let task =
            fs::read_to_string(capture.path().join(format!("archivist-{run}.task"))).unwrap();
        let pwd = fs::read_to_string(capture.path().join(format!("archivist-{run}.pwd"))).unwrap();
        assert_eq!(
            fs::canonicalize(pwd.trim()).unwrap(),
            fs::canonicalize(p.path()).unwrap()
        );
        assert!(task.contains("(the project root)"), "{task}");
        assert!(task.contains(&exp), "{task}");
        assert!(task.contains(&records), "{task}");
    }
}

/// What a role prompt promises an agent is what its task carries: no prompt points at a
/// file nothing writes, and every role that works on an experiment is told to look in
/// its task's `## Where you are`.
#[test]
fn role_prompts_promise_only_what_the_task_gives() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") || path.ends_with("README.md") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("current_id"),
            "{}: nothing writes current_id",
            path.display()
        );
        let role = path.file_stem().unwrap().to_string_lossy();
        let on_experiment = [
            "builder",
            "ceo",
            "health_checker",
            "code_reviewer",
            "adversarial_tester",
            "archivist",
        ];
        if on_experiment.contains(&role.as_ref()) {
            assert!(
                text.contains("## Where you are"),
                "{}: an experiment role must be told where its facts are",
                path.display()
            );
            assert!(
                !text.contains("You run in the project root. "),
                "{}: experiment roles run in the worktree",
                path.display()
            );
        }
    }
}
