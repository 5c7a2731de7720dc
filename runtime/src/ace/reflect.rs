//! Reflection (spec §8.15): candidate bullets from experiment outcomes, by pattern
//! matching alone (no model call), so it is cheap and the same inputs always give the
//! same bullets in the same order. docs/ace.md lists the patterns.
//!
//! Evidence comes from three places, per project:
//! - the notes of `keep`, `revert`, `error` and `quarantined` rows of `results.tsv`
//!   (a failure note supports a DON'T bullet, a keep note a DO bullet, and the same
//!   pattern under the opposite verdict counts against the bullet);
//! - the FEEC category of each kept or reverted hypothesis (strategist);
//! - `agent.timeout`, `agent.failed` and `agent.completed` with missing outputs in
//!   `events.jsonl`, for the role that ran.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::agents::playbook::Kind;
use crate::events::{Event, EventData};
use crate::store::{ExperimentRecord, Verdict};
use crate::strategy::{Category, categorize_hypothesis};

/// What reflection reads from one project.
#[derive(Debug, Clone, Default)]
pub struct ProjectInput {
    pub path: PathBuf,
    /// Finalized experiments.
    pub records: Vec<ExperimentRecord>,
    /// The event log.
    pub events: Vec<Event>,
}

/// A bullet reflection proposes, with the outcomes that count for and against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    pub role: String,
    #[serde(with = "kind_name")]
    pub kind: Kind,
    pub text: String,
    pub helpful: u32,
    pub harmful: u32,
    /// Where each count came from: `<project> exp N (verdict)` or
    /// `<project> events.jsonl: <event> <invocation>`.
    pub evidence: Vec<String>,
}

mod kind_name {
    use super::Kind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        match String::deserialize(d)?.as_str() {
            "do" => Ok(Kind::Do),
            "dont" => Ok(Kind::Dont),
            other => Err(serde::de::Error::custom(format!(
                "kind `{other}`: expected `do` or `dont`"
            ))),
        }
    }
}

/// A note pattern: where it matches, the bullet it stands for. `{}` in `text` takes
/// the `detail` capture, in parentheses, when the note has one.
struct NotePattern {
    re: Regex,
    role: &'static str,
    kind: Kind,
    text: &'static str,
}

fn pattern(re: &str, role: &'static str, kind: Kind, text: &'static str) -> NotePattern {
    NotePattern {
        // The table below is fixed; a test compiles every entry.
        re: Regex::new(&format!("(?i){re}")).unwrap_or_else(|e| panic!("pattern {re}: {e}")),
        role,
        kind,
        text,
    }
}

static NOTE_PATTERNS: LazyLock<Vec<NotePattern>> = LazyLock::new(|| {
    use Kind::{Do, Dont};
    vec![
        pattern(
            // A person's "scope violation: X", or the precheck's own reason as a
            // revert records it ("scope: X: added outside scope …").
            r"(?:scope violations?\s*[:\-]?|\bscope:)\s*(?P<detail>[^:;\n]*)",
            "builder",
            Dont,
            "Don't change files outside the scope{}; check `git diff --name-only` against factory.md's Scope globs before reporting.",
        ),
        pattern(
            r"fixed[- _]surfaces?(?: violations?)?\s*[:\-]?\s*(?P<detail>[^;\n]*)",
            "builder",
            Dont,
            "Don't modify fixed surfaces{}; they may not change in any experiment.",
        ),
        pattern(
            r"eval/?\s+(?:immutab|modified|changed|touched)|eval_immutable",
            "builder",
            Dont,
            "Don't modify eval/; it is fixed for the whole experiment.",
        ),
        pattern(
            r"tests?\s+(?:removed|deleted|skipped|disabled|loosened)|tests_kept",
            "builder",
            Dont,
            "Don't delete, skip or loosen tests to get green.",
        ),
        pattern(
            r"score\s+(?:regress\w*|dropped|decreased|went down)|\bregress(?:ed|ion)\b|lower score",
            "builder",
            Dont,
            "Don't finish with a lower composite score; run `factory eval` before reporting and fix what dropped.",
        ),
        pattern(
            r"qa\s+(?:failed|fail)|\bblockers?\b",
            "builder",
            Dont,
            "Don't hand over work with open QA BLOCKERs; fix each one and cite the commit that fixes it.",
        ),
        pattern(
            r"\bconflicts?\b",
            "builder",
            Dont,
            "Don't let the change sprawl; a small diff still applies onto the target's latest tip.",
        ),
        pattern(
            r"tests?\s+added|added\s+(?:\w+\s+)?tests?|new\s+tests?",
            "builder",
            Do,
            "Add tests that cover the change in the same experiment.",
        ),
        pattern(
            r"docs?\s+(?:updated|added)|updated\s+(?:the\s+)?docs?",
            "builder",
            Do,
            "Update the docs that describe the changed behaviour in the same change.",
        ),
        pattern(
            r"(?:small|minimal|focused|one-line)\s+(?:change|diff|fix)",
            "builder",
            Do,
            "Keep the change small and focused on one hypothesis.",
        ),
    ]
});

/// One observation: a bullet and whether this outcome supports it.
struct Seen {
    role: String,
    kind: Kind,
    text: String,
    helpful: bool,
    evidence: String,
}

/// Candidate bullets from every project, sorted by role, then DO before DON'T, then
/// text; each bullet's counts summed over all projects.
pub fn reflect(projects: &[ProjectInput]) -> Vec<Candidate> {
    let mut seen = Vec::new();
    for p in projects {
        let name = p.path.display().to_string();
        for r in &p.records {
            from_record(&name, r, &mut seen);
        }
        for e in &p.events {
            from_event(&name, e, &mut seen);
        }
    }
    let mut by_key: BTreeMap<(String, Kind, String), Candidate> = BTreeMap::new();
    for s in seen {
        let c = by_key
            .entry((s.role.clone(), s.kind, s.text.clone()))
            .or_insert_with(|| Candidate {
                role: s.role,
                kind: s.kind,
                text: s.text,
                helpful: 0,
                harmful: 0,
                evidence: Vec::new(),
            });
        if s.helpful {
            c.helpful += 1;
        } else {
            c.harmful += 1;
        }
        c.evidence.push(s.evidence);
    }
    by_key.into_values().collect()
}

fn from_record(project: &str, r: &ExperimentRecord, out: &mut Vec<Seen>) {
    let failure = match r.verdict {
        Verdict::Keep => false,
        Verdict::Revert | Verdict::Error | Verdict::Quarantined => true,
        // Another experiment took the hypothesis over: no verdict on the change itself.
        Verdict::Superseded => return,
    };
    let evidence = format!("{project} exp {} ({})", r.id, r.verdict);
    for p in NOTE_PATTERNS.iter() {
        // One observation per pattern per experiment, whatever the note repeats.
        let Some(m) = p.re.captures(&r.notes) else {
            continue;
        };
        let detail = m
            .name("detail")
            .map(|d| d.as_str().trim().trim_end_matches(['.', ',']).trim())
            .filter(|d| !d.is_empty())
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        out.push(Seen {
            role: p.role.to_string(),
            kind: p.kind,
            text: p.text.replacen("{}", &detail, 1),
            // A failure supports a DON'T, a keep a DO; the other way round counts against.
            helpful: failure == (p.kind == Kind::Dont),
            evidence: evidence.clone(),
        });
    }
    if matches!(r.verdict, Verdict::Keep | Verdict::Revert) && !r.hypothesis.trim().is_empty() {
        let category = match categorize_hypothesis(&r.hypothesis) {
            Category::Fix => "fix",
            Category::Exploit => "exploit",
            Category::Explore => "explore",
            Category::Combine => "combine",
        };
        out.push(Seen {
            role: "strategist".into(),
            kind: Kind::Do,
            text: format!(
                "Favour {category} hypotheses (FEEC category): helpful counts their keeps, harmful their reverts."
            ),
            helpful: r.verdict == Verdict::Keep,
            evidence,
        });
    }
}

fn from_event(project: &str, e: &Event, out: &mut Vec<Seen>) {
    use Kind::{Do, Dont};
    let (ended, event, kind, text) = match &e.data {
        EventData::AgentTimeout(a) => (
            a,
            "agent.timeout",
            Do,
            "Finish within the time limit: split the work into small steps and commit as you go."
                .to_string(),
        ),
        EventData::AgentFailed(a) => match a.reason.as_deref() {
            Some("exit") => (
                a,
                "agent.failed",
                Dont,
                "Don't end with a non-zero exit status; finish the task or report what blocked you."
                    .to_string(),
            ),
            Some("review") => (
                a,
                "agent.failed",
                Do,
                "End with a final message: it is saved as your review and read by the next step."
                    .to_string(),
            ),
            // spawn, cancelled, interrupted: the set-up or the user, not the agent.
            _ => return,
        },
        EventData::AgentCompleted(a) => match &a.missing_outputs {
            Some(missing) if !missing.is_empty() => (
                a,
                "agent.completed",
                Do,
                format!(
                    "Write every file you are asked to write ({}).",
                    missing.join(", ")
                ),
            ),
            _ => return,
        },
        _ => return,
    };
    // The role names a playbook file: never a path.
    if !crate::agents::prompt::is_role_name(&ended.role) {
        return;
    }
    out.push(Seen {
        role: ended.role.clone(),
        kind,
        text,
        helpful: true,
        evidence: format!("{project} events.jsonl: {event} {}", ended.invocation_id),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::AgentEnded;

    fn record(id: u32, verdict: Verdict, hypothesis: &str, notes: &str) -> ExperimentRecord {
        ExperimentRecord::sample(id, verdict, hypothesis, notes)
    }

    fn ended(role: &str, id: &str) -> AgentEnded {
        AgentEnded {
            invocation_id: id.into(),
            role: role.into(),
            ..AgentEnded::default()
        }
    }

    #[test]
    fn the_pattern_table_compiles() {
        assert!(NOTE_PATTERNS.len() >= 10);
    }

    #[test]
    fn notes_and_events_become_counted_bullets_in_a_fixed_order() {
        let a = ProjectInput {
            path: "/p/a".into(),
            records: vec![
                record(
                    1,
                    Verdict::Revert,
                    "explore caching",
                    "scope violation: README.md",
                ),
                record(
                    2,
                    Verdict::Keep,
                    "fix the parser crash",
                    "precheck passed; tests added",
                ),
                record(3, Verdict::Superseded, "fix x", "scope violation: y"),
                record(
                    4,
                    Verdict::Revert,
                    "fix the lexer",
                    "tests added but QA failed",
                ),
            ],
            events: vec![
                Event::new(EventData::AgentTimeout(ended("researcher", "inv-1"))),
                Event::new(EventData::AgentFailed(AgentEnded {
                    reason: Some("spawn".into()),
                    ..ended("builder", "inv-2")
                })),
            ],
        };
        let b = ProjectInput {
            path: "/p/b".into(),
            // The notes a revert records from its precheck.
            records: vec![record(
                1,
                Verdict::Revert,
                "",
                "scope: README.md: added outside scope (src/) in commit 5ef1c52 — expected only paths matching the scope; `experiment.trial.precheck` said halt",
            )],
            events: Vec::new(),
        };
        let got = reflect(&[a.clone(), b.clone()]);
        let lines: Vec<String> = got
            .iter()
            .map(|c| {
                format!(
                    "{} {} {}/{} {}",
                    c.role, c.kind, c.helpful, c.harmful, c.text
                )
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                "builder DO 1/1 Add tests that cover the change in the same experiment.",
                "builder DON'T 2/0 Don't change files outside the scope (README.md); check `git diff --name-only` against factory.md's Scope globs before reporting.",
                "builder DON'T 1/0 Don't hand over work with open QA BLOCKERs; fix each one and cite the commit that fixes it.",
                "researcher DO 1/0 Finish within the time limit: split the work into small steps and commit as you go.",
                "strategist DO 0/1 Favour explore hypotheses (FEEC category): helpful counts their keeps, harmful their reverts.",
                "strategist DO 1/1 Favour fix hypotheses (FEEC category): helpful counts their keeps, harmful their reverts.",
            ]
        );
        assert_eq!(
            got[1].evidence,
            vec!["/p/a exp 1 (revert)", "/p/b exp 1 (revert)"]
        );
        // The project order changes only the order of the evidence.
        let strip = |cs: Vec<Candidate>| -> Vec<(String, u32, u32)> {
            cs.into_iter()
                .map(|c| (c.text, c.helpful, c.harmful))
                .collect()
        };
        assert_eq!(strip(reflect(&[b, a])), strip(got));
    }
}
