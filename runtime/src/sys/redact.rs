//! The one redactor: every command line, environment summary and agent output that
//! factory prints, logs, writes to `events.jsonl` or shows in a dry run passes through
//! [`redact`] (spec §13.3: secret material is never printed).
//!
//! Two nets: the shapes of the major providers' keys, bearer tokens, `*_KEY=`-style
//! assignments and URLs with credentials; and the values of this process's own
//! secret-looking environment variables (a key with no known shape is still caught
//! when it is in the environment).

use std::borrow::Cow;
use std::sync::LazyLock;

use crate::sys::pattern::re;
use regex::{Captures, Regex};

/// What a redacted secret is replaced with.
pub const MASK: &str = "[REDACTED]";

/// Known key shapes, replaced whole.
static SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\b(?:sk-ant-[A-Za-z0-9_\-]{16,}",                   // Anthropic
        r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", // OpenAI
        r"|AIza[0-9A-Za-z_\-]{30,}",                          // Google
        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}", // GitHub
        r"|glpat-[A-Za-z0-9_\-]{20,}",                        // GitLab
        r"|xox[abposr]-[A-Za-z0-9\-]{10,}",                   // Slack
        r"|(?:AKIA|ASIA)[0-9A-Z]{16}",                        // AWS access key id
        r"|hf_[A-Za-z0-9]{30,}",                              // Hugging Face
        r"|gsk_[A-Za-z0-9]{30,}",                             // Groq
        r"|eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})", // JWT
    ))
});

/// `Authorization: Bearer <token>` and the like: the token goes.
static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(\bbearer|authorization:\s*(?:basic|token))(\s+)[A-Za-z0-9._~+/\-]{8,}=*")
});

/// `NAME_KEY=value`, `"api_token": "value"`, `--password value`: the value goes when the
/// name looks secret.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    // Environment-style upper-case names ending in _KEY (`OPENAI_API_KEY=`), and any
    // name holding a secret word; factory's own lower-case fields (`run_key`) are not
    // secrets.
    re(concat!(
        r#"((?:\b[A-Z0-9_]*_KEY|(?i:[A-Za-z0-9_\-]*(?:api[_\-]?key|secret|password|passwd|token|access[_\-]?key|private[_\-]?key)))"#,
        r#"["']?\s*(?:=|:)\s*["']?)([^\s"'\\,;&]{4,})"#,
    ))
});

/// `scheme://user:password@host`: the password goes.
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| re(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@\\]+:)([^@\s/\\]+)(@)"));

/// Whether an environment variable's name says its value is secret.
pub fn is_secret_name(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "CREDENTIALS",
        "COOKIE",
        "PAT",
    ];
    let upper = name.to_ascii_uppercase();
    upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|part| WORDS.contains(&part))
        || ["KEY", "TOKEN", "SECRET", "PASSWORD"]
            .iter()
            .any(|w| upper.ends_with(w))
}

/// Whether a value looks like a secret by its shape alone.
pub fn looks_secret(value: &str) -> bool {
    SHAPES.is_match(value) || URL_CREDENTIALS.is_match(value)
}

/// The values of secret-named variables in this process's environment, longest first,
/// so a key in the environment is masked wherever it appears.
static ENV_SECRETS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut values: Vec<String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| is_secret_name(k) && v.len() >= 8 && !v.contains(char::is_whitespace))
        .map(|(_, v)| v)
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    values
});

/// `text` with every secret it holds replaced by [`MASK`]; borrowed when nothing was.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for secret in ENV_SECRETS.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), MASK));
        }
    }
    out = replace(out, &SHAPES, |_| MASK.to_string());
    out = replace(out, &BEARER, |c| format!("{}{}{MASK}", &c[1], &c[2]));
    out = replace(out, &URL_CREDENTIALS, |c| {
        format!("{}{MASK}{}", &c[1], &c[3])
    });
    replace(out, &ASSIGNMENT, |c| {
        if &c[2] == MASK || c[2].starts_with("[REDACTED") {
            c[0].to_string()
        } else {
            format!("{}{MASK}", &c[1])
        }
    })
}

fn replace<'a>(
    text: Cow<'a, str>,
    pattern: &Regex,
    with: impl Fn(&Captures) -> String,
) -> Cow<'a, str> {
    if !pattern.is_match(&text) {
        return text;
    }
    Cow::Owned(
        pattern
            .replace_all(&text, |c: &Captures| with(c))
            .into_owned(),
    )
}

/// A value shown in an environment or config summary: the shape, never the material.
pub fn mask_value(value: &str) -> String {
    if value.is_empty() {
        "(empty)".into()
    } else {
        format!("{MASK} ({} chars)", value.chars().count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_keys_tokens_assignments_and_urls_are_masked() {
        for (input, leaked) in [
            (
                "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx here",
                "AbCdEfGhIjKl",
            ),
            (
                "OPENAI sk-proj-abcdefghijklmnopqrstuvwx1234",
                "abcdefghijklmnop",
            ),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "SyA1234567890"),
            (
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "abcdefghijklmnop",
            ),
            ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
            ("MY_SERVICE_TOKEN=hunter2hunter2 next", "hunter2hunter2"),
            (r#"{"api_key": "plainvalue123"}"#, "plainvalue123"),
            (
                "git clone https://bob:s3cr3tpw@example.com/r.git",
                "s3cr3tpw",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
        ] {
            let out = redact(input);
            assert!(!out.contains(leaked), "{input} -> {out}");
            assert!(out.contains(MASK), "{input} -> {out}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone_and_borrowed() {
        for text in [
            "cargo test --workspace",
            "the task: rename `key_for` to `lookup`",
            "monkey=banana",
            "the token budget is counted in input_tokens: 1234",
            r#"{"run_key": "run-1/begin/1", "key": "value"}"#,
            "git switch -c task-abcdefghijklmnopqrstuvwxyz",
            "https://example.com/path?q=1",
        ] {
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn json_stays_json() {
        let line = serde_json::json!({"out": "MY_TOKEN=abc\"def\\ x", "url": "https://u:p4ss@h/x"})
            .to_string();
        let out = redact(&line);
        assert!(out.contains(MASK), "{out}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let once =
            redact("API_KEY=abcdefgh12345 and sk-ant-api03-abcdefghijklmnopqrstu").into_owned();
        assert_eq!(redact(&once), once);
    }

    #[test]
    fn secret_names_and_masks() {
        assert!(is_secret_name("ANTHROPIC_API_KEY") && is_secret_name("gh_token"));
        assert!(!is_secret_name("PATH") && !is_secret_name("HOME"));
        assert!(!is_secret_name("GIT_AUTHOR_EMAIL") && !is_secret_name("KEYBOARD"));
        assert_eq!(mask_value("abcd"), "[REDACTED] (4 chars)");
    }
}
