//! Where a node's artifacts live, the checks run on them after the node finishes, and
//! the verdicts gates return.
//!
//! Where an artifact path resolves is [`Roots`]' rule (`project::roots`).

use std::path::Path;

use factory_compiler::ir::conventions::VERDICT_HEADING;
use factory_compiler::ir::{Check, Label};

pub use crate::project::roots::Roots;

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
}
