use super::*;

fn store(tmp: &Path, home: &Path) -> ExperimentStore {
    ExperimentStore::with_registry(tmp, Some(home.to_path_buf()))
}

#[test]
fn begin_allocates_sequential_ids_and_logs_an_event() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    assert_eq!(
        s.begin("first").unwrap(),
        Begun {
            id: 1,
            resumed: false
        }
    );
    assert_eq!(s.begin("second").unwrap().id, 2);
    let hyp = fs::read_to_string(s.paths().experiment_dir(2).join("hypothesis.md")).unwrap();
    assert_eq!(hyp, "second\n");
    let log = events::read(s.paths()).unwrap();
    let ids: Vec<_> = log
        .of_kind(kinds::EXPERIMENT_BEGIN)
        .map(|e| e.get("exp_id").unwrap().as_u64().unwrap())
        .collect();
    assert_eq!(ids, vec![1, 2]);
    let reg = registry::load(home.path()).unwrap();
    assert_eq!(reg.projects.len(), 1, "begin registers the project once");
}

#[test]
fn begin_is_idempotent_for_an_unfinalized_hypothesis() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let first = s.begin("Cache ASTs").unwrap();
    let again = s.begin("  Cache ASTs\n").unwrap();
    assert_eq!(
        again,
        Begun {
            id: first.id,
            resumed: true
        }
    );
    // Once finalized, the same words start a fresh experiment.
    s.finalize(first.id, Outcome::new(Verdict::Revert)).unwrap();
    assert_eq!(
        s.begin("Cache ASTs").unwrap(),
        Begun {
            id: 2,
            resumed: false
        }
    );
}

#[test]
fn ids_are_never_reused_after_a_directory_is_removed() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    s.begin("a").unwrap();
    s.begin("b").unwrap();
    fs::remove_dir_all(s.paths().experiment_dir(2)).unwrap();
    assert_eq!(s.begin("c").unwrap().id, 3);
}

#[test]
fn finalize_writes_verdict_row_and_rounded_delta() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("h\twith tab").unwrap().id;
    let rec = s
        .finalize(
            id,
            Outcome::new(Verdict::Keep).scores(0.1, 0.3).notes("fine"),
        )
        .unwrap();
    assert_eq!(rec.delta, Some(0.2));
    assert_eq!(rec.hypothesis, "h\twith tab");
    let on_disk: ExperimentRecord = serde_json::from_str(
        &fs::read_to_string(s.paths().experiment_dir(id).join("verdict.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk, rec);
    let tsv_text = fs::read_to_string(s.paths().results_tsv()).unwrap();
    assert_eq!(tsv_text.lines().count(), 2, "header + one row");
    assert_eq!(tsv::decode(&tsv_text).records, vec![rec]);
    let reg = registry::load(home.path()).unwrap();
    assert_eq!(reg.projects[0].experiment_count, 1);
    assert_eq!(reg.projects[0].latest_score, Some(0.3));
}

#[test]
fn finalize_recreates_a_removed_experiment_dir() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("survives git clean").unwrap().id;
    fs::remove_dir_all(s.paths().experiment_dir(id)).unwrap();
    let rec = s.finalize(id, Outcome::new(Verdict::Error)).unwrap();
    assert!(s.paths().experiment_dir(id).join("verdict.json").is_file());
    // The hypothesis is recovered from the begin event.
    assert_eq!(rec.hypothesis, "survives git clean");
}

#[test]
fn finalize_rejects_unknown_double_and_baseless_superseded() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    assert!(matches!(
        s.finalize(9, Outcome::new(Verdict::Keep)),
        Err(StoreError::UnknownExperiment { id: 9 })
    ));
    let a = s.begin("a").unwrap().id;
    assert!(matches!(
        s.finalize(a, Outcome::new(Verdict::Superseded)),
        Err(StoreError::SupersededWithoutSuccessor { .. })
    ));
    s.begin("b").unwrap();
    s.finalize(a, Outcome::new(Verdict::Superseded)).unwrap();
    assert!(matches!(
        s.finalize(a, Outcome::new(Verdict::Keep)),
        Err(StoreError::AlreadyFinalized {
            verdict: Verdict::Superseded,
            ..
        })
    ));
    let rows = tsv::decode(&fs::read_to_string(s.paths().results_tsv()).unwrap()).records;
    assert_eq!(rows.len(), 1, "failed finalizes append nothing");
}

#[test]
fn a_named_successor_may_have_a_lower_id_and_is_written_into_the_notes() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    // Three parallel branches begun together; the winner is the first.
    let ids: Vec<u32> = ["h1", "h2", "h3"]
        .iter()
        .map(|h| s.begin(h).unwrap().id)
        .collect();
    let (winner, loser, last) = (ids[0], ids[1], ids[2]);
    // The last one has no later experiment: without a successor the old rule holds.
    assert!(matches!(
        s.finalize(last, Outcome::new(Verdict::Superseded)),
        Err(StoreError::SupersededWithoutSuccessor { .. })
    ));
    for (by, why) in [
        (last, "cannot supersede itself"),
        (99, "experiment 99 was never begun"),
    ] {
        let err = s
            .finalize(last, Outcome::new(Verdict::Superseded).superseded_by(by))
            .unwrap_err();
        assert!(
            matches!(err, StoreError::BadSuccessor { id, by: b, .. } if id == last && b == by),
            "{err:?}"
        );
        assert!(err.to_string().contains(why), "{err}");
        let help = miette::Diagnostic::help(&err).unwrap().to_string();
        assert!(help.contains("--superseded-by"), "{help}");
    }
    let err = s
        .finalize(last, Outcome::new(Verdict::Revert).superseded_by(winner))
        .unwrap_err();
    assert!(
        err.to_string().contains("only a `superseded` verdict"),
        "{err}"
    );

    let rec = s
        .finalize(
            last,
            Outcome::new(Verdict::Superseded)
                .superseded_by(winner)
                .notes("scored 0.61"),
        )
        .unwrap();
    assert_eq!(rec.verdict, Verdict::Superseded);
    assert_eq!(
        rec.notes,
        format!("superseded by exp {winner}; scored 0.61")
    );
    // Notes that already say so are kept as written.
    let rec = s
        .finalize(
            loser,
            Outcome::new(Verdict::Superseded)
                .superseded_by(winner)
                .notes(format!("Superseded by exp {winner} (higher score)")),
        )
        .unwrap();
    assert_eq!(
        rec.notes,
        format!("Superseded by exp {winner} (higher score)")
    );
    let rows = tsv::decode(&fs::read_to_string(s.paths().results_tsv()).unwrap()).records;
    assert_eq!(rows.len(), 2, "refused finalizes append nothing");
    assert_eq!(
        rows[0].notes,
        format!("superseded by exp {winner}; scored 0.61")
    );
}

#[test]
fn quarantined_is_a_verdict_like_the_others() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("conflicts with the tip").unwrap().id;
    let rec = s
        .finalize(
            id,
            Outcome::new(Verdict::Quarantined)
                .scores(0.5, 0.7)
                .notes("conflict in src/lib.rs"),
        )
        .unwrap();
    assert_eq!((rec.verdict, rec.delta), (Verdict::Quarantined, Some(0.2)));
    let history = s.history().unwrap();
    assert_eq!(history.with_verdict(Verdict::Quarantined).count(), 1);
    assert_eq!("quarantined".parse::<Verdict>(), Ok(Verdict::Quarantined));
    let text = fs::read_to_string(s.paths().results_tsv()).unwrap();
    assert!(text.contains("\tquarantined\t"), "{text}");
    assert_eq!(tsv::decode(&text).records, vec![rec]);
}

#[test]
fn history_lists_finalized_and_pending_with_verdicts() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    for (h, v) in [
        ("x", Verdict::Keep),
        ("y", Verdict::Revert),
        ("z", Verdict::Revert),
    ] {
        let id = s.begin(h).unwrap().id;
        s.finalize(id, Outcome::new(v)).unwrap();
    }
    s.begin("open").unwrap();
    let h = s.history().unwrap();
    assert_eq!(h.records.len(), 3);
    let reverted: Vec<_> = h
        .with_verdict(Verdict::Revert)
        .map(|r| r.hypothesis.as_str())
        .collect();
    assert_eq!(reverted, vec!["y", "z"]);
    assert_eq!(
        h.pending,
        vec![PendingExperiment {
            id: 4,
            hypothesis: "open".into()
        }]
    );
    assert!(h.warnings.is_empty());
    // Read with the environment's key (this store chained under its own home), the
    // rows bind to nothing and say so; they are the same rows.
    let from_env = load_history(proj.path()).unwrap();
    assert_eq!((from_env.records, from_env.pending), (h.records, h.pending));
}

#[test]
fn history_survives_a_corrupt_row() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("x").unwrap().id;
    s.finalize(id, Outcome::new(Verdict::Keep)).unwrap();
    // A crash left half a row without its newline.
    files::append(&s.paths().results_tsv(), b"2\t2026-11-29T10:0").unwrap();
    let h = s.history().unwrap();
    assert_eq!(h.records.len(), 1);
    assert_eq!(h.warnings.len(), 1);
    // And the next experiment still gets a fresh id and a clean row.
    let next = s.begin("y").unwrap().id;
    s.finalize(next, Outcome::new(Verdict::Keep)).unwrap();
    assert_eq!(s.history().unwrap().records.len(), 2);
}

#[test]
fn concurrent_threads_get_distinct_ids() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    std::thread::scope(|scope| {
        for t in 0..4 {
            let s = &s;
            scope.spawn(move || {
                for i in 0..10 {
                    let id = s.begin(&format!("t{t} i{i}")).unwrap().id;
                    s.finalize(id, Outcome::new(Verdict::Keep)).unwrap();
                }
            });
        }
    });
    let h = s.history().unwrap();
    let ids: BTreeSet<u32> = h.records.iter().map(|r| r.id).collect();
    assert_eq!(ids, (1..=40).collect());
}

#[test]
fn non_finite_scores_are_rejected_before_anything_is_written() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("x").unwrap().id;
    let err = s
        .finalize(id, Outcome::new(Verdict::Keep).scores(0.1, f64::NAN))
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotFinite {
                field: "score_after",
                ..
            }
        ),
        "{err}"
    );
    assert!(!s.paths().results_tsv().exists());
    assert!(!s.paths().experiment_dir(id).join("verdict.json").exists());
}

#[test]
fn a_run_key_returns_its_experiment_even_after_its_verdict() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let key = run_key("run-1", "begin", 1);
    assert_eq!(key, "run-1/begin/1");
    let first = s.begin_keyed("Cache ASTs", Some(&key)).unwrap();
    assert!(!first.resumed);
    // Another visit of the same node is another experiment, though the text is equal.
    let other = s
        .begin_keyed("Cache ASTs", Some(&run_key("run-1", "begin", 2)))
        .unwrap();
    assert_eq!(other.id, first.id + 1);
    s.finalize(first.id, Outcome::new(Verdict::Revert)).unwrap();
    let again = s.begin_keyed("Cache ASTs", Some(&key)).unwrap();
    assert_eq!((again.id, again.resumed), (first.id, true));
    let info = find_by_run_key(proj.path(), &key).unwrap().unwrap();
    assert_eq!(info.id, first.id);
    assert_eq!(info.verdict, Some(Verdict::Revert));
    assert_eq!(find_by_run_key(proj.path(), "run-9/begin/1").unwrap(), None);

    // With experiment.json gone, the begin event still names the key.
    fs::remove_file(s.paths().experiment_dir(first.id).join("experiment.json")).unwrap();
    let info = find_by_run_key(proj.path(), &key).unwrap().unwrap();
    assert_eq!(info.id, first.id);
}

#[test]
fn a_keyed_begin_adopts_an_open_unkeyed_experiment_with_the_same_hypothesis() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let plain = s.begin("Cache ASTs").unwrap();
    let keyed = s.begin_keyed("Cache ASTs", Some("r/n/1")).unwrap();
    assert_eq!((keyed.id, keyed.resumed), (plain.id, true));
    assert_eq!(
        s.info(plain.id).unwrap().unwrap().run_key.as_deref(),
        Some("r/n/1")
    );
    let ws = Workspace {
        branch: "factory/exp-001".into(),
        base_commit: "abc".into(),
        worktree: proj.path().join(".factory/worktrees/exp-001"),
        target_branch: "main".into(),
        subdir: PathBuf::new(),
        note: None,
    };
    let info = s.set_workspace(plain.id, ws.clone()).unwrap();
    assert_eq!(info.workspace, Some(ws));
    assert_eq!(
        s.info(plain.id).unwrap().unwrap().run_key.as_deref(),
        Some("r/n/1")
    );
    assert!(matches!(
        s.set_workspace(99, info.workspace.unwrap()),
        Err(StoreError::UnknownExperiment { id: 99 })
    ));
}

#[test]
fn the_gate_and_cause_live_in_verdict_json_and_older_records_still_read() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let gate = GateConfig {
        factory_md: "ab".repeat(32),
        eval_profile: "none".into(),
    };
    let a = s.begin("a").unwrap().id;
    let mut outcome = Outcome::new(Verdict::Revert);
    outcome.gate = Some(gate.clone());
    outcome.revert_cause = Some(RevertCause::Environment);
    s.finalize(a, outcome).unwrap();
    // A keep records the gate but never a revert cause.
    let b = s.begin("b").unwrap().id;
    let mut outcome = Outcome::new(Verdict::Keep);
    outcome.gate = Some(gate.clone());
    outcome.revert_cause = Some(RevertCause::Measured);
    s.finalize(b, outcome).unwrap();

    // results.tsv keeps its thirteen columns.
    let tsv_text = fs::read_to_string(s.paths().results_tsv()).unwrap();
    assert!(
        tsv_text
            .lines()
            .all(|l| l.split('\t').count() == tsv::COLUMNS.len()),
        "{tsv_text}"
    );
    let h = s.history().unwrap();
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    assert_eq!(h.records[0].gate.as_ref(), Some(&gate));
    assert_eq!(h.records[0].revert_cause, Some(RevertCause::Environment));
    assert_eq!(h.records[1].gate.as_ref(), Some(&gate));
    assert_eq!(h.records[1].revert_cause, None);

    // A verdict.json written before these fields existed reads as it did.
    let old = r#"{"id": 1, "timestamp": "2026-01-01T00:00:00Z", "hypothesis": "a", "change_summary": "", "issue_number": null, "pr_number": null, "score_before": null, "score_after": null, "delta": null, "verdict": "revert", "cost_usd": null, "notes": "", "research_citations": []}"#;
    fs::write(s.paths().experiment_dir(a).join("verdict.json"), old).unwrap();
    let h = s.history().unwrap();
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    assert_eq!(h.records[0].gate, None);
    assert_eq!(h.records[0].revert_cause, None);
    // An unreadable one is named, and the record still lists from its row.
    fs::write(s.paths().experiment_dir(a).join("verdict.json"), "{").unwrap();
    let h = s.history().unwrap();
    assert_eq!(h.records.len(), 2);
    assert!(
        h.warnings[0].contains("blocks no hypothesis"),
        "{:?}",
        h.warnings
    );
}

#[test]
fn forget_marks_a_finalized_record_once_and_refuses_what_is_not_one() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    assert!(matches!(
        s.forget(1),
        Err(StoreError::NothingToForget { id: 1, .. })
    ));
    assert!(!s.paths().dir().exists(), "nothing created");
    let a = s.begin("a").unwrap().id;
    assert!(matches!(
        s.forget(a),
        Err(StoreError::ForgetUnfinalized { .. })
    ));
    s.finalize(a, Outcome::new(Verdict::Revert)).unwrap();
    let b = s.begin("b").unwrap().id;
    s.finalize(b, Outcome::new(Verdict::Keep)).unwrap();
    let verdict_before = fs::read(s.paths().experiment_dir(a).join("verdict.json")).unwrap();

    let forgot = s.forget(a).unwrap();
    assert!(!forgot.repeated);
    let at = forgot.record.forgotten_at.clone().unwrap();
    assert!(
        forgot.render().contains("forgotten at"),
        "{}",
        forgot.render()
    );
    assert_eq!(
        fs::read(s.paths().experiment_dir(a).join("verdict.json")).unwrap(),
        verdict_before
    );
    let h = s.history().unwrap();
    assert_eq!(h.records[0].forgotten_at.as_deref(), Some(at.as_str()));
    assert_eq!(h.records[1].forgotten_at, None);
    let again = s.forget(a).unwrap();
    assert!(again.repeated && again.record.forgotten_at.as_deref() == Some(at.as_str()));
    let log = events::read(s.paths()).unwrap();
    assert_eq!(log.of_kind(kinds::EXPERIMENT_FORGOTTEN).count(), 1);
    // A keep can be forgotten, and is told it never blocked anything.
    assert!(s.forget(b).unwrap().render().contains("only reverts"));
    match s.forget(9) {
        Err(StoreError::NothingToForget { known, .. }) => {
            assert_eq!(known, "the finalized experiments here are 1-2")
        }
        other => panic!("{other:?}"),
    }
    // A marker that cannot be read is reported, and does not count.
    fs::write(s.paths().experiment_dir(a).join("forgotten.json"), "{").unwrap();
    let h = s.history().unwrap();
    assert_eq!(h.records[0].forgotten_at, None);
    assert!(h.warnings[0].contains("forget 1"), "{:?}", h.warnings);
}

/// A begin killed after `hypothesis.md` and before its event (and `experiment.json`):
/// the run's resumed begin adopts the directory, and its event is the experiment's
/// first begin, not a resumed one — QA is proven against the first begin.
#[test]
fn a_half_written_begin_is_adopted_with_a_first_begin_event() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let dir = s.paths().experiment_dir(1);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("hypothesis.md"), "Cache ASTs\n").unwrap();
    let begun = s.begin_keyed("Cache ASTs", Some("r/begin/1")).unwrap();
    assert_eq!((begun.id, begun.resumed), (1, true));
    let events = crate::events::read_kind(s.paths(), kinds::EXPERIMENT_BEGIN).unwrap();
    let resumed: Vec<bool> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ExperimentBegin { resumed, .. } => Some(*resumed),
            _ => None,
        })
        .collect();
    assert_eq!(resumed, [false]);
    // A begin of the same key again is a resumed one.
    s.begin_keyed("Cache ASTs", Some("r/begin/1")).unwrap();
    let events = crate::events::read_kind(s.paths(), kinds::EXPERIMENT_BEGIN).unwrap();
    assert!(matches!(
        events.last().map(|e| &e.data),
        Some(EventData::ExperimentBegin { resumed: true, .. })
    ));
}

/// A row (or verdict file) that `factory finalize` did not write is not a verdict: with
/// a log that verifies and has no finalize event for it, history ignores it and says so.
#[test]
fn a_row_no_finalize_event_stands_behind_is_ignored_and_reported() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("honest").unwrap().id;
    s.finalize(id, Outcome::new(Verdict::Revert)).unwrap();
    let forged = s.begin("forged").unwrap().id;
    let mut row = ExperimentRecord::sample(forged, Verdict::Keep, "forged", "");
    row.timestamp = "2026-12-04T00:00:00Z".into();
    files::append(&s.paths().results_tsv(), tsv::encode(&row).as_bytes()).unwrap();

    let h = s.history().unwrap();
    assert_eq!(
        h.records
            .iter()
            .map(|r| (r.id, r.verdict))
            .collect::<Vec<_>>(),
        vec![(id, Verdict::Revert)]
    );
    assert!(
        h.warnings
            .iter()
            .any(|w| w.contains(&format!("experiment {forged}'s `keep`"))
                && w.contains("no verified experiment.finalize")),
        "{:?}",
        h.warnings
    );
}

/// A finalize killed after its row but before its event leaves an unbound row: the
/// next finalize with the same verdict writes the event, and the record stands (once).
#[test]
fn a_finalize_killed_before_its_event_is_healed_by_finalizing_again() {
    let (proj, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(proj.path(), home.path());
    let id = s.begin("half done").unwrap().id;
    let mut row = ExperimentRecord::sample(id, Verdict::Revert, "half done", "");
    row.timestamp = "2026-12-04T00:00:00Z".into();
    let mut text = tsv::header();
    text.push_str(&tsv::encode(&row));
    fs::write(s.paths().results_tsv(), text).unwrap();
    assert!(
        s.history().unwrap().records.is_empty(),
        "unbound until its event"
    );

    let healed = s.finalize(id, Outcome::new(Verdict::Revert)).unwrap();
    assert_eq!(healed.verdict, Verdict::Revert);
    let h = s.history().unwrap();
    assert_eq!(h.records.len(), 1, "{:?}", h.warnings);
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    assert!(matches!(
        s.finalize(id, Outcome::new(Verdict::Revert)),
        Err(StoreError::AlreadyFinalized { .. })
    ));
    assert!(matches!(
        s.finalize(id, Outcome::new(Verdict::Keep)),
        Err(StoreError::AlreadyFinalized { .. })
    ));
}
