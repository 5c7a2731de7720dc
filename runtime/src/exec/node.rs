//! Running one node: render its templates, run its command or agent, read a gate's
//! verdict, and check its declared writes. Each node kind's behaviour is here; the
//! driver only schedules.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use factory_compiler::ir::{Evaluator, Label, Node, NodeKind};
use serde_json::Value;

use super::artifacts::{self, Roots};
use super::failure::NodeFailure;
use super::graph::Graph;
use super::machine::NodeResult;
use super::template::{self, TemplateContext};
use crate::project::layout::FactoryPaths;
use crate::sys::async_process::{self, AsyncOutput, ProcessSpec};

use crate::user_config::resolve::DEFAULT_NODE_TIMEOUT;

/// What every node of a run shares.
#[derive(Clone)]
pub struct NodeEnv {
    /// The user's config and factory.md's agent settings (model, timeout per role).
    pub layers: crate::user_config::resolve::Layers,
    pub project: PathBuf,
    pub run_id: String,
    pub goal: String,
    /// Knob values by name (defaults, or overrides).
    pub knobs: Value,
    pub auto_approve: bool,
    /// The agent runner; `None` when the run was started without one.
    pub runner: Option<Arc<dyn crate::runners::Runner>>,
    /// Prepended to PATH so `factory …` in a mode's commands is this factory.
    pub bin_dir: Option<PathBuf>,
    /// The run's runner as environment (`FACTORY_RUNNER`, …), so a command that calls
    /// `factory agent` or `factory run` uses the same one.
    pub runner_env: Vec<(String, String)>,
    /// Where the run is shown.
    pub view: super::view::View,
    /// Set for the nodes of a parallel branch.
    pub branch: Option<BranchCx>,
    /// Where the run's agent nodes run (a node's `placement:` wins).
    pub placement: crate::placement::Placement,
    /// The probed sandbox, when the run uses one (`None` on the host, or after the
    /// probe failed and the run fell back).
    pub sandbox: Option<Arc<crate::placement::Sandbox>>,
}

impl NodeEnv {
    /// Where the gate's commands run: in the sandbox when the run is placed there and
    /// its probe passed, else on the host.
    pub fn gate_placement(&self) -> crate::placement::Placement {
        use crate::placement::Placement;
        if self.placement == Placement::Sandbox && self.sandbox.is_some() {
            Placement::Sandbox
        } else {
            Placement::Host
        }
    }
}

/// What a parallel branch's nodes see besides the run's: the hypothesis it tests,
/// its own `.factory/` files, and the experiment it was given.
#[derive(Debug, Clone)]
pub struct BranchCx {
    /// 1-based position of its hypothesis in the plan.
    pub index: usize,
    /// The hypothesis, on one line (`{{hypothesis}}`).
    pub hypothesis: String,
    /// Its experiment, begun before the branch started.
    pub exp_id: u32,
    /// The key the experiment was begun with: `factory begin` in the branch returns it.
    pub run_key: String,
    /// Its own `.factory/` (reviews, verdicts, its plan, its checkpoint).
    pub overlay: PathBuf,
}

/// What a node did.
#[derive(Debug, Clone)]
pub struct NodeReport {
    pub result: NodeResult,
    /// Values later nodes may use (`exp_id`, `branch`, `worktree`).
    pub vars: BTreeMap<String, String>,
    /// The agent failed to run (counts toward the consecutive-failure abort).
    pub spawn_failure: bool,
    /// The role, when the node invoked an agent.
    pub agent: Option<String>,
    /// The node's declared writes: `(as declared, where on disk)`, for the experiment's
    /// evidence.
    pub outputs: Vec<(String, PathBuf)>,
}

impl NodeReport {
    pub fn done() -> Self {
        Self {
            result: NodeResult::Done,
            vars: BTreeMap::new(),
            spawn_failure: false,
            agent: None,
            outputs: Vec::new(),
        }
    }
    pub fn failed(reason: NodeFailure) -> Self {
        Self {
            result: NodeResult::failed(reason),
            vars: BTreeMap::new(),
            spawn_failure: false,
            agent: None,
            outputs: Vec::new(),
        }
    }
    fn verdict(label: Label) -> Self {
        Self {
            result: NodeResult::Verdict { verdict: label },
            vars: BTreeMap::new(),
            spawn_failure: false,
            agent: None,
            outputs: Vec::new(),
        }
    }
}

/// The context a node's templates render from.
pub struct NodeCx<'a> {
    pub env: &'a NodeEnv,
    pub node: &'a Node,
    pub visit: u32,
    pub vars: &'a BTreeMap<String, String>,
    pub roots: Roots,
    pub templates: TemplateContext,
}

impl<'a> NodeCx<'a> {
    pub fn new(
        env: &'a NodeEnv,
        node: &'a Node,
        visit: u32,
        vars: &'a BTreeMap<String, String>,
        last_verdict: Option<Label>,
    ) -> Self {
        let worktree = vars
            .get("worktree")
            .map(PathBuf::from)
            .filter(|p| p.is_dir());
        let roots = Roots {
            project: env.project.clone(),
            worktree,
            overlay: env.branch.as_ref().map(|b| b.overlay.clone()),
        };
        let mut t = TemplateContext::default();
        t.set("project_path", env.project.display().to_string());
        t.set("run_id", env.run_id.as_str());
        t.set("goal", env.goal.as_str());
        t.set("iteration", visit);
        t.set("node", node.id.as_str());
        t.set("knobs", env.knobs.clone());
        let hypothesis = match &env.branch {
            Some(b) => b.hypothesis.clone(),
            None => hypothesis(&env.project).unwrap_or_else(|| env.goal.clone()),
        };
        t.set("hypothesis", hypothesis);
        if let Some(v) = last_verdict {
            t.set("verdict", v.as_str());
        }
        for (k, v) in vars {
            t.set(k, v.as_str());
        }
        Self {
            env,
            node,
            visit,
            vars,
            roots,
            templates: t,
        }
    }

    /// The environment every command and agent of this node gets.
    pub fn base_env(&self) -> Vec<(String, String)> {
        use crate::project::child;
        let mut env = vec![
            (child::RUN_ID.to_string(), self.env.run_id.clone()),
            (child::NODE.to_string(), self.node.id.clone()),
            (child::VISIT.to_string(), self.visit.to_string()),
            (
                child::PROJECT.to_string(),
                self.env.project.display().to_string(),
            ),
        ];
        for (key, var) in [
            (child::EXP_ID, "exp_id"),
            (child::WORKTREE, "worktree"),
            (child::BRANCH, "branch"),
        ] {
            if let Some(v) = self.vars.get(var) {
                env.push((key.to_string(), v.clone()));
            }
        }
        if let Some(b) = &self.env.branch {
            env.push((child::RUN_KEY.to_string(), b.run_key.clone()));
            env.push((
                crate::runners::replay::HYPOTHESIS_INDEX_ENV.to_string(),
                b.index.to_string(),
            ));
        }
        env.extend(self.env.runner_env.iter().cloned());
        if let Some(bin) = &self.env.bin_dir {
            let path = std::env::var("PATH").unwrap_or_default();
            env.push(("PATH".to_string(), format!("{}:{path}", bin.display())));
        }
        env
    }

    pub fn timeout(&self) -> Duration {
        self.node
            .attrs
            .timeout
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_NODE_TIMEOUT)
    }

    /// An agent node's timeout: `FACTORY_AGENT_TIMEOUT`, the node's own, config.toml,
    /// then the default (the user_config::resolve order).
    pub fn agent_timeout(&self) -> Duration {
        let default = DEFAULT_NODE_TIMEOUT.as_secs();
        let t = self
            .env
            .layers
            .agent_timeout(None, self.node.attrs.timeout, default);
        Duration::from_secs(t.value)
    }

    pub fn log_path(&self) -> PathBuf {
        super::checkpoint::run_dir(&FactoryPaths::new(&self.env.project), &self.env.run_id)
            .join("logs")
            .join(format!("{}.{}.log", self.node.id, self.visit))
    }

    /// Where the node's command may publish values (`FACTORY_VARS_FILE`).
    pub fn vars_path(&self) -> PathBuf {
        super::checkpoint::run_dir(&FactoryPaths::new(&self.env.project), &self.env.run_id)
            .join("vars")
            .join(format!("{}.{}.json", self.node.id, self.visit))
    }

    /// Renders `text`, naming the node and field when a variable is missing.
    pub fn render(&self, field: &str, text: &str) -> Result<String, NodeFailure> {
        template::render_text(text, &self.templates).map_err(|e| self.explain(field, text, e))
    }

    fn explain(&self, field: &str, text: &str, e: template::TemplateError) -> NodeFailure {
        let (node, field) = (self.node.id.clone(), field.to_string());
        let vars = template::missing_vars(text, &self.templates);
        if vars
            .iter()
            .any(|m| m == "exp_id" || m == "worktree" || m == "branch")
        {
            return NodeFailure::BeforeExperiment { node, field, vars };
        }
        NodeFailure::Template {
            node,
            field,
            error: e.to_string(),
        }
    }

    /// The node's declared writes, rendered: `(as declared, where on disk)`. A path
    /// that cannot be rendered is left out (its post-check says why).
    pub fn declared_outputs(&self) -> Vec<(String, PathBuf)> {
        self.node
            .attrs
            .writes
            .iter()
            .filter_map(|w| self.render("writes", &w.path).ok())
            .map(|shown| {
                let path = self.roots.resolve(&shown);
                (shown, path)
            })
            .collect()
    }

    /// Runs the node's post-checks on each declared write.
    pub fn check_writes(&self) -> Result<(), NodeFailure> {
        for w in &self.node.attrs.writes {
            let shown = self.render("writes", &w.path)?;
            let path = self.roots.resolve(&shown);
            artifacts::verify(&path, &shown, &self.node.attrs.checks).map_err(|error| {
                NodeFailure::PostCheck {
                    node: self.node.id.clone(),
                    error,
                }
            })?;
        }
        Ok(())
    }
}

/// The first paragraph of the plan's `## Hypothesis` section, on one line.
fn hypothesis(project: &Path) -> Option<String> {
    let text = std::fs::read_to_string(project.join(".factory/strategy/current.md")).ok()?;
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim().eq_ignore_ascii_case("## Hypothesis"));
    lines.next()?;
    let para: Vec<&str> = lines
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    (!para.is_empty()).then(|| para.join(" "))
}

/// Runs node `i` of `graph` (its `visit`-th time).
pub async fn run(
    graph: &Graph,
    i: usize,
    visit: u32,
    env: &NodeEnv,
    vars: &BTreeMap<String, String>,
    last_verdict: Option<Label>,
) -> NodeReport {
    let node = graph.node(i);
    let cx = NodeCx::new(env, node, visit, vars, last_verdict);
    let mut report = match node.kind {
        NodeKind::Fn | NodeKind::Study => run_command(&cx).await.map(|_| NodeReport::done()),
        NodeKind::Gate => match node.attrs.evaluator {
            Some(Evaluator::Fn) => run_command(&cx).await.and_then(|out| {
                artifacts::fn_gate_verdict(&out.stdout, out.code)
                    .map(NodeReport::verdict)
                    .ok_or_else(|| NodeFailure::NoCommandVerdict {
                        node: node.id.clone(),
                        exit: out.exit_text(),
                        tail: out.tail(8),
                        log: cx.log_path(),
                    })
            }),
            // Waiting for a person blocks: keep it off the async threads.
            Some(Evaluator::User) => tokio::task::block_in_place(|| user_gate(&cx)),
            Some(Evaluator::Agent) | None => super::agents::run_gate(&cx).await,
        },
        NodeKind::Agent => super::agents::run_agent(&cx).await,
        NodeKind::Llm => Err(NodeFailure::NoModelRunner {
            node: node.id.clone(),
        }),
        NodeKind::Parallel => crate::exec::parallel::fanout::run(graph, i, &cx)
            .await
            .map_err(NodeFailure::parallel),
        NodeKind::Select => match crate::exec::parallel::select::Job::new(&cx) {
            // Git and the precheck block: off the async threads.
            Ok(job) => tokio::task::spawn_blocking(move || job.run())
                .await
                .unwrap_or_else(|e| Err(format!("the selection crashed: {e}")))
                .map_err(NodeFailure::parallel),
            Err(e) => Err(NodeFailure::parallel(e)),
        },
        NodeKind::Start | NodeKind::End | NodeKind::Fork | NodeKind::Join => Ok(NodeReport::done()),
    }
    .unwrap_or_else(NodeReport::failed);
    if !matches!(report.result, NodeResult::Failed { .. }) {
        // Gates check their verdict file in `run_gate`; fn gates declare no writes.
        if let Err(e) = cx.check_writes() {
            report = NodeReport {
                result: NodeResult::failed(e),
                ..report
            };
        }
    }
    if matches!(node.kind, NodeKind::Fn | NodeKind::Study) {
        report.vars.extend(published_vars(&cx));
    }
    report.outputs = cx.declared_outputs();
    report
}

/// Values the node's command published for later nodes: a command may write a JSON
/// object of strings to `$FACTORY_VARS_FILE` (`factory begin` writes the experiment's
/// `exp_id`, `branch` and `worktree` there). Exact under concurrency, and cheap.
fn published_vars(cx: &NodeCx<'_>) -> BTreeMap<String, String> {
    let Ok(bytes) = std::fs::read(cx.vars_path()) else {
        return BTreeMap::new();
    };
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&bytes) else {
        return BTreeMap::new();
    };
    map.into_iter()
        .map(|(k, v)| {
            (
                k,
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string()),
            )
        })
        .collect()
}

/// Runs a `fn` node's or gate's command in the project directory.
async fn run_command(cx: &NodeCx<'_>) -> Result<AsyncOutput, NodeFailure> {
    let node = || cx.node.id.clone();
    let Some(run) = &cx.node.attrs.run else {
        return Err(NodeFailure::NoCommand { node: node() });
    };
    let command =
        template::render_command(run, &cx.templates).map_err(|e| cx.explain("run", run, e))?;
    let mut env = cx.base_env();
    env.extend(command.env);
    let vars_file = cx.vars_path();
    if let Some(dir) = vars_file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::remove_file(&vars_file);
    env.push((
        crate::project::child::VARS_FILE.to_string(),
        vars_file.display().to_string(),
    ));
    let spec = ProcessSpec {
        env,
        timeout: Some(cx.timeout()),
        ..ProcessSpec::shell(&command.script, &cx.env.project)
    };
    let spec = confined(cx, spec)?;
    let out = async_process::run(&spec, &|_| {})
        .await
        .map_err(|e| NodeFailure::CommandSpawn {
            node: node(),
            error: e.to_string(),
        })?;
    if !out.success() || !out.stdout.is_empty() || !out.stderr.is_empty() {
        // A silent success has nothing to look at later; skipping it saves a file per node.
        write_log(&cx.log_path(), &command.script, &out);
    }
    if out.timed_out {
        return Err(NodeFailure::CommandTimeout {
            node: node(),
            secs: cx.timeout().as_secs(),
        });
    }
    let is_fn_gate = cx.node.kind == NodeKind::Gate;
    if !out.success() && !is_fn_gate {
        return Err(NodeFailure::CommandFailed {
            node: node(),
            exit: out.exit_text(),
            tail: out.tail(8),
            log: cx.log_path(),
        });
    }
    Ok(out)
}

/// `spec` in the sandbox when the node asks for one (`placement: sandbox`): its
/// experiment's worktree and its writes' directories writable, no network.
fn confined(cx: &NodeCx<'_>, mut spec: ProcessSpec) -> Result<ProcessSpec, NodeFailure> {
    use crate::placement::{self, Placement};
    if placement::for_node(cx.node, cx.env.placement) != Placement::Sandbox {
        return Ok(spec);
    }
    let Some(sandbox) = cx.env.sandbox.as_deref() else {
        return Ok(spec);
    };
    let mut outputs = Vec::new();
    for w in &cx.node.attrs.writes {
        outputs.push(cx.roots.resolve_write(&cx.render("writes", &w.path)?));
    }
    // The variables it may publish for later nodes.
    outputs.push(cx.vars_path());
    let policy = sandbox.command_policy(cx.roots.work_dir(), &cx.env.project, &outputs);
    let (program, args) =
        sandbox
            .confine(policy)
            .command(&spec.program, &spec.args, &spec.cwd, &[]);
    spec.program = program;
    spec.args = args;
    Ok(spec)
}

/// A `user` gate: a person answers on the terminal; headless only with --auto-approve.
fn user_gate(cx: &NodeCx<'_>) -> Result<NodeReport, NodeFailure> {
    if cx.env.auto_approve {
        return Ok(NodeReport::verdict(Label::Proceed));
    }
    let question = cx.node.attrs.question.as_deref().unwrap_or("Proceed?");
    let question = cx.render("question", question)?;
    if !std::io::stdin().is_terminal() {
        return Err(NodeFailure::NoTerminal {
            node: cx.node.id.clone(),
            question,
        });
    }
    eprintln!("\n{question}\n  [p]roceed, [r]eloop or [h]alt?");
    loop {
        let mut line = String::new();
        if std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| NodeFailure::Terminal {
                message: e.to_string(),
            })?
            == 0
        {
            return Err(NodeFailure::Terminal {
                message: "the terminal closed before an answer".into(),
            });
        }
        let label = match line.trim().to_ascii_lowercase().as_str() {
            "p" | "proceed" | "y" | "yes" => Label::Proceed,
            "r" | "reloop" => Label::Reloop,
            "h" | "halt" | "n" | "no" => Label::Halt,
            _ => {
                eprintln!("  answer p, r or h");
                continue;
            }
        };
        let allowed = &cx.node.attrs.outcomes;
        if allowed.is_empty() || allowed.contains(&label) {
            return Ok(NodeReport::verdict(label));
        }
        eprintln!(
            "  this gate can only answer {}",
            allowed
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Keeps a node's output under the run's logs, for post-mortems.
fn write_log(path: &Path, script: &str, out: &AsyncOutput) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let log = format!("$ {script}\n{}{}", out.stdout, out.stderr);
    let _ = std::fs::write(path, crate::sys::redact::redact(&log).as_bytes());
}
