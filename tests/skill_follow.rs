//! An exported SKILL.md, followed literally, keeps the same contract as `factory run`.
//!
//! A small interpreter reads `factory skills export`'s SKILL.md for improve and does
//! exactly what each step says — runs its command with the template variables filled
//! in, reads a checkpoint's verdict where the step says, goes where the verdict leads —
//! with `factory agent` on a replay script. It must end in a keep whose work is on the
//! experiment's branch and whose QA the precheck accepted, with the user's checkout
//! untouched.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use support::{DEMO, Project, script_from};

/// One step of a SKILL.md, as a person reads it.
#[derive(Debug, Default)]
struct Step {
    number: usize,
    text: String,
    command: Option<String>,
}

fn steps(skill: &str) -> BTreeMap<usize, Step> {
    let mut out = BTreeMap::new();
    for chunk in skill.split("\n### Step ").skip(1) {
        let number: usize = chunk
            .split(':')
            .next()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("a step heading: {chunk:.80}"));
        let text = chunk.split("\n## ").next().unwrap_or(chunk).to_string();
        let command = text
            .split("```sh\n")
            .nth(1)
            .and_then(|c| c.split("\n```").next())
            .map(str::to_string);
        out.insert(
            number,
            Step {
                number,
                text,
                command,
            },
        );
    }
    out
}

/// The step number after "go to step N", "go back to step N" or "Next: step N".
fn step_after(line: &str) -> Option<usize> {
    let at = line.find("step ")?;
    line[at + 5..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Where the step's verdict `label` (proceed, reloop, halt) leads; `None` is the end.
fn on_verdict(step: &Step, label: &str) -> Option<usize> {
    let line = step
        .text
        .lines()
        .find(|l| l.starts_with(&format!("- **{label}** →")))
        .unwrap_or_else(|| panic!("step {} lists no {label}: {}", step.number, step.text));
    step_after(line.split('→').nth(1).unwrap_or(""))
}

fn next_of(step: &Step) -> Option<usize> {
    let line = step
        .text
        .lines()
        .find(|l| l.starts_with("Next: "))
        .unwrap_or_else(|| panic!("step {} has no Next: {}", step.number, step.text));
    step_after(line)
}

fn fill(command: &str, vars: &BTreeMap<&str, String>) -> String {
    let mut out = command.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    assert!(
        !out.contains("{{"),
        "a variable the skill never explained: {out}"
    );
    out
}

/// The demo's agents, keyed by role as `factory agent` looks them up: the researcher
/// serves both research steps, and the CEO writes PROCEED wherever its task says.
fn agents_script() -> String {
    let demo = Path::new(DEMO).join("replay.yaml");
    let explorer = fs::read_to_string(&demo).unwrap();
    let graph_context = explorer
        .split("  study.explorer:\n    - write:\n")
        .nth(1)
        .and_then(|r| r.split("      print:").next())
        .unwrap()
        .to_string();
    let research = explorer
        .split("  researcher:\n    - write:\n")
        .nth(1)
        .and_then(|r| r.split("      print:").next())
        .unwrap()
        .to_string();
    let researcher = format!("    - write:\n{graph_context}{research}      print: done\n");
    let ceo = r#"    - run:
        - |
          v=$(printf '%s' "$FACTORY_TASK" | sed -n 's/.*Write your verdict to \([^:]*\): PROCEED.*/\1/p'); test -n "$v"; printf '# Verdict\n\n## Verdict\nPROCEED\n\n## Rationale\nScripted.\n' > "$FACTORY_PROJECT/$v"
      print: proceed
"#;
    script_from(&demo, &[("researcher", &researcher), ("ceo", ceo)])
}

/// Paths git reports as changed or untracked outside `.factory/`, with their bytes.
fn dirty(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let repo = git2::Repository::open(dir).unwrap();
    let statuses = repo.statuses(None).unwrap();
    statuses
        .iter()
        .filter_map(|s| s.path().ok().map(str::to_string))
        .filter(|p| !p.starts_with(".factory"))
        .map(|p| {
            let bytes = fs::read(dir.join(&p)).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

fn head(dir: &Path) -> String {
    git2::Repository::open(dir)
        .unwrap()
        .head()
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
        .to_string()
}

#[test]
fn improve_followed_step_by_step_ends_in_a_keep_on_the_experiment_branch() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let main_before = head(p.path());
    // The baseline eval left a Cargo.lock; whatever is there stays as it is.
    let dirty_before = dirty(p.path());
    let out = tempfile::tempdir().unwrap();
    let export = p.factory(&["skills", "export", "--out", out.path().to_str().unwrap()]);
    assert!(export.status.success(), "{export:?}");
    let skill = fs::read_to_string(out.path().join("workflow-improve/SKILL.md")).unwrap();
    let steps = steps(&skill);
    let script = p.path().join(".factory/agents.yaml");
    fs::write(&script, agents_script()).unwrap();

    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    vars.insert("project_path", p.path().display().to_string());
    let run = |command: &str| {
        Command::new("sh")
            .args(["-c", command])
            .current_dir(p.path())
            .env("PATH", {
                let bin = assert_cmd::cargo::cargo_bin("factory");
                format!(
                    "{}:{}",
                    bin.parent().unwrap().display(),
                    std::env::var("PATH").unwrap_or_default()
                )
            })
            .env("FACTORY_HOME", p.home())
            .env("CARGO_TARGET_DIR", p.target())
            .env("FACTORY_RUNNER", "replay")
            .env("FACTORY_REPLAY_SCRIPT", &script)
            .env_remove("FACTORY_RUN_ID")
            .output()
            .unwrap()
    };
    let mut at = Some(1);
    let mut walked = 0;
    let mut pending_join: Vec<usize> = Vec::new();
    while let Some(n) = at {
        walked += 1;
        assert!(walked < 80, "the skill loops");
        let step = &steps[&n];
        let title = step.text.lines().next().unwrap_or_default().to_string();
        if title.ends_with("start in parallel") {
            // "Run these steps in parallel": one after another is one legal order.
            let line = step
                .text
                .lines()
                .find(|l| l.starts_with("Run these steps"))
                .unwrap();
            pending_join = line
                .split("step ")
                .skip(1)
                .filter_map(|s| s.split(' ').next()?.parse().ok())
                .collect();
            at = pending_join.first().copied();
            continue;
        }
        if title.ends_with("wait for the parallel steps") {
            at = next_of(step);
            continue;
        }
        if step.text.contains("{{hypothesis}}")
            || step
                .command
                .as_deref()
                .is_some_and(|c| c.contains("{{hypothesis}}"))
        {
            let plan = fs::read_to_string(p.path().join(".factory/strategy/current.md")).unwrap();
            let hypothesis = plan
                .split("## Hypothesis")
                .nth(1)
                .and_then(|h| h.lines().map(str::trim).find(|l| !l.is_empty()))
                .unwrap()
                .to_string();
            vars.insert("hypothesis", hypothesis);
        }
        if step
            .command
            .as_deref()
            .is_some_and(|c| c.contains("{{reason}}"))
        {
            vars.insert("reason", format!("step {n} was reached"));
        }
        let command = fill(
            step.command
                .as_deref()
                .unwrap_or_else(|| panic!("step {n} runs nothing: {}", step.text)),
            &vars,
        );
        let done = run(&command);
        let said = format!(
            "step {n} `{command}`:\n{}{}",
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        );
        if command.starts_with("factory begin ") {
            let id = String::from_utf8_lossy(&done.stdout).trim().to_string();
            assert!(id.parse::<u32>().is_ok(), "begin prints the id: {said}");
            vars.insert("exp_id", id);
        }
        at = if step.text.contains("Exit status 0 means **proceed**") {
            on_verdict(
                step,
                if done.status.success() {
                    "proceed"
                } else {
                    "halt"
                },
            )
        } else if let Some(line) = step
            .text
            .lines()
            .find(|l| l.starts_with("- Then read the verdict in "))
        {
            assert!(done.status.success(), "{said}");
            let file = line.split('`').nth(1).unwrap();
            let text = fs::read_to_string(p.path().join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}: {said}"));
            let verdict = text
                .split("## Verdict")
                .nth(1)
                .and_then(|v| v.lines().map(str::trim).find(|l| !l.is_empty()))
                .unwrap()
                .to_lowercase();
            on_verdict(step, &verdict)
        } else {
            assert!(done.status.success(), "{said}");
            if let Some(i) = pending_join.iter().position(|s| *s == n) {
                // The next parallel step, or the join after the last.
                match pending_join.get(i + 1) {
                    Some(next) => Some(*next),
                    None => {
                        pending_join.clear();
                        next_of(step)
                    }
                }
            } else {
                next_of(step)
            }
        };
    }

    // A keep, recorded by the gate, on the experiment's own branch.
    let rows = p.results();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["verdict"], "keep", "{rows:?}");
    let repo = git2::Repository::open(p.path()).unwrap();
    let branch = repo
        .find_branch("factory/exp-001", git2::BranchType::Local)
        .unwrap();
    let tip = branch.get().peel_to_commit().unwrap();
    assert_eq!(
        tip.summary().ok().flatten(),
        Some("Count words with a HashMap in most_frequent")
    );
    // The user's checkout and branch were never touched.
    assert_eq!(head(p.path()), main_before, "nothing was committed on main");
    assert_eq!(dirty(p.path()), dirty_before, "the checkout is as it was");
    // QA ran for the experiment, so the precheck could pass at all; the archivist ran
    // for it after the verdict.
    assert!(p.path().join(".factory/archive/experiment.md").is_file());
}
