//! Every state from a real git repository in a temp dir; `gh` is a real script.

use super::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

const PLAN_ISSUE: &str = r#"[{"number":4,"labels":[{"name":"bug"},{"name":"plan"}]}]"#;

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path()).unwrap();
    dir
}

/// Writes an executable fake `gh` printing `stdout` (after sleeping `sleep` seconds).
fn fake_gh(dir: &Path, stdout: &str, sleep: u32) -> String {
    let path = dir.join("gh");
    fs::write(
        &path,
        format!("#!/bin/sh\nsleep {sleep}\nprintf '%s' '{stdout}'\n"),
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn opts(gh_program: String) -> DetectOptions {
    DetectOptions {
        gh_program,
        gh_timeout: Duration::from_secs(5),
    }
}

fn missing_gh() -> DetectOptions {
    opts("/nonexistent/gh".into())
}

#[test]
fn no_repo_for_missing_path_and_plain_directory() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(
        detect(&tmp.path().join("nope"), &missing_gh()).state,
        ProjectState::NoRepo
    );
    assert_eq!(
        detect(tmp.path(), &missing_gh()).state,
        ProjectState::NoRepo
    );
}

#[test]
fn no_factory_for_a_bare_repo_without_gh() {
    let r = repo();
    let d = detect(r.path(), &missing_gh());
    assert_eq!(d.state, ProjectState::NoFactory);
    assert_eq!(d.gh.as_deref(), Some("missing"));
}

#[test]
fn has_factory_when_config_json_exists() {
    let r = repo();
    fs::create_dir_all(r.path().join(".factory")).unwrap();
    fs::write(r.path().join(".factory/config.json"), "{}").unwrap();
    assert_eq!(
        detect(r.path(), &missing_gh()).state,
        ProjectState::HasFactory
    );
}

#[test]
fn pending_review_is_checked_before_has_factory() {
    let r = repo();
    let f = r.path().join(".factory");
    fs::create_dir_all(&f).unwrap();
    fs::write(f.join("config.json"), "{}").unwrap();
    fs::write(f.join("eval_profile.json"), r#"{"human_reviewed": false}"#).unwrap();
    assert_eq!(
        detect(r.path(), &missing_gh()).state,
        ProjectState::EvalsPendingReview
    );
    fs::write(f.join("eval_profile.json"), "{corrupt").unwrap();
    assert_eq!(
        detect(r.path(), &missing_gh()).state,
        ProjectState::EvalsPendingReview
    );
    // Half a profile cannot be what a person approved.
    fs::write(f.join("eval_profile.json"), r#"{"human_reviewed": true}"#).unwrap();
    assert_eq!(
        detect(r.path(), &missing_gh()).state,
        ProjectState::EvalsPendingReview
    );
    let mut profile = crate::eval::discovery::build_eval_profile(
        &crate::eval::discovery::introspect(r.path()),
        &[],
    );
    profile.human_reviewed = true;
    profile.approved_hash = Some(profile.content_hash());
    let write = |p: &crate::eval::discovery::EvalProfile| {
        fs::write(
            f.join("eval_profile.json"),
            serde_json::to_string(p).unwrap(),
        )
        .unwrap()
    };
    write(&profile);
    assert_eq!(
        detect(r.path(), &missing_gh()).state,
        ProjectState::HasFactory
    );
    // Edited after approval: back in review.
    profile
        .dimensions
        .push(crate::eval::discovery::profile::EvalDimension {
            name: "lint".into(),
            command: "true".into(),
            weight: 1.0,
            parser: crate::eval::discovery::profile::DimensionParser::ExitCode,
            regex_pattern: None,
            description: "added by hand".into(),
            source: crate::eval::discovery::profile::DimensionSource::Explicit,
        });
    write(&profile);
    assert_eq!(
        detect(r.path(), &missing_gh()).state,
        ProjectState::EvalsPendingReview
    );
}

#[test]
fn incomplete_when_gh_lists_open_plan_issues() {
    let r = repo();
    let bin = tempfile::tempdir().unwrap();
    let gh = fake_gh(bin.path(), PLAN_ISSUE, 0);
    let d = detect(r.path(), &opts(gh));
    assert_eq!(d.state, ProjectState::Incomplete, "{d:?}");
    // The config check comes first.
    fs::create_dir_all(r.path().join(".factory")).unwrap();
    fs::write(r.path().join(".factory/config.json"), "{}").unwrap();
    let gh = fake_gh(bin.path(), PLAN_ISSUE, 0);
    assert_eq!(detect(r.path(), &opts(gh)).state, ProjectState::HasFactory);
}

#[test]
fn only_the_exact_plan_label_counts() {
    let r = repo();
    let bin = tempfile::tempdir().unwrap();
    for other in ["implementation", "Plan", "planning"] {
        let out = format!(r#"[{{"number":4,"labels":[{{"name":"{other}"}}]}}]"#);
        let d = detect(r.path(), &opts(fake_gh(bin.path(), &out, 0)));
        assert_eq!(d.state, ProjectState::NoFactory, "label {other}");
    }
}

#[test]
fn empty_or_garbage_gh_output_means_no_plan_issues() {
    let r = repo();
    let bin = tempfile::tempdir().unwrap();
    let d = detect(r.path(), &opts(fake_gh(bin.path(), "[]", 0)));
    assert_eq!(
        (d.state, d.gh.as_deref()),
        (ProjectState::NoFactory, Some("no_plan_issues"))
    );
    let d = detect(r.path(), &opts(fake_gh(bin.path(), "not json", 0)));
    assert_eq!(d.state, ProjectState::NoFactory);
}

#[test]
fn a_hanging_gh_is_killed_and_means_no_plan_issues() {
    let r = repo();
    let bin = tempfile::tempdir().unwrap();
    let gh = fake_gh(bin.path(), PLAN_ISSUE, 30);
    let start = Instant::now();
    let d = detect(
        r.path(),
        &DetectOptions {
            gh_program: gh,
            gh_timeout: Duration::from_millis(500),
        },
    );
    assert_eq!(
        (d.state, d.gh.as_deref()),
        (ProjectState::NoFactory, Some("timed_out"))
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn state_names_match_the_spec() {
    let names: Vec<_> = [
        ProjectState::NoRepo,
        ProjectState::Incomplete,
        ProjectState::NoFactory,
        ProjectState::EvalsPendingReview,
        ProjectState::HasFactory,
    ]
    .iter()
    .map(|s| (s.as_str(), serde_json::to_value(s).unwrap()))
    .collect();
    for (name, json) in names {
        assert_eq!(json, serde_json::Value::from(name));
    }
}
