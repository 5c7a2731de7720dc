use std::path::PathBuf;

use super::*;
use crate::runners::{CLI_DEFS, CLI_RUNNERS, cli_def};

fn req(model: Option<&str>, worktree: bool, prompt: &str) -> AgentRequest {
    let project = PathBuf::from("/work/project");
    AgentRequest {
        role: "builder".into(),
        prompt: prompt.into(),
        cwd: if worktree {
            project.join(".factory/worktrees/exp-001")
        } else {
            project.clone()
        },
        project,
        model: model.map(str::to_string),
        ..AgentRequest::default()
    }
}

fn model_for(name: &str) -> &'static str {
    match name {
        "opencode" => "anthropic/claude-sonnet-4-5",
        _ => "m1",
    }
}

/// Every argv each runner builds, for each combination of the options it uses:
/// what `scripts/check-real-clis` runs against the real CLIs.
#[test]
fn each_runner_argv_is_pinned() {
    let mut out = String::new();
    for name in CLI_RUNNERS {
        for model in [None, Some(model_for(name))] {
            for worktree in [false, true] {
                for interactive in [false, true] {
                    let spec =
                        preview(name, &req(model, worktree, "-Fix it"), interactive).expect("argv");
                    out.push_str(&format!(
                        "{name} model={} cwd={} {}: {}\n",
                        model.unwrap_or("-"),
                        if worktree { "worktree" } else { "project" },
                        if interactive {
                            "interactive"
                        } else {
                            "headless"
                        },
                        std::iter::once(spec.program.as_str())
                            .chain(spec.args.iter().map(String::as_str))
                            .map(crate::runners::shell_quote)
                            .collect::<Vec<_>>()
                            .join(" ")
                    ));
                }
            }
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn the_prompt_is_one_argument_whatever_it_holds() {
    let prompt = "--help\n$(touch /tmp/x) `id` \"q\" 'a'";
    for name in CLI_RUNNERS {
        let spec = preview(name, &req(None, false, prompt), false).unwrap();
        let holding: Vec<&String> = spec.args.iter().filter(|a| a.contains(prompt)).collect();
        assert_eq!(holding.len(), 1, "{name}: {:?}", spec.args);
        // Either after `--`, or glued to its option with `=`: never read as options.
        let i = spec.args.iter().position(|a| a.contains(prompt)).unwrap();
        assert!(
            spec.args[i] != prompt || spec.args[i - 1] == "--",
            "{name}: {:?}",
            spec.args
        );
    }
}

#[test]
fn a_prompt_too_long_for_argv_is_a_named_error() {
    let big = "x".repeat(MAX_ARG);
    let err = preview("claude", &req(None, false, &big), false).unwrap_err();
    assert!(
        matches!(err, RunnerError::PromptTooLong { bytes, .. } if bytes == MAX_ARG),
        "{err}"
    );
}

#[test]
fn opencode_wants_provider_slash_model() {
    let err = preview("opencode", &req(Some("sonnet"), false, "p"), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the opencode runner cannot use the model `sonnet`: opencode names a model as provider/model"
    );
}

#[test]
fn claude_as_root_gets_is_sandbox_and_never_twice() {
    let root = unsafe { libc::geteuid() } == 0;
    let with = |v: &str| vec![("IS_SANDBOX".to_string(), v.to_string())];
    let env = super::super::claude::Claude.own_env(&EnvView::new(&with("yes")));
    assert_eq!(env, if root { with("1") } else { Vec::new() });
    assert!(
        super::super::claude::Claude
            .own_env(&EnvView::new(&with("1")))
            .is_empty()
    );
}

#[test]
fn auth_counts_the_request_env_and_shows_no_secret() {
    let def = cli_def("codex").unwrap();
    let home = tempfile::tempdir().unwrap();
    let extra = vec![
        ("HOME".to_string(), home.path().display().to_string()),
        (
            "CODEX_HOME".to_string(),
            home.path().join("c").display().to_string(),
        ),
        ("OPENAI_API_KEY".to_string(), String::new()),
        ("CODEX_API_KEY".to_string(), String::new()),
    ];
    assert_eq!(auth_state(def, &EnvView::new(&extra)), AuthState::Missing);
    let runner = CliRunner::unchecked(def);
    let err = runner.check_ready(&extra).unwrap_err();
    assert!(
        err.to_string()
            .contains("none of OPENAI_API_KEY, CODEX_API_KEY is set"),
        "{err}"
    );

    let mut keyed = extra.clone();
    keyed.push(("OPENAI_API_KEY".into(), "sk-proj-abcdefSECRET".into()));
    let state = auth_state(def, &EnvView::new(&keyed));
    assert_eq!(state.to_string(), "OPENAI_API_KEY set");
    assert!(runner.check_ready(&keyed).is_ok());

    std::fs::create_dir_all(home.path().join("c")).unwrap();
    std::fs::write(home.path().join("c/auth.json"), "{\"token\":\"SECRET\"}").unwrap();
    let state = auth_state(def, &EnvView::new(&extra));
    assert!(matches!(state, AuthState::LoginFile(_)), "{state:?}");
    assert!(!state.to_string().contains("SECRET"));
}

#[test]
fn opencode_runs_without_a_key() {
    let extra = vec![("HOME".to_string(), "/nonexistent".to_string())];
    assert!(
        CliRunner::unchecked(cli_def("opencode").unwrap())
            .check_ready(&extra)
            .is_ok()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_dry_run_spawns_nothing_and_reports_zero_usage() {
    let mut r = req(Some("m1"), false, "p");
    r.env.push(("FACTORY_GEMINI_DRY_RUN".into(), "1".into()));
    // No credentials and (here) no gemini binary: a dry run needs neither.
    r.env.push(("GEMINI_API_KEY".into(), String::new()));
    let runner = CliRunner::unchecked(cli_def("gemini").unwrap());
    let lines = Mutex::new(Vec::new());
    let out = runner
        .run(&r, &|l: &str| lines.lock().unwrap().push(l.to_string()))
        .await
        .unwrap();
    assert!(out.success());
    assert_eq!(
        out.usage,
        Some(Usage::default()),
        "gemini reports no cost: zero tokens, no cost"
    );
    assert!(out.result.unwrap().contains("FACTORY_GEMINI_DRY_RUN=1"));
    let lines = lines.into_inner().unwrap();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with("[dry run] gemini would run: gemini --output-format stream-json"),
        "{lines:?}"
    );
}

#[test]
fn the_default_order_is_spelled_once() {
    let names: Vec<&str> = CLI_DEFS.iter().map(|d| d.name()).collect();
    assert_eq!(names, CLI_RUNNERS);
    assert!(
        CLI_RUNNERS
            .iter()
            .all(|n| crate::runners::KNOWN_RUNNERS.contains(n))
    );
}
