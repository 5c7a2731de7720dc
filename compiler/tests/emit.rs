//! Dot and mermaid pictures of a workflow: snapshots of a representative graph, escaping
//! of awkward ids and labels, and (when graphviz is installed) that dot renders.

mod common;

use factory_compiler::emit::{to_dot, to_mermaid};
use factory_compiler::ir::{Attrs, Label, NodeKind};

#[test]
fn dot_snapshot() {
    insta::assert_snapshot!(to_dot(&common::representative()));
}

#[test]
fn mermaid_snapshot() {
    insta::assert_snapshot!(to_mermaid(&common::representative()));
}

#[test]
fn dot_quotes_dotted_ids_and_escapes_labels() {
    let dot = to_dot(&common::representative());
    assert!(dot.contains("\"qa.gate\" -> \"qa.fix\" [label=\"reloop ≤3\", style=dashed"));
    assert!(dot.contains("label=\"review\\ngate (agent: ceo)\", shape=diamond"));
    assert!(dot.contains("\"review\" -> \"plan\" [label=\"reloop ≤2 (qa_loops)\""));
    assert!(dot.contains("style=\"dashed\""), "async node is dashed");
    // A quote or backslash in an id cannot end the string early.
    let mut ir = common::representative();
    ir.nodes
        .push(common::node("say \"hi\"\\", NodeKind::Fn, Attrs::default()));
    ir.canonicalize();
    let dot = to_dot(&ir);
    assert!(
        dot.contains("\"say \\\"hi\\\"\\\\\" [label=\"say \\\"hi\\\"\\\\\\nfn\""),
        "{dot}"
    );
}

#[test]
fn mermaid_ids_are_safe_stable_and_distinct() {
    let mut ir = common::representative();
    ir.nodes
        .push(common::node("qa__gate", NodeKind::Fn, Attrs::default()));
    ir.nodes
        .push(common::node("o-x", NodeKind::Fn, Attrs::default()));
    ir.edges.push(common::edge("qa__gate", "qa.gate", None));
    ir.canonicalize();
    let chart = to_mermaid(&ir);
    // `qa.gate` and `qa__gate` both sanitize to n_qa__gate: the later one gets a suffix.
    assert!(
        chart.contains("  n_qa__gate{\"qa.gate<br/>gate (fn)\"}\n"),
        "{chart}"
    );
    assert!(
        chart.contains("  n_qa__gate_2[/\"qa__gate<br/>fn\"/]\n"),
        "{chart}"
    );
    assert!(chart.contains("  n_qa__gate_2 --> n_qa__gate\n"), "{chart}");
    assert!(chart.contains("  n_o_x[/\"o-x<br/>fn\"/]\n"));
    // `end` is a mermaid keyword; it must never be a bare id.
    assert!(!chart.lines().any(|l| l.trim_start().starts_with("end")));
    assert_eq!(to_mermaid(&ir), chart, "deterministic");
}

#[test]
fn mermaid_escapes_label_text() {
    let chart = to_mermaid(&common::representative());
    assert!(chart.contains("n_review -.->|\"reloop ≤2 (qa_loops)\"| n_plan"));
    let mut ir = common::representative();
    ir.nodes.push(common::node(
        "x",
        NodeKind::Agent,
        Attrs {
            role: Some("a \"b\" <c> #d `e` |f".to_string()),
            ..Attrs::default()
        },
    ));
    ir.canonicalize();
    let chart = to_mermaid(&ir);
    assert!(
        chart.contains("n_x[\"x<br/>agent: a #quot;b#quot; #lt;c#gt; #35;d #96;e#96; #124;f\"]"),
        "{chart}"
    );
}

#[test]
fn undeclared_nodes_are_drawn_marked() {
    let mut ir = common::representative();
    ir.edges
        .push(common::edge("plan", "ghost", Some(Label::Fail)));
    ir.canonicalize();
    let dot = to_dot(&ir);
    assert!(dot.contains("\"ghost\" [label=\"ghost\\n(no node line)\""));
    let chart = to_mermaid(&ir);
    assert!(chart.contains("n_ghost[\"ghost<br/>(no node line)\"]"));
    assert!(chart.contains("class n_ghost missing"));
}

/// Renders with graphviz when it is installed; CI does not need it.
#[test]
fn dot_renders_with_graphviz() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let spawned = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = spawned else {
        panic!(
            "this test renders with Graphviz: install it (`apt-get install graphviz`; .ci/run does)"
        );
    };
    let mut ir = common::representative();
    ir.nodes
        .push(common::node("say \"hi\"\\", NodeKind::Fn, Attrs::default()));
    ir.edges.push(common::edge("say \"hi\"\\", "qa.gate", None));
    ir.canonicalize();
    let dot = to_dot(&ir);
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(dot.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("dot runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "dot failed: {stderr}\n{dot}");
    assert!(stderr.trim().is_empty(), "dot warned: {stderr}");
    let svg = String::from_utf8_lossy(&out.stdout);
    assert!(svg.contains("qa.gate") && svg.contains("reloop ≤2 (qa_loops)"));
}
