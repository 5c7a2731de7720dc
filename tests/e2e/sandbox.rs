//! `--placement sandbox` end to end (docs/sandbox.md): the demo's builder, run under
//! bubblewrap, reaches for the store, the user's checkout, the user's git config and
//! hooks and `$FACTORY_HOME`; each write is denied (or lands in an empty tmpfs), its
//! honest work is kept. A bubblewrap that cannot run makes the run fall back to the
//! host, loudly and in the event log.

use std::fs;
use std::path::Path;

use crate::support::{Project, WORKFLOW, script, text};

/// Writes the builder tries before its honest work, each allowed to fail. Its cwd is
/// its worktree, `.factory/worktrees/exp-001`: the store is `../..`, the checkout `../../..`.
const ATTACKS: &[&str] = &[
    "printf '999\\tforged\\tkeep\\n' >> ../../results.tsv",
    "echo '{}' > ../../config.json",
    "echo hacked > ../../../src/lib.rs",
    "git config --file ../../../.git/config core.hooksPath /tmp/hooks",
    "printf '#!/bin/sh\\necho owned\\n' > ../../../.git/hooks/post-merge",
    "echo '[notify]' >> \"$FACTORY_HOME/config.toml\"",
];

fn attacking_script() -> String {
    let honest = script(&[]);
    let mut lines: String = ATTACKS
        .iter()
        .map(|a| format!("        - {}\n", yaml_quote(&format!("{a} || true"))))
        .collect();
    lines.push_str("        - git add -A\n");
    let attacked = honest.replacen("        - git add -A\n", &lines, 1);
    assert_ne!(
        attacked, honest,
        "the demo builder's `git add -A` is where attacks go"
    );
    attacked
}

fn yaml_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn run_sandboxed(p: &Project, script: &str, path_prefix: Option<&Path>) -> std::process::Output {
    let file = p.path().join(".factory/script.yaml");
    fs::write(&file, script).unwrap();
    let mut c = p.command(&[
        "run",
        WORKFLOW,
        "--runner",
        "replay",
        "--script",
        file.to_str().unwrap(),
        "--placement",
        "sandbox",
    ]);
    if let Some(dir) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        c.env("PATH", format!("{}:{path}", dir.display()));
    }
    c.output().unwrap()
}

#[test]
fn a_sandboxed_builder_cannot_touch_the_store_the_checkout_or_git_and_its_work_is_kept() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let home_config = p.home().join("config.toml");
    fs::write(&home_config, "# the user's\n").unwrap();
    let lib_before = fs::read_to_string(p.path().join("src/lib.rs")).unwrap();
    let git_config_before = fs::read_to_string(p.path().join(".git/config")).unwrap();

    let out = run_sandboxed(&p, &attacking_script(), None);
    let t = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(
        !t.contains("the sandbox cannot be used here"),
        "bubblewrap must work on this machine (.ci/run installs it): {t}"
    );

    let rows = p.results();
    assert_eq!(rows.len(), 1, "no forged row in results.tsv: {rows:?}\n{t}");
    assert_eq!(rows[0]["verdict"], "keep", "{t}");
    let config = fs::read_to_string(p.path().join(".factory/config.json")).unwrap();
    assert_ne!(config.trim(), "{}", "the store's config was rewritten");
    assert_eq!(
        fs::read_to_string(p.path().join("src/lib.rs")).unwrap(),
        lib_before
    );
    assert_eq!(
        fs::read_to_string(p.path().join(".git/config")).unwrap(),
        git_config_before
    );
    assert!(!p.path().join(".git/hooks/post-merge").exists());
    assert_eq!(fs::read_to_string(&home_config).unwrap(), "# the user's\n");
    // The honest part went through: the kept branch has the builder's commit.
    let repo = git2::Repository::open(p.path()).unwrap();
    let tip = repo
        .find_branch("factory/exp-001", git2::BranchType::Local)
        .unwrap()
        .get()
        .peel_to_commit()
        .unwrap();
    assert_eq!(
        tip.summary().ok().flatten(),
        Some("Count words with a HashMap in most_frequent")
    );
}

#[test]
fn a_bubblewrap_that_cannot_run_falls_back_to_the_host_loudly_and_in_the_log() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("bwrap");
    fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&fake, perms).unwrap();

    let out = run_sandboxed(&p, &script(&[]), Some(bin.path()));
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: the sandbox cannot be used here")
            && err.contains("No permissions to creating new namespace"),
        "{err}"
    );
    let fallback: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e.data.kind() == "placement.fallback")
        .collect();
    assert_eq!(fallback.len(), 1, "{err}");
    // On the host, the run goes on as before.
    assert_eq!(p.results()[0]["verdict"], "keep", "{err}");
}
