//! Sacred Rule 3 (spec §16.1): no committed secrets. A changed file may not gain a
//! credential-shaped string it did not have at the base commit. Only the kind and line
//! are reported, never the secret itself.

use std::path::Path;
use std::sync::LazyLock;

use git2::Repository;
use regex::Regex;

use super::changes::{Change, ChangeKind};

/// Files larger than this are not scanned (generated data, binaries).
const MAX_SCAN_BYTES: u64 = 1 << 20;

static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        (
            "private key",
            r"-----BEGIN (?:RSA |DSA |EC |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY-----",
        ),
        ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        (
            "GitHub token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        ),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("API secret key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("Stripe live key", r"\b[sr]k_live_[0-9a-zA-Z]{24,}"),
    ]
    .into_iter()
    .map(|(kind, p)| {
        (
            kind,
            Regex::new(p).unwrap_or_else(|e| panic!("invalid built-in regex {p}: {e}")),
        )
    })
    .collect()
});

/// `(kind, 1-based line)` for every credential-shaped string in `text`.
pub fn find_secrets(text: &str) -> Vec<(&'static str, usize)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (kind, re) in PATTERNS.iter() {
            found.extend(re.find_iter(line).map(|_| (*kind, n + 1)));
        }
    }
    found
}

fn count(found: &[(&'static str, usize)], kind: &str) -> usize {
    found.iter().filter(|(k, _)| *k == kind).count()
}

/// One message per secret a change introduced.
pub fn introduced_secrets(repo: &Repository, root: &Path, changes: &[Change]) -> Vec<String> {
    let mut out = Vec::new();
    for change in changes
        .iter()
        .filter(|c| c.kind != ChangeKind::Deleted && !c.is_symlink)
    {
        let path = root.join(&change.path);
        if path
            .metadata()
            .map(|m| m.len() > MAX_SCAN_BYTES)
            .unwrap_or(true)
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let now = find_secrets(&String::from_utf8_lossy(&bytes));
        if now.is_empty() {
            continue;
        }
        let before = change
            .old_blob
            .and_then(|id| repo.find_blob(id).ok())
            .map(|b| find_secrets(&String::from_utf8_lossy(b.content())))
            .unwrap_or_default();
        let mut kinds: Vec<&str> = now.iter().map(|(k, _)| *k).collect();
        kinds.dedup();
        for kind in kinds {
            if count(&now, kind) > count(&before, kind) {
                let lines: Vec<String> = now
                    .iter()
                    .filter(|(k, _)| *k == kind)
                    .map(|(_, l)| l.to_string())
                    .collect();
                out.push(format!(
                    "{}: {kind} added (line {})",
                    change.path,
                    lines.join(", ")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_common_credentials_and_ignores_prose() {
        let text = "key = \"AKIAABCDEFGHIJKLMNOP\"\n-----BEGIN OPENSSH PRIVATE KEY-----\ntoken: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n";
        let kinds = find_secrets(text);
        assert_eq!(
            kinds,
            vec![
                ("AWS access key id", 1),
                ("private key", 2),
                ("GitHub token", 3)
            ]
        );
        assert!(find_secrets("the AKIA prefix marks AWS keys; sk-short is fine").is_empty());
    }
}
