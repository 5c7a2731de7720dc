//! `factory contained -- factory eval` end to end (docs/sandbox.md): the eval's command
//! runs inside the sandbox, sees the FACTORY_ variables and the forwarded ones and
//! nothing else of the environment, and cannot read `~/.ssh`; `contained verify` and
//! the dry run name credentials by shape and never print a planted value.

use std::fs;

use crate::support::{GateProject as Project, text};
use serde_json::Value;

/// The composite is 0.9 only where the eval ran confined: in the sandbox, `~/.ssh`
/// empty, the unforwarded secret absent, the FACTORY_ and forwarded ones present.
const PROBE: &str = r#"if [ "$FACTORY_PLACEMENT" = sandbox ] && [ ! -e "$HOME/.ssh/id_rsa" ] && [ -z "$PLANTED_SECRET" ] && [ -n "$FACTORY_API_KEY" ] && [ "$FORWARD_ME" = forwarded ]; then echo 0.9; else echo 0.1; fi
"#;

const FACTORY_MD: &str = "# Probe\n\n## Goal\nconfined\n\n## Scope\n- src/**\n\n## Guards\n\n## Eval command\nsh probe.sh\n\n## Eval threshold\n0.05\n\n## Constraints\n\n## Project eval\n- name: confined\n  command: sh probe.sh\n  parse: json\n  timeout: 10\n\n## Test timeout\n30\n";

const PLANTED_KEY: &str = "sk-proj-plantedKEYvalue0123456789abcdef";
const PLANTED_SECRET: &str = "planted-unforwarded-secret-98765";

struct Setup {
    p: Project,
    home: tempfile::TempDir,
}

fn setup() -> Setup {
    let p = Project::init(&[
        (".gitignore", ".factory/\n"),
        ("probe.sh", PROBE),
        ("src/a.txt", "a\n"),
        ("factory.md", FACTORY_MD),
    ]);
    let home = tempfile::tempdir().unwrap();
    fs::create_dir_all(home.path().join(".ssh")).unwrap();
    fs::write(home.path().join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
    Setup { p, home }
}

impl Setup {
    fn factory(&self, args: &[&str]) -> std::process::Output {
        let home = self.home.path().to_str().unwrap();
        self.p.factory_with(
            args,
            &[
                ("HOME", home),
                ("FACTORY_API_KEY", PLANTED_KEY),
                ("PLANTED_SECRET", PLANTED_SECRET),
                ("FORWARD_ME", "forwarded"),
            ],
        )
    }
}

fn total(o: &std::process::Output) -> f64 {
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["total"].as_f64().unwrap()
}

#[test]
fn contained_eval_runs_in_the_sandbox_with_only_the_credentials_it_was_given() {
    let s = setup();
    // On the host, the eval sees everything.
    assert_eq!(total(&s.factory(&["eval", "--json"])), 0.1);

    let o = s.factory(&[
        "contained",
        "--forward",
        "FORWARD_ME",
        "--",
        "factory",
        "eval",
        "--json",
    ]);
    assert_eq!(total(&o), 0.9, "confined: {}", text(&o.stderr));
    // Without the forward, the forwarded variable is not there.
    let o = s.factory(&["contained", "--", "factory", "eval", "--json"]);
    assert_eq!(total(&o), 0.1);
}

#[test]
fn verify_and_the_dry_run_name_credentials_and_never_print_them() {
    let s = setup();
    let o = s.factory(&["contained", "verify", "--forward", "PLANTED_SECRET"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(
        out.contains("FACTORY_API_KEY: present, well-formed"),
        "{out}"
    );
    assert!(out.contains("PLANTED_SECRET: present"), "{out}");
    assert!(out.contains("not a security boundary"), "{out}");

    let o = s.factory(&[
        "contained",
        "--dry-run",
        "--forward",
        "PLANTED_SECRET",
        "--",
        "factory",
        "eval",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dry = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(dry.contains("bwrap") && dry.contains("-- "), "{dry}");
    assert!(dry.contains("env FACTORY_API_KEY=[REDACTED]"), "{dry}");
    for planted in [PLANTED_KEY, PLANTED_SECRET] {
        assert!(!out.contains(planted), "verify printed {planted}: {out}");
        assert!(
            !dry.contains(planted),
            "the dry run printed {planted}: {dry}"
        );
    }

    let o = s.factory(&["contained", "--help"]);
    assert!(text(&o.stdout).contains("NOT A SECURITY BOUNDARY"));
    assert!(text(&o.stdout).contains("need your review"));
}

#[test]
fn contained_refuses_what_it_cannot_contain() {
    let s = setup();
    let o = s.factory(&["contained", "--", "sh", "-c", "id"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("is not a factory command"),
        "{}",
        text(&o.stderr)
    );
    let o = s.factory(&[
        "contained",
        "--placement",
        "container",
        "--",
        "factory",
        "eval",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        err.contains("container placement is not built yet"),
        "{err}"
    );
}
