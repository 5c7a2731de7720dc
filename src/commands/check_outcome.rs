//! What `factory check` concludes from a [`Checked`]: the summary line, the exit code,
//! and the report for files that could not be read or paths that held no workflow.

use std::path::PathBuf;

use factory_compiler::driver::{Checked, Unreadable};

use super::{FAILED, OK, USAGE};

/// `checked 3 file(s): 1 error(s), 2 warning(s)`, plus the unreadable count when any.
pub fn summary(c: &Checked) -> String {
    let (errors, warnings) = counts(c);
    let unreadable = match c.unreadable.len() {
        0 => String::new(),
        n => format!(", {n} unreadable"),
    };
    format!(
        "checked {} file(s): {errors} error(s), {warnings} warning(s){unreadable}",
        c.files
    )
}

/// 2 when a file could not be read (its findings are unknown), else 1 for errors,
/// warnings under `--deny-warnings`, or no workflow file at all (a path that checks
/// nothing is almost always a wrong path), else 0.
pub fn exit_code(c: &Checked, deny_warnings: bool) -> u8 {
    let (errors, warnings) = counts(c);
    if !c.unreadable.is_empty() {
        USAGE
    } else if errors > 0 || (deny_warnings && warnings > 0) || c.files == 0 {
        FAILED
    } else {
        OK
    }
}

/// The warning for paths that hold no `.fwf` or `.fwir` file.
pub fn no_files_warning(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!(
        "warning: no .fwf or .fwir file in {}\n  help: check the path; directories are searched recursively (hidden directories and target/ are skipped)",
        names.join(", ")
    )
}

/// An unreadable file as a report: what is wrong with which file, and the fix.
pub fn unreadable_report(u: &Unreadable) -> miette::Report {
    miette::miette!(
        help = "save the file as UTF-8 text (and make it readable), or move it out of the checked directory",
        "{}: {}",
        u.path.display(),
        u.problem
    )
}

/// An unreadable file as a `--format json` entry, shaped like a diagnostic so a reader
/// of the array sees it among the others (code `unreadable`, at line 1).
pub fn unreadable_json(u: &Unreadable) -> serde_json::Value {
    serde_json::json!({
        "code": "unreadable",
        "severity": "error",
        "file": u.path.display().to_string(),
        "line": 1,
        "column": 1,
        "end_line": 1,
        "end_column": 1,
        "message": u.problem,
        "help": "save the file as UTF-8 text (and make it readable)",
        "subject": null,
        "labels": [],
        "fix": null,
    })
}

fn counts(c: &Checked) -> (usize, usize) {
    let errors = c
        .diagnostics
        .iter()
        .filter(|l| l.diagnostic.is_error())
        .count();
    (errors, c.diagnostics.len() - errors)
}
