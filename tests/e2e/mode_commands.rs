//! Every `factory …` command a built-in mode or stdlib subgraph runs exists and accepts
//! the flags the mode passes: the IR of every mode is walked, each command's
//! subcommand is asked for `--help`, and every flag must be listed there.

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use factory_compiler::{driver, host};

/// Commands that arrive with a later issue (the outer loop).
const PENDING: &[&str] = &["evolve", "run --score-to"];

/// The `factory …` invocations in a shell command: its words (quotes removed),
/// split at the operators `&&`, `||`, `;` and `|` that stand outside quotes.
fn factory_calls(script: &str) -> Vec<Vec<String>> {
    let mut calls = vec![Vec::new()];
    for (word, quoted) in shell_words(script) {
        if !quoted && matches!(word.as_str(), "&&" | "||" | ";" | "|" | ">") {
            calls.push(Vec::new());
        } else if let Some(last) = calls.last_mut() {
            last.push(word);
        }
    }
    calls.retain(|c| c.first().map(String::as_str) == Some("factory"));
    calls
}

/// Words of a simple shell command, quotes removed, each with whether it was quoted.
fn shell_words(s: &str) -> Vec<(String, bool)> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                quoted = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() || quoted {
                    words.push((std::mem::take(&mut cur), quoted));
                }
                quoted = false;
            }
            (_, c) => cur.push(c),
        }
    }
    if !cur.is_empty() || quoted {
        words.push((cur, quoted));
    }
    words
}

fn help(sub: &[&str]) -> Option<String> {
    let out = Command::cargo_bin("factory")
        .unwrap()
        .args(sub)
        .arg("--help")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn every_command_a_mode_runs_exists_and_takes_its_flags() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = BTreeSet::new();
    let mut problems = Vec::new();
    let modes = host::modes(root);
    assert!(modes.len() >= 10, "the built-in modes are found");
    for mode in modes {
        let compiled = driver::compile(&mode.name, root, None)
            .unwrap_or_else(|e| panic!("{}: {e:?}", mode.name));
        for node in &compiled.ir.nodes {
            let Some(run) = &node.attrs.run else { continue };
            for words in factory_calls(run) {
                let line = words.join(" ");
                if PENDING
                    .iter()
                    .any(|p| line.starts_with(&format!("factory {p}")) || line.contains(p))
                {
                    continue;
                }
                // The subcommand, and its own subcommand when it has one (`graph update`).
                let mut sub: Vec<&str> = vec![words[1].as_str()];
                let mut text = match help(&sub) {
                    Some(t) => t,
                    None => {
                        problems.push(format!(
                            "{}: `{line}`: `factory {}` does not exist",
                            node.id, sub[0]
                        ));
                        continue;
                    }
                };
                if let Some(second) = words
                    .get(2)
                    .filter(|w| !w.starts_with('-') && !w.contains("{{"))
                    && text.contains("Commands:")
                {
                    sub.push(second.as_str());
                    match help(&sub) {
                        Some(t) => text = t,
                        None => {
                            problems.push(format!(
                                "{}: `{line}`: `factory {}` does not exist",
                                node.id,
                                sub.join(" ")
                            ));
                            continue;
                        }
                    }
                }
                for flag in words.iter().filter(|w| w.starts_with("--")) {
                    let flag = flag.split('=').next().unwrap_or(flag);
                    if !text.contains(flag) {
                        problems.push(format!(
                            "{}: `{line}`: `factory {}` has no {flag}",
                            node.id,
                            sub.join(" ")
                        ));
                    }
                }
                checked.insert(sub.join(" "));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for needed in [
        "begin",
        "finalize",
        "precheck",
        "graph update",
        "study",
        "run",
        "discover",
        "init",
    ] {
        assert!(
            checked.contains(needed),
            "`factory {needed}` is called by some mode: {checked:?}"
        );
    }
}

#[test]
fn the_shell_splitter_reads_quotes_and_chains() {
    let calls =
        factory_calls("factory begin . --hypothesis \"a && b\" && factory eval --json | tee x");
    let words: Vec<Vec<&str>> = calls
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        words,
        [
            vec!["factory", "begin", ".", "--hypothesis", "a && b"],
            vec!["factory", "eval", "--json"]
        ]
    );
}
