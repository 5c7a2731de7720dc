//! Where a node's artifacts live, the checks run on them after the node finishes, and
//! the verdicts gates return.
//!
//! A path under `.factory/` is the project's store; any other relative path belongs to
//! the code, so it resolves in the experiment's worktree once one exists, else in the
//! project. A parallel branch has its own `.factory/` files (reviews, verdicts, its
//! plan) in an overlay under its experiment's directory: it writes there, and reads
//! there first, then from the project's `.factory/`. The store's shared files
//! (results, events, experiments, runs) are never overlaid; they are shared through
//! their locks.

use std::path::{Path, PathBuf};

use factory_compiler::ir::conventions::VERDICT_HEADING;
use factory_compiler::ir::{Check, Label};

/// The two roots an artifact path can be relative to.
#[derive(Debug, Clone)]
pub struct Roots {
    pub project: PathBuf,
    pub worktree: Option<PathBuf>,
    /// A parallel branch's own `.factory/` (see the module doc).
    pub overlay: Option<PathBuf>,
}

/// `.factory/` paths every branch shares through the store's locks.
const SHARED: &[&str] = &[
    "results.tsv",
    "events.jsonl",
    "experiments/",
    "runs/",
    "state/",
    "worktrees/",
    "keys/",
];

impl Roots {
    /// Where `path` is read from: a branch's own copy when it has one.
    pub fn resolve(&self, path: &str) -> PathBuf {
        match self.overlaid(path) {
            Some(own) if own.exists() => own,
            _ => self.shared(path),
        }
    }

    /// Where `path` is written to: a branch writes its `.factory/` files in its overlay.
    pub fn resolve_write(&self, path: &str) -> PathBuf {
        self.overlaid(path).unwrap_or_else(|| self.shared(path))
    }

    fn overlaid(&self, path: &str) -> Option<PathBuf> {
        let rest = path.strip_prefix(".factory/")?;
        if SHARED
            .iter()
            .any(|s| rest == s.trim_end_matches('/') || rest.starts_with(s))
        {
            return None;
        }
        Some(self.overlay.as_ref()?.join(rest))
    }

    fn shared(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        if path.starts_with(".factory/") || path == "factory.md" {
            return self.project.join(p);
        }
        self.worktree.as_deref().unwrap_or(&self.project).join(p)
    }

    /// Where commands and agents work: the worktree when there is one.
    pub fn work_dir(&self) -> &Path {
        self.worktree.as_deref().unwrap_or(&self.project)
    }
}

/// Runs `checks` on `path` (shown as `shown`); the first failure, in words.
pub fn verify(path: &Path, shown: &str, checks: &[Check]) -> Result<(), String> {
    let needs_file = !checks.is_empty();
    if !needs_file {
        return Ok(());
    }
    let meta = std::fs::metadata(path)
        .map_err(|_| format!("`{shown}` was not written (check: exists)"))?;
    for check in checks {
        match check {
            Check::Exists => {}
            Check::MinSize(min) => {
                if meta.len() < *min {
                    return Err(format!(
                        "`{shown}` has {} bytes; at least {min} are required (check: min_size)",
                        meta.len()
                    ));
                }
            }
            Check::Contains(needle) => {
                let text =
                    std::fs::read(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
                if !String::from_utf8_lossy(&text).contains(needle.as_str()) {
                    return Err(format!(
                        "`{shown}` does not contain `{needle}` (check: contains)"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reads the verdict of a verdict file: the first word on the line after `## Verdict`
/// (or on the heading line itself, `## Verdict: PROCEED`). REDIRECT counts as reloop
/// and ABORT as halt, the words of the CEO review protocol (spec §12.2).
pub fn parse_verdict(text: &str) -> Result<Label, String> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        let Some(rest) = strip_heading(trimmed) else {
            continue;
        };
        let candidate = if rest.trim().is_empty() {
            lines
                .by_ref()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
        } else {
            rest
        };
        let word: String = candidate
            .trim_start_matches([':', '*', '`', '-', ' '])
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        return match word.to_ascii_uppercase().as_str() {
            "PROCEED" => Ok(Label::Proceed),
            "RELOOP" | "REDIRECT" => Ok(Label::Reloop),
            "HALT" | "ABORT" => Ok(Label::Halt),
            _ => Err(format!(
                "the line after `{VERDICT_HEADING}` is `{}`; it must be PROCEED, RELOOP or HALT",
                candidate.chars().take(60).collect::<String>()
            )),
        };
    }
    Err(format!("it has no `{VERDICT_HEADING}` heading"))
}

fn strip_heading(line: &str) -> Option<&str> {
    let head = VERDICT_HEADING;
    (line.len() >= head.len() && line[..head.len()].eq_ignore_ascii_case(head))
        .then(|| &line[head.len()..])
}

/// The verdict of a `fn` gate: a JSON object on stdout (`{"verdict": "proceed"}`, or
/// `factory precheck --json`'s `{"passed": true}`), else the exit code: 0 proceed, 1
/// halt. Any other exit without a verdict means the command itself broke (factory's
/// commands exit 2 when they cannot run), which is `None`: the gate fails rather than
/// deciding.
pub fn fn_gate_verdict(stdout: &str, code: Option<i32>) -> Option<Label> {
    if let Some(value) = last_json_object(stdout) {
        if let Some(v) = value.get("verdict").and_then(|v| v.as_str())
            && let Some(label) = Label::parse(&v.to_ascii_lowercase())
            && label.is_verdict()
        {
            return Some(label);
        }
        if let Some(passed) = value.get("passed").and_then(|v| v.as_bool()) {
            return Some(if passed { Label::Proceed } else { Label::Halt });
        }
    }
    match code {
        Some(0) => Some(Label::Proceed),
        Some(1) => Some(Label::Halt),
        _ => None,
    }
}

/// The whole of stdout as one JSON object, else its last line that is one.
fn last_json_object(stdout: &str) -> Option<serde_json::Value> {
    let whole: Option<serde_json::Value> = serde_json::from_str(stdout.trim()).ok();
    whole.filter(|v| v.is_object()).or_else(|| {
        stdout
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
            .find(|v| v.is_object())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_the_line_after_the_heading() {
        assert_eq!(
            parse_verdict("# x\n## Verdict\nPROCEED\n\n## Rationale\n..."),
            Ok(Label::Proceed)
        );
        assert_eq!(
            parse_verdict("## Verdict\n\n**RELOOP**\n"),
            Ok(Label::Reloop)
        );
        assert_eq!(parse_verdict("## verdict: halt"), Ok(Label::Halt));
        assert_eq!(parse_verdict("## Verdict\nABORT"), Ok(Label::Halt));
        assert!(
            parse_verdict("## Verdict\nmaybe later")
                .unwrap_err()
                .contains("maybe later")
        );
        assert!(
            parse_verdict("all good!")
                .unwrap_err()
                .contains("no `## Verdict`")
        );
    }

    #[test]
    fn fn_gates_read_json_then_the_exit_code() {
        let v = fn_gate_verdict;
        assert_eq!(v("{\"verdict\": \"reloop\"}", Some(0)), Some(Label::Reloop));
        assert_eq!(v("{\n \"passed\": false\n}", Some(1)), Some(Label::Halt));
        assert_eq!(
            v("log line\n{\"passed\": true}", Some(1)),
            Some(Label::Proceed)
        );
        assert_eq!(v("no json", Some(0)), Some(Label::Proceed));
        assert_eq!(v("no json", Some(1)), Some(Label::Halt));
        assert_eq!(v("{\"verdict\": \"fail\"}", Some(0)), Some(Label::Proceed));
        // The command could not run (exit 2, a signal): no verdict, the gate fails.
        assert_eq!(v("error: no factory.md", Some(2)), None);
        assert_eq!(v("", None), None);
    }

    #[test]
    fn checks_name_the_file_and_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.md");
        assert!(
            verify(&f, "r.md", &[Check::Exists])
                .unwrap_err()
                .contains("not written")
        );
        std::fs::write(&f, "## Verdict\nPROCEED\n").unwrap();
        assert_eq!(
            verify(
                &f,
                "r.md",
                &[Check::Exists, Check::Contains("## Verdict".into())]
            ),
            Ok(())
        );
        assert!(
            verify(&f, "r.md", &[Check::MinSize(100)])
                .unwrap_err()
                .contains("min_size")
        );
        assert!(
            verify(&f, "r.md", &[Check::Contains("## Commits".into())])
                .unwrap_err()
                .contains("## Commits")
        );
    }

    #[test]
    fn store_paths_resolve_in_the_project_and_code_paths_in_the_worktree() {
        let roots = Roots {
            project: "/p".into(),
            worktree: Some("/p/.factory/worktrees/exp-001".into()),
            overlay: None,
        };
        assert_eq!(
            roots.resolve(".factory/reviews/a.md"),
            PathBuf::from("/p/.factory/reviews/a.md")
        );
        assert_eq!(
            roots.resolve("src/lib.rs"),
            PathBuf::from("/p/.factory/worktrees/exp-001/src/lib.rs")
        );
        assert_eq!(roots.resolve("factory.md"), PathBuf::from("/p/factory.md"));
    }

    #[test]
    fn a_branch_writes_its_own_files_and_reads_its_own_first_but_shares_the_store() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().to_path_buf();
        let overlay = project.join(".factory/experiments/004");
        let roots = Roots {
            project: project.clone(),
            worktree: None,
            overlay: Some(overlay.clone()),
        };
        // Writes go to the overlay, store files stay shared.
        assert_eq!(
            roots.resolve_write(".factory/reviews/ceo.md"),
            overlay.join("reviews/ceo.md")
        );
        for shared in [
            ".factory/results.tsv",
            ".factory/experiments/004/precheck.json",
        ] {
            assert_eq!(roots.resolve_write(shared), project.join(shared));
        }
        // Reads fall back to the project until the branch has its own copy.
        std::fs::create_dir_all(project.join(".factory/strategy")).unwrap();
        std::fs::write(project.join(".factory/strategy/current.md"), "plan").unwrap();
        assert_eq!(
            roots.resolve(".factory/strategy/current.md"),
            project.join(".factory/strategy/current.md")
        );
        std::fs::create_dir_all(overlay.join("strategy")).unwrap();
        std::fs::write(overlay.join("strategy/current.md"), "mine").unwrap();
        assert_eq!(
            roots.resolve(".factory/strategy/current.md"),
            overlay.join("strategy/current.md")
        );
    }
}
