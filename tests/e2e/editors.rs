//! The editor set-ups, run in the real editors' engines. They need tools outside cargo
//! (Neovim; Node with the extension's npm packages), so they are ignored by default:
//!
//!   cargo test -p factory --test editors -- --ignored
//!
//! The VS Code manifest checks below need nothing and always run.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn vscode_manifest_matches_the_grammar_and_language_configuration() {
    let dir = repo().join("editors/vscode");
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap())
            .unwrap_or_else(|e| panic!("{p}: {e}"))
    };
    let pkg = read("package.json");
    let grammar = read("syntaxes/fwf.tmLanguage.json");
    let _ = read("language-configuration.json");
    let g = &pkg["contributes"]["grammars"][0];
    assert_eq!(g["scopeName"], grammar["scopeName"]);
    assert_eq!(g["language"], pkg["contributes"]["languages"][0]["id"]);
    assert!(dir.join(g["path"].as_str().unwrap()).is_file());
    assert_eq!(pkg["contributes"]["languages"][0]["extensions"][0], ".fwf");
    // Every `include` of the grammar names a repository entry.
    let text = grammar.to_string();
    for part in text.split("\"include\":\"#").skip(1) {
        let name = &part[..part.find('"').unwrap()];
        assert!(
            grammar["repository"][name].is_object(),
            "missing repository entry {name}"
        );
    }
}

#[test]
#[ignore = "needs nvim (Debian's 0.7 or later)"]
fn neovim_attaches_the_server_and_shows_its_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let rtp = dir.path().join("rtp");
    std::fs::create_dir_all(rtp.join("lua")).unwrap();
    std::fs::copy(
        repo().join("editors/nvim/factory.lua"),
        rtp.join("lua/factory.lua"),
    )
    .unwrap();
    let file = dir.path().join("w.fwf");
    std::fs::write(
        &file,
        "workflow w {\n    flow {\n        start -> nowhere -> end\n    }\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out.txt");
    let status = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "--cmd"])
        .arg(format!("set rtp+={}", rtp.display()))
        .arg("-c")
        .arg(format!(
            "luafile {}",
            repo().join("editors/nvim/test/check.lua").display()
        ))
        .env("FACTORY_BIN", assert_cmd::cargo::cargo_bin("factory"))
        .env("FWF_FILE", &file)
        .env("OUT", &out)
        .current_dir(dir.path())
        .status()
        .expect("nvim runs");
    assert!(status.success());
    let seen = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        seen,
        "filetype=fwf\nclients=1\ndiag 2:17 FWF003\nwaited=true\n"
    );
}

#[test]
#[ignore = "needs node and `npm install` in editors/vscode"]
fn textmate_grammar_scopes_match_the_snapshot() {
    let dir = repo().join("editors/vscode");
    assert!(
        Path::new(&dir.join("node_modules/vscode-textmate")).is_dir(),
        "run `npm install` in editors/vscode first"
    );
    let status = Command::new("node")
        .arg("test/grammar.test.js")
        .current_dir(&dir)
        .status()
        .expect("node runs");
    assert!(
        status.success(),
        "scopes differ from editors/vscode/test/snapshots"
    );
}

/// The words of the language (the compiler's one vocabulary) and the VS Code grammar's
/// keyword lists stay equal: every keyword, label and type name is highlighted by some
/// pattern, and every word a `\b(a|b|…)` pattern lists is one of them.
#[test]
fn the_vscode_grammar_knows_exactly_the_compilers_keywords() {
    use factory_compiler::ide::{LABELS, TYPE_NAMES, keywords};
    let text = std::fs::read_to_string(repo().join("editors/vscode/syntaxes/fwf.tmLanguage.json"))
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut patterns = Vec::new();
    collect_patterns(&json, &mut patterns);
    let words: Vec<&str> = keywords()
        .chain(LABELS.iter().copied())
        .chain(TYPE_NAMES.iter().copied())
        .collect();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for w in &words {
        let found = patterns.iter().any(|p| {
            p.match_indices(w)
                .any(|(i, _)| !p[..i].ends_with(is_word) && !p[i + w.len()..].starts_with(is_word))
        });
        assert!(found, "the grammar does not highlight the keyword `{w}`");
    }
    // `role` is an attribute whose value the grammar colours as a role name.
    let allowed = |w: &str| words.contains(&w) || w == "role";
    for p in &patterns {
        for (i, _) in p.match_indices("\\b(") {
            let rest = &p[i + 3..];
            let Some(end) = rest.find(')') else { continue };
            let group = &rest[..end];
            if group.chars().all(|c| c.is_ascii_lowercase() || c == '|') {
                for w in group.split('|') {
                    assert!(
                        allowed(w),
                        "the grammar highlights `{w}`, which the compiler does not know"
                    );
                }
            }
        }
    }
}

fn collect_patterns(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("match" | "begin", serde_json::Value::String(s)) => out.push(s.clone()),
                    _ => collect_patterns(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_patterns(v, out)),
        _ => {}
    }
}
