use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::project::layout::ensure_factory_dir;

const TS: &str = "2026-01-01T00:00:00Z";

fn at(data: EventData) -> Event {
    Event {
        timestamp: TS.into(),
        data,
    }
}

fn line(data: EventData) -> String {
    serde_json::to_string(&at(data)).unwrap()
}

fn read_line(text: &str) -> Event {
    serde_json::from_str(text).unwrap()
}

/// Every variant's JSON, as the runtime has always written it, and back.
#[test]
fn each_variant_has_its_json_and_reads_back_as_itself() {
    let cases = vec![
        (
            EventData::ExperimentBegin {
                exp_id: 3,
                hypothesis: "h".into(),
                resumed: false,
                run_key: Some("k".into()),
            },
            r#"{"type":"experiment.begin","timestamp":"2026-01-01T00:00:00Z","exp_id":3,"hypothesis":"h","resumed":false,"run_key":"k"}"#,
        ),
        (
            EventData::ExperimentFinalize {
                exp_id: 3,
                verdict: "keep".into(),
                delta: Some(0.25),
                commit: Some("abc".into()),
            },
            r#"{"type":"experiment.finalize","timestamp":"2026-01-01T00:00:00Z","commit":"abc","delta":0.25,"exp_id":3,"verdict":"keep"}"#,
        ),
        (
            EventData::ExperimentForgotten { exp_id: 3 },
            r#"{"type":"experiment.forgotten","timestamp":"2026-01-01T00:00:00Z","exp_id":3}"#,
        ),
        (
            EventData::PrecheckCompleted {
                exp_id: 3,
                passed: true,
                commit: "abc".into(),
                score_before: None,
                score_after: Some(0.5),
                record_sha256: None,
            },
            r#"{"type":"precheck.completed","timestamp":"2026-01-01T00:00:00Z","commit":"abc","exp_id":3,"passed":true,"score_after":0.5,"score_before":null}"#,
        ),
        (
            EventData::AgentStarted(AgentStarted {
                invocation_id: "i".into(),
                role: "builder".into(),
                node: Some("build".into()),
                run_id: Some("r".into()),
                exp_id: Some(ExpRef::Id(3)),
                runner: "replay".into(),
                visit: Some(1),
                interactive: None,
                review_tag: None,
            }),
            r#"{"type":"agent.started","timestamp":"2026-01-01T00:00:00Z","exp_id":3,"invocation_id":"i","node":"build","role":"builder","run_id":"r","runner":"replay","visit":1}"#,
        ),
        (
            EventData::AgentCompleted(AgentEnded {
                invocation_id: "i".into(),
                role: "qa".into(),
                exp_id: Some(ExpRef::Text("x".into())),
                exit_code: Some(0),
                duration_ms: Some(5),
                review: Some(".factory/reviews/qa-latest.md".into()),
                missing_outputs: Some(vec!["out.md".into()]),
                ..AgentEnded::default()
            }),
            r#"{"type":"agent.completed","timestamp":"2026-01-01T00:00:00Z","duration_ms":5,"exit_code":0,"exp_id":"x","invocation_id":"i","missing_outputs":["out.md"],"review":".factory/reviews/qa-latest.md","role":"qa"}"#,
        ),
        (
            EventData::AgentFailed(AgentEnded {
                invocation_id: "i".into(),
                role: "qa".into(),
                reason: Some("spawn".into()),
                error: Some("no such file".into()),
                ..AgentEnded::default()
            }),
            r#"{"type":"agent.failed","timestamp":"2026-01-01T00:00:00Z","error":"no such file","invocation_id":"i","reason":"spawn","role":"qa"}"#,
        ),
        (
            EventData::AgentTimeout(AgentEnded {
                invocation_id: "i".into(),
                role: "qa".into(),
                duration_ms: Some(9),
                ..AgentEnded::default()
            }),
            r#"{"type":"agent.timeout","timestamp":"2026-01-01T00:00:00Z","duration_ms":9,"invocation_id":"i","role":"qa"}"#,
        ),
        (
            EventData::RunStarted {
                run_id: "r".into(),
                seq: 1,
                workflow: Some("improve".into()),
            },
            r#"{"type":"run.started","timestamp":"2026-01-01T00:00:00Z","run_id":"r","seq":1,"workflow":"improve"}"#,
        ),
        (
            EventData::RunResumed {
                run_id: "r".into(),
                respawns: 2,
                retry_seq: None,
            },
            r#"{"type":"run.resumed","timestamp":"2026-01-01T00:00:00Z","respawns":2,"run_id":"r"}"#,
        ),
        (
            EventData::RunInterrupted { run_id: "r".into() },
            r#"{"type":"run.interrupted","timestamp":"2026-01-01T00:00:00Z","run_id":"r"}"#,
        ),
        (
            EventData::RunFinished {
                run_id: "r".into(),
                outcome: json!({"outcome": "completed"}),
                usage: None,
            },
            r#"{"type":"run.finished","timestamp":"2026-01-01T00:00:00Z","outcome":{"outcome":"completed"},"run_id":"r"}"#,
        ),
        (
            EventData::NodeStarted {
                run_id: "r".into(),
                node: "n".into(),
                visit: 1,
                kind: "fn".into(),
            },
            r#"{"type":"node.started","timestamp":"2026-01-01T00:00:00Z","kind":"fn","node":"n","run_id":"r","visit":1}"#,
        ),
        (
            EventData::NodeFinished {
                run_id: "r".into(),
                seq: 2,
                node: "n".into(),
                visit: 1,
                result: json!({"status": "ok"}),
                vars: Some(BTreeMap::from([("exp_id".into(), "3".into())])),
                duration_ms: Some(12),
                evidence: None,
            },
            r#"{"type":"node.finished","timestamp":"2026-01-01T00:00:00Z","duration_ms":12,"node":"n","result":{"status":"ok"},"run_id":"r","seq":2,"vars":{"exp_id":"3"},"visit":1}"#,
        ),
        (
            EventData::NodeVerdict {
                run_id: "r".into(),
                node: "g".into(),
                verdict: "proceed".into(),
            },
            r#"{"type":"node.verdict","timestamp":"2026-01-01T00:00:00Z","node":"g","run_id":"r","verdict":"proceed"}"#,
        ),
        (
            EventData::PlacementFallback {
                run_id: "r".into(),
                requested: "sandbox".into(),
                used: "host".into(),
                reason: "no bwrap".into(),
            },
            r#"{"type":"placement.fallback","timestamp":"2026-01-01T00:00:00Z","reason":"no bwrap","requested":"sandbox","run_id":"r","used":"host"}"#,
        ),
    ];
    let mut seen: Vec<&str> = Vec::new();
    for (data, json) in cases {
        let kind = data.kind().to_string();
        assert_eq!(line(data.clone()), json, "{kind}");
        let back = read_line(json);
        assert_eq!(back.data, data, "{kind} did not read back as its variant");
        assert!(!matches!(back.data, EventData::Other { .. }));
        seen.push(kinds::ALL.iter().find(|k| **k == kind).unwrap());
    }
    // One case per kind the runtime writes, each `type` spelled as in `kinds`.
    assert_eq!(seen, kinds::ALL);
}

#[test]
fn a_resume_that_retried_a_node_keeps_its_journal_position() {
    let data = EventData::RunResumed {
        run_id: "r".into(),
        respawns: 1,
        retry_seq: Some(7),
    };
    let json = r#"{"type":"run.resumed","timestamp":"2026-01-01T00:00:00Z","respawns":1,"retry_seq":7,"run_id":"r"}"#;
    assert_eq!(line(data.clone()), json);
    assert_eq!(read_line(json).data, data);
}

#[test]
fn an_unknown_kind_keeps_every_field_through_a_round_trip() {
    let text = r#"{"type":"x.unknown","timestamp":"2026-01-01T00:00:00Z","n":1,"nested":{"a":[1,2]},"s":"t","z":null}"#;
    let e = read_line(text);
    assert_eq!(e.kind(), "x.unknown");
    let EventData::Other { kind, fields } = &e.data else {
        panic!("not kept as Other: {e:?}")
    };
    assert_eq!(kind, "x.unknown");
    assert_eq!(fields.len(), 4);
    assert_eq!(e.get("nested"), Some(json!({"a": [1, 2]})));
    let again = serde_json::to_string(&e).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&again).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
}

#[test]
fn a_known_kind_that_does_not_fit_is_kept_raw_not_dropped() {
    // Missing `runner`; a legacy `agent` instead of `role`; an extra field; a string
    // where a number belongs.
    for text in [
        r#"{"type":"agent.started","timestamp":"2026-01-01T00:00:00Z","invocation_id":"i","role":"qa"}"#,
        r#"{"type":"agent.completed","timestamp":"2026-01-01T00:00:00Z","invocation_id":"i","agent":"qa"}"#,
        r#"{"type":"node.finished","timestamp":"2026-01-01T00:00:00Z","run_id":"r","seq":1,"node":"n","visit":1,"result":{},"future":true}"#,
        r#"{"type":"experiment.begin","timestamp":"2026-01-01T00:00:00Z","exp_id":"3","hypothesis":"h","resumed":false}"#,
    ] {
        let e = read_line(text);
        assert!(
            matches!(&e.data, EventData::Other { kind, .. } if kind == e.kind()),
            "{text} -> {e:?}"
        );
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::from_str::<Value>(text).unwrap(),
            "fields lost"
        );
    }
    // Completing the fields makes it the typed variant.
    let e = Event::raw(kinds::AGENT_STARTED)
        .with("invocation_id", "i")
        .with("role", "qa");
    assert!(matches!(e.data, EventData::Other { .. }));
    let e = e.with("runner", "exec");
    assert!(matches!(e.data, EventData::AgentStarted(_)), "{e:?}");
    // Older logs wrote absent fields as null: still the typed variant.
    let e = read_line(
        r#"{"type":"agent.completed","timestamp":"2026-01-01T00:00:00Z","invocation_id":"i","role":"qa","node":null,"run_id":null,"exp_id":null,"exit_code":null}"#,
    );
    assert!(matches!(e.data, EventData::AgentCompleted(_)), "{e:?}");
    let e = read_line(
        r#"{"type":"agent.started","timestamp":"2026-01-01T00:00:00Z","invocation_id":"i","role":"qa","runner":"exec","node":null,"review_tag":null}"#,
    );
    assert!(matches!(e.data, EventData::AgentStarted(_)), "{e:?}");
}

#[test]
fn appends_one_object_per_line_with_type_and_timestamp() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = ensure_factory_dir(tmp.path()).unwrap();
    append(&paths, &Event::raw("a").with("exp_id", 3)).unwrap();
    append(&paths, &Event::raw("b").with("type", "forged")).unwrap();
    let text = fs::read_to_string(paths.events_jsonl()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    let first: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["type"], "a");
    assert_eq!(first["exp_id"], 3);
    let ts = first["timestamp"].as_str().unwrap();
    assert!(ts.parse::<jiff::Timestamp>().is_ok(), "not ISO-8601: {ts}");
    assert!(ts.ends_with('Z'));
    let log = read(&paths).unwrap();
    assert_eq!(log.events[1].kind(), "b", "payload must not override type");
    let only_a = read_kind(&paths, "a").unwrap();
    assert_eq!(only_a.len(), 1);
    assert_eq!(only_a[0].get("exp_id"), Some(Value::from(3)));
}

#[test]
fn readers_skip_corrupt_lines_and_keep_unknown_types() {
    let log = parse(
        "{\"type\":\"x.unknown\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"n\":1}\n\
         {\"type\":\"half\n\
         [1,2]\n\
         \n\
         {\"type\":\"agent.started\",\"timestamp\":\"2026-01-01T00:00:01Z\"}\n\
         {\"type\":\"no.timestamp\"}\n\
         {\"type\":7,\"timestamp\":\"2026-01-01T00:00:02Z\"}\n",
    );
    assert_eq!(log.events.len(), 2);
    assert_eq!(log.events[0].kind(), "x.unknown");
    assert_eq!(log.events[0].get("n"), Some(Value::from(1)));
    assert_eq!(log.corrupt_lines, vec![2, 3, 6, 7]);
    // A known type with none of its fields is kept, raw.
    assert_eq!(log.of_kind(kinds::AGENT_STARTED).count(), 1);
}

#[test]
fn append_creates_factory_dir_but_never_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    append(&FactoryPaths::new(tmp.path()), &Event::raw("x")).unwrap();
    assert_eq!(
        read(&FactoryPaths::new(tmp.path())).unwrap().events.len(),
        1
    );
    let missing = tmp.path().join("typo");
    let err = append(&FactoryPaths::new(&missing), &Event::raw("x")).unwrap_err();
    assert!(matches!(err, EventsError::Layout(_)));
    assert!(!missing.exists());
}

#[test]
fn missing_log_reads_as_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let log = read(&FactoryPaths::new(tmp.path())).unwrap();
    assert!(log.events.is_empty() && log.corrupt_lines.is_empty());
}

#[test]
fn concurrent_appends_never_interleave() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = ensure_factory_dir(tmp.path()).unwrap();
    let big = "x".repeat(8192);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (paths, big) = (&paths, &big);
            s.spawn(move || {
                for i in 0..25 {
                    append(
                        paths,
                        &Event::raw("t")
                            .with("i", t * 100 + i)
                            .with("pad", big.as_str()),
                    )
                    .unwrap();
                }
            });
        }
    });
    let log = read(&paths).unwrap();
    assert_eq!(log.events.len(), 100);
    assert!(log.corrupt_lines.is_empty());
}

#[test]
fn timestamps_have_one_width() {
    let t = crate::sys::clock::now_iso8601();
    assert_eq!(t.len(), "2026-12-01T11:05:01.700Z".len(), "{t}");
    assert!(t.ends_with('Z') && t.as_bytes()[19] == b'.', "{t}");
}
