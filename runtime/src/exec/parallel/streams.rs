//! The independence gate: which hypotheses may run at the same time. Two hypotheses
//! whose intended files overlap — one file, a glob matching the other's file, or both
//! touching the same kind of shared file (a lock or manifest, a schema, a migration,
//! generated code) — run in one sequential stream; hypotheses linked through others
//! share that stream too. Everything else runs in parallel.

use globset::{Glob, GlobMatcher};

use super::plan::Hypothesis;

/// Hypotheses that run one after another (a single one runs alone, in parallel with
/// the other streams).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// Plan indices (1-based), in plan order.
    pub hypotheses: Vec<usize>,
    /// Why they were put together, one line per overlapping pair.
    pub reasons: Vec<String>,
}

/// Kinds of file that two hypotheses may not change at the same time even when they
/// change different files of the kind.
const SHARED_KINDS: &[(&str, &[&str])] = &[
    (
        "a lock or manifest file",
        &[
            "**/Cargo.lock",
            "**/Cargo.toml",
            "**/package.json",
            "**/package-lock.json",
            "**/yarn.lock",
            "**/pnpm-lock.yaml",
            "**/go.mod",
            "**/go.sum",
            "**/pyproject.toml",
            "**/poetry.lock",
            "**/uv.lock",
            "**/requirements*.txt",
            "**/setup.py",
            "**/setup.cfg",
            "**/Gemfile.lock",
        ],
    ),
    // Before schemas: a migration is usually SQL too, and is named as what it is.
    ("a migration", &["**/migrations/**", "**/migrate/**"]),
    (
        "a schema",
        &[
            "**/schema.*",
            "**/*.proto",
            "**/*.graphql",
            "**/*.avsc",
            "**/*.sql",
        ],
    ),
    (
        "generated code",
        &[
            "**/generated/**",
            "**/gen/**",
            "**/*.pb.go",
            "**/*_pb2.py",
            "**/*.generated.*",
        ],
    ),
];

/// One intended file or glob of a hypothesis.
struct Target {
    text: String,
    matcher: Option<GlobMatcher>,
}

impl Target {
    fn new(text: &str) -> Self {
        let text = text.trim_start_matches("./").to_string();
        let is_glob = text.contains(['*', '?', '[', '{']);
        let matcher = is_glob
            .then(|| Glob::new(&text).ok().map(|g| g.compile_matcher()))
            .flatten();
        Self { text, matcher }
    }

    /// The literal part before the first wildcard (`src/words/` of `src/words/*.rs`).
    fn prefix(&self) -> &str {
        let end = self
            .text
            .find(['*', '?', '[', '{'])
            .unwrap_or(self.text.len());
        &self.text[..end]
    }

    fn overlaps(&self, other: &Target) -> bool {
        match (&self.matcher, &other.matcher) {
            (None, None) => self.text == other.text,
            (Some(m), None) => m.is_match(&other.text),
            (None, Some(m)) => m.is_match(&self.text),
            // Two globs: overlapping unless their literal prefixes diverge.
            (Some(_), Some(_)) => {
                self.prefix().starts_with(other.prefix())
                    || other.prefix().starts_with(self.prefix())
            }
        }
    }
}

/// The kinds of shared file `target` is (or, for a glob, may be).
fn kinds(target: &Target) -> Vec<&'static str> {
    SHARED_KINDS
        .iter()
        .filter(|(_, globs)| {
            globs.iter().any(|g| {
                Glob::new(g).is_ok_and(|g| {
                    let m = g.compile_matcher();
                    m.is_match(&target.text) || m.is_match(target.prefix())
                })
            })
        })
        .map(|(kind, _)| *kind)
        .collect()
}

/// Why `a` and `b` cannot run at the same time, if they cannot.
fn conflict(a: &[Target], b: &[Target]) -> Option<String> {
    for x in a {
        for y in b {
            if x.overlaps(y) {
                return Some(if x.text == y.text {
                    format!("both change {}", x.text)
                } else {
                    format!("{} overlaps {}", x.text, y.text)
                });
            }
        }
    }
    for x in a {
        for kind in kinds(x) {
            if let Some(y) = b.iter().find(|y| kinds(y).contains(&kind)) {
                return Some(format!("both change {kind} ({} and {})", x.text, y.text));
            }
        }
    }
    None
}

/// Groups `hypotheses` into streams. A hypothesis that names no file is taken to touch
/// the whole `scope`, so it runs in the stream of any hypothesis inside the scope.
pub fn streams(hypotheses: &[Hypothesis], scope: &[String]) -> Vec<Stream> {
    let targets: Vec<Vec<Target>> = hypotheses
        .iter()
        .map(|h| {
            let files = if h.files.is_empty() { scope } else { &h.files };
            files.iter().map(|f| Target::new(f)).collect()
        })
        .collect();
    // Union-find over plan positions.
    let mut parent: Vec<usize> = (0..hypotheses.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut reasons: Vec<(usize, usize, String)> = Vec::new();
    for i in 0..hypotheses.len() {
        for j in i + 1..hypotheses.len() {
            if let Some(why) = conflict(&targets[i], &targets[j]) {
                reasons.push((i, j, why));
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                parent[rj.max(ri)] = rj.min(ri);
            }
        }
    }
    let mut out: Vec<(usize, Stream)> = Vec::new();
    for (i, hyp) in hypotheses.iter().enumerate() {
        let r = root(&mut parent, i);
        match out.iter_mut().find(|(root, _)| *root == r) {
            Some((_, s)) => s.hypotheses.push(hyp.index),
            None => out.push((
                r,
                Stream {
                    hypotheses: vec![hyp.index],
                    reasons: Vec::new(),
                },
            )),
        }
    }
    for (i, j, why) in reasons {
        let r = root(&mut parent, i);
        if let Some((_, s)) = out.iter_mut().find(|(root, _)| *root == r) {
            s.reasons.push(format!(
                "hypotheses {} and {}: {why}",
                hypotheses[i].index, hypotheses[j].index
            ));
        }
    }
    out.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(index: usize, files: &[&str]) -> Hypothesis {
        Hypothesis {
            index,
            written_number: Some(index as u32),
            line: index,
            title: format!("h{index}"),
            text: format!("hypothesis {index}"),
            files: files.iter().map(|f| f.to_string()).collect(),
            success: None,
        }
    }

    fn groups(streams: &[Stream]) -> Vec<Vec<usize>> {
        streams.iter().map(|s| s.hypotheses.clone()).collect()
    }

    #[test]
    fn disjoint_files_run_in_parallel_and_a_shared_file_in_one_stream() {
        let hs = [
            h(1, &["src/parse.rs"]),
            h(2, &["src/eval.rs"]),
            h(3, &["./src/parse.rs", "docs/a.md"]),
        ];
        let s = streams(&hs, &["src/**".into()]);
        assert_eq!(groups(&s), vec![vec![1, 3], vec![2]]);
        assert_eq!(
            s[0].reasons,
            vec!["hypotheses 1 and 3: both change src/parse.rs"]
        );
        assert!(s[1].reasons.is_empty());
    }

    #[test]
    fn globs_overlap_the_files_and_globs_they_cover() {
        let hs = [
            h(1, &["src/words/*.rs"]),
            h(2, &["src/words/count.rs"]),
            h(3, &["src/other/**"]),
            h(4, &["src/**/*.rs"]),
        ];
        let s = streams(&hs, &[]);
        assert_eq!(groups(&s), vec![vec![1, 2, 3, 4]], "{s:#?}");
        let hs = [h(1, &["src/words/*.rs"]), h(2, &["tests/*.rs"])];
        assert_eq!(groups(&streams(&hs, &[])), vec![vec![1], vec![2]]);
    }

    #[test]
    fn shared_kinds_of_file_serialise_different_files_of_the_kind() {
        for (a, b, kind) in [
            (
                "Cargo.toml",
                "crates/x/Cargo.toml",
                "a lock or manifest file",
            ),
            (
                "db/migrations/001.sql",
                "db/migrations/002.sql",
                "a migration",
            ),
            ("api/users.proto", "api/orders.proto", "a schema"),
            ("src/generated/a.rs", "web/generated/b.ts", "generated code"),
        ] {
            let hs = [h(1, &[a, "src/a.rs"]), h(2, &["src/b.rs", b])];
            let s = streams(&hs, &[]);
            assert_eq!(groups(&s), vec![vec![1, 2]], "{a} {b}");
            assert!(s[0].reasons[0].contains(kind), "{:?}", s[0].reasons);
        }
    }

    #[test]
    fn a_hypothesis_naming_no_file_takes_the_whole_scope() {
        let hs = [h(1, &["src/a.rs"]), h(2, &[]), h(3, &["docs/x.md"])];
        let s = streams(&hs, &["src/**".into()]);
        assert_eq!(groups(&s), vec![vec![1, 2], vec![3]]);
    }

    #[test]
    fn links_through_a_third_hypothesis_join_one_stream() {
        let hs = [
            h(1, &["a.rs"]),
            h(2, &["b.rs"]),
            h(3, &["a.rs", "b.rs"]),
            h(4, &["c.rs"]),
        ];
        let s = streams(&hs, &[]);
        assert_eq!(groups(&s), vec![vec![1, 2, 3], vec![4]]);
        assert_eq!(s[0].reasons.len(), 2);
    }
}
