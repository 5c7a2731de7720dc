//! Why a node failed, as data. The node code returns a [`NodeFailure`]; the journal's
//! `node.finished` records it beside its text (which the run's outcome, `{{reason}}`,
//! the terminal and the dashboard show), and whether `factory resume` may run the node again is a property of the
//! kind ([`NodeFailure::retryable`]), not a flag each caller remembers to set.

use std::path::PathBuf;

use factory_compiler::ir::Label;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeFailure {
    /// A template of the node names a variable nothing has set.
    #[error("`{field}` of `{node}`: {error}")]
    Template {
        node: String,
        field: String,
        error: String,
    },
    /// A template uses the experiment's variables before an experiment was begun.
    #[error(
        "`{field}` of `{node}` uses {} before any experiment was begun in this run (a `factory begin` node must run first)",
        vars.iter().map(|m| format!("`{{{{{m}}}}}`")).collect::<Vec<_>>().join(", ")
    )]
    BeforeExperiment {
        node: String,
        field: String,
        vars: Vec<String>,
    },
    /// The machine asked for a node its graph does not have.
    #[error("unknown node `{node}`")]
    UnknownNode { node: String },
    #[error("`{node}` names no role")]
    NoRole { node: String },
    #[error(
        "`{node}` needs an agent ({role}) and this run has no runner; pass --runner exec --agent-cmd CMD or --runner replay --script FILE"
    )]
    NoRunner { node: String, role: String },
    /// The agent could not be set up (its prompt, the runner, the user's config): the
    /// setup, not the agent, is at fault, so running it again changes nothing.
    #[error("{message}")]
    AgentSetup { message: String },
    /// The agent could not start, exited non-zero or ran out of time: nothing was
    /// judged, and running it again may succeed.
    #[error("{message}")]
    AgentRun { message: String },
    #[error("the {role} agent of `{node}` finished without writing {}", paths.join(", "))]
    MissingOutputs {
        node: String,
        role: String,
        paths: Vec<String>,
    },
    #[error("the {role} agent of gate `{node}` wrote no verdict file `{path}`")]
    NoVerdictFile {
        node: String,
        role: String,
        path: String,
    },
    #[error("the verdict file `{path}` of gate `{node}` is unreadable: {why}")]
    BadVerdict {
        node: String,
        path: String,
        why: String,
    },
    #[error(
        "gate `{node}` may answer only {}, and its verdict file says {verdict}",
        allowed.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", ")
    )]
    VerdictNotAllowed {
        node: String,
        allowed: Vec<Label>,
        verdict: Label,
    },
    #[error("`{node}` has no command to run")]
    NoCommand { node: String },
    #[error("cannot run the command of `{node}`: {error}")]
    CommandSpawn { node: String, error: String },
    #[error("`{node}` timed out after {secs}s (its process group was killed)")]
    CommandTimeout { node: String, secs: u64 },
    /// `tail`: the last lines of its output; `log`: the whole of it.
    #[error("`{node}` failed ({exit}): {tail}\n(full output: {})", log.display())]
    CommandFailed {
        node: String,
        exit: String,
        tail: String,
        log: PathBuf,
    },
    #[error("gate `{node}`: its command gave no verdict ({exit}): {tail}\n(full output: {})", log.display())]
    NoCommandVerdict {
        node: String,
        exit: String,
        tail: String,
        log: PathBuf,
    },
    #[error("post-check of `{node}` failed: {error}")]
    PostCheck { node: String, error: String },
    #[error(
        "`{node}` is an `llm` node; direct model calls need a model runner, which this version does not have (use an `agent` node)"
    )]
    NoModelRunner { node: String },
    #[error(
        "`{node}` asks a person \"{question}\", and there is no terminal to ask on; run interactively or pass --auto-approve"
    )]
    NoTerminal { node: String, question: String },
    #[error("{message}")]
    Terminal { message: String },
    /// A `parallel` or `select` node could not fan out, run or pick its branches.
    #[error("{message}")]
    Parallel { message: String },
}

impl NodeFailure {
    /// Whether running the node again may succeed: only when its agent did not run to
    /// a judgement.
    pub fn retryable(&self) -> bool {
        matches!(self, NodeFailure::AgentRun { .. })
    }

    pub fn parallel(message: impl Into<String>) -> Self {
        NodeFailure::Parallel {
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_journaled_with_its_kind_and_text_and_an_older_record_still_reads() {
        use crate::exec::machine::NodeResult;
        let f = NodeFailure::CommandTimeout {
            node: "build".into(),
            secs: 5,
        };
        let json = serde_json::to_value(NodeResult::failed(f.clone())).unwrap();
        assert_eq!(json["status"], "failed");
        assert_eq!(
            json["reason"],
            "`build` timed out after 5s (its process group was killed)"
        );
        assert_eq!(json["failure"]["kind"], "command_timeout");
        assert!(json.get("retryable").is_none(), "{json}");
        let back: NodeResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, NodeResult::failed(f));
        // A journal written before failures had kinds.
        let old: NodeResult = serde_json::from_value(serde_json::json!(
            {"status": "failed", "reason": "the agent crashed", "retryable": true}
        ))
        .unwrap();
        assert_eq!(
            old,
            NodeResult::Failed {
                reason: "the agent crashed".into(),
                failure: None,
                retryable: true
            }
        );
        let agent = NodeResult::failed(NodeFailure::AgentRun {
            message: "exit 1".into(),
        });
        assert!(matches!(
            agent,
            NodeResult::Failed {
                retryable: true,
                ..
            }
        ));
    }

    #[test]
    fn the_texts_keep_their_wording() {
        let f = NodeFailure::BeforeExperiment {
            node: "n".into(),
            field: "run".into(),
            vars: vec!["exp_id".into(), "branch".into()],
        };
        assert_eq!(
            f.to_string(),
            "`run` of `n` uses `{{exp_id}}`, `{{branch}}` before any experiment was begun in this run (a `factory begin` node must run first)"
        );
        let f = NodeFailure::VerdictNotAllowed {
            node: "g".into(),
            allowed: vec![Label::Proceed, Label::Halt],
            verdict: Label::Reloop,
        };
        assert_eq!(
            f.to_string(),
            "gate `g` may answer only proceed, halt, and its verdict file says reloop"
        );
    }
}
