//! Making an experiment's repository on a 10,000-file repository: `worktrees::create`
//! (git2: a repository of its own borrowing the project's objects through alternates,
//! checked out) against `git worktree add` on the same repository. The aim: factory is
//! no slower. Figures in docs/performance.md.
//!
//! The repository is set up once in a temp dir: 10,000 files of about 600 bytes in 100
//! directories, one commit on `main`. Each case times the creation alone (removal is
//! outside the timer) and, as a second case, creation and removal together.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use factory_runtime::worktrees;

const FILES: usize = 10_000;
const DIRS: usize = 100;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository of `FILES` files on `main`, `.factory/` ignored.
fn repository() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    git(root, &["init", "-q", "-b", "main"]);
    fs::write(root.join(".gitignore"), ".factory/\n").expect("write");
    for d in 0..DIRS {
        let dir = root.join(format!("src/m{d:03}"));
        fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..FILES / DIRS {
            let body = format!(
                "// module {d} file {f}\n{}",
                "pub fn f() -> u32 { 42 }\n".repeat(24)
            );
            fs::write(dir.join(format!("f{f:03}.rs")), body).expect("write");
        }
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "10,000 files"]);
    tmp
}

/// Times `make` alone over `iters` rounds, undoing each with `undo` off the clock.
fn timed(iters: u64, mut make: impl FnMut(u64), mut undo: impl FnMut(u64)) -> Duration {
    let mut total = Duration::ZERO;
    for i in 0..iters {
        let start = Instant::now();
        make(i);
        total += start.elapsed();
        undo(i);
    }
    total
}

fn creation(c: &mut Criterion) {
    let repo = repository();
    let root = repo.path();
    let git_path = |i: u64| root.join(format!(".factory/git-wt/wt-{i}"));
    let git_add = |i: u64| {
        let path = git_path(i);
        git(
            root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("bench/{i}"),
                path.to_str().expect("utf-8 path"),
                "main",
            ],
        );
    };
    let git_remove = |i: u64| {
        let path = git_path(i);
        git(
            root,
            &[
                "worktree",
                "remove",
                "--force",
                path.to_str().expect("utf-8 path"),
            ],
        );
        git(root, &["branch", "-q", "-D", &format!("bench/{i}")]);
    };
    let factory_add = |i: u64| {
        worktrees::create(root, i as u32 + 1, "main").expect("create");
    };
    let factory_remove = |i: u64| {
        worktrees::remove(root, i as u32 + 1, true).expect("remove");
    };

    let mut group = c.benchmark_group("worktree: 10,000 files");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("create: factory (git2)", |b| {
        b.iter_custom(|iters| timed(iters, factory_add, factory_remove))
    });
    group.bench_function("create: git worktree add", |b| {
        b.iter_custom(|iters| timed(iters, git_add, git_remove))
    });
    group.bench_function("create + remove: factory (git2)", |b| {
        b.iter(|| {
            factory_add(0);
            factory_remove(0);
        })
    });
    group.bench_function("create + remove: git worktree add/remove", |b| {
        b.iter(|| {
            git_add(0);
            git_remove(0);
        })
    });
    group.finish();
}

criterion_group!(benches, creation);
criterion_main!(benches);
