//! The typed events: one variant per event the runtime writes, each with the fields
//! it carries on disk, and [`EventData::Other`] for everything else.
//!
//! The JSON of each variant is what the runtime has always written (same `type`
//! strings, same field names), so old logs read as they did. A line whose `type` is
//! unknown, or whose fields do not fit its known type exactly (a field missing or of
//! another type, or one more than the variant knows, as an older or foreign writer
//! may produce), is kept as [`EventData::Other`] with every field: never an error,
//! never lost.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every event type the runtime writes: the one place their names are spelled.
/// Other producers may use any string; readers keep those as [`EventData::Other`].
pub mod kinds {
    /// `factory begin` allocated (or re-used) an experiment.
    pub const EXPERIMENT_BEGIN: &str = "experiment.begin";
    /// `factory finalize` recorded a verdict.
    pub const EXPERIMENT_FINALIZE: &str = "experiment.finalize";
    /// `factory begin` recorded an experiment's branch and the base it is measured
    /// against (`exp_id`, `base_commit`, `target_branch`).
    pub const EXPERIMENT_WORKSPACE: &str = "experiment.workspace";
    /// `factory history forget N` cleared an experiment from anti-pattern matching.
    pub const EXPERIMENT_FORGOTTEN: &str = "experiment.forgotten";
    /// `factory precheck --exp N` recorded its result.
    pub const PRECHECK_COMPLETED: &str = "precheck.completed";
    /// An agent invocation started; paired with exactly one terminal event.
    pub const AGENT_STARTED: &str = "agent.started";
    /// Terminal: the agent finished.
    pub const AGENT_COMPLETED: &str = "agent.completed";
    /// Terminal: the agent failed.
    pub const AGENT_FAILED: &str = "agent.failed";
    /// Terminal: the agent ran out of time.
    pub const AGENT_TIMEOUT: &str = "agent.timeout";
    /// A run began (journaled: the machine's `Start` input).
    pub const RUN_STARTED: &str = "run.started";
    /// `factory resume` continued a run.
    pub const RUN_RESUMED: &str = "run.resumed";
    /// Ctrl-C stopped a run, leaving a resumable checkpoint.
    pub const RUN_INTERRUPTED: &str = "run.interrupted";
    /// A run reached its outcome.
    pub const RUN_FINISHED: &str = "run.finished";
    /// The executor started a node.
    pub const NODE_STARTED: &str = "node.started";
    /// A node finished (journaled: the machine's `Finished` input).
    pub const NODE_FINISHED: &str = "node.finished";
    /// A gate node returned a verdict.
    pub const NODE_VERDICT: &str = "node.verdict";
    /// The sandbox a run asked for failed its probe: its nodes run on the host.
    pub const PLACEMENT_FALLBACK: &str = "placement.fallback";

    /// Every kind above, in the order listed.
    pub const ALL: &[&str] = &[
        EXPERIMENT_BEGIN,
        EXPERIMENT_FINALIZE,
        EXPERIMENT_FORGOTTEN,
        PRECHECK_COMPLETED,
        AGENT_STARTED,
        AGENT_COMPLETED,
        AGENT_FAILED,
        AGENT_TIMEOUT,
        RUN_STARTED,
        RUN_RESUMED,
        RUN_INTERRUPTED,
        RUN_FINISHED,
        NODE_STARTED,
        NODE_FINISHED,
        NODE_VERDICT,
        PLACEMENT_FALLBACK,
    ];

    /// Whether `kind` ends an agent invocation.
    pub fn is_agent_terminal(kind: &str) -> bool {
        [AGENT_COMPLETED, AGENT_FAILED, AGENT_TIMEOUT].contains(&kind)
    }
}

/// What happened. Serialized internally tagged by `type`; the `timestamp` rides on
/// [`super::Event`]. The `rename`s below must equal [`kinds`] (a test pins it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum EventData {
    /// `factory begin` allocated (or, for a known `run_key`, re-used) an experiment.
    #[serde(rename = "experiment.begin")]
    ExperimentBegin {
        exp_id: u32,
        hypothesis: String,
        resumed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_key: Option<String>,
    },
    /// `factory finalize` recorded `verdict` (keep, revert, error, superseded, quarantined).
    #[serde(rename = "experiment.finalize")]
    ExperimentFinalize {
        exp_id: u32,
        verdict: String,
        delta: Option<f64>,
        /// For a keep: the commit its precheck measured, which is what was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
    },
    /// `factory history forget N`: the experiment no longer counts as an anti-pattern.
    #[serde(rename = "experiment.forgotten")]
    ExperimentForgotten { exp_id: u32 },
    /// `factory precheck --exp N` checked `commit`.
    #[serde(rename = "precheck.completed")]
    PrecheckCompleted {
        exp_id: u32,
        passed: bool,
        commit: String,
        score_before: Option<f64>,
        score_after: Option<f64>,
        /// SHA-256 (hex) of `experiments/NNN/precheck.json` as this precheck wrote it:
        /// binds the record file to this chained event (absent in older logs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        record_sha256: Option<String>,
    },
    #[serde(rename = "agent.started")]
    AgentStarted(AgentStarted),
    #[serde(rename = "agent.completed")]
    AgentCompleted(AgentEnded),
    #[serde(rename = "agent.failed")]
    AgentFailed(AgentEnded),
    #[serde(rename = "agent.timeout")]
    AgentTimeout(AgentEnded),
    /// The run's `Start` input, journaled with its sequence number.
    #[serde(rename = "run.started")]
    RunStarted {
        run_id: String,
        seq: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workflow: Option<String>,
    },
    /// `retry_seq`: this resume ran again the node whose agent failure ended the run,
    /// journaled as the machine's `Retry` input with that sequence number.
    #[serde(rename = "run.resumed")]
    RunResumed {
        run_id: String,
        respawns: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_seq: Option<u64>,
    },
    #[serde(rename = "run.interrupted")]
    RunInterrupted { run_id: String },
    /// The run asked for the sandbox and its probe failed: nodes run on the host.
    #[serde(rename = "placement.fallback")]
    PlacementFallback {
        run_id: String,
        requested: String,
        used: String,
        reason: String,
    },
    /// `outcome` is the executor's `RunOutcome` as JSON (events sits below exec).
    #[serde(rename = "run.finished")]
    RunFinished {
        run_id: String,
        outcome: Value,
        /// The run's agents' usage, summed (absent when no agent reported any).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// `kind` is the IR node kind (`agent`, `fn`, `gate`, ...).
    #[serde(rename = "node.started")]
    NodeStarted {
        run_id: String,
        node: String,
        visit: u32,
        kind: String,
    },
    /// A node's `Finished` input, journaled: `result` is the executor's `NodeResult`
    /// as JSON, `vars` the variables it set.
    #[serde(rename = "node.finished")]
    NodeFinished {
        run_id: String,
        seq: u64,
        node: String,
        visit: u32,
        result: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vars: Option<BTreeMap<String, String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// The declared outputs kept in the experiment's evidence, each with its
        /// SHA-256: the log binds what the experiment's pages show.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evidence: Option<Vec<EvidenceRef>>,
    },
    #[serde(rename = "node.verdict")]
    NodeVerdict {
        run_id: String,
        node: String,
        verdict: String,
    },
    /// Any other event, or a known type whose fields do not fit its variant: the
    /// `type` and every field, kept as read.
    #[serde(skip)]
    Other {
        kind: String,
        fields: Map<String, Value>,
    },
}

/// Who an agent event is about: the fields every event of one invocation carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentStarted {
    pub invocation_id: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// A number, as in `experiment.begin`, or the raw `FACTORY_EXP_ID` when it is not one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp_id: Option<ExpRef>,
    pub runner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visit: Option<u32>,
    /// Set on `factory agent --interactive` runs (no review capture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_tag: Option<String>,
}

/// A terminal agent event (`agent.completed`, `agent.failed`, `agent.timeout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEnded {
    pub invocation_id: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp_id: Option<ExpRef>,
    /// The process's exit code; absent (or `null` in older logs) when it was killed
    /// by a signal or never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The captured review, relative to the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// Tests a QA role's review confirmed as intended behaviour changes
    /// (`Confirmed behaviour change: test_a`), read from the review as it completed, so
    /// the chain seals the answer (only on `agent.completed` of a QA role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<Vec<String>>,
    /// Declared outputs the agent did not write (only on `agent.completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_outputs: Option<Vec<String>>,
    /// Why it failed: `spawn`, `review`, `exit`, `cancelled`, `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tokens and cost the agent CLI reported (zero for a dry run; absent when the
    /// runner reports none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// Tokens and cost of one agent invocation, or summed over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache (not in `input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// US dollars, when the CLI reports a cost (claude, opencode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Adds `other` to `self`; the cost stays unknown only when neither knows it.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }

    /// `12,345 in / 678 out tokens, $0.0123` (the cost only when known).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} in / {} out tokens",
            self.input_tokens + self.cache_read_tokens,
            self.output_tokens
        );
        if let Some(c) = self.cost_usd {
            s.push_str(&format!(", ${c:.4}"));
        }
        s
    }
}

impl AgentEnded {
    /// A terminal event for the invocation `started` describes, carrying its identity.
    pub fn of(started: &AgentStarted) -> Self {
        Self {
            invocation_id: started.invocation_id.clone(),
            role: started.role.clone(),
            node: started.node.clone(),
            run_id: started.run_id.clone(),
            exp_id: started.exp_id.clone(),
            ..Self::default()
        }
    }
}

/// An experiment id as agent events carry it: a number when `FACTORY_EXP_ID` was one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ExpRef {
    Id(u64),
    Text(String),
}

impl ExpRef {
    /// `FACTORY_EXP_ID`'s value: a number when it parses as one.
    pub fn parse(v: &str) -> Self {
        v.trim()
            .parse()
            .map_or_else(|_| Self::Text(v.into()), Self::Id)
    }

    /// The numeric id, also from a numeric string.
    pub fn id(&self) -> Option<u64> {
        match self {
            Self::Id(n) => Some(*n),
            Self::Text(s) => s.trim().parse().ok(),
        }
    }
}

impl EventData {
    /// The event's `type`.
    pub fn kind(&self) -> &str {
        use kinds::*;
        match self {
            Self::ExperimentBegin { .. } => EXPERIMENT_BEGIN,
            Self::ExperimentFinalize { .. } => EXPERIMENT_FINALIZE,
            Self::ExperimentForgotten { .. } => EXPERIMENT_FORGOTTEN,
            Self::PrecheckCompleted { .. } => PRECHECK_COMPLETED,
            Self::AgentStarted(_) => AGENT_STARTED,
            Self::AgentCompleted(_) => AGENT_COMPLETED,
            Self::AgentFailed(_) => AGENT_FAILED,
            Self::AgentTimeout(_) => AGENT_TIMEOUT,
            Self::RunStarted { .. } => RUN_STARTED,
            Self::RunResumed { .. } => RUN_RESUMED,
            Self::RunInterrupted { .. } => RUN_INTERRUPTED,
            Self::RunFinished { .. } => RUN_FINISHED,
            Self::NodeStarted { .. } => NODE_STARTED,
            Self::NodeFinished { .. } => NODE_FINISHED,
            Self::NodeVerdict { .. } => NODE_VERDICT,
            Self::PlacementFallback { .. } => PLACEMENT_FALLBACK,
            Self::Other { kind, .. } => kind,
        }
    }

    /// The variant for `kind` and `fields` (without `type` or `timestamp`): the typed
    /// one when they fit it exactly, else [`EventData::Other`] holding them as given.
    pub fn from_parts(kind: String, fields: Map<String, Value>) -> Self {
        let mut object = fields;
        object.insert("type".into(), Value::String(kind.clone()));
        let object = Value::Object(object);
        match Self::deserialize(&object) {
            Ok(data) => data,
            Err(_) => {
                let Value::Object(mut fields) = object else {
                    unreachable!("built as an object above")
                };
                fields.remove("type");
                Self::Other { kind, fields }
            }
        }
    }

    /// Every field but `type`, as written to disk.
    pub fn fields(&self) -> Map<String, Value> {
        match self {
            Self::Other { fields, .. } => fields.clone(),
            known => match serde_json::to_value(known) {
                Ok(Value::Object(mut m)) => {
                    m.remove("type");
                    m
                }
                // Every typed variant is a struct: it serializes to an object.
                _ => Map::new(),
            },
        }
    }

    /// The terminal agent event, when this is one.
    pub fn agent_ended(&self) -> Option<&AgentEnded> {
        match self {
            Self::AgentCompleted(a) | Self::AgentFailed(a) | Self::AgentTimeout(a) => Some(a),
            _ => None,
        }
    }
}

/// A file a node left, as a `node.finished` event records it: the declared path and
/// the SHA-256 of the copy kept in `experiments/NNN/evidence/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub path: String,
    pub sha256: String,
}
