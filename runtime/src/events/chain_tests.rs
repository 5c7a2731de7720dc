use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::events::{EventData, append_in_home};

struct Log {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Log {
    fn new(n: u32) -> Self {
        let log = Self {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        for i in 1..=n {
            log.append(i);
        }
        log
    }
    fn paths(&self) -> FactoryPaths {
        FactoryPaths::new(self.project.path())
    }
    fn append(&self, i: u32) {
        let event = Event::raw("agent.completed")
            .with("role", "health_checker")
            .with("exp_id", i);
        append_in_home(&self.paths(), self.home.path(), &event).unwrap();
    }
    fn key(&self) -> ChainKey {
        ChainKey::in_home(self.home.path(), &self.paths()).unwrap()
    }
    fn verify(&self) -> Result<VerifiedLog, ChainError> {
        verify_with(&self.paths(), &self.key())
    }
    fn text(&self) -> String {
        fs::read_to_string(self.paths().events_jsonl()).unwrap()
    }
    fn write(&self, text: &str) {
        fs::write(self.paths().events_jsonl(), text).unwrap();
    }
    fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_string).collect()
    }
    fn write_lines(&self, lines: &[String]) {
        self.write(&(lines.join("\n") + "\n"));
    }
    fn head_path(&self) -> std::path::PathBuf {
        self.key().head_path()
    }
    fn head(&self) -> Head {
        serde_json::from_slice(&fs::read(self.head_path()).unwrap()).unwrap()
    }
    /// The line the verification failed at.
    fn broken_at(&self) -> usize {
        let err = self.verify().unwrap_err();
        err.line().unwrap_or_else(|| panic!("no line in {err}"))
    }
}

const FORGED: &str = r#"{"type":"agent.completed","timestamp":"2026-01-01T00:00:00Z","role":"code_reviewer","exp_id":1}"#;

#[test]
fn an_untouched_log_verifies_with_every_line() {
    let log = Log::new(4);
    let v = log.verify().unwrap();
    assert_eq!(
        v.events.iter().map(|e| e.line).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert!(v.foreign.is_empty());
    // Readers see the event without its seal.
    assert!(v.events[0].event.get(CHAIN_FIELD).is_none());
    assert!(log.lines()[0].ends_with("\"}") && log.lines()[0].contains(",\"chain\":\""));
}

#[test]
fn the_key_lives_in_the_factory_home_with_mode_0600() {
    let log = Log::new(1);
    let key = log.key();
    assert!(key.path().starts_with(log.home.path().join("keys")));
    assert!(!key.path().starts_with(log.project.path()));
    let mode = fs::metadata(key.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Another key does not verify this log.
    let other = tempfile::tempdir().unwrap();
    let err = verify_with(
        &log.paths(),
        &ChainKey::in_home(other.path(), &log.paths()).unwrap(),
    )
    .unwrap_err();
    assert_eq!(err.line(), Some(1));
}

#[test]
fn a_forged_line_at_the_end_fails_at_its_line() {
    let log = Log::new(3);
    log.write(&(log.text() + FORGED + "\n"));
    assert_eq!(log.broken_at(), 4);
    // A forged line with a made-up chain fails at its own line too.
    let log = Log::new(3);
    let fake =
        FORGED.trim_end_matches('}').to_string() + &format!(",\"chain\":\"{}\"}}", "ab".repeat(32));
    log.write(&(log.text() + &fake + "\n"));
    assert_eq!(log.broken_at(), 4);
}

#[test]
fn a_line_inserted_between_chained_lines_is_named() {
    let log = Log::new(3);
    let mut lines = log.lines();
    lines.insert(1, FORGED.into());
    log.write_lines(&lines);
    let err = log.verify().unwrap_err();
    assert_eq!(err.line(), Some(2), "{err}");
    assert!(err.to_string().contains("inserted"), "{err}");
}

#[test]
fn an_edited_field_fails_at_its_line() {
    let log = Log::new(3);
    let mut lines = log.lines();
    lines[1] = lines[1].replace("health_checker", "code_reviewer");
    log.write_lines(&lines);
    assert_eq!(log.broken_at(), 2);
}

#[test]
fn two_swapped_lines_fail_at_the_first() {
    let log = Log::new(4);
    let mut lines = log.lines();
    lines.swap(1, 2);
    log.write_lines(&lines);
    assert_eq!(log.broken_at(), 2);
}

#[test]
fn a_deleted_middle_line_fails_where_it_was() {
    let log = Log::new(4);
    let mut lines = log.lines();
    lines.remove(1);
    log.write_lines(&lines);
    assert_eq!(log.broken_at(), 2);
    // Deleting the first line breaks the next one too.
    let log = Log::new(3);
    let lines = log.lines();
    log.write_lines(&lines[1..]);
    assert_eq!(log.broken_at(), 1);
}

#[test]
fn a_torn_last_line_fails_and_the_next_append_repairs_it() {
    let log = Log::new(2);
    // What a crash mid-append leaves: half a line after the last anchored one.
    let torn = "{\"type\":\"agent.completed\",\"timestamp\":\"2026-";
    log.write(&(log.text() + torn));
    let err = log.verify().unwrap_err();
    assert_eq!(err.line(), Some(3), "{err}");
    assert!(err.to_string().contains("incomplete"), "{err}");
    // The next append terminates the torn line and witnesses it; it is kept, but
    // never as an event, and the head follows.
    log.append(9);
    let v = log.verify().unwrap();
    assert_eq!(
        v.events.iter().map(|e| e.line).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    assert_eq!(v.foreign.len(), 1);
    assert_eq!(v.foreign[0].line, 3);
    assert_eq!(log.lines().len(), 4);
    assert_eq!(log.head().line, 4);
}

#[test]
fn an_anchored_last_line_cut_short_stays_a_cut_after_the_next_append() {
    let log = Log::new(3);
    let text = log.text();
    log.write(&text[..text.len() - 7]);
    assert!(log.verify().unwrap_err().to_string().contains("incomplete"));
    // An append does not hide the cut: the head still names line 3's chain.
    log.append(9);
    let err = log.verify().unwrap_err();
    assert!(
        matches!(err, ChainError::Truncated { last: 3, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("line 3 is not the last verified append"),
        "{err}"
    );
}

#[test]
fn foreign_lines_a_later_append_witnessed_are_sealed_but_never_events() {
    let log = Log::new(2);
    log.write(&(log.text() + FORGED + "\n"));
    log.append(3);
    let v = log.verify().unwrap();
    assert_eq!(
        v.events.iter().map(|e| e.line).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    assert_eq!(v.foreign[0].line, 3);
    // Once witnessed, the foreign line cannot be changed or removed unnoticed.
    let mut lines = log.lines();
    lines[2] = lines[2].replace("code_reviewer", "adversarial_tester");
    log.write_lines(&lines);
    assert_eq!(log.broken_at(), 4);
}

#[test]
fn a_legacy_prefix_is_accepted_only_before_the_first_chained_line() {
    let log = Log::new(0);
    fs::create_dir_all(log.paths().dir()).unwrap();
    let legacy = "{\"type\":\"qa\",\"timestamp\":\"2025-01-01T00:00:00Z\"}\n";
    log.write(&legacy.repeat(2));
    // Only legacy lines: nothing factory wrote, nothing verified.
    assert_eq!(log.broken_at(), 1);
    log.append(1);
    let v = log.verify().unwrap();
    assert_eq!(v.events.len(), 1);
    assert_eq!(v.events[0].line, 3);
    assert_eq!(v.foreign.iter().map(|f| f.line).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn appends_read_only_the_tail_even_past_a_long_line() {
    let log = Log::new(1);
    let big = "x".repeat(50_000);
    append_in_home(
        &log.paths(),
        log.home.path(),
        &Event::raw("note").with("text", big.as_str()),
    )
    .unwrap();
    // A long foreign stretch too: the tail is read back in blocks.
    log.write(&(log.text() + &format!("{{\"junk\":\"{big}\"}}\n") + FORGED + "\n"));
    log.append(2);
    log.append(3);
    let v = log.verify().unwrap();
    assert_eq!(
        v.events.iter().map(|e| e.line).collect::<Vec<_>>(),
        [1, 2, 5, 6]
    );
    assert!(matches!(v.events[2].event.data, EventData::Other { .. }));
}

#[test]
fn a_missing_log_verifies_as_empty() {
    let log = Log::new(0);
    assert_eq!(log.verify().unwrap(), VerifiedLog::default());
}

#[test]
fn the_head_record_lives_next_to_the_key_and_follows_every_append() {
    let log = Log::new(3);
    let head = log.head_path();
    assert_eq!(head.parent(), log.key().path().parent());
    assert!(!head.starts_with(log.project.path()));
    assert_eq!(log.head().line, 3);
    log.append(4);
    assert_eq!(log.head().line, 4);
    assert!(log.lines()[3].ends_with(&format!("\"{}\"}}", log.head().chain)));
}

#[test]
fn deleting_the_last_line_is_named_with_its_line() {
    let log = Log::new(5);
    let lines = log.lines();
    log.write_lines(&lines[..4]);
    let err = log.verify().unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("the log ends at line 4; the last verified append was line 5")
            && msg.contains("line 5 was deleted"),
        "{msg}"
    );
    assert_eq!(err.line(), Some(5));
}

#[test]
fn deleting_the_last_three_lines_is_named_with_the_range() {
    let log = Log::new(5);
    let lines = log.lines();
    log.write_lines(&lines[..2]);
    let err = log.verify().unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("the log ends at line 2; the last verified append was line 5")
            && msg.contains("lines 3-5 were deleted"),
        "{msg}"
    );
    // An append after the cut does not hide it.
    log.append(6);
    let err = log.verify().unwrap_err();
    assert!(
        matches!(err, ChainError::Truncated { last: 5, .. }),
        "{err}"
    );
    // Nor does deleting the whole log.
    fs::remove_file(log.paths().events_jsonl()).unwrap();
    let err = log.verify().unwrap_err();
    assert!(
        err.to_string()
            .contains("the log ends at line 0; the last verified append was line 5"),
        "{err}"
    );
}

#[test]
fn a_crash_between_the_append_and_the_head_update_is_tolerated_and_repaired() {
    let log = Log::new(3);
    let old = fs::read(log.head_path()).unwrap();
    log.append(4);
    // The head as a kill right after the log append leaves it: one line behind.
    fs::write(log.head_path(), &old).unwrap();
    let v = log.verify().unwrap();
    assert_eq!(v.events.len(), 4);
    // The next append repairs it.
    log.append(5);
    assert_eq!(log.head().line, 5);
    log.verify().unwrap();
    // Two lines behind is not a crash window.
    let old = fs::read(log.head_path()).unwrap();
    log.append(6);
    log.append(7);
    fs::write(log.head_path(), &old).unwrap();
    let err = log.verify().unwrap_err();
    assert!(err.to_string().contains("older than the log"), "{err}");
}

#[test]
fn a_forged_head_record_is_rejected() {
    let log = Log::new(5);
    let lines = log.lines();
    log.write_lines(&lines[..3]);
    // The agent rewrites the head to match the cut log, without the key.
    let mut head = log.head();
    head.line = 3;
    head.chain = lines[2][lines[2].len() - 66..lines[2].len() - 2].to_string();
    fs::write(log.head_path(), serde_json::to_vec(&head).unwrap()).unwrap();
    let err = log.verify().unwrap_err();
    assert!(matches!(err, ChainError::Head { .. }), "{err}");
    assert!(err.to_string().contains("does not verify"), "{err}");
    // Garbage is rejected too.
    fs::write(log.head_path(), "{}").unwrap();
    assert!(matches!(log.verify().unwrap_err(), ChainError::Head { .. }));
}

#[test]
fn a_legacy_log_without_a_head_is_accepted_then_anchored() {
    let log = Log::new(3);
    fs::remove_file(log.head_path()).unwrap();
    assert_eq!(log.verify().unwrap().events.len(), 3);
    log.append(4);
    assert_eq!(log.head().line, 4);
    let lines = log.lines();
    log.write_lines(&lines[..3]);
    let err = log.verify().unwrap_err();
    assert!(err.to_string().contains("the log ends at line 3"), "{err}");
}

#[test]
fn a_removed_log_starts_a_new_chain_where_an_emptied_one_stays_broken() {
    // `.factory/` removed (or a new project at the same path): the next append starts
    // a chain that verifies, instead of failing every write for good.
    let log = Log::new(3);
    fs::remove_file(log.paths().events_jsonl()).unwrap();
    log.append(4);
    log.append(5);
    let verified = log.verify().unwrap();
    assert_eq!(verified.events.len(), 2);
    assert_eq!(log.head().line, 2);

    // Lines cut from a log that is still there are still named.
    let log = Log::new(3);
    log.write("");
    log.append(4);
    assert!(log.verify().is_err());
}
