//! An exported SKILL.md, followed literally, keeps the same contract as `factory run`.
//!
//! A small interpreter reads `factory skills export`'s SKILL.md for improve and does
//! exactly what each step says — runs its command with the template variables filled
//! in, reads a checkpoint's verdict where the step says, goes where the verdict leads —
//! with `factory agent` on a replay script. It must end in a keep whose work is on the
//! experiment's branch and whose QA the precheck accepted, with the user's checkout
//! untouched.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{DEMO, Project, head_commit as head, script_from};

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

/// The text of each `## Hypothesis …` section's first line of prose.
fn hypotheses(plan: &str) -> Vec<String> {
    plan.split("\n## Hypothesis")
        .skip(1)
        .filter_map(|h| h.lines().skip(1).map(str::trim).find(|l| !l.is_empty()))
        .map(str::to_string)
        .collect()
}

/// Does what a SKILL.md says, step by step, in a project.
struct Follower<'a> {
    p: &'a Project,
    steps: BTreeMap<usize, Step>,
    script: std::path::PathBuf,
    vars: BTreeMap<String, String>,
    /// Every experiment `factory begin` printed.
    begun: Vec<u32>,
    /// The scripted agents' stand-in for reading their experiment's `hypothesis.md`.
    hypothesis_index: Option<usize>,
    walked: usize,
}

impl<'a> Follower<'a> {
    fn new(p: &'a Project, mode: &str, script: &str) -> Self {
        let out = tempfile::tempdir().unwrap();
        let export = p.factory(&["skills", "export", "--out", out.path().to_str().unwrap()]);
        assert!(export.status.success(), "{export:?}");
        let skill =
            fs::read_to_string(out.path().join(format!("workflow-{mode}/SKILL.md"))).unwrap();
        let path = p.path().join(".factory/agents.yaml");
        fs::write(&path, script).unwrap();
        let mut vars = BTreeMap::new();
        vars.insert("project_path".to_string(), p.path().display().to_string());
        // "Settings": `- `name` = value (…)`, the knobs' current defaults.
        for line in skill
            .lines()
            .filter(|l| l.starts_with("- `") && l.contains("` = "))
        {
            let name = line[3..].split('`').next().unwrap();
            let value = line
                .split("` = ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            vars.insert(format!("knobs.{name}"), value.to_string());
        }
        Follower {
            p,
            steps: steps(&skill),
            script: path,
            vars,
            begun: Vec::new(),
            hypothesis_index: None,
            walked: 0,
        }
    }

    /// The command with its variables filled in as a careful person would: a value
    /// inside double quotes has `"`, `\\`, `$` and backticks escaped, so a hypothesis
    /// that mentions `word_count` stays text.
    fn fill(&self, command: &str) -> String {
        let mut out = command.to_string();
        for (k, v) in &self.vars {
            let quoted = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`");
            out = out.replace(&format!("\"{{{{{k}}}}}\""), &format!("\"{quoted}\""));
            out = out.replace(&format!("{{{{{k}}}}}"), v);
        }
        assert!(
            !out.contains("{{"),
            "a variable the skill never explained: {out}"
        );
        out
    }

    fn run(&self, command: &str) -> std::process::Output {
        let bin = assert_cmd::cargo::cargo_bin("factory");
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new("sh");
        c.args(["-c", command])
            .current_dir(self.p.path())
            .env("PATH", path)
            .env("FACTORY_HOME", self.p.home())
            .env("CARGO_TARGET_DIR", self.p.target())
            .env("FACTORY_RUNNER", "replay")
            .env("FACTORY_REPLAY_SCRIPT", &self.script)
            .env_remove("FACTORY_RUN_ID");
        if let Some(i) = self.hypothesis_index {
            c.env("FACTORY_HYPOTHESIS_INDEX", i.to_string());
        }
        c.output().unwrap()
    }

    /// Follows the steps from `from` to the end, or (with `within`) until a step outside
    /// that range, which it returns.
    fn walk(&mut self, from: usize, within: Option<(usize, usize)>) -> Option<usize> {
        let mut at = Some(from);
        while let Some(n) = at {
            if within.is_some_and(|(a, b)| n < a || n > b) {
                return Some(n);
            }
            self.walked += 1;
            assert!(self.walked < 200, "the skill loops");
            at = self.step(n);
        }
        None
    }

    /// Does step `n`; where it leads.
    fn step(&mut self, n: usize) -> Option<usize> {
        let text = self.steps[&n].text.clone();
        let title = text.lines().next().unwrap_or_default().to_string();
        if title.ends_with("start in parallel") {
            // "Run these steps in parallel": one after another is one legal order.
            let line = text
                .lines()
                .find(|l| l.starts_with("Run these steps"))
                .unwrap();
            let listed: Vec<usize> = line
                .split("step ")
                .skip(1)
                .filter_map(|s| s.split(' ').next()?.parse().ok())
                .collect();
            for k in &listed {
                self.step(*k);
            }
            return next_of(&self.steps[&listed[0]]);
        }
        if title.ends_with("wait for the parallel steps") {
            return next_of(&self.steps[&n]);
        }
        if title.ends_with("fan out, one branch per hypothesis") {
            let range = text.split("In each copy of steps ").nth(1).unwrap();
            let mut bounds = range
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty());
            let a: usize = bounds.next().unwrap().parse().unwrap();
            let b: usize = bounds.next().unwrap().parse().unwrap();
            let plan =
                fs::read_to_string(self.p.path().join(".factory/strategy/current.md")).unwrap();
            let mut exit = None;
            for (i, h) in hypotheses(&plan).into_iter().enumerate() {
                self.vars.insert("hypothesis".into(), h);
                self.hypothesis_index = Some(i + 1);
                exit = self.walk(a, Some((a, b)));
            }
            self.hypothesis_index = None;
            return exit;
        }
        if title.ends_with("keep the best branch") {
            return self.select(n);
        }
        let step = &self.steps[&n];
        if step.text.contains("{{hypothesis}}") && !self.vars.contains_key("hypothesis") {
            let plan =
                fs::read_to_string(self.p.path().join(".factory/strategy/current.md")).unwrap();
            self.vars
                .insert("hypothesis".into(), hypotheses(&plan)[0].clone());
        }
        let template = step
            .command
            .clone()
            .unwrap_or_else(|| panic!("step {n} runs nothing: {}", step.text));
        if template.contains("{{reason}}") {
            self.vars
                .insert("reason".into(), format!("step {n} was reached"));
        }
        let command = self.fill(&template);
        let done = self.run(&command);
        let said = format!(
            "step {n} `{command}`:\n{}{}",
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        );
        let step = &self.steps[&n];
        if command.starts_with("factory begin ") {
            let id: u32 = String::from_utf8_lossy(&done.stdout)
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("begin prints the id: {said}"));
            self.begun.push(id);
            self.vars.insert("exp_id".into(), id.to_string());
        }
        if step.text.contains("Exit status 0 means **proceed**") {
            return on_verdict(
                step,
                if done.status.success() {
                    "proceed"
                } else {
                    "halt"
                },
            );
        }
        assert!(done.status.success(), "{said}");
        if let Some(line) = step
            .text
            .lines()
            .find(|l| l.starts_with("- Then read the verdict in "))
        {
            let file = line.split('`').nth(1).unwrap();
            let text = fs::read_to_string(self.p.path().join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}: {said}"));
            let verdict = text
                .split("## Verdict")
                .nth(1)
                .and_then(|v| v.lines().map(str::trim).find(|l| !l.is_empty()))
                .unwrap()
                .to_lowercase();
            return on_verdict(step, &verdict);
        }
        next_of(step)
    }

    /// "Keep the best branch", as the step says: a fresh precheck of each open branch,
    /// the best passing one becomes `{{exp_id}}`, the other passing ones are superseded
    /// by it and the failing ones reverted.
    fn select(&mut self, n: usize) -> Option<usize> {
        let finalized: Vec<String> = self.p.results().iter().map(|r| r["id"].clone()).collect();
        let project = self.vars["project_path"].clone();
        let mut scored: Vec<(u32, bool, f64)> = Vec::new();
        for id in self.begun.clone() {
            if finalized.contains(&id.to_string()) {
                continue;
            }
            let out = self.run(&format!("factory precheck {project} --exp {id} --json"));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            scored.push((id, v["passed"] == true, v["score"].as_f64().unwrap_or(0.0)));
        }
        let winner = scored
            .iter()
            .filter(|s| s.1)
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .map(|s| s.0);
        let Some(winner) = winner else {
            let fail = self.steps[&n]
                .text
                .lines()
                .find(|l| l.starts_with("If it fails"))
                .unwrap();
            return step_after(fail);
        };
        for (id, passed, _) in scored.into_iter().filter(|s| s.0 != winner) {
            let verdict = if passed {
                format!("superseded --superseded-by {winner}")
            } else {
                "revert".to_string()
            };
            let out = self.run(&format!(
                "factory finalize {project} --id {id} --verdict {verdict}"
            ));
            assert!(out.status.success(), "{out:?}");
        }
        self.vars.insert("exp_id".into(), winner.to_string());
        next_of(&self.steps[&n])
    }
}

/// The demo's agents, keyed by role as `factory agent` looks them up: the researcher
/// serves both research steps, and the CEO says PROCEED in whichever verdict file its
/// step names.
fn agents_script(file: &str) -> String {
    let demo = Path::new(DEMO).join(file);
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
    // Each checkpoint's step passes its verdict file (`--verdict`): a verdict goes there.
    let ceo = r#"    - verdict: proceed
      rationale: Scripted.
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

#[test]
fn improve_followed_step_by_step_ends_in_a_keep_on_the_experiment_branch() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let main_before = head(p.path());
    // The baseline eval left a Cargo.lock; whatever is there stays as it is.
    let dirty_before = dirty(p.path());
    let mut follow = Follower::new(&p, "improve", &agents_script("replay.yaml"));
    assert_eq!(follow.walk(1, None), None, "the skill ends");

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
    // Its evidence is what a run by the executor keeps: each step's report, by node.
    let evidence =
        std::fs::read_to_string(p.path().join(".factory/experiments/001/evidence.jsonl"))
            .unwrap_or_default();
    for node in [
        "experiment.trial.builder",
        "experiment.trial.review",
        "experiment.trial.qa.review.code",
        "experiment.trial.qa.verdict",
        "archivist",
    ] {
        assert!(
            evidence.contains(&format!("\"node\":\"{node}\"")),
            "{node} in the evidence:\n{evidence}"
        );
    }
    let history = support::text(&p.factory(&["history"]).stdout);
    assert!(history.contains("evidence"), "{history}");
}

#[test]
fn parallel_improve_followed_step_by_step_keeps_the_best_branch() {
    let target = tempfile::tempdir().unwrap();
    let p = Project::demo(target.path());
    let main_before = head(p.path());
    let dirty_before = dirty(p.path());
    let mut follow = Follower::new(
        &p,
        "parallel-improve",
        &agents_script("replay-parallel.yaml"),
    );
    assert_eq!(follow.walk(1, None), None, "the skill ends");
    assert_eq!(follow.begun.len(), 3, "one experiment per hypothesis");

    // Each hypothesis had its own experiment; the best one is kept, on its own branch.
    let rows = p.results();
    let verdict = |id: u32| {
        rows.iter()
            .find(|r| r["id"] == id.to_string())
            .map(|r| r["verdict"].clone())
            .unwrap_or_default()
    };
    let kept: Vec<u32> = follow
        .begun
        .iter()
        .copied()
        .filter(|id| verdict(*id) == "keep")
        .collect();
    assert_eq!(kept.len(), 1, "{rows:?}");
    assert!(
        follow.begun.iter().all(|id| !verdict(*id).is_empty()),
        "every branch has a verdict: {rows:?}"
    );
    let repo = git2::Repository::open(p.path()).unwrap();
    let branch = repo
        .find_branch(
            &format!("factory/exp-{:03}", kept[0]),
            git2::BranchType::Local,
        )
        .unwrap();
    let tip = branch.get().peel_to_commit().unwrap();
    let hypothesis = fs::read_to_string(
        p.path()
            .join(format!(".factory/experiments/{:03}/hypothesis.md", kept[0])),
    )
    .unwrap();
    assert!(
        hypothesis.contains("HashMap"),
        "the best-scoring hypothesis won: {hypothesis} {rows:#?}"
    );
    assert_ne!(
        tip.id().to_string(),
        main_before,
        "the winner's work is on its branch"
    );
    assert_eq!(head(p.path()), main_before, "nothing was committed on main");
    assert_eq!(dirty(p.path()), dirty_before, "the checkout is as it was");
}
