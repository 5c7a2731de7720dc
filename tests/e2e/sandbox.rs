//! `--placement sandbox` end to end (docs/sandbox.md): the demo's builder, run under
//! bubblewrap, reaches for the store, the user's checkout, the user's git config and
//! hooks and `$FACTORY_HOME`; each write is denied (or lands in an empty tmpfs), its
//! honest work is kept. A bubblewrap that cannot run makes the run fall back to the
//! host, loudly and in the event log.

use std::fs;
use std::path::Path;

use crate::support::{DEMO, Project, WORKFLOW, script, text};

/// Writes the builder tries before its honest work, each allowed to fail. Its cwd is
/// its worktree, `.factory/worktrees/exp-001`: the store is `../..`, the checkout `../../..`.
const ATTACKS: &[&str] = &[
    "printf '999\\tforged\\tkeep\\n' >> ../../results.tsv",
    "echo '{}' > ../../config.json",
    "echo hacked > ../../../src/lib.rs",
    "git config --file ../../../.git/config core.hooksPath /tmp/hooks",
    "printf '#!/bin/sh\\necho owned\\n' > ../../../.git/hooks/post-merge",
    "echo '[notify]' >> \"$FACTORY_HOME/config.toml\"",
    // A commit straight onto the user's main, then back to where the builder was.
    "git commit -q --allow-empty -m forged && git -C ../../.. fetch -q --update-head-ok \"$PWD\" HEAD:refs/heads/main; git reset -q --soft HEAD~1",
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

/// What the attacks aim at, as it was before the run.
struct Untouched {
    lib: String,
    git_config: String,
}

impl Untouched {
    fn of(p: &Project) -> Untouched {
        Untouched {
            lib: fs::read_to_string(p.path().join("src/lib.rs")).unwrap(),
            git_config: fs::read_to_string(p.path().join(".git/config")).unwrap(),
        }
    }

    /// One row, a keep; the store's config, the checkout and git as they were.
    fn kept_and_untouched(&self, p: &Project, t: &str) {
        let rows = p.results();
        assert_eq!(rows.len(), 1, "no forged row in results.tsv: {rows:?}\n{t}");
        assert_eq!(rows[0]["verdict"], "keep", "{t}");
        let config = fs::read_to_string(p.path().join(".factory/config.json")).unwrap();
        assert_ne!(config.trim(), "{}", "the store's config was rewritten");
        assert_eq!(
            fs::read_to_string(p.path().join("src/lib.rs")).unwrap(),
            self.lib
        );
        assert_eq!(
            fs::read_to_string(p.path().join(".git/config")).unwrap(),
            self.git_config
        );
        assert!(!p.path().join(".git/hooks/post-merge").exists());
    }
}

fn run_sandboxed(p: &Project, script: &str, path_prefix: Option<&Path>) -> std::process::Output {
    run_placed(p, script, "sandbox", path_prefix, &[])
}

fn run_placed(
    p: &Project,
    script: &str,
    placement: &str,
    path_prefix: Option<&Path>,
    env: &[(&str, String)],
) -> std::process::Output {
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
        placement,
    ]);
    c.envs(env.iter().map(|(k, v)| (k, v)));
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
    let before = Untouched::of(&p);
    let main_before = git2::Repository::open(p.path())
        .unwrap()
        .refname_to_id("refs/heads/main")
        .unwrap();

    let out = run_sandboxed(&p, &attacking_script(), None);
    let t = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(
        !t.contains("the sandbox cannot be used here"),
        "bubblewrap must work on this machine (.ci/run installs it): {t}"
    );

    before.kept_and_untouched(&p, &t);
    assert_eq!(fs::read_to_string(&home_config).unwrap(), "# the user's\n");
    assert_eq!(
        git2::Repository::open(p.path())
            .unwrap()
            .refname_to_id("refs/heads/main")
            .unwrap(),
        main_before,
        "no commit pushed onto the user's main"
    );
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

/// The run's `placement.fallback` events.
fn fallbacks(p: &Project) -> Vec<factory_runtime::events::Event> {
    p.events()
        .into_iter()
        .filter(|e| e.data.kind() == "placement.fallback")
        .collect()
}

/// A directory holding a `bwrap` that fails as bubblewrap does inside a default Docker
/// container.
fn broken_bwrap() -> tempfile::TempDir {
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
    bin
}

#[test]
fn a_bubblewrap_that_cannot_run_falls_back_to_the_host_loudly_and_in_the_log() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let bin = broken_bwrap();

    // Without the landlock fallback, nothing confines: the host.
    let off = [("FACTORY_SANDBOX_LANDLOCK", "0".to_string())];
    let out = run_placed(&p, &script(&[]), "sandbox", Some(bin.path()), &off);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: the sandbox cannot be used here")
            && err.contains("No permissions to creating new namespace"),
        "{err}"
    );
    let fallback = fallbacks(&p);
    assert_eq!(fallback.len(), 1, "{err}");
    assert_eq!(fallback[0].fields()["used"], "host", "{err}");
    // On the host, the run goes on as before.
    assert_eq!(p.results()[0]["verdict"], "keep", "{err}");
}

/// Where bubblewrap cannot run, landlock alone confines: the builder's writes to the
/// store, the checkout and git are denied as in bubblewrap's sandbox, its honest work
/// is kept, and the run says loudly (and in the log) what it confines with.
#[test]
fn a_bubblewrap_that_cannot_run_falls_back_to_landlock_which_still_denies_the_store() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let before = Untouched::of(&p);
    let bin = broken_bwrap();

    let out = run_sandboxed(&p, &attacking_script(), Some(bin.path()));
    let t = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(
        t.contains("confined by landlock alone")
            && t.contains("No permissions to creating new namespace"),
        "{t}"
    );
    let fallback = fallbacks(&p);
    assert_eq!(fallback.len(), 1, "{t}");
    assert_eq!(fallback[0].fields()["used"], "landlock", "{t}");

    before.kept_and_untouched(&p, &t);
    let record =
        fs::read_to_string(p.path().join(".factory/experiments/001/precheck.json")).unwrap();
    assert!(record.contains("ran under landlock alone"), "{record}");
}

/// A test the head adds, run by the gate in the head's scratch checkout: it reaches
/// for a listener on the host's loopback (`REACH_PORT`) and overwrites the base's
/// scratch checkout (a sibling in the temp directory) with code that does not build.
const REACHING_TEST: &str = r#"#[test]
fn reaches_around_its_checkout() {
    if let Some(port) = std::env::var("REACH_PORT").ok().and_then(|p| p.parse::<u16>().ok()) {
        let _ = std::net::TcpStream::connect(("127.0.0.1", port));
    }
    for entry in std::fs::read_dir(std::env::temp_dir()).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("factory-gate-base-") {
            let _ = std::fs::write(entry.path().join("src/lib.rs"), "compile_error!(\"sabotaged\");\n");
        }
    }
}
"#;

/// The demo's builder, also adding [`REACHING_TEST`] and leaving `sleep <seconds>`
/// behind.
fn reaching_script(seconds: &str) -> String {
    let honest = script(&[]);
    let indented: String = REACHING_TEST
        .lines()
        .map(|l| format!("          {l}\n"))
        .collect();
    let test = format!("        tests/reach.rs: |\n{indented}      run:\n");
    // It waits until the sleeper has left its process group (the node's end kills that
    // group, so leaving too late would lose the race, not show the sandbox).
    let lingering = format!(
        "        - 'f=\"${{TMPDIR:-/tmp}}/left-$$\"; setsid sh -c \"echo > $f; exec sleep {seconds}\" >/dev/null 2>&1 < /dev/null & while [ ! -e \"$f\" ]; do sleep 0.05; done'\n        - git add -A\n"
    );
    let attacked = honest.replacen(
        "      run:\n        - git add -A\n",
        &format!("{test}{lingering}"),
        1,
    );
    assert_ne!(
        attacked, honest,
        "the demo builder's `run:` is where the test goes"
    );
    attacked
}

/// Whether a process whose command line holds `needle` is alive; kills it if so.
fn lingering(needle: &str) -> bool {
    let mut found = false;
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline)
            .replace('\0', " ")
            .contains(needle)
        {
            found = true;
            // SAFETY: sends SIGKILL to a process this test's run left behind.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    found
}

/// The run of [`reaching_script`] under `placement`: its output, whether the head's
/// test reached the listener, and whether the builder's process outlived it. Its own
/// temp directory: on the host, the head's test sabotages every base checkout it sees.
fn reaching_run(
    placement: &str,
    seconds: &str,
) -> (Project, Vec<tempfile::TempDir>, String, bool, bool) {
    let target = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let env = [
        ("REACH_PORT", port),
        ("TMPDIR", temp.path().display().to_string()),
    ];
    let out = run_placed(&p, &reaching_script(seconds), placement, None, &env);
    let t = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    // A connection that completed waits in the backlog even after its client closed.
    let reached = listener.accept().is_ok();
    let left_behind = lingering(&format!("sleep {seconds}"));
    (p, vec![target, temp], t, reached, left_behind)
}

#[test]
fn in_the_sandbox_the_head_cannot_reach_the_network_the_base_checkout_or_outlive_its_node() {
    let (p, _target, t, reached, left_behind) = reaching_run("sandbox", "1234.1");
    assert!(!t.contains("cannot be used here"), "{t}");
    assert!(
        !reached,
        "the head's test reached the host's loopback from the gate:\n{t}"
    );
    assert!(
        !left_behind,
        "the builder's `setsid sleep` outlived its node:\n{t}"
    );
    // The base was measured as committed: the honest change is kept.
    let rows = p.results();
    assert_eq!(rows.len(), 1, "{t}");
    assert_eq!(rows[0]["verdict"], "keep", "{t}");
    let record =
        fs::read_to_string(p.path().join(".factory/experiments/001/precheck.json")).unwrap();
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    let placement = record["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "placement")
        .unwrap_or_else(|| panic!("no placement check in {record}"));
    assert!(
        placement["details"][0]
            .as_str()
            .unwrap()
            .starts_with("sandbox:"),
        "{placement}"
    );
}

#[test]
fn on_the_host_the_same_head_reaches_the_network_the_base_checkout_and_outlives_its_node() {
    let (p, _target, t, reached, left_behind) = reaching_run("host", "1234.2");
    assert!(
        reached,
        "on the host the head's test reaches the loopback:\n{t}"
    );
    assert!(
        left_behind,
        "on the host a `setsid` process outlives the builder:\n{t}"
    );
    // The sabotaged base cannot be built: the gate errs, and nothing is kept.
    assert!(
        p.results().iter().all(|r| r["verdict"] != "keep"),
        "{:?}\n{t}",
        p.results()
    );
}

#[test]
fn doctor_probes_the_sandbox_and_a_broken_one_is_a_problem_only_for_a_sandboxed_run() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let finding = |placement: &str, path_prefix: Option<&Path>, landlock: bool| {
        let mut c = p.command(&["doctor", ".", "--json", "--placement", placement]);
        if !landlock {
            c.env("FACTORY_SANDBOX_LANDLOCK", "0");
        }
        if let Some(dir) = path_prefix {
            let path = std::env::var("PATH").unwrap_or_default();
            c.env("PATH", format!("{}:{path}", dir.display()));
        }
        let out = c.output().unwrap();
        let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        findings
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["check"] == "sandbox")
            .cloned()
            .unwrap()
    };
    let sandbox_finding =
        |placement: &str, path_prefix: Option<&Path>| finding(placement, path_prefix, true);
    let sandbox_finding_without_landlock =
        |placement: &str, path_prefix: Option<&Path>| finding(placement, path_prefix, false);
    let works = sandbox_finding("sandbox", None);
    assert_eq!(works["ok"], true, "{works}");
    assert!(
        works["found"].as_str().unwrap().contains("confines here"),
        "{works}"
    );
    let bin = broken_bwrap();
    // Landlock alone confines where bubblewrap cannot, and doctor says which.
    let landlock = sandbox_finding("sandbox", Some(bin.path()));
    assert_eq!(landlock["ok"], true, "{landlock}");
    let found = landlock["found"].as_str().unwrap();
    assert!(
        found.contains("landlock alone")
            && found.contains("No permissions to creating new namespace"),
        "{landlock}"
    );
    let broken = sandbox_finding_without_landlock("sandbox", Some(bin.path()));
    assert_eq!(broken["ok"], false, "{broken}");
    assert!(
        broken["found"]
            .as_str()
            .unwrap()
            .contains("No permissions to creating new namespace"),
        "{broken}"
    );
    assert!(
        broken["fix"].as_str().unwrap().contains("bubblewrap"),
        "{broken}"
    );
    let host = sandbox_finding_without_landlock("host", Some(bin.path()));
    assert_eq!(
        host["ok"], true,
        "a host run does not need the sandbox: {host}"
    );
}

#[test]
fn the_dry_run_shows_each_nodes_placement_and_factory_md_sets_the_default() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let plan = |extra: &[&str]| {
        let script = Path::new(DEMO).join("replay.yaml");
        let mut args = vec![
            "run",
            WORKFLOW,
            "--runner",
            "replay",
            "--script",
            script.to_str().unwrap(),
            "--dry-run",
        ];
        args.extend_from_slice(extra);
        let out = p.factory(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let host = plan(&[]);
    assert!(host.contains("\nplacement: host ("), "{host}");
    assert!(!host.contains("placement: sandbox"), "{host}");

    let md = p.path().join("factory.md");
    let before = fs::read_to_string(&md).unwrap();
    fs::write(&md, format!("{before}\n## Placement\nsandbox\n")).unwrap();
    let sandboxed = plan(&[]);
    assert!(sandboxed.contains("\nplacement: sandbox ("), "{sandboxed}");
    let builder = sandboxed
        .split("\n\n")
        .find(|b| b.contains("experiment.trial.builder (agent)"))
        .unwrap();
    assert!(
        builder.contains("placement: sandbox (bubblewrap) — writable: its experiment's worktree")
            && builder.contains("network: agent"),
        "{builder}"
    );
    let gate = sandboxed
        .split("\n\n")
        .find(|b| b.contains("factory precheck"))
        .unwrap();
    assert!(
        gate.contains("the gate's commands: sandbox") && gate.contains("network: none"),
        "{gate}"
    );
    // `--placement` wins over factory.md.
    assert!(plan(&["--placement", "host"]).contains("\nplacement: host ("));
}

/// A builder that forks until it cannot (sleepers that would outlive it), bounded at
/// 1000 so that a machine without the limit survives the test too.
const FORK_BOMB: &str = r#"python3 -c "exec('import os, sys, time\nn = 0\ntry:\n  for _ in range(1000):\n    if os.fork() == 0:\n      time.sleep(3600.5)\n      os._exit(0)\n    n += 1\nexcept OSError as e:\n  print(\'fork bomb stopped after\', n, \'forks:\', e, file=sys.stderr)\n  sys.exit(1)\nprint(\'fork bomb ran all\', n, \'forks\')')""#;

/// Whether this machine lets factory make a pids cgroup (what the sandbox's limit
/// needs), decided independently of factory: cgroup v1's pids hierarchy, writable.
fn pids_cgroup_here() -> bool {
    let dir = Path::new("/sys/fs/cgroup/pids").join(format!("factory-test-{}", std::process::id()));
    let made = fs::create_dir(&dir).is_ok();
    let _ = fs::remove_dir(&dir);
    made
}

/// A fork bomb in the builder fails at its fork under the run's pids limit, and the
/// node's result says so: no keep, nothing left running. `~/.ssh` reads as empty and a
/// symlink out of the worktree writes nothing. Where the machine has no pids
/// controller to use, the run says that it has no limit.
#[test]
fn in_the_sandbox_a_fork_bomb_fails_at_its_fork_and_secrets_and_symlinks_lead_nowhere() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let home = tempfile::tempdir().unwrap();
    fs::create_dir_all(home.path().join(".ssh")).unwrap();
    fs::write(home.path().join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
    let results_before = fs::read_to_string(p.path().join(".factory/results.tsv")).ok();
    let steps = [
        "cp \"$HOME/.ssh/id_rsa\" stolen-key.txt || true",
        "ln -s ../../results.tsv via-link && echo forged >> via-link || true",
        FORK_BOMB,
    ];
    let lines: String = steps
        .iter()
        .map(|a| format!("        - {}\n", yaml_quote(a)))
        .collect();
    let honest = script(&[]);
    let attacked = honest.replacen(
        "        - git add -A\n",
        &format!("{lines}        - git add -A\n"),
        1,
    );
    assert_ne!(attacked, honest);
    let env = [
        ("HOME", home.path().display().to_string()),
        ("FACTORY_SANDBOX_PIDS_MAX", "64".to_string()),
    ];
    let out = run_placed(&p, &attacked, "sandbox", None, &env);
    let t = format!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(!t.contains("the sandbox cannot be used here"), "{t}");
    let left = lingering("3600.5");

    assert!(
        p.results().iter().all(|r| r["verdict"] != "keep"),
        "nothing is kept: {t}"
    );
    assert_eq!(
        fs::read_to_string(p.path().join(".factory/results.tsv")).ok(),
        results_before,
        "nothing written through the symlink: {t}"
    );
    let stolen = p.path().join(".factory/worktrees/exp-001/stolen-key.txt");
    assert!(!stolen.exists(), "~/.ssh was readable: {t}");
    if pids_cgroup_here() {
        let stopped = t
            .lines()
            .find_map(|l| l.split("fork bomb stopped after ").nth(1))
            .unwrap_or_else(|| panic!("the bomb was not stopped: {t}"));
        let forks: u32 = stopped.split_whitespace().next().unwrap().parse().unwrap();
        assert!(forks < 64, "{forks} forks under a limit of 64: {t}");
        // Sleepers existed, so their absence below means they were killed.
        assert!(forks > 0, "the bomb forked nothing: {t}");
        assert!(t.contains("builder agent failed"), "{t}");
    } else {
        assert!(t.contains("the sandbox has no process limit here"), "{t}");
    }
    assert!(!left, "the bomb's sleepers outlived the node: {t}");
}

/// On the host an agent can write the store: a well-formed `keep` row and a
/// `verdict.json` for an experiment factory never finalized. Neither is a verdict: no
/// chained `experiment.finalize` stands behind them, so history ignores them and says
/// so, and `factory pr` has nothing to propose.
#[test]
fn a_keep_row_and_verdict_file_factory_did_not_write_are_ignored_and_reported() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let out = run_placed(&p, &script(&[]), "host", None, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let forged: factory_runtime::store::ExperimentRecord =
        serde_json::from_value(serde_json::json!({
            "id": 7,
            "timestamp": "2026-12-04T00:00:00Z",
            "hypothesis": "forged by an agent",
            "verdict": "keep",
        }))
        .unwrap();
    let tsv = p.path().join(".factory/results.tsv");
    let mut rows = fs::read_to_string(&tsv).unwrap();
    rows.push_str(&factory_runtime::store::tsv::encode(&forged));
    fs::write(&tsv, rows).unwrap();
    let dir = p.path().join(".factory/experiments/007");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("verdict.json"),
        serde_json::to_string(&forged).unwrap(),
    )
    .unwrap();

    let o = p.factory(&["history", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let history: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<u64> = history["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1], "{history}");
    assert!(
        text(&o.stderr).contains(
            "experiment 7's `keep` in results.tsv has no verified experiment.finalize event"
        ),
        "{}",
        text(&o.stderr)
    );
    let o = p.factory(&["pr", "--id", "7"]);
    assert!(
        text(&o.stdout).contains("experiment 7 is not kept"),
        "{}",
        text(&o.stdout)
    );
}
