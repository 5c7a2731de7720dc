//! `factory serve-mcp` driven by a real MCP client (rmcp's, over the child process's
//! stdio): the tools and their schemas, diagnostics of a broken `.fwf` as data, tool
//! errors for bad calls, and a replay run started in the background to its verdict.

use crate::support;

use std::time::{Duration, Instant};

use crate::support::{Project, script};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

async fn connect(p: &Project) -> Client {
    let bin = assert_cmd::cargo::cargo_bin("factory");
    let cmd = tokio::process::Command::new(bin).configure(|c| {
        c.arg("serve-mcp")
            .arg("--project")
            .arg(p.path())
            .env("FACTORY_HOME", p.home())
            .env("CARGO_TARGET_DIR", p.target())
            .env_remove("FACTORY_RUN_ID")
            .env_remove("FACTORY_RUNNER");
    });
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{tool} was a protocol error, not a tool result: {e}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// A successful call's JSON.
fn ok(r: &CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "tool error: {}", text(r));
    serde_json::from_str(&text(r)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_lists_tools_checks_a_workflow_and_runs_a_mode_to_its_verdict() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let client = connect(&p).await;

    // Every tool is there, described, with an object schema.
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for want in [
        "project_state",
        "history",
        "eval",
        "precheck",
        "list_modes",
        "compile_mode",
        "check_fwf",
        "start_run",
        "run_status",
        "run_events",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for t in &tools {
        assert!(
            t.description.as_deref().is_some_and(|d| d.len() > 40),
            "{}",
            t.name
        );
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
    }
    let check = tools.iter().find(|t| t.name == "check_fwf").unwrap();
    assert!(
        check.input_schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("text")),
        "{:?}",
        check.input_schema
    );

    // A broken workflow: its diagnostics come back as data, with place and fix.
    let broken = "workflow w {\n    agent a {\n        role: nobody_has_this_role\n    }\n    flow {\n        start -> a -> nowhere\n    }\n}\n";
    let checked = ok(&call(&client, "check_fwf", json!({"text": broken})).await);
    assert_eq!(checked["ok"], false, "{checked}");
    let diags = checked["diagnostics"].as_array().unwrap();
    assert!(!diags.is_empty(), "{checked}");
    for d in diags {
        for key in ["code", "severity", "message", "line", "column", "help"] {
            assert!(!d[key].is_null(), "{key} missing in {d}");
        }
    }
    assert!(
        diags
            .iter()
            .any(|d| d["severity"] == "error" && d["line"] == 6),
        "the unknown target on line 6 is an error: {checked}"
    );
    // A good one checks clean.
    let good = ok(&call(&client, "check_fwf", json!({"text": "workflow w {\n    fn a \"true\"\n    flow {\n        start -> a -> end\n    }\n}\n"})).await);
    assert_eq!(good["ok"], true, "{good}");

    // Bad calls are tool errors the agent can read, never protocol errors.
    let missing = call(&client, "check_fwf", json!({})).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("text"), "{}", text(&missing));
    let nomode = call(&client, "compile_mode", json!({"mode": "no-such-mode"})).await;
    assert_eq!(nomode.is_error, Some(true));
    assert!(text(&nomode).contains("list_modes"), "{}", text(&nomode));
    // A mode file with errors: the one wording every front end gives, then each finding.
    std::fs::write(p.path().join("broken.fwf"), broken).unwrap();
    let file = p.path().join("broken.fwf");
    let invalid = call(
        &client,
        "compile_mode",
        json!({"mode": file.to_str().unwrap()}),
    )
    .await;
    assert_eq!(invalid.is_error, Some(true));
    let said = text(&invalid);
    assert!(
        said.contains("error(s); nothing was compiled, run or written:")
            && said.contains("broken.fwf:6:"),
        "{said}"
    );
    let elsewhere = call(&client, "project_state", json!({"project": "/no/such/dir"})).await;
    assert_eq!(elsewhere.is_error, Some(true));

    // Modes and compiling one to mermaid.
    let modes = ok(&call(&client, "list_modes", json!({})).await);
    assert!(
        modes["modes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "improve"),
        "{modes}"
    );
    let mermaid = ok(&call(
        &client,
        "compile_mode",
        json!({"mode": "improve", "emit": "mermaid"}),
    )
    .await);
    assert!(
        mermaid["output"].as_str().unwrap().starts_with("flowchart"),
        "{mermaid}"
    );

    // A run that cannot start says so at once, and leaves no run behind.
    let unknown = call(
        &client,
        "start_run",
        json!({"mode": support::WORKFLOW, "runner": "no-such-runner"}),
    )
    .await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("no-such-runner"),
        "{}",
        text(&unknown)
    );
    let no_script = call(
        &client,
        "start_run",
        json!({"mode": support::WORKFLOW, "runner": "replay"}),
    )
    .await;
    assert_eq!(no_script.is_error, Some(true));
    assert!(text(&no_script).contains("script"), "{}", text(&no_script));
    let state = ok(&call(&client, "project_state", json!({})).await);
    assert_eq!(state["runs"], 0, "{state}");

    // A replay run in the background, polled to its verdict.
    let script_path = p.path().join(".factory/script.yaml");
    std::fs::write(&script_path, script(&[])).unwrap();
    let started = ok(&call(
        &client,
        "start_run",
        json!({"mode": support::WORKFLOW, "runner": "replay", "script": script_path}),
    )
    .await);
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        let s = ok(&call(&client, "run_status", json!({"run_id": run_id})).await);
        if s["finished"] == true {
            break s;
        }
        assert!(Instant::now() < deadline, "the run did not finish: {s}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(status["status"], "completed", "{status}");
    assert_eq!(status["verdict"], "keep", "{status}");
    assert_eq!(status["exp_id"], 1, "{status}");

    let events = ok(&call(&client, "run_events", json!({"run_id": run_id})).await);
    let kinds: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(kinds.first(), Some(&"run.started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run.finished"), "{kinds:?}");
    let later = ok(&call(
        &client,
        "run_events",
        json!({"run_id": run_id, "after": events["next"]}),
    )
    .await);
    assert_eq!(later["events"], json!([]));

    let history = ok(&call(&client, "history", json!({})).await);
    assert_eq!(history["records"][0]["verdict"], "keep", "{history}");
    let state = ok(&call(&client, "project_state", json!({})).await);
    assert_eq!(state["last_run"]["run_id"], run_id.as_str(), "{state}");

    // Resources: results.tsv and the run's events.
    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "factory://results.tsv"));
    let read = |uri: String| {
        let client = &client;
        async move {
            let r = client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap();
            match &r.contents[0] {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                other => panic!("{other:?}"),
            }
        }
    };
    assert!(read("factory://results.tsv".into()).await.contains("keep"));
    // The kept experiment's own reports, from its evidence.
    let id = history["records"][0]["id"].as_u64().unwrap();
    let evidence: Value =
        serde_json::from_str(&read(format!("factory://experiments/{id}/evidence")).await).unwrap();
    let files = evidence.as_array().unwrap();
    assert!(!files.is_empty(), "{evidence:#}");
    assert!(
        files
            .iter()
            .all(|f| f["state"] == "intact" && f["text"].is_string()),
        "{evidence:#}"
    );
    assert!(
        files.iter().any(|f| f["path"]
            .as_str()
            .is_some_and(|p| p.starts_with(".factory/reviews/"))),
        "{evidence:#}"
    );
    let lines = read(format!("factory://runs/{run_id}/events")).await;
    assert!(lines.lines().count() >= kinds.len(), "{lines}");
    assert!(
        client
            .read_resource(ReadResourceRequestParams::new("factory://nope"))
            .await
            .is_err(),
        "an unknown resource is an error"
    );

    client.cancel().await.unwrap();
}
