//! `factory evolve mutate`, run as `workflows/evolve.fwf` and a user run it.

use crate::support;

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn factory(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("factory").expect("the factory binary is built");
    cmd.current_dir(dir);
    cmd
}

/// `factory compile MODE --emit ir -o OUT` in `dir`.
fn parent(dir: &Path, mode: &str, out: &str) {
    factory(dir)
        .args(["compile", mode, "--emit", "ir", "-o", out])
        .assert()
        .code(0);
}

#[test]
fn the_call_in_evolve_fwf_writes_one_candidate_that_passes_check_deny_warnings() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".factory/evolve")).unwrap();
    parent(dir.path(), "improve", ".factory/evolve/parent.fwir");
    // As evolve.fwf runs it, with the `mutations` knob at its default.
    factory(dir.path())
        .args([
            "evolve",
            "mutate",
            ".factory/evolve/parent.fwir",
            "--count",
            "1",
            "-o",
            ".factory/evolve/candidate.fwir",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "wrote .factory/evolve/candidate.fwir",
        ))
        .stdout(predicate::str::contains("NODE_INSERT"))
        .stdout(predicate::str::contains("discarded").or(predicate::str::contains("invalid")));
    let parent = fs::read_to_string(dir.path().join(".factory/evolve/parent.fwir")).unwrap();
    let cand = fs::read_to_string(dir.path().join(".factory/evolve/candidate.fwir")).unwrap();
    assert_ne!(parent, cand);
    factory(dir.path())
        .args(["check", "--deny-warnings", ".factory/evolve/candidate.fwir"])
        .assert()
        .code(0);
}

#[test]
fn many_candidates_go_to_a_directory_and_the_same_seed_writes_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    parent(dir.path(), "build", "build.fwir");
    for out in ["a", "b"] {
        factory(dir.path())
            .args([
                "evolve",
                "mutate",
                "build.fwir",
                "--count",
                "4",
                "--seed",
                "9",
                "-o",
                out,
            ])
            .assert()
            .code(0);
    }
    for n in 1..=4 {
        let name = format!("cand-{n:03}.fwir");
        let a = fs::read(dir.path().join("a").join(&name)).unwrap();
        let b = fs::read(dir.path().join("b").join(&name)).unwrap();
        assert_eq!(a, b, "{name} differs between two runs with seed 9");
        factory(dir.path())
            .arg("check")
            .arg(Path::new("a").join(&name))
            .assert()
            .code(0);
    }
    assert!(!dir.path().join("a/cand-005.fwir").exists());
}

#[test]
fn a_fwf_file_is_compiled_first_and_only_the_chosen_operators_run() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("workflows/qa.fwf");
    fs::copy(src, dir.path().join("qa.fwf")).unwrap();
    let out = factory(dir.path())
        .args([
            "evolve",
            "mutate",
            "qa.fwf",
            "--op",
            "knob-mutate",
            "-o",
            "k.fwir",
        ])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("KNOB_MUTATE"), "{out}");
    assert!(!out.contains("NODE_INSERT"), "{out}");
    let text = fs::read_to_string(dir.path().join("k.fwir")).unwrap();
    assert!(
        text.contains("knob qa_loops int default=2")
            || text.contains("knob qa_loops int default=4"),
        "{text}"
    );
}

#[test]
fn a_malformed_fwir_names_the_file_and_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("bad.fwir"),
        "fwir 1\nworkflow x\nnode a bogus\n",
    )
    .unwrap();
    factory(dir.path())
        .args(["evolve", "mutate", "bad.fwir", "-o", "out.fwir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.fwir:3:"))
        .stderr(predicate::str::contains("unknown node kind"))
        .stderr(predicate::str::contains("panicked").not());
    assert!(!dir.path().join("out.fwir").exists());
}

#[test]
fn bad_arguments_exit_2_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    parent(dir.path(), "qa", "qa.fwir");
    factory(dir.path())
        .args([
            "evolve",
            "mutate",
            "qa.fwir",
            "--op",
            "node_split",
            "-o",
            "o.fwir",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown operator `node_split`"))
        .stderr(predicate::str::contains("NODE_INSERT"));
    factory(dir.path())
        .args([
            "evolve", "mutate", "qa.fwir", "--count", "3", "-o", "o.fwir",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("need a directory"));
    factory(dir.path())
        .args(["evolve", "mutate", "missing.fwir", "-o", "o.fwir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.fwir"));
}

#[test]
fn no_candidate_exits_1_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    parent(dir.path(), "improve", "improve.fwir");
    // Every chain in improve reads what the step before it wrote: nothing to parallelize.
    factory(dir.path())
        .args([
            "evolve",
            "mutate",
            "improve.fwir",
            "--op",
            "PARALLELIZE",
            "-o",
            "p.fwir",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("PARALLELIZE"))
        .stderr(predicate::str::contains("no valid candidate"));
    assert!(!dir.path().join("p.fwir").exists());
}

#[test]
fn evolve_without_a_subcommand_is_the_search_and_a_mode_name_is_not_taken_for_one() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["evolve"][..], &["evolve", "improve"][..]] {
        factory(dir.path())
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "name the mode to evolve and the bench suite",
            ))
            .stderr(predicate::str::contains("unrecognized subcommand").not());
    }
}

/// A workflow whose one knob is expandable and at its bound, with one agent's task.
const AT_BOUND: &str = r#"workflow t {
    knob loops: int = 3 in 1..=3 expandable
    agent a {
        role: builder
        task: "Do it."
    }
    gate g by agent(ceo) "Is it done?"
    flow {
        start -> a -> g
        g.proceed -> end
        g.reloop(max loops) -> a
        g.halt -> end
    }
}
"#;

#[test]
fn the_suggest_command_answers_where_the_offline_lists_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("t.fwf"), AT_BOUND).unwrap();
    // The "agent": keeps each question, answers by kind.
    fs::write(
        d.join("agent.sh"),
        "cat \"$FACTORY_PROMPT_FILE\" >> asked.md\n\
         if [ \"$FACTORY_SUGGEST\" = knob ]; then printf '```\\n7\\n```\\n'; \
         else echo 'Do it, then list every file you changed under ## Changes.'; fi\n",
    )
    .unwrap();
    factory(d)
        .args([
            "evolve",
            "mutate",
            "t.fwf",
            "--op",
            "prompt_mutate",
            "--suggest",
            "sh agent.sh",
        ])
        .args(["-o", "task.fwir"])
        .assert()
        .code(0);
    let task = fs::read_to_string(d.join("task.fwir")).unwrap();
    assert!(
        task.contains(r#"task="Do it, then list every file you changed under ## Changes.""#),
        "{task}"
    );
    // At its bound, the knob may go down one or out to the agent's value: two candidates.
    factory(d)
        .args([
            "evolve",
            "mutate",
            "t.fwf",
            "--op",
            "knob_mutate",
            "--count",
            "2",
        ])
        .args(["--suggest", "sh agent.sh", "-o", "knobs"])
        .assert()
        .code(0);
    let both: String = ["cand-001.fwir", "cand-002.fwir"]
        .iter()
        .map(|f| fs::read_to_string(d.join("knobs").join(f)).unwrap())
        .collect();
    assert!(
        both.contains("knob loops int default=7 min=1 max=7 expandable"),
        "{both}"
    );
    assert!(
        both.contains("max=7 max_knob=loops"),
        "the reloop bound follows: {both}"
    );
    let asked = fs::read_to_string(d.join("asked.md")).unwrap();
    assert!(
        asked.contains("`a`") && asked.contains("`builder`") && asked.contains("Do it."),
        "{asked}"
    );
    assert!(
        asked.contains("`loops` is at its limit: its value is 3"),
        "{asked}"
    );

    // A failing agent is reported and the offline behaviour takes over.
    factory(d)
        .args([
            "evolve",
            "mutate",
            "t.fwf",
            "--op",
            "prompt_mutate",
            "--suggest",
            "exit 3",
        ])
        .args(["-o", "offline.fwir"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "the suggestion was not used: `exit 3` failed (exit code 3)",
        ));
    let offline = fs::read_to_string(d.join("offline.fwir")).unwrap();
    assert!(
        offline.contains("task=\"Do it. "),
        "a sentence appended offline: {offline}"
    );
}

/// A workflow of plain commands whose IR has the dotted ids of an inlined instance.
const TINY: &str = r#"subgraph step() {
    fn make "echo one > .factory/one.txt" {
        writes: made = ".factory/one.txt"
        check: exists
    }
    flow { start -> make -> end }
}

workflow tiny {
    use step() as first
    fn show "cat .factory/one.txt" {
        reads: first.made
    }
    flow { start -> first -> show -> end }
}
"#;

/// Registers IR text as the search would (its file under .factory/evolve/modes/ and its
/// SHA-256 in modes.json) and returns the candidate's name.
fn register(dir: &Path, ir: &str) -> String {
    let name = "evolve-gen1-0123abcd";
    let modes = dir.join(".factory/evolve/modes");
    fs::create_dir_all(&modes).unwrap();
    fs::write(modes.join(format!("{name}.fwir")), ir).unwrap();
    let registry = serde_json::json!({
        name: {
            "file": format!("modes/{name}.fwir"),
            "sha256": factory_runtime::events::chain::sha256_hex(ir.as_bytes()),
            "hash": "0123abcd0123abcd",
            "fitness": 0.5,
            "generation": 1,
        }
    });
    fs::write(
        dir.join(".factory/evolve/modes.json"),
        serde_json::to_vec_pretty(&registry).unwrap(),
    )
    .unwrap();
    name.to_string()
}

fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(cmd.assert().code(0).get_output().stdout.clone()).unwrap()
}

#[test]
fn promotion_writes_a_fwf_that_compiles_to_the_same_ir_and_the_mode_runs_from_it() {
    // A committed project (the demo) with its config: what `factory run` needs.
    let target = tempfile::tempdir().unwrap();
    let p = support::Project::committed(target.path());
    let dir = p.path();
    let factory = |_: &Path| p.command(&[]);
    fs::write(dir.join("tiny.fwf"), TINY).unwrap();
    factory(dir)
        .args(["compile", "tiny.fwf", "-o", "tiny.fwir"])
        .assert()
        .code(0);
    let ir = fs::read_to_string(dir.join("tiny.fwir")).unwrap();
    assert!(ir.contains("node first.make fn"), "{ir}");
    let name = register(dir, &ir);

    let out = stdout_of(factory(dir).args(["evolve", "promote", &name, "--as", "tiny2"]));
    assert!(out.contains("tiny2.fwf, its editable source"), "{out}");
    let workflows = dir.join(".factory/workflows");
    assert_eq!(
        fs::read_to_string(workflows.join("tiny2.fwir")).unwrap(),
        ir
    );
    let fwf = fs::read_to_string(workflows.join("tiny2.fwf")).unwrap();
    assert!(
        fwf.contains("fn first.make \"echo one > .factory/one.txt\" {"),
        "{fwf}"
    );
    assert!(fwf.contains("reads: first.made"), "{fwf}");
    // The .fwf is the same mode: it compiles to the promoted IR, byte for byte.
    let back =
        stdout_of(factory(dir).args(["compile", ".factory/workflows/tiny2.fwf", "--emit", "ir"]));
    assert_eq!(back, ir);

    // One mode, listed once, from its editable source; and it runs.
    let modes = stdout_of(factory(dir).arg("modes"));
    let listed: Vec<&str> = modes.lines().filter(|l| l.starts_with("tiny2 ")).collect();
    assert_eq!(listed.len(), 1, "{modes}");
    assert!(
        listed[0].ends_with(".factory/workflows/tiny2.fwf"),
        "{modes}"
    );
    let compiled = stdout_of(factory(dir).args(["compile", "tiny2", "--emit", "fwf"]));
    assert_eq!(
        compiled, fwf,
        "`tiny2` resolves to the .fwf, which renders to itself"
    );
    let run = factory(dir)
        .args(["run", "tiny2"])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        fs::read_to_string(dir.join(".factory/one.txt")).unwrap(),
        "one\n",
        "{shown}"
    );

    // Promoting again under the same name is refused: the mode exists.
    factory(dir)
        .args(["evolve", "promote", &name, "--as", "tiny2"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already has a mode `tiny2`"));
}

#[test]
fn an_ir_with_no_faithful_fwf_is_promoted_as_ir_and_the_output_says_why() {
    // A committed project (the demo) with its config: what `factory run` needs.
    let target = tempfile::tempdir().unwrap();
    let p = support::Project::committed(target.path());
    let dir = p.path();
    let factory = |_: &Path| p.command(&[]);
    fs::write(dir.join("tiny.fwf"), TINY).unwrap();
    factory(dir)
        .args(["compile", "tiny.fwf", "-o", "tiny.fwir"])
        .assert()
        .code(0);
    // A name .fwf cannot declare (IR text takes `-` in names).
    let ir = fs::read_to_string(dir.join("tiny.fwir"))
        .unwrap()
        .replace("workflow tiny\n", "workflow tiny-x\n");
    let name = register(dir, &ir);
    let out = stdout_of(factory(dir).args(["evolve", "promote", &name, "--as", "tinyx"]));
    assert!(
        out.contains("no .fwf was written: workflow `tiny-x` cannot be written as .fwf: its name is not a .fwf name"),
        "{out}"
    );
    let workflows = dir.join(".factory/workflows");
    assert!(workflows.join("tinyx.fwir").is_file());
    assert!(!workflows.join("tinyx.fwf").exists());
    factory(dir).args(["run", "tinyx"]).assert().code(0);
    assert!(dir.join(".factory/one.txt").is_file());
}
