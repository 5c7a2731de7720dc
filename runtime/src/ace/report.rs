//! What `factory ace reflect|curate|show` print: plain text, one fact a line.

use std::fmt::Write;

use super::{Reflected, RoleCuration};
use crate::agents::ResolvedPlaybook;

/// The candidates per role, and where they went.
pub fn reflected(r: &Reflected, dry_run: bool) -> String {
    let mut out = String::new();
    let n = r.file.projects.len();
    let _ = writeln!(
        out,
        "reflected over {n} project{}",
        if n == 1 { "" } else { "s" }
    );
    for p in &r.missing {
        let _ = writeln!(
            out,
            "skipped {} (registered, but the directory is gone)",
            p.display()
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let mut role = "";
    for c in &r.file.candidates {
        if c.role != role {
            role = &c.role;
            let count = r.file.candidates.iter().filter(|x| x.role == role).count();
            let _ = writeln!(out, "{role}: {count} candidate{}", plural(count));
        }
        let _ = writeln!(
            out,
            "  {:<5} helpful={} harmful={} :: {}",
            c.kind.heading(),
            c.helpful,
            c.harmful,
            c.text
        );
    }
    if r.file.candidates.is_empty() {
        let _ = writeln!(
            out,
            "no candidates: no note or agent event matched a pattern (docs/ace.md lists them)"
        );
    }
    let path = r.path.display();
    let _ = match (dry_run, r.written) {
        (true, _) => writeln!(out, "dry run: {path} not written"),
        (false, true) => writeln!(out, "wrote {path}; next: factory ace curate"),
        (false, false) => writeln!(out, "{path} already says this; next: factory ace curate"),
    };
    out
}

/// Per role: what was removed, merged and capped, and whether the playbook changed.
pub fn curated(roles: &[RoleCuration], dry_run: bool) -> String {
    let mut out = String::new();
    for r in roles {
        let c = &r.curation;
        let state = match (dry_run, r.written) {
            (true, _) => "dry run, not written",
            (false, true) => "written",
            (false, false) => "unchanged",
        };
        let _ = writeln!(out, "{}: {} ({state})", r.role, r.path.display());
        for b in &c.removed {
            let _ = writeln!(out, "  removed (net-negative)  {}", b.line());
        }
        for (from, into) in &c.merged {
            let _ = writeln!(
                out,
                "  merged                  {}\n      into                {}",
                from.line(),
                into.line()
            );
        }
        for b in &c.capped {
            let _ = writeln!(out, "  capped (over capacity)  {}", b.line());
        }
        let n = c.kept.len();
        let _ = writeln!(out, "  kept {n} bullet{}", plural(n));
    }
    if roles.is_empty() {
        let _ = writeln!(out, "no role has candidates or an evolved playbook");
    }
    out
}

/// The playbook text a role gets, after where each part came from.
pub fn show(role: &str, p: &ResolvedPlaybook) -> String {
    let mut out = format!("playbook of {role}, as appended to its prompt\n");
    match &p.default {
        Some((_, source)) => {
            let _ = writeln!(out, "  default: {source}");
        }
        None => out.push_str("  default: none\n"),
    }
    match &p.evolved {
        Some((book, path)) => {
            let n = book.bullets.len();
            let _ = writeln!(
                out,
                "  learned: {} ({n} bullet{})",
                path.display(),
                plural(n)
            );
        }
        None => {
            out.push_str("  learned: none yet (`factory ace reflect`, then `factory ace curate`)\n")
        }
    }
    out.push('\n');
    out.push_str(&p.text());
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
