//! Full extract and no-change update of this repository's own sources.
//!
//! `cargo bench -p factory-graph --bench extract -- --warm-up-time 1 --measurement-time 5`

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."));
    let Ok((graph, _)) = factory_graph::extract(root, None) else {
        eprintln!(
            "{} is not a git checkout; nothing to measure",
            root.display()
        );
        return;
    };
    let mut group = c.benchmark_group("graph");
    group.sample_size(10);
    group.bench_function("extract/factory", |b| {
        b.iter(|| factory_graph::extract(root, None).map(|(g, _)| g.links.len()))
    });
    group.bench_function("update-unchanged/factory", |b| {
        b.iter(|| factory_graph::update(root, graph.clone(), None).map(|(g, _)| g.links.len()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
