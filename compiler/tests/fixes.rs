//! Diagnostics keep their structure, checked over the fixtures of
//! `tests/diagnostics/`: every finding says what it is about (its subject), and every
//! machine-applicable fix, applied, removes the finding it fixes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use factory_compiler::check::file_diagnostics;
use factory_compiler::db::{Database, Db, Loader};
use factory_compiler::diagnostic::{Code, Diagnostic, FixEdits};
use factory_compiler::host::BUILTIN_ROLES;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics")
}

struct DirLoader(PathBuf);

impl Loader for DirLoader {
    fn load(&self, key: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(key)).ok()
    }
}

fn builtin_roles() -> BTreeSet<String> {
    BUILTIN_ROLES.iter().map(|r| r.to_string()).collect()
}

fn check(db: &Database, key: &str) -> Vec<Diagnostic> {
    file_diagnostics(db, db.file(key)).clone()
}

fn fixture_db() -> Database {
    Database::new(Arc::new(DirLoader(fixtures())), Some(builtin_roles()))
}

#[test]
fn every_finding_of_the_fixtures_has_a_subject() {
    let mut missing = Vec::new();
    for &code in Code::ALL {
        let key = format!("{}.fwf", code.as_str());
        for d in check(&fixture_db(), &key) {
            if d.code != Code::Syntax && d.subject.is_none() {
                missing.push(format!("{key}: {} {}", d.code.as_str(), d.message));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "findings without a subject:\n{}",
        missing.join("\n")
    );
}

/// Applies the text edits of `fix` to `text` (last first, as `check --fix` does).
fn apply(text: &str, fix: &FixEdits) -> String {
    let mut edits: Vec<_> = fix.edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse((e.range.start, e.range.end)));
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.range.clone(), &e.replacement);
    }
    out
}

/// The codes whose fixtures carry a fix: each fix must remove its finding.
const FIXED: &[Code] = &[
    Code::UnknownRole,
    Code::ForkWithoutJoin,
    Code::UnboundedReloop,
    Code::UnusedImport,
    Code::UnusedKnob,
];

#[test]
fn each_fix_applied_removes_its_finding() {
    for &code in Code::ALL {
        let key = format!("{}.fwf", code.as_str());
        let db = fixture_db();
        let diags = check(&db, &key);
        let fixable: Vec<&Diagnostic> = diags.iter().filter(|d| d.fix.is_some()).collect();
        assert_eq!(
            !fixable.is_empty(),
            FIXED.contains(&code),
            "{key}: fixes on {:?}",
            fixable.iter().map(|d| d.code.as_str()).collect::<Vec<_>>()
        );
        for d in fixable {
            let Some(fix) = d.fix.as_ref() else { continue };
            let mut db = fixture_db();
            for e in &fix.edits {
                assert_eq!(
                    e.file, d.file,
                    "{key}: an edit outside the diagnostic's file"
                );
            }
            let text = db.file(&d.file).text(&db).clone();
            db.set_text(&d.file, apply(&text, fix));
            // A created prompt gives its role a prompt; the server and the command line
            // learn of it by discovering roles again.
            let mut roles = builtin_roles();
            for c in &fix.creates {
                let path = Path::new(&c.path);
                assert_eq!(
                    path.parent().and_then(Path::file_name),
                    Some("prompts".as_ref()),
                    "{key}: a prompt goes in prompts/"
                );
                assert!(c.contents.starts_with('#'), "{key}: {}", c.contents);
                roles.extend(path.file_stem().map(|s| s.to_string_lossy().into_owned()));
            }
            db.set_roles(Some(roles));
            let after = check(&db, &key);
            let still: Vec<&Diagnostic> = after
                .iter()
                .filter(|a| a.code == d.code && a.subject == d.subject)
                .collect();
            assert!(
                still.is_empty(),
                "{key}: `{}` left {still:#?}\nin:\n{}",
                fix.title,
                db.file(&d.file).text(&db)
            );
            let errors: Vec<&str> = after
                .iter()
                .filter(|a| a.is_error())
                .map(|a| a.code.as_str())
                .collect();
            assert!(
                errors.is_empty(),
                "{key}: `{}` leaves errors {errors:?}",
                fix.title
            );
        }
    }
}
