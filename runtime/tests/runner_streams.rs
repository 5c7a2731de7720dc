//! The agent-CLI runners' stream parsers on recorded and documented streams
//! (`tests/fixtures/runners/`): final text, cost and token counts.

use factory_runtime::events::Usage;
use factory_runtime::runners::cli::{self, Transcript};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/runners");

fn parse(runner: &str, file: &str) -> (Transcript, Vec<String>) {
    let text = std::fs::read_to_string(format!("{DIR}/{file}")).expect("fixture");
    cli::parse_stream(
        factory_runtime::runners::cli_def(runner).expect("runner"),
        &text,
    )
}

const COMMITS: &str = "## Commits\n- 1a2b3c4 use a HashMap for lookups (1.20 ms -> 0.31 ms)";

#[test]
fn claude_success() {
    let (t, lines) = parse("claude", "claude-success.jsonl");
    assert_eq!(t.final_text().as_deref(), Some(COMMITS));
    assert_eq!(
        t.usage,
        Some(Usage {
            input_tokens: 18 + 5210,
            output_tokens: 812,
            cache_read_tokens: 30120,
            cost_usd: Some(0.0421),
        })
    );
    assert_eq!(
        lines,
        [
            "[claude] session 0b5c3f8e-7d2a-4f5e-9a51-3c1d2e4f6a7b (model claude-sonnet-4-5)",
            "I'll look at the benchmark first.",
            "[tool] Bash: cargo bench --bench lookup",
            "[tool] Edit: /work/project/src/lib.rs",
            "## Commits",
            "- 1a2b3c4 use a HashMap for lookups (1.20 ms -> 0.31 ms)",
        ]
    );
}

#[test]
fn claude_without_credentials() {
    let (t, lines) = parse("claude", "claude-noauth.jsonl");
    assert_eq!(
        t.final_text().as_deref(),
        Some("Not logged in · Please run /login")
    );
    assert_eq!(t.errors, ["Not logged in · Please run /login"]);
    assert_eq!(
        t.usage,
        Some(Usage {
            cost_usd: Some(0.0),
            ..Usage::default()
        })
    );
    assert!(lines[0].starts_with("[claude] session "), "{lines:?}");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("[error] Not logged in · Please run /login")
    );
}

#[test]
fn codex_success() {
    let (t, lines) = parse("codex", "codex-success.jsonl");
    assert_eq!(t.final_text().as_deref(), Some(COMMITS));
    assert_eq!(
        t.usage,
        Some(Usage {
            input_tokens: 24763 - 24448,
            output_tokens: 122,
            cache_read_tokens: 24448,
            cost_usd: None,
        })
    );
    assert_eq!(
        lines,
        [
            "[codex] thread 0199a213-81c0-7800-8aa1-bbab2a035a53",
            "[tool] shell: bash -lc 'cargo bench --bench lookup'",
            "[tool] edit: /work/project/src/lib.rs",
            "## Commits",
            "- 1a2b3c4 use a HashMap for lookups (1.20 ms -> 0.31 ms)",
        ]
    );
}

#[test]
fn codex_without_credentials() {
    let (t, lines) = parse("codex", "codex-noauth.jsonl");
    assert_eq!(t.final_text(), None);
    assert_eq!(t.usage, None, "no turn completed");
    assert_eq!(
        t.session.as_deref(),
        Some("01a2313e-535e-79f0-b52a-5d128c6e6a8e")
    );
    assert!(
        t.errors
            .iter()
            .any(|e| e.starts_with("Reconnecting... 2/5")),
        "{:?}",
        t.errors
    );
    assert!(
        lines.iter().skip(1).all(|l| l.starts_with("[error] ")),
        "{lines:?}"
    );
}

#[test]
fn opencode_success() {
    let (t, lines) = parse("opencode", "opencode-success.jsonl");
    assert_eq!(t.final_text().as_deref(), Some(COMMITS));
    let u = t.usage.expect("usage");
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read_tokens),
        (1500 + 300 + 200, 60 + 90 + 10, 9000 + 10500)
    );
    assert!((u.cost_usd.unwrap() - 0.0168).abs() < 1e-9, "{u:?}");
    assert_eq!(t.session.as_deref(), Some("ses_5b2a1c9f0ffeQp8Yc2hK3mN7rT"));
    assert_eq!(
        lines,
        [
            "[tool] bash: cargo bench --bench lookup",
            "[tool] edit: /work/project/src/lib.rs",
            "## Commits",
            "- 1a2b3c4 use a HashMap for lookups (1.20 ms -> 0.31 ms)",
        ]
    );
}

#[test]
fn opencode_without_credentials() {
    let (t, lines) = parse("opencode", "opencode-noauth.jsonl");
    assert_eq!(t.final_text(), None);
    assert_eq!(t.usage, None);
    assert_eq!(
        lines,
        ["[error] UnknownError: Unexpected server error. Check server logs for details."]
    );
}

#[test]
fn gemini_success() {
    let (t, lines) = parse("gemini", "gemini-success.jsonl");
    assert_eq!(t.final_text().as_deref(), Some(COMMITS));
    assert_eq!(
        t.usage,
        Some(Usage {
            input_tokens: 12900 - 8000,
            output_tokens: 300,
            cache_read_tokens: 8000,
            cost_usd: None,
        })
    );
    assert_eq!(
        lines,
        [
            "[gemini] session 62b6df5c-49f2-4aeb-867f-9055ca0f7a0c (model gemini-2.5-pro)",
            "I'll run the benchmark first.",
            "[tool] run_shell_command: cargo bench --bench lookup",
            "[tool] replace: /work/project/src/lib.rs",
            "## Commits",
            "- 1a2b3c4 use a HashMap for lookups (1.20 ms -> 0.31 ms)",
        ]
    );
}

#[test]
fn gemini_without_credentials_and_with_a_bad_key() {
    let (t, lines) = parse("gemini", "gemini-noauth.jsonl");
    assert_eq!((t.final_text(), t.usage, lines.len()), (None, None, 0));
    let (t, lines) = parse("gemini", "gemini-badkey.jsonl");
    assert_eq!(
        t.final_text(),
        None,
        "the user's message is not the agent's"
    );
    assert_eq!(t.model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(
        lines,
        ["[gemini] session 62b6df5c-49f2-4aeb-867f-9055ca0f7a0c (model gemini-2.5-pro)"]
    );
}

#[test]
fn a_line_that_is_not_json_is_shown_as_it_is() {
    for runner in ["claude", "codex", "opencode", "gemini"] {
        let (t, lines) = cli::parse_stream(
            factory_runtime::runners::cli_def(runner).unwrap(),
            "WARNING: something\n\n[1, 2]\n",
        );
        assert_eq!(lines, ["WARNING: something", "[1, 2]"], "{runner}");
        assert_eq!(t, Transcript::default(), "{runner}");
    }
}
