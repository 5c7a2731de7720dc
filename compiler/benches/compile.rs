//! How long checking a `.fwf` file takes: cold (a fresh database), by phase, and
//! incrementally after a one-node edit or a comment-only edit.
//!
//! Run: `cargo bench -p factory-compiler --bench compile -- --warm-up-time 1 --measurement-time 3`
//! (figures and their meaning: docs/performance.md).

use std::collections::BTreeSet;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use factory_compiler::check::file_diagnostics;
use factory_compiler::db::{Database, Loader};
use factory_compiler::format::format;
use factory_compiler::host::BUILTIN_ROLES;
use factory_compiler::ide::lex;
use factory_compiler::testgen::{layered_workflow, phases};

/// The allocator of the `factory` binary, so the figures are what a user gets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const KEY: &str = "layered.fwf";
const SIZES: [usize; 2] = [1_000, 10_000];

struct NoFiles;

impl Loader for NoFiles {
    fn load(&self, _key: &str) -> Option<String> {
        None
    }
}

fn roles() -> Option<BTreeSet<String>> {
    Some(BUILTIN_ROLES.iter().map(|r| r.to_string()).collect())
}

fn fresh_db() -> Database {
    Database::new(Arc::new(NoFiles), roles())
}

/// The same workflow with one attribute of one node (a head in the middle) changed.
fn with_timeout_edit(text: &str) -> String {
    let layer = text.matches("agent l").count() / 8;
    let head = format!("agent l{layer}_head {{");
    let at = text
        .find(&head)
        .expect("the generated workflow has this head");
    let rel = text[at..]
        .find("timeout: 600")
        .expect("heads have a timeout");
    let mut out = text.to_string();
    out.replace_range(at + rel..at + rel + "timeout: 600".len(), "timeout: 601");
    out
}

/// The same workflow with one comment line added in the middle.
fn with_comment_edit(text: &str) -> String {
    let layer = text.matches("agent l").count() / 8;
    let head = format!("    /// Plans layer {layer}.");
    let at = text
        .find(&head)
        .expect("the generated workflow has this doc line");
    let mut out = text.to_string();
    out.insert_str(at, "    // a note that changes nothing\n");
    out
}

fn cold(c: &mut Criterion) {
    let mut group = c.benchmark_group("cold");
    for n in SIZES {
        let text = layered_workflow(n);
        if n >= 10_000 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::new("check", n), &text, |b, text| {
            b.iter_batched(
                || text.clone(),
                |text| {
                    let mut db = fresh_db();
                    let file = db.set_text(KEY, text);
                    assert!(file_diagnostics(&db, file).is_empty());
                    // Returned so that dropping the database is not timed.
                    db
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// Each phase alone; like the cold check, the time to drop the result is not counted.
fn phases(c: &mut Criterion) {
    let mut group = c.benchmark_group("phase");
    for n in SIZES {
        let text = layered_workflow(n);
        let parsed = phases::parse(&text);
        assert!(parsed.errors.is_empty());
        let ast = &parsed.ast;
        let roles = roles();
        let lowered = phases::lower(KEY, ast, roles.as_ref()).expect("a workflow");
        assert!(lowered.findings.is_empty());
        if n >= 10_000 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::new("lex", n), &text, |b, text| {
            b.iter_with_large_drop(|| lex(black_box(text)))
        });
        group.bench_with_input(BenchmarkId::new("outline", n), &text, |b, text| {
            b.iter(|| phases::outline(black_box(text)))
        });
        group.bench_with_input(BenchmarkId::new("format", n), &text, |b, text| {
            b.iter_with_large_drop(|| format(black_box(text)))
        });
        group.bench_with_input(BenchmarkId::new("parse", n), &text, |b, text| {
            b.iter_with_large_drop(|| phases::parse(black_box(text)))
        });
        group.bench_with_input(BenchmarkId::new("lower", n), ast, |b, ast| {
            b.iter_with_large_drop(|| phases::lower(KEY, black_box(ast), roles.as_ref()))
        });
        group.bench_with_input(BenchmarkId::new("validate", n), &lowered.ir, |b, ir| {
            b.iter_with_large_drop(|| {
                let findings = phases::validate(black_box(ir), roles.clone());
                assert!(findings.is_empty());
                findings
            })
        });
    }
    group.finish();
}

/// One long-lived database; each iteration switches to the other text, so every
/// iteration re-checks a real change.
fn recheck(c: &mut Criterion, name: &str, edit: fn(&str) -> String) {
    let mut group = c.benchmark_group(name);
    for n in SIZES {
        let a = layered_workflow(n);
        let b = edit(&a);
        assert_ne!(a, b);
        if n >= 10_000 {
            group.sample_size(10);
        }
        let mut db = fresh_db();
        let file = db.set_text(KEY, a.clone());
        assert!(file_diagnostics(&db, file).is_empty());
        let texts = [a, b];
        let mut turn = 0usize;
        group.bench_function(BenchmarkId::new("recheck", n), |bench| {
            bench.iter_batched(
                || {
                    turn += 1;
                    texts[turn % 2].clone()
                },
                |text| {
                    db.set_text(KEY, text);
                    assert!(file_diagnostics(&db, file).is_empty());
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn attribute_edit(c: &mut Criterion) {
    recheck(c, "edit_attribute", with_timeout_edit);
}

fn comment_edit(c: &mut Criterion) {
    recheck(c, "edit_comment", with_comment_edit);
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = cold, phases, attribute_edit, comment_edit
}
criterion_main!(benches);
