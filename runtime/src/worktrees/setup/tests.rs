use std::fs;
use std::path::Path;
use std::time::Duration;

use super::probe::{npm_dependencies, pytest_pythonpath, python_packages};
use super::*;
use crate::sys::process::{Output, run_shell};

fn shell(script: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    run_shell(script, dir.path(), Duration::from_secs(20)).unwrap()
}

fn write(root: &Path, rel: &str, body: &str) {
    let to = root.join(rel);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::write(to, body).unwrap();
}

#[test]
fn useful_lines_are_the_first_that_say_what_went_wrong() {
    let out = shell(
        "echo 'Collecting lru'; echo 'Building wheel'; echo 'ERROR: could not build lru' >&2; echo 'note: see above' >&2; echo done",
    );
    assert_eq!(useful_lines(&out, 3), "ERROR: could not build lru");
    let out = shell("echo one; echo two; echo three; echo four; exit 1");
    assert_eq!(
        useful_lines(&out, 2),
        "three | four",
        "no error line: the last"
    );
    assert_eq!(useful_lines(&shell("exit 1"), 3), "(no output)");
    let out = shell(
        "printf 'Traceback (most recent call last):\\n  File \"x\", line 1\\nModuleNotFoundError: No module named foo\\n' >&2; exit 1",
    );
    assert_eq!(
        useful_lines(&out, 3),
        "ModuleNotFoundError: No module named foo"
    );
    // A formatter's verdict, coloured even into a pipe, is read without the colours.
    let out = shell(
        "printf '\\033[1mDiff in /p/src/lib.rs:1:\\033(B\\033[m\\n\\033[31m-pub fn  x()\\033[m\\n+pub fn x()\\n'; exit 1",
    );
    assert_eq!(useful_lines(&out, 1), "Diff in /p/src/lib.rs:1:");
}

#[test]
fn a_command_that_could_not_start_is_told_from_one_that_failed() {
    let c = cannot_start(&shell("definitely-not-a-tool-xyz --run")).unwrap();
    assert_eq!(c.kind, StartKind::CommandNotFound);
    assert!(c.line.contains("definitely-not-a-tool-xyz"), "{c:?}");

    let c = cannot_start(&shell(
        "echo 'E   ModuleNotFoundError: No module named '\\''requests.adapters'\\'''; exit 2",
    ))
    .unwrap();
    assert_eq!(c.kind, StartKind::PythonModule("requests.adapters".into()));
    assert!(c.line.contains("ModuleNotFoundError"), "{c:?}");
    let c = cannot_start(&shell(
        "echo '/usr/bin/python3: No module named pytest' >&2; exit 1",
    ))
    .unwrap();
    assert_eq!(c.kind, StartKind::PythonModule("pytest".into()));

    let c = cannot_start(&shell(
        "echo \"Error: Cannot find module 'left-pad'\" >&2; echo 'Require stack:' >&2; exit 1",
    ))
    .unwrap();
    assert_eq!(c.kind, StartKind::NodeModule("left-pad".into()));
    assert_eq!(c.line, "Error: Cannot find module 'left-pad'");
    let c = cannot_start(&shell(
        "echo \"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'dep' imported from /x/a.mjs\"; exit 1",
    ))
    .unwrap();
    assert_eq!(c.kind, StartKind::NodeModule("dep".into()));

    assert_eq!(
        cannot_start(&shell("echo '1 failed, 2 passed'; exit 1")),
        None
    );
    assert_eq!(cannot_start(&shell("echo No module named x; exit 0")), None);
}

#[test]
fn a_missing_module_of_the_project_is_the_change_and_a_dependency_is_the_environment() {
    let base = tempfile::tempdir().unwrap();
    write(base.path(), "src/lru/util.py", "");
    write(base.path(), "calc.py", "");
    let py = |m: &str| StartCause {
        kind: StartKind::PythonModule(m.into()),
        line: String::new(),
    };
    assert!(py("lru.util").is_project_module(base.path()));
    assert!(py("lru").is_project_module(base.path()));
    assert!(py("calc").is_project_module(base.path()));
    assert!(!py("requests").is_project_module(base.path()));
    let node = |m: &str| StartCause {
        kind: StartKind::NodeModule(m.into()),
        line: String::new(),
    };
    assert!(node("./lib/x").is_project_module(base.path()));
    assert!(!node("left-pad").is_project_module(base.path()));
}

#[test]
fn the_project_s_import_packages_are_found_by_layout_and_pyproject_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "src/lru_cache/__init__.py", "");
    write(d, "src/helpers.py", "");
    write(d, "src/test_x.py", "");
    write(d, "tests/__init__.py", "");
    write(d, "docs/__init__.py", "");
    write(d, "tool_pkg/__init__.py", "");
    write(d, "notapkg/readme.txt", "");
    assert_eq!(python_packages(d), vec!["helpers", "lru_cache", "tool_pkg"]);
    let flat = tempfile::tempdir().unwrap();
    write(
        flat.path(),
        "pyproject.toml",
        "[project]\nname = \"My-Calc\"\n",
    );
    write(flat.path(), "my_calc.py", "");
    assert_eq!(python_packages(flat.path()), vec!["my_calc"]);
}

#[test]
fn pytest_s_pythonpath_is_read_from_pyproject_and_ini_files() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\"src\", \"lib\"]\n",
    );
    assert_eq!(pytest_pythonpath(dir.path()), vec!["src", "lib"]);
    let ini = tempfile::tempdir().unwrap();
    write(
        ini.path(),
        "setup.cfg",
        "[metadata]\nname = x\n[tool:pytest]\npythonpath = src .\n",
    );
    assert_eq!(pytest_pythonpath(ini.path()), vec!["src", "."]);
    assert!(pytest_pythonpath(tempfile::tempdir().unwrap().path()).is_empty());
}

#[test]
fn a_checkout_with_a_venv_runs_its_commands_with_it_first_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let env = side_env(dir.path());
    assert_eq!(env, vec![("NODE_PATH".into(), None)]);
    let bin = dir.path().join(".venv/bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("python3"), "#!/bin/sh\necho venv-python\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(bin.join("python3"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(venv_python(dir.path()), Some(bin.join("python3")));
    assert_eq!(side_python(dir.path()), Some(bin.join("python3")));
    let out = {
        let _env = enter(dir.path());
        run_shell(
            "python3; echo \"$VIRTUAL_ENV\"; echo \"node_path=${NODE_PATH-unset}\"",
            dir.path(),
            Duration::from_secs(10),
        )
        .unwrap()
    };
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "venv-python");
    assert_eq!(Path::new(lines[1]), dir.path().join(".venv"));
    assert_eq!(lines[2], "node_path=unset");
    // Outside the scope, nothing of it remains.
    let out = run_shell(
        "echo \"${VIRTUAL_ENV-none}\"",
        dir.path(),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_ne!(Path::new(out.stdout.trim()), dir.path().join(".venv"));
}

#[test]
fn setup_runs_in_order_and_a_failure_names_the_command_side_exit_and_cause() {
    let dir = tempfile::tempdir().unwrap();
    let c = Checkout {
        side: "base",
        code: dir.path(),
        root: dir.path(),
    };
    let commands = vec![
        "echo one > order.txt".to_string(),
        "echo two >> order.txt".to_string(),
    ];
    run_setup(&c, &commands, Duration::from_secs(10), &Progress::none()).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("order.txt")).unwrap(),
        "one\ntwo\n"
    );
    let failing = vec![
        "true".to_string(),
        "echo fetching; echo 'npm ERR! code ENOTFOUND registry' >&2; exit 4".to_string(),
        "touch never.txt".to_string(),
    ];
    let err = run_setup(&c, &failing, Duration::from_secs(10), &Progress::none()).unwrap_err();
    let SideError::Setup {
        side,
        command,
        reason,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(side, "base");
    assert!(command.contains("exit 4"), "{command}");
    assert!(
        reason.contains("exit code 4") && reason.contains("npm ERR! code ENOTFOUND"),
        "{reason}"
    );
    assert!(
        !dir.path().join("never.txt").exists(),
        "later commands do not run"
    );
    let slow = vec!["sleep 5".to_string()];
    let err = run_setup(&c, &slow, Duration::from_millis(300), &Progress::none()).unwrap_err();
    assert!(err.to_string().contains("timed out"), "{err}");
}

#[test]
fn declared_npm_dependencies_must_resolve_inside_the_checkout() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("checkout");
    write(
        &root,
        "package.json",
        r#"{"dependencies": {"dep": "file:./vendor-dep"}, "devDependencies": {"@scope/tool": "1"}}"#,
    );
    assert_eq!(npm_dependencies(&root), vec!["@scope/tool", "dep"]);
    let c = Checkout {
        side: "head",
        code: &root,
        root: &root,
    };
    // A node_modules above the checkout is where node would look next: named, refused.
    write(outer.path(), "node_modules/dep/index.js", "");
    let err = probe(&c, Duration::from_secs(10)).unwrap_err().to_string();
    assert!(
        err.contains("head checkout")
            && err.contains("`dep` (node would load")
            && err.contains("a node_modules above the checkout")
            && err.contains("`@scope/tool` (installed nowhere")
            && err.contains("npm ci"),
        "{err}"
    );
    write(&root, "node_modules/dep/index.js", "");
    write(&root, "node_modules/@scope/tool/index.js", "");
    let p = probe(&c, Duration::from_secs(10)).unwrap();
    assert!(p.summary().contains("2 npm dependencies from"), "{p:?}");
    // A link out of the checkout (npm link) is not the checkout's code.
    fs::remove_dir_all(root.join("node_modules/dep")).unwrap();
    std::os::unix::fs::symlink(
        outer.path().join("node_modules/dep"),
        root.join("node_modules/dep"),
    )
    .unwrap();
    let err = probe(&c, Duration::from_secs(10)).unwrap_err().to_string();
    assert!(err.contains("outside the checkout"), "{err}");
}

#[test]
fn the_python_probe_proves_a_package_from_the_checkout() {
    if crate::sys::process::which("python3").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pyproject.toml", "[project]\nname = \"lru\"\n");
    write(
        dir.path(),
        "lru/__init__.py",
        "raise SystemExit('never executed')\n",
    );
    let c = Checkout {
        side: "HEAD",
        code: dir.path(),
        root: dir.path(),
    };
    let p = probe(&c, Duration::from_secs(60)).unwrap();
    assert_eq!(p.proofs, vec!["`lru` ← lru/__init__.py"], "{p:?}");
    // A src layout that is not installed anywhere is not importable: a note, not a refusal.
    let src = tempfile::tempdir().unwrap();
    write(
        src.path(),
        "pyproject.toml",
        "[project]\nname = \"zz_unlikely_pkg\"\n",
    );
    write(src.path(), "src/zz_unlikely_pkg/__init__.py", "");
    let c = Checkout {
        side: "base",
        code: src.path(),
        root: src.path(),
    };
    let p = probe(&c, Duration::from_secs(60)).unwrap();
    assert!(p.proofs.is_empty(), "{p:?}");
    assert!(p.notes[0].contains("not importable"), "{p:?}");
    // pytest's pythonpath puts src first, as pytest would.
    write(
        src.path(),
        "pyproject.toml",
        "[project]\nname = \"zz_unlikely_pkg\"\n[tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
    );
    let p = probe(&c, Duration::from_secs(60)).unwrap();
    assert_eq!(
        p.proofs,
        vec!["`zz_unlikely_pkg` ← src/zz_unlikely_pkg/__init__.py"],
        "{p:?}"
    );
}
