//! The dataflow rule (FWF101): a read must be written by a node upstream of the reader.

use std::sync::Arc;

use factory_compiler::check::file_diagnostics;
use factory_compiler::db::{Database, Loader};
use factory_compiler::diagnostic::Code;
use factory_compiler::testgen::layered_workflow;

struct NoFiles;

impl Loader for NoFiles {
    fn load(&self, _key: &str) -> Option<String> {
        None
    }
}

/// The messages of the dataflow warnings of `text`, in the order reported.
fn unread(text: &str) -> Vec<String> {
    let mut db = Database::new(Arc::new(NoFiles), None);
    let file = db.set_text("w.fwf", text.to_string());
    let diags = file_diagnostics(&db, file);
    let other: Vec<_> = diags
        .iter()
        .filter(|d| d.code != Code::UnreadArtifact)
        .collect();
    assert!(other.is_empty(), "unexpected diagnostics: {other:#?}");
    diags
        .iter()
        .filter(|d| d.code == Code::UnreadArtifact)
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn a_read_of_an_upstream_write_is_fine() {
    let text = r#"workflow w {
        agent a { writes: plan = "p.md" }
        agent b { reads: plan }
        agent c { reads: "p.md" }
        flow { start -> a -> b -> c -> end }
    }"#;
    assert_eq!(unread(text), Vec::<String>::new());
}

#[test]
fn a_read_before_the_write_is_reported() {
    let text = r#"workflow w {
        agent a { reads: "p.md" }
        agent b { writes: "p.md" }
        flow { start -> a -> b -> end }
    }"#;
    let found = unread(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("`a` reads `p.md`"), "{found:?}");
}

#[test]
fn a_node_does_not_satisfy_its_own_read() {
    let text = r#"workflow w {
        agent a { reads: "p.md" writes: "p.md" }
        flow { start -> a -> end }
    }"#;
    assert_eq!(unread(text).len(), 1);
}

#[test]
fn a_write_reached_only_through_a_reloop_does_not_count() {
    let text = r#"workflow w {
        agent a { reads: "p.md" }
        agent b { writes: "p.md" }
        gate g by agent(ceo) "again?"
        flow {
            start -> a -> b -> g
            g.proceed -> end
            g.halt -> end
            g.reloop(max 2) -> a
        }
    }"#;
    let found = unread(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("`a` reads"), "{found:?}");
}

#[test]
fn inputs_need_no_writer() {
    let text = r#"workflow w {
        input goal = "goal.md"
        agent a { reads: goal }
        agent b { reads: "goal.md" }
        flow { start -> a -> b -> end }
    }"#;
    assert_eq!(unread(text), Vec::<String>::new());
}

#[test]
fn a_sibling_branch_is_not_upstream_but_the_join_sees_both() {
    let text = r#"workflow w {
        fork f
        agent a { writes: "a.md" }
        agent b { reads: "a.md" writes: "b.md" }
        join j
        agent after { reads: "a.md", "b.md" }
        flow { start -> f -> a, b -> j -> after -> end }
    }"#;
    let found = unread(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("`b` reads `a.md`"), "{found:?}");
}

/// Many artifacts (several 64-bit words of them): a read broken far from the first
/// artifacts is still found, and only it.
#[test]
fn reads_past_the_first_64_artifacts_are_checked() {
    let text = layered_workflow(1000);
    assert_eq!(unread(&text), Vec::<String>::new());
    // Layer 119's gate (the first node to read its outputs) reads layer 121's instead,
    // written after it.
    let broken = text.replacen(
        "reads: l119_out1, l119_out2, l119_out3",
        "reads: l121_out1, l119_out2, l119_out3",
        1,
    );
    assert_ne!(broken, text);
    let found = unread(&broken);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("`l119_gate` reads `l121_out1`"),
        "{found:?}"
    );
}

#[test]
fn a_node_entered_only_by_a_reloop_sees_what_reached_its_gate() {
    // `fix` runs only when `check` sends work back, after `review` wrote its report.
    let text = r#"workflow w {
        agent review { writes: report = "r.md" }
        gate check by agent(ceo) "ok?" { reads: report }
        agent fix { reads: report writes: "f.md" }
        flow {
            start -> review -> check
            fix -> review
            check.proceed -> end
            check.reloop(max 2) -> fix
            check.halt -> end
        }
    }"#;
    assert!(unread(text).is_empty(), "{:?}", unread(text));
    // A node also entered forwards gets no such credit on its first run.
    let forward = text.replace(
        "start -> review -> check",
        "start -> fix -> review -> check",
    );
    assert_eq!(unread(&forward).len(), 1);
}
