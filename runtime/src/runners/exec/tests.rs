//! The exec contract (docs/runners.md), pinned.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn request(dir: &Path) -> AgentRequest {
    let project = dir.join("project");
    let cwd = dir.join("work");
    fs::create_dir_all(&project).unwrap();
    fs::create_dir_all(&cwd).unwrap();
    AgentRequest {
        role: "builder".into(),
        prompt: "You are the builder.\n".into(),
        task: "make it faster".into(),
        cwd,
        outputs: vec![
            project.join(".factory/reviews/a.md"),
            project.join(".factory/reviews/b.md"),
        ],
        project,
        node: Some("experiment.trial.builder".into()),
        visit: 2,
        verdict_file: Some(dir.join("verdict.md")),
        env: vec![("FACTORY_RUN_ID".into(), "run-7".into())],
        ..AgentRequest::default()
    }
}

fn run(runner: &ExecRunner, req: &AgentRequest) -> AgentOutput {
    rt().block_on(runner.run(req, &|_| {})).unwrap()
}

#[test]
fn agent_gets_the_factory_env() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(tmp.path());
    let out = run(&ExecRunner::new("env").unwrap(), &req);
    assert!(out.success(), "{out:?}");
    let env: HashMap<&str, &str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    let p = |p: &Path| p.display().to_string();
    assert_eq!(env["FACTORY_ROLE"], "builder");
    assert_eq!(env["FACTORY_TASK"], "make it faster");
    assert_eq!(env["FACTORY_CWD"], p(&req.cwd));
    assert_eq!(env["FACTORY_WORKTREE"], p(&req.cwd));
    assert_eq!(env["FACTORY_PROJECT"], p(&req.project));
    assert_eq!(env["FACTORY_DIR"], p(&req.project.join(".factory")));
    assert_eq!(env["FACTORY_OUTPUT"], p(&req.outputs[0]));
    assert_eq!(env["FACTORY_NODE"], "experiment.trial.builder");
    assert_eq!(env["FACTORY_VISIT"], "2");
    assert_eq!(
        env["FACTORY_VERDICT_FILE"],
        p(&tmp.path().join("verdict.md"))
    );
    assert_eq!(env["FACTORY_MODEL"], "");
    assert_eq!(env["FACTORY_RUN_ID"], "run-7");
    assert!(env["FACTORY_PROMPT_FILE"].contains("factory-prompt-builder"));
    assert!(
        !Path::new(env["FACTORY_PROMPT_FILE"]).exists(),
        "the prompt file outlived the run"
    );
    // FACTORY_OUTPUTS is newline-separated, so it spans lines of `env`.
    assert!(out.stdout.contains(&format!(
        "FACTORY_OUTPUTS={}\n{}\n",
        p(&req.outputs[0]),
        p(&req.outputs[1])
    )));
}

#[test]
fn prompt_arrives_on_stdin_and_in_a_file_and_cwd_is_the_request_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(tmp.path());
    let runner =
        ExecRunner::new("cat > stdin.txt; cp {prompt_file} file.txt; pwd > where.txt").unwrap();
    let out = run(&runner, &req);
    assert!(out.success(), "{out:?}");
    assert_eq!(
        fs::read_to_string(req.cwd.join("stdin.txt")).unwrap(),
        req.prompt
    );
    assert_eq!(
        fs::read_to_string(req.cwd.join("file.txt")).unwrap(),
        req.prompt
    );
    let where_ = fs::read_to_string(req.cwd.join("where.txt")).unwrap();
    assert_eq!(
        Path::new(where_.trim()).canonicalize().unwrap(),
        req.cwd.canonicalize().unwrap()
    );
}

#[test]
fn placeholders_are_single_inert_words() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = request(tmp.path());
    let evil = "x\"; touch pwned1; \"$(touch pwned2)`touch pwned3`'; touch pwned4; '";
    let out_dir = req.project.join(evil);
    req.outputs = vec![out_dir.join("out.md")];
    req.model = Some(evil.into());
    req.prompt = evil.into();
    let runner = ExecRunner::new(
        "printf '%s\\n' {output} {model} {role} {cwd} {project}; cat {prompt_file}",
    )
    .unwrap();
    let out = run(&runner, &req);
    assert!(out.success(), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], out_dir.join("out.md").display().to_string());
    assert_eq!(lines[1], evil);
    assert_eq!(lines[2], "builder");
    assert_eq!(lines[3], req.cwd.display().to_string());
    assert_eq!(lines[4], req.project.display().to_string());
    assert_eq!(lines[5], evil);
    for n in 1..=4 {
        assert!(
            !req.cwd.join(format!("pwned{n}")).exists(),
            "pwned{n} was created"
        );
    }
    // Not a placeholder: left for the shell.
    let runner = ExecRunner::new("echo ${HOME+set} {unknown}").unwrap();
    assert_eq!(run(&runner, &request(tmp.path())).stdout, "set {unknown}\n");
}

#[test]
fn timeout_kills_the_shell_and_its_children() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = request(tmp.path());
    req.timeout = Some(Duration::from_millis(300));
    // The background child records its pid first, so the test can watch it die.
    let runner = ExecRunner::new("(sleep 1; touch survivor) & echo $! > bgpid; sleep 30").unwrap();
    let out = run(&runner, &req);
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    assert!(out.duration < Duration::from_secs(3), "{:?}", out.duration);
    let pid: i32 = std::fs::read_to_string(req.cwd.join("bgpid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // SAFETY: signal 0 only asks whether the process exists.
    while unsafe { libc::kill(pid, 0) } == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the background child outlived the timeout"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !req.cwd.join("survivor").exists(),
        "the background child wrote before it was killed"
    );
}

#[test]
fn exit_code_and_stderr_tail_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(tmp.path());
    let out = run(
        &ExecRunner::new("echo partial; echo boom >&2; exit 3").unwrap(),
        &req,
    );
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.stdout, "partial\n");
    assert_eq!(out.stderr_tail, "boom");
    assert!(!out.success());
}

#[test]
fn model_needs_a_model_placeholder() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = request(tmp.path());
    req.model = Some("big".into());
    let runner = ExecRunner::new("echo hi").unwrap();
    let err = runner.command(&req).unwrap_err();
    assert!(
        matches!(&err, RunnerError::Unsupported { runner, capability: Capability::ModelSelection } if runner == "exec"),
        "{err:?}"
    );
    let runner = ExecRunner::new("echo --model {model}").unwrap();
    assert!(runner.meta().capabilities.model_selection);
    assert_eq!(run(&runner, &req).stdout, "--model big\n");
}

#[test]
fn command_shows_what_a_dry_run_would_execute() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(tmp.path());
    let cmd = ExecRunner::new("aider --yes-always --message-file {prompt_file}")
        .or_else(|_| ExecRunner::new("echo --message-file {prompt_file}"))
        .unwrap()
        .command(&req)
        .unwrap();
    assert_eq!(cmd.program, "sh");
    assert!(cmd.args[1].contains("--message-file"));
    assert_eq!(cmd.stdin.as_deref(), Some(req.prompt.as_str()));
    assert!(
        cmd.env
            .iter()
            .any(|(k, v)| k == "FACTORY_ROLE" && v == "builder")
    );
}

#[test]
fn a_missing_program_is_named_with_how_to_pick_another() {
    let err = ExecRunner::new("definitely-not-an-agent-xyz --go {prompt_file}").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`definitely-not-an-agent-xyz`") && text.contains("not on PATH"),
        "{text}"
    );
    // Assignments are skipped; builtins, relative paths and computed words are accepted.
    assert!(ExecRunner::new("FOO=1 definitely-not-an-agent-xyz").is_err());
    assert!(ExecRunner::new("FOO=1 echo hi").is_ok());
    assert!(ExecRunner::new("./agent.sh").is_ok());
    assert!(ExecRunner::new("\"$AGENT\" --go").is_ok());
    assert!(ExecRunner::new("/nonexistent/agent").is_err());
}

#[test]
fn interactive_runs_the_command_with_the_prompt_file_and_returns_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(tmp.path());
    let runner =
        ExecRunner::new("test -f {prompt_file} && cp {prompt_file} seen.md; exit 3").unwrap();
    assert!(runner.meta().capabilities.interactive);
    assert_eq!(runner.run_interactive(&req).unwrap(), 3);
    assert_eq!(
        fs::read_to_string(req.cwd.join("seen.md")).unwrap(),
        req.prompt
    );
}
