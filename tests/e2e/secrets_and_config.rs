//! Secrets stay secret and user configuration takes effect, through the built binary:
//! a whole replay run with a key in the environment and in an agent's output leaves it
//! in no file under `.factory/` and in no printed line; `factory config show` masks a
//! planted key; a profile reaches the agent but can never set `PATH`.

use crate::support;

use std::fs;
use std::path::Path;

use crate::support::{Project, script, text};

/// Shaped like an Anthropic key: the shape net must catch it.
const SHAPED: &str = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefXYZ";
/// No known shape: only the environment net (a secret-named variable) catches it.
const PLAIN: &str = "plainSecretValue0987654321";

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn a_key_in_the_environment_and_in_agent_output_is_nowhere_in_the_store_or_the_output() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    // The strategist's block from the demo, printing the key and echoing the token.
    let demo = fs::read_to_string(Path::new(support::DEMO).join("replay.yaml")).unwrap();
    let block: String = demo
        .split("\n  strategist:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n  builder:\n").next())
        .unwrap()
        .to_string();
    let print = block
        .lines()
        .find(|l| l.trim_start().starts_with("print:"))
        .unwrap();
    let leaky = block.replace(
        print,
        &format!(
            "      run: [\"echo token from env: $ZZ_SERVICE_TOKEN\", \"echo Authorization: Bearer $ZZ_SERVICE_TOKEN >&2\"]\n      print: \"using ANTHROPIC_API_KEY={SHAPED} for the call; the service answers to {PLAIN} today\""
        ),
    );
    let path = p.path().join(".factory/script.yaml");
    fs::write(&path, script(&[("strategist", &leaky)])).unwrap();
    let out = p
        .command(&[
            "run",
            support::WORKFLOW,
            "--runner",
            "replay",
            "--script",
            path.to_str().unwrap(),
        ])
        .env("ANTHROPIC_API_KEY", SHAPED)
        .env("ZZ_SERVICE_TOKEN", PLAIN)
        .output()
        .unwrap();
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{printed}");
    for secret in [SHAPED, PLAIN] {
        assert!(!printed.contains(secret), "printed: {printed}");
    }
    let mut files = Vec::new();
    files_under(&p.path().join(".factory"), &mut files);
    // The script itself holds the key (the test wrote it); everything factory wrote
    // must not.
    files.retain(|f| f != &path);
    let mut redacted_somewhere = false;
    for f in &files {
        let bytes = fs::read(f).unwrap();
        let body = String::from_utf8_lossy(&bytes);
        for secret in [SHAPED, PLAIN] {
            assert!(
                !body.contains(secret),
                "{} holds a secret:\n{body}",
                f.display()
            );
        }
        redacted_somewhere |= body.contains("[REDACTED]");
    }
    assert!(
        redacted_somewhere,
        "the agent's output was kept, redacted: {files:?}"
    );
    // The strategist's review is the agent's stdout, with the key masked.
    let reviews = p.path().join(".factory/reviews");
    let review = fs::read_dir(&reviews)
        .unwrap()
        .flatten()
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .find(|r| r.contains("for the call"))
        .unwrap_or_else(|| panic!("no review holds the strategist's output: {files:?}"));
    assert!(review.contains("ANTHROPIC_API_KEY=[REDACTED]"), "{review}");
    assert!(review.contains("answers to [REDACTED] today"), "{review}");
    // The event log still verifies: the MAC covers the redacted text.
    let o = p.factory(&["runs"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

fn write_config(home: &Path, body: &str) {
    fs::create_dir_all(home).unwrap();
    fs::write(home.join("config.toml"), body).unwrap();
}

#[test]
fn config_show_masks_a_planted_key_unless_revealed() {
    let p = Project::committed(tempfile::tempdir().unwrap().path());
    write_config(
        p.home(),
        &format!(
            "[defaults]\nrunner = \"replay\"\nmodel = \"sonnet\"\n\n[credentials.work]\nANTHROPIC_API_KEY = \"{SHAPED}\"\nREGION = \"eu\"\n"
        ),
    );
    let o = p.factory(&["config", "show"]);
    let shown = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!shown.contains(SHAPED), "{shown}");
    assert!(shown.contains("ANTHROPIC_API_KEY = [REDACTED]"), "{shown}");
    assert!(
        shown.contains("REGION = eu"),
        "a plain value is shown: {shown}"
    );
    assert!(
        shown.contains("runner") && shown.contains("replay") && shown.contains("config.toml"),
        "{shown}"
    );
    let o = p.factory(&["config", "show", "--reveal"]);
    assert!(text(&o.stdout).contains(SHAPED), "{}", text(&o.stdout));
}

#[test]
fn a_profile_cannot_override_path_and_validate_names_the_closest_key() {
    let p = Project::committed(tempfile::tempdir().unwrap().path());
    write_config(p.home(), "[credentials.evil]\nPATH = \"/tmp/evil\"\n");
    let o = p.factory(&["--profile", "evil", "modes"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.contains("may not set `PATH`") && err.contains("config.toml:2"),
        "{err}"
    );
    let o = p.factory(&["config", "validate"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("protected"), "{}", text(&o.stderr));

    write_config(p.home(), "[defaults]\nrunnr = \"claude\"\n");
    let o = p.factory(&["config", "validate"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 2: unknown key `defaults.runnr` (did you mean `runner`?)"),
        "{err}"
    );
}

#[test]
fn a_profile_reaches_the_agent_and_its_override_is_named_without_the_value() {
    let p = Project::committed(tempfile::tempdir().unwrap().path());
    write_config(
        p.home(),
        &format!(
            "[credentials.work]\nZZ_SERVICE_TOKEN = \"{PLAIN}\"\n[credentials.work.unset]\nvars = [\"ZZ_GONE\"]\n"
        ),
    );
    let o = p
        .command(&[
            "--profile",
            "work",
            "agent",
            "builder",
            "--task",
            "t",
            "--runner",
            "exec",
            "--agent-cmd",
            "printf '%s|%s' \"$ZZ_SERVICE_TOKEN\" \"${ZZ_GONE:-unset}\" > seen.txt; echo token=$ZZ_SERVICE_TOKEN",
        ])
        .env("ZZ_SERVICE_TOKEN", "from-the-shell-123")
        .env("ZZ_GONE", "still-here")
        .output()
        .unwrap();
    let printed = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{printed}");
    assert_eq!(
        fs::read_to_string(p.path().join("seen.txt")).unwrap(),
        format!("{PLAIN}|unset"),
        "the profile's value won over the shell's, and its unset applied"
    );
    assert!(
        printed.contains("profile `work` overrides ZZ_SERVICE_TOKEN"),
        "{printed}"
    );
    assert!(!printed.contains(PLAIN), "{printed}");
    assert!(!printed.contains("from-the-shell-123"), "{printed}");
}

#[test]
fn config_defaults_pick_the_runner_and_the_model_where_the_runner_can_take_it() {
    let p = Project::committed(tempfile::tempdir().unwrap().path());
    write_config(
        p.home(),
        "[defaults]\nrunner = \"exec\"\nmodel = \"sonnet\"\n\n[models]\ncode_reviewer = \"opus\"\n",
    );
    let agent = |role: &str, cmd: &str| {
        p.command(&["agent", role, "--task", "t"])
            .env("FACTORY_AGENT_CMD", cmd)
            .env_remove("FACTORY_MODEL")
            .output()
            .unwrap()
    };
    // No --runner: config.toml's runner; the command has no {model}, so the configured
    // default model is not forced on it.
    let o = agent("builder", "echo plain > plain.txt");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(p.path().join("plain.txt").is_file());
    // With a {model} placeholder the role's model from [models] reaches the command.
    let o = agent("code_reviewer", "echo {model} > model.txt");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        fs::read_to_string(p.path().join("model.txt")).unwrap(),
        "opus\n"
    );
    // factory.md's `## Models` sits above config.toml.
    let md = fs::read_to_string(p.path().join("factory.md")).unwrap();
    fs::write(
        p.path().join("factory.md"),
        format!("{md}\n## Models\n- default: haiku\n"),
    )
    .unwrap();
    let o = agent("code_reviewer", "echo {model} > model.txt");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        fs::read_to_string(p.path().join("model.txt")).unwrap(),
        "haiku\n"
    );
    // An explicit --model on a runner that cannot take one is a named error.
    let o = p
        .command(&["agent", "builder", "--task", "t", "--model", "opus"])
        .env("FACTORY_AGENT_CMD", "true")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("does not support model selection"),
        "{}",
        text(&o.stderr)
    );
}
