//! The tools' arguments. Each field's doc comment is its description in the JSON
//! schema an agent reads, so it says what to pass and what happens when it is left out.

use schemars::JsonSchema;
use serde::Deserialize;

/// Just the project.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ProjectArgs {
    /// The project's directory (a git repository with factory.md). Default: the
    /// directory `factory serve-mcp` was started for (`--project`, else its working
    /// directory).
    pub project: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct HistoryArgs {
    /// The project's directory; default: the server's project.
    pub project: Option<String>,
    /// Return only the most recent N finalized experiments (default: all).
    pub limit: Option<usize>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct EvalArgs {
    /// The project's directory; default: the server's project.
    pub project: Option<String>,
    /// Measure experiment N's worktree (.factory/worktrees/exp-NNN) instead of the
    /// project's checkout.
    pub exp: Option<u32>,
    /// Seconds each hygiene check may take (default: factory.md's test_timeout).
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PrecheckArgs {
    /// The project's directory; default: the server's project.
    pub project: Option<String>,
    /// The experiment being judged: checks its worktree and records the result in
    /// .factory/experiments/NNN/precheck.json (what a keep verdict requires).
    pub exp: Option<u32>,
    /// Hypothesis text for the anti-pattern check (default: the experiment's own).
    pub hypothesis: Option<String>,
    /// Score .factory/last_eval.json instead of running the eval again (not with exp).
    #[serde(default)]
    pub use_last_eval: bool,
    /// Allow uncommitted changes: skips the git_clean guard (not with exp).
    #[serde(default)]
    pub allow_dirty: bool,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Emit {
    /// Canonical IR text, one knob, node or edge a line (the default).
    #[default]
    Ir,
    /// The IR as JSON.
    IrJson,
    /// A mermaid flowchart.
    Mermaid,
    /// A graphviz digraph.
    Dot,
    /// The Agent Skills SKILL.md an interactive agent follows.
    Skill,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompileArgs {
    /// A mode name from list_modes (e.g. `improve`), or a .fwf / .fwir file path
    /// (relative paths are taken from the project).
    pub mode: String,
    /// What to produce: ir (default), ir_json, mermaid, dot or skill (SKILL.md).
    #[serde(default)]
    pub emit: Emit,
    /// The project whose modes are looked up; default: the server's project.
    pub project: Option<String>,
    /// Which workflow of the file, when it declares several.
    pub workflow: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CheckArgs {
    /// The workflow source text to check (.fwf, or IR text when `name` ends in .fwir).
    pub text: String,
    /// The file name the text would be saved as (default `workflow.fwf`); diagnostics
    /// name it, and a .fwir name checks the text as IR.
    pub name: Option<String>,
    /// The project it belongs to: its .factory/agents/ roles and stdlib are used for
    /// the checks; default: the server's project.
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StartRunArgs {
    /// The mode to run (list_modes), or a .fwf / .fwir file path.
    pub mode: String,
    /// The project to run on; default: the server's project.
    pub project: Option<String>,
    /// The agent runner: claude, codex, opencode, gemini, exec or replay (default:
    /// $FACTORY_RUNNER, the user config's defaults.runner, else the first agent CLI on
    /// PATH).
    pub runner: Option<String>,
    /// For the replay runner: the YAML script of the agents' answers (a relative path
    /// is taken from the project).
    pub script: Option<String>,
    /// For the exec runner: the agent command ({prompt_file} {output} {role} {cwd}
    /// {model} are filled in).
    pub agent_cmd: Option<String>,
    /// The goal of this run (default: factory.md's goal).
    pub goal: Option<String>,
    /// Answer every `user` gate with proceed; a mode with user gates cannot run in the
    /// background without it.
    #[serde(default)]
    pub auto_approve: bool,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RunArgs {
    /// The run's id, as start_run returned it (default: the project's latest run).
    pub run_id: Option<String>,
    /// The project's directory; default: the server's project.
    pub project: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct EventsArgs {
    /// The run's id, as start_run returned it (default: the project's latest run).
    pub run_id: Option<String>,
    /// The project's directory; default: the server's project.
    pub project: Option<String>,
    /// Skip the run's first N events (pass the previous call's `next` to read only
    /// new ones).
    #[serde(default)]
    pub after: usize,
    /// At most this many events (default 200).
    pub limit: Option<usize>,
}
