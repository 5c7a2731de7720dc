//! docs/modes.md describes every built-in mode with its current graph; regenerate it
//! with `scripts/gen-modes-doc.py` when a mode changes.

use assert_cmd::Command;

#[test]
fn modes_page_has_every_mode_with_its_current_mermaid_graph() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/modes.md")).expect("docs/modes.md exists");
    let mut modes: Vec<String> = std::fs::read_dir(root.join("workflows"))
        .expect("workflows/")
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "fwf").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    modes.sort();
    assert!(modes.len() >= 16);
    for mode in modes {
        assert!(
            page.contains(&format!("\n## {mode}\n")),
            "docs/modes.md has no section for {mode}; run scripts/gen-modes-doc.py"
        );
        let out = Command::cargo_bin("factory")
            .unwrap()
            .args(["compile", &mode, "--emit", "mermaid"])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mermaid = String::from_utf8(out.stdout).unwrap();
        assert!(
            page.contains(&format!("```mermaid\n{}\n```", mermaid.trim_end())),
            "the graph of {mode} in docs/modes.md is stale; run scripts/gen-modes-doc.py"
        );
    }
}
