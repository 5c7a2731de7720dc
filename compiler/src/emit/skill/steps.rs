//! What each step of a skill says, by node kind: the command to run, what to check
//! afterwards, and where the run goes next. Everything here is read from the IR alone.

use std::collections::BTreeMap;

use serde::Serialize;

use super::text::{code, one_line, shell_quote};
use crate::ir::conventions;
use crate::ir::{Artifact, Check, END, Edge, Evaluator, Ir, Label, Node, NodeKind};

/// One numbered step, ready for the template.
#[derive(Debug, Clone, Serialize)]
pub(super) struct StepView {
    pub number: usize,
    pub id: String,
    pub title: String,
    /// The node's `///` doc.
    pub doc: Option<String>,
    /// Sentences before the command.
    pub intro: Vec<String>,
    /// A shell command to run, shown as a code block.
    pub command: Option<String>,
    /// Bullet points after the command: reads, checks, limits.
    pub details: Vec<String>,
    /// A review checkpoint's verdicts and where each leads.
    pub outcomes: Vec<String>,
    /// Where to go next, and what to do on failure.
    pub next: Vec<String>,
}

/// The graph around the steps: numbers by node id, edges by source, parallel blocks.
pub(super) struct Context<'a> {
    ir: &'a Ir,
    pub numbers: BTreeMap<&'a str, usize>,
    out: BTreeMap<&'a str, Vec<&'a Edge>>,
    into: BTreeMap<&'a str, Vec<&'a Edge>>,
    /// Parallel blocks by id.
    parallels: BTreeMap<&'a str, &'a Node>,
    /// First and last step numbers of each parallel block's body (nested bodies
    /// included), found in one pass over the steps.
    body_ranges: BTreeMap<&'a str, (usize, usize)>,
    /// Nodes that run after an experiment is begun: their agents work in its worktree.
    in_experiment: std::collections::BTreeSet<&'a str>,
    /// Nodes that begin an experiment.
    begins: Vec<&'a str>,
}

impl<'a> Context<'a> {
    pub fn new(ir: &'a Ir, order: &[&'a Node]) -> Context<'a> {
        let numbers = order
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i + 1))
            .collect();
        let mut out: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
        let mut into: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
        for e in &ir.edges {
            out.entry(e.from.as_str()).or_default().push(e);
            into.entry(e.to.as_str()).or_default().push(e);
        }
        let parallels = ir
            .nodes
            .iter()
            .filter(|p| p.kind == NodeKind::Parallel)
            .map(|p| (p.id.as_str(), p))
            .collect();
        let mut body_ranges: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (i, n) in order.iter().enumerate() {
            // Up the `in` chain, at most once per node (a cycle in hostile IR ends).
            let mut at = n.parallel.as_deref();
            for _ in 0..ir.nodes.len() {
                let Some(p) = at else { break };
                let (lo, hi) = body_ranges.entry(p).or_insert((usize::MAX, 0));
                (*lo, *hi) = ((*lo).min(i + 1), (*hi).max(i + 1));
                at = ir.node(p).and_then(|q| q.parallel.as_deref());
            }
        }
        let in_experiment = after_begin(ir, &out);
        let begins = ir
            .nodes
            .iter()
            .filter(|n| conventions::begins_experiment(n))
            .map(|n| n.id.as_str())
            .collect();
        Context {
            ir,
            begins,
            numbers,
            out,
            into,
            parallels,
            body_ranges,
            in_experiment,
        }
    }

    /// Whether a node of parallel block `parallel`'s body begins an experiment.
    fn body_begins_experiment(&self, parallel: &str) -> bool {
        self.begins.iter().any(|id| self.ir.in_body(parallel, id))
    }

    /// ` --exp {{exp_id}}` for an agent that works on the experiment begun before it.
    fn exp_flag(&self, id: &str) -> &'static str {
        if self.in_experiment.contains(id) {
            " --exp {{exp_id}}"
        } else {
            ""
        }
    }

    fn edges_from(&self, id: &str) -> &[&'a Edge] {
        self.out.get(id).map(Vec::as_slice).unwrap_or(&[])
    }

    fn edges_into(&self, id: &str) -> &[&'a Edge] {
        self.into.get(id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// "step 4 (`builder`)", or the end of the workflow.
    fn step_ref(&self, id: &str) -> String {
        if id == END {
            return "the end of the workflow".to_string();
        }
        match self.numbers.get(id) {
            Some(n) => format!("step {n} ({})", code(id)),
            None => code(id),
        }
    }

    fn step_refs(&self, ids: &[&str]) -> String {
        let mut ids: Vec<&str> = ids.to_vec();
        ids.sort_by_key(|id| (self.numbers.get(id).copied().unwrap_or(usize::MAX), *id));
        ids.dedup();
        let refs: Vec<String> = ids.iter().map(|id| self.step_ref(id)).collect();
        join_and(&refs)
    }

    /// The innermost parallel block whose body holds `id`.
    pub fn parallel_of(&self, id: &str) -> Option<&'a Node> {
        let p = self.ir.node(id)?.parallel.as_deref()?;
        self.parallels.get(p).copied()
    }

    /// First and last step numbers of a parallel block's body (nested bodies included).
    fn body_range(&self, parallel: &str) -> Option<(usize, usize)> {
        self.body_ranges.get(parallel).copied()
    }
}

/// Every node reachable from a node that begins an experiment (not the begin itself).
fn after_begin<'a>(
    ir: &'a Ir,
    out: &BTreeMap<&'a str, Vec<&'a Edge>>,
) -> std::collections::BTreeSet<&'a str> {
    let mut seen = std::collections::BTreeSet::new();
    let mut work: Vec<&str> = ir
        .nodes
        .iter()
        .filter(|n| conventions::begins_experiment(n))
        .map(|n| n.id.as_str())
        .collect();
    while let Some(id) = work.pop() {
        for e in out.get(id).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(e.to.as_str()) {
                work.push(e.to.as_str());
            }
        }
    }
    seen
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn artifact(a: &Artifact) -> String {
    match &a.name {
        Some(name) => format!("{} ({name})", code(&a.path)),
        None => code(&a.path),
    }
}

/// The sentence before a command, or what to say when the node has none.
fn run_sentence(has_command: bool, lead: &str) -> String {
    if has_command {
        format!("{lead}; a non-zero exit status is a failure:")
    } else {
        "This step names no command: there is nothing to run.".to_string()
    }
}

fn check_text(c: &Check) -> String {
    match c {
        Check::Exists => "exists".to_string(),
        Check::MinSize(n) => format!("is at least {n} bytes"),
        Check::Contains(t) => format!("contains {}", code(t)),
    }
}

fn count_text(node: &Node) -> String {
    match (node.attrs.count, &node.attrs.count_knob) {
        (Some(n), Some(k)) => format!("{n} (knob `{k}`)"),
        (Some(n), None) => n.to_string(),
        (None, Some(k)) => format!("the value of knob `{k}`"),
        (None, None) => "one per hypothesis".to_string(),
    }
}

/// The verdicts a gate can emit: its `outcomes`, else its evaluator's default set.
fn gate_outcomes(node: &Node) -> Vec<Label> {
    if !node.attrs.outcomes.is_empty() {
        return node.attrs.outcomes.clone();
    }
    match node.attrs.evaluator {
        Some(Evaluator::Fn) => vec![Label::Proceed, Label::Halt],
        _ => vec![Label::Proceed, Label::Reloop, Label::Halt],
    }
}

pub(super) fn build(cx: &Context<'_>, node: &Node) -> StepView {
    let a = &node.attrs;
    let number = cx.numbers.get(node.id.as_str()).copied().unwrap_or(0);
    let mut step = StepView {
        number,
        id: node.id.clone(),
        title: String::new(),
        doc: a.doc.as_ref().map(|d| d.trim().to_string()),
        intro: Vec::new(),
        command: None,
        details: Vec::new(),
        outcomes: Vec::new(),
        next: Vec::new(),
    };
    let role = a.role.clone().unwrap_or_else(|| node.id.clone());
    match node.kind {
        NodeKind::Agent => {
            step.title = format!("{} — agent ({role})", code(&node.id));
            let task = match &a.task {
                Some(t) => one_line(t),
                None => format!("Act as {role} for step {}.", node.id),
            };
            step.intro
                .push(format!("Run the {} agent with this task:", code(&role)));
            let reads: Vec<&str> = a.reads.iter().map(|r| r.path.as_str()).collect();
            let writes: Vec<&str> = a.writes.iter().map(|w| w.path.as_str()).collect();
            step.command = Some(format!(
                "factory agent {role}{} --node {}{} --task {}",
                cx.exp_flag(&node.id),
                node.id,
                artifact_flags(&reads, &writes),
                shell_quote(&task)
            ));
        }
        NodeKind::Fn => {
            step.title = format!("{} — command", code(&node.id));
            step.command = a.run.as_deref().map(one_line);
            step.intro
                .push(run_sentence(step.command.is_some(), "Run this command"));
        }
        NodeKind::Study => {
            step.title = format!("{} — study", code(&node.id));
            step.command = a.run.as_deref().map(one_line);
            step.intro.push(run_sentence(
                step.command.is_some(),
                "Gather evidence before any plan is made: run this command",
            ));
        }
        NodeKind::Llm => {
            step.title = format!("{} — model call", code(&node.id));
            match a.prompt.as_ref().or(a.task.as_ref()) {
                Some(p) => {
                    step.intro.push(
                        "Ask the model directly (one call, no agent loop) with this prompt, \
                         and save its answer where the step writes:"
                            .to_string(),
                    );
                    step.intro.push(format!("> {}", one_line(p)));
                }
                None => step.intro.push(
                    "Ask the model directly (one call, no agent loop) for what the step's \
                     doc describes, and save its answer where the step writes."
                        .to_string(),
                ),
            }
        }
        NodeKind::Gate => gate(cx, node, &mut step),
        NodeKind::Fork => {
            step.title = format!("{} — start in parallel", code(&node.id));
            let branches: Vec<&str> = cx
                .edges_from(&node.id)
                .iter()
                .filter(|e| e.label.is_none())
                .map(|e| e.to.as_str())
                .collect();
            step.intro.push(format!(
                "Run these steps in parallel, each on its own (start them all, do not wait \
                 between them): {}.",
                cx.step_refs(&branches)
            ));
        }
        NodeKind::Join => {
            step.title = format!("{} — wait for the parallel steps", code(&node.id));
            let from: Vec<&str> = cx
                .edges_into(&node.id)
                .iter()
                .filter(|e| e.label != Some(Label::Reloop))
                .map(|e| e.from.as_str())
                .collect();
            step.intro.push(format!(
                "Wait until every parallel branch has finished: {}. Continue only when all \
                 of them have.",
                cx.step_refs(&from)
            ));
        }
        NodeKind::Parallel => parallel(cx, node, &mut step),
        NodeKind::Select => select(cx, node, &mut step),
        NodeKind::Start | NodeKind::End => {
            step.title = code(&node.id);
        }
    }
    if let Some(p) = cx.parallel_of(&node.id) {
        step.intro.insert(
            0,
            format!(
                "In each worktree of step {} ({}), independently:",
                cx.numbers.get(p.id.as_str()).copied().unwrap_or(0),
                code(&p.id)
            ),
        );
    }
    if a.is_async {
        // The run ends only once an async node has finished too.
        let last = cx.edges_from(&node.id).iter().all(|e| e.to == END);
        let said = if last {
            "**Runs in the background:** start it; nothing else waits for it, but the \
             workflow is finished only when it has, so do its checks once it has."
        } else {
            "**Does not block:** start it and continue with the next step at once; do not \
             wait for it to finish."
        };
        step.intro.insert(0, said.to_string());
    }
    details(node, &mut step);
    next(cx, node, &mut step);
    step
}

fn gate(cx: &Context<'_>, node: &Node, step: &mut StepView) {
    let a = &node.attrs;
    let number = step.number;
    let question = a.question.as_deref().map(one_line).unwrap_or_default();
    step.title = format!("{} — review checkpoint", code(&node.id));
    match a.evaluator {
        Some(Evaluator::Fn) => {
            step.intro.push(format!(
                "Decide {}: run this command. Exit status 0 means **proceed**; any other \
                 means **halt**.",
                if question.is_empty() {
                    "whether to go on".to_string()
                } else {
                    format!("\"{question}\"")
                }
            ));
            step.command = a.run.as_deref().map(one_line);
        }
        Some(Evaluator::User) => {
            step.intro
                .push("Ask the user this question and wait for the answer:".to_string());
            step.intro.push(format!("> {question}"));
            step.intro.push(
                "Show them what the earlier steps produced, and accept one of the verdicts \
                 below."
                    .to_string(),
            );
        }
        Some(Evaluator::Agent) | None => {
            let role = conventions::gate_role(node).to_string();
            // The gate's own verdict file when it declares one, so the checks agree.
            let verdict = conventions::verdict_file(node).unwrap_or_default();
            // The task the executor gives a gate's agent; what to read and where the
            // verdict goes are flags, resolved to full paths in the agent's prompt.
            let mut task = format!("Review checkpoint {}: {question}", node.id);
            if let Some(t) = &a.task {
                task.push_str(&format!(" {}", one_line(t)));
            }
            let reads: Vec<&str> = a.reads.iter().map(|r| r.path.as_str()).collect();
            step.intro
                .push(format!("The {} agent answers this question:", code(&role)));
            step.intro.push(format!("> {question}"));
            step.command = Some(format!(
                "factory agent {role}{} --node {}{} --verdict {} --task {}",
                cx.exp_flag(&node.id),
                node.id,
                artifact_flags(&reads, &[]),
                path_arg(&verdict),
                shell_quote(&task)
            ));
            step.details.push(format!(
                "Then read the verdict in {}: the line under its `## Verdict` heading (PROCEED, RELOOP or HALT).",
                code(&verdict)
            ));
        }
    }
    let declared = gate_outcomes(node);
    for outcome in [Label::Proceed, Label::Reloop, Label::Halt] {
        let edges: Vec<&Edge> = cx
            .edges_from(&node.id)
            .iter()
            .copied()
            .filter(|e| e.label.unwrap_or(Label::Proceed) == outcome)
            .collect();
        if edges.is_empty() && declared.contains(&outcome) {
            step.outcomes.push(format!(
                "**{outcome}** → no step is given for it: stop the run and report it."
            ));
        }
        for e in edges {
            let line = match outcome {
                Label::Reloop => {
                    let bound = match (e.max, &e.max_knob) {
                        (Some(n), Some(k)) => format!("at most {n} times (knob `{k}`)"),
                        (Some(n), None) => format!("at most {n} times"),
                        (None, Some(k)) => format!("at most as many times as knob `{k}` says"),
                        (None, None) => "a bounded number of times".to_string(),
                    };
                    let back = cx.numbers.get(e.to.as_str()).is_some_and(|&n| n < number);
                    format!(
                        "**reloop** → go {}to {}, {bound}; after that, treat a reloop \
                         verdict as halt.",
                        if back { "back " } else { "" },
                        cx.step_ref(&e.to)
                    )
                }
                Label::Halt if e.to == END => "**halt** → stop: the workflow ends here.".into(),
                other => format!("**{other}** → go to {}.", cx.step_ref(&e.to)),
            };
            step.outcomes.push(line);
        }
    }
}

fn parallel(cx: &Context<'_>, node: &Node, step: &mut StepView) {
    step.title = format!("{} — fan out, one branch per hypothesis", code(&node.id));
    let count = count_text(node);
    step.intro.push(format!(
        "Run the steps below once per hypothesis of the plan (its `## Hypothesis 1` … \
         sections in `.factory/strategy/current.md`; {count}), each copy on its own:"
    ));
    if let Some((first, last)) = cx.body_range(&node.id) {
        let range = if first == last {
            format!("step {first}")
        } else {
            format!("steps {first} to {last}")
        };
        step.details.push(format!(
            "In each copy of {range}, `{{{{hypothesis}}}}` is that hypothesis's text; the \
             copies may run at the same time."
        ));
    }
    if cx.body_begins_experiment(&node.id) {
        step.details.push(
            "Each copy's `factory begin` makes that hypothesis's own experiment, branch and \
             worktree and prints its `{{exp_id}}`, which the copy's later steps use: never \
             create a worktree or branch by hand, and never touch another copy's worktree."
                .to_string(),
        );
    }
}

fn select(cx: &Context<'_>, node: &Node, step: &mut StepView) {
    step.title = format!("{} — keep the best branch", code(&node.id));
    let block = cx
        .edges_into(&node.id)
        .iter()
        .find_map(|e| cx.parallel_of(&e.from));
    let from = match block {
        Some(p) => format!(
            "every worktree of step {} ({})",
            cx.numbers.get(p.id.as_str()).copied().unwrap_or(0),
            code(&p.id)
        ),
        None => "every worktree".to_string(),
    };
    let strategy = node.attrs.strategy.as_deref().unwrap_or("best_score");
    step.intro.push(format!(
        "Wait for {from} to finish, then, for each branch's experiment that is still open \
         (a branch that failed was recorded as `revert` by its own steps), read its score \
         (selection: {}) from a fresh precheck:",
        code(strategy)
    ));
    step.command = Some(
        "factory precheck {{project_path}} --exp <id> --json   # for each open branch".to_string(),
    );
    step.details.push(
        "The passing branch (`passed: true`) with the highest `score` is the winner: its id is \
         `{{exp_id}}` from here on. Record every other passing branch with `factory finalize \
         {{project_path}} --id <id> --verdict superseded --superseded-by {{exp_id}}`, and a \
         failing one with `--verdict revert`; factory removes their worktrees, so never \
         remove one by hand."
            .to_string(),
    );
}

fn details(node: &Node, step: &mut StepView) {
    let a = &node.attrs;
    if !a.reads.is_empty() {
        let reads: Vec<String> = a.reads.iter().map(artifact).collect();
        let what = if node.kind == NodeKind::Gate {
            "Under review"
        } else {
            "Reads"
        };
        // First, before anything the step's kind added.
        step.details
            .insert(0, format!("{what}: {}.", reads.join(", ")));
    }
    let checks: Vec<String> = a.checks.iter().map(check_text).collect();
    for w in &a.writes {
        if checks.is_empty() {
            step.details.push(format!("Writes {}.", artifact(w)));
        } else {
            step.details.push(format!(
                "Check afterwards that {} {}.",
                artifact(w),
                join_and(&checks)
            ));
        }
    }
    if a.writes.is_empty() && !checks.is_empty() {
        step.details
            .push(format!("Check afterwards: {}.", join_and(&checks)));
    }
    if let Some(p) = &a.prompt
        && node.kind != NodeKind::Llm
    {
        step.details.push(format!(
            "Uses the prompt {} instead of the role's default prompt.",
            code(p)
        ));
    }
    if let Some(m) = &a.model {
        step.details.push(format!("Model: {}.", code(m)));
    }
    if let Some(r) = &a.runner {
        step.details.push(format!("Runner: {}.", code(r)));
    }
    if let Some(p) = a.placement {
        step.details
            .push(format!("Placement: {}.", code(p.as_str())));
    }
    if let Some(t) = a.timeout {
        step.details.push(format!(
            "Time limit: {t} seconds; running over is a failure."
        ));
    }
}

fn next(cx: &Context<'_>, node: &Node, step: &mut StepView) {
    let edges = cx.edges_from(&node.id);
    if !matches!(
        node.kind,
        NodeKind::Gate | NodeKind::Fork | NodeKind::Parallel
    ) {
        let to: Vec<&str> = edges
            .iter()
            .filter(|e| e.label.is_none())
            .map(|e| e.to.as_str())
            .collect();
        if !to.is_empty() {
            step.next.push(format!("Next: {}.", cx.step_refs(&to)));
        }
    }
    let fail: Vec<&str> = edges
        .iter()
        .filter(|e| e.label == Some(Label::Fail))
        .map(|e| e.to.as_str())
        .collect();
    let fails = match node.kind {
        NodeKind::Agent | NodeKind::Fn | NodeKind::Study | NodeKind::Llm => true,
        // A user's or a command's verdict is never a failure; an agent can fail to give one.
        NodeKind::Gate => matches!(node.attrs.evaluator, Some(Evaluator::Agent) | None),
        _ => false,
    };
    if !fail.is_empty() {
        step.next.push(format!(
            "If it fails (a non-zero exit, a failed check or a timeout): go to {}.",
            cx.step_refs(&fail)
        ));
    } else if fails {
        step.next
            .push("If it fails: stop the run and report what failed.".to_string());
    }
}

/// The `--reads`/`--writes` flags of an agent step: what the executor lists in the
/// agent's prompt and keeps in the experiment's evidence, so a step run by hand does
/// the same.
fn artifact_flags(reads: &[&str], writes: &[&str]) -> String {
    let mut out = String::new();
    for r in reads {
        out.push_str(&format!(" --reads {}", path_arg(r)));
    }
    for w in writes {
        out.push_str(&format!(" --writes {}", path_arg(w)));
    }
    out
}

/// A path as a shell word: bare when it is plain, quoted otherwise.
fn path_arg(p: &str) -> String {
    let plain = p
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/-{}".contains(c));
    if plain { p.to_string() } else { shell_quote(p) }
}
