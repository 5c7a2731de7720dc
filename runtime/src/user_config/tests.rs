use std::path::Path;

use super::profile::{is_protected, overlay};
use super::resolve::{Layers, ProjectAgents, Source};
use super::*;

fn cfg(text: &str) -> Result<UserConfig, UserConfigError> {
    parse(Path::new("/home/u/.factory/config.toml"), text)
}

const FULL: &str = r#"
[defaults]
runner = "codex"
model = "gpt-5"
agent_timeout = 900
profile = "work"

[models]
builder = "opus"

[credentials.work]
ZZ_FACTORY_TEST_KEY = "sk-test-0123456789abcdef"
[credentials.work.unset]
vars = ["ZZ_OTHER_KEY"]
"#;

#[test]
fn a_full_config_parses() {
    let c = cfg(FULL).unwrap();
    assert_eq!(c.runner.as_deref(), Some("codex"));
    assert_eq!(c.model.as_deref(), Some("gpt-5"));
    assert_eq!(c.agent_timeout, Some(900));
    assert_eq!(c.profile.as_deref(), Some("work"));
    assert_eq!(c.models.get("builder").map(String::as_str), Some("opus"));
    let work = &c.credentials["work"];
    assert_eq!(
        work.set,
        vec![(
            "ZZ_FACTORY_TEST_KEY".to_string(),
            "sk-test-0123456789abcdef".to_string()
        )]
    );
    assert_eq!(work.unset, vec!["ZZ_OTHER_KEY".to_string()]);
    assert!(c.unknown.is_empty(), "{:?}", c.unknown);
}

#[test]
fn unknown_keys_name_the_closest_known_one_and_their_line() {
    let c = cfg("[defaults]\nrunner = \"claude\"\nmodle = \"x\"\n\n[modles]\n").unwrap();
    let shown: Vec<String> = c.unknown.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "line 3: unknown key `defaults.modle` (did you mean `model`?)",
            "line 5: unknown key `modles` (did you mean `models`?)",
        ]
    );
}

#[test]
fn protected_variables_cannot_be_set_or_unset() {
    for text in [
        "[credentials.x]\nPATH = \"/evil\"\n",
        "[credentials.x]\nLD_PRELOAD = \"/evil.so\"\n",
        "[credentials.x]\nFACTORY_RUN_ID = \"r\"\n",
        "[credentials.x.unset]\nvars = [\"HOME\"]\n",
    ] {
        let err = cfg(text).unwrap_err().to_string();
        assert!(err.contains("is protected"), "{text}: {err}");
        assert!(err.contains("config.toml:"), "{err}");
    }
    assert!(is_protected("path") && is_protected("DYLD_INSERT_LIBRARIES"));
    assert!(!is_protected("ANTHROPIC_API_KEY"));
}

#[test]
fn malformed_files_name_file_line_and_what_is_wrong() {
    let err = cfg("[defaults]\nrunner = \n").unwrap_err().to_string();
    assert!(err.starts_with("/home/u/.factory/config.toml:2:"), "{err}");
    let err = cfg("[credentials.x.unset]\nvars = \"OPENAI_API_KEY\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("must be a list"), "{err}");
    let err = cfg("[defaults]\nagent_timeout = -3\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line") || err.contains(":2:"), "{err}");
    assert!(err.contains("positive number of seconds"), "{err}");
    let err = cfg("[credentials.x]\n\"BAD NAME\" = \"v\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an environment variable name"), "{err}");
}

#[test]
fn a_missing_file_is_the_empty_config_and_a_non_utf8_one_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    assert!(load_from(&path).unwrap().credentials.is_empty());
    std::fs::write(&path, b"[defaults]\nrunner = \"\xff\"\n").unwrap();
    let err = load_from(&path).unwrap_err().to_string();
    assert!(err.contains("not UTF-8"), "{err}");
}

#[test]
fn an_unknown_profile_lists_the_known_ones() {
    let c = cfg(FULL).unwrap();
    let err = overlay("home", &c).unwrap_err().to_string();
    assert!(
        err.contains("no profile `home`") && err.contains("profiles: work"),
        "{err}"
    );
    let o = overlay("work", &c).unwrap();
    assert_eq!(o.unset, vec!["ZZ_OTHER_KEY".to_string()]);
    assert_eq!(o.set.len(), 1);
}

#[test]
fn precedence_runs_flag_env_node_project_user() {
    // Variables of this process are shared by the tests in it: none here sets
    // FACTORY_RUNNER or FACTORY_MODEL, so the env layer is simply absent.
    let layers = Layers {
        user: cfg(FULL).unwrap(),
        project: Some(ProjectAgents {
            runner: Some("opencode".into()),
            models: vec![("default".into(), "sonnet".into())],
        }),
    };
    let r = layers.runner(Some("claude")).unwrap();
    assert_eq!((r.value.as_str(), r.source), ("claude", Source::Flag));
    let r = layers.runner(None).unwrap();
    assert_eq!((r.value.as_str(), r.source), ("opencode", Source::Project));
    let m = layers.model("builder", None, Some("haiku")).unwrap();
    assert_eq!((m.value.as_str(), m.source), ("haiku", Source::Node));
    let m = layers.model("builder", None, None).unwrap();
    assert_eq!((m.value.as_str(), m.source), ("sonnet", Source::Project));

    let user_only = Layers {
        user: cfg(FULL).unwrap(),
        project: None,
    };
    let r = user_only.runner(None).unwrap();
    assert_eq!((r.value.as_str(), r.source), ("codex", Source::User));
    let m = user_only.model("builder", None, None).unwrap();
    assert_eq!(m.value, "opus", "the role's model wins over defaults.model");
    let m = user_only.model("reviewer", None, None).unwrap();
    assert_eq!(m.value, "gpt-5");
    let t = user_only.agent_timeout(None, None, 1800);
    assert_eq!((t.value, t.source), (900, Source::User));
    let t = Layers::default().agent_timeout(None, None, 1800);
    assert_eq!((t.value, t.source), (1800, Source::Default));
    assert!(Layers::default().runner(None).is_none());
}
