//! Mermaid flowcharts. Node ids are mapped to mermaid-safe ids (`n_` + the id with `.`
//! as `__` and other characters as `_`, suffixed `_2`, `_3`... on a clash), so ids like
//! `qa.gate` or `end` never break the chart; the original id is the label.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{detail, edge_label, nodes_and_missing, sorted_edges};
use crate::ir::{Ir, Label, NodeKind};

pub fn to_mermaid(ir: &Ir) -> String {
    let mut out = String::from("flowchart TD\n");
    let _ = writeln!(
        out,
        "  %% workflow {}",
        serde_json::Value::String(ir.workflow.name.clone())
    );
    let (nodes, missing) = nodes_and_missing(ir);
    let ids = SafeIds::new(
        nodes
            .iter()
            .map(|n| n.id.as_str())
            .chain(missing.iter().copied()),
    );
    let mut classes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in &nodes {
        let safe = ids.get(&node.id);
        let text = match detail(node) {
            Some(d) => format!("{}\n{d}", node.id),
            None => node.id.clone(),
        };
        let label = label(&text);
        let shape = match node.kind {
            NodeKind::Start => format!("(({label}))"),
            NodeKind::End => format!("((({label})))"),
            NodeKind::Gate => format!("{{{label}}}"),
            NodeKind::Fork | NodeKind::Join => {
                classes.entry("bar").or_default().push(safe);
                format!("[[{label}]]")
            }
            NodeKind::Parallel => format!("[/{label}\\]"),
            NodeKind::Select => format!("{{{{{label}}}}}"),
            NodeKind::Study => format!("[({label})]"),
            NodeKind::Fn => format!("[/{label}/]"),
            NodeKind::Llm => format!("({label})"),
            NodeKind::Agent => format!("[{label}]"),
        };
        if node.attrs.is_async {
            classes.entry("async").or_default().push(safe);
        }
        let _ = writeln!(out, "  {safe}{shape}");
    }
    for id in &missing {
        let safe = ids.get(id);
        classes.entry("missing").or_default().push(safe);
        let _ = writeln!(out, "  {safe}[{}]", label(&format!("{id}\n(no node line)")));
    }
    let mut failures = Vec::new();
    for (i, edge) in sorted_edges(ir).into_iter().enumerate() {
        let arrow = if edge.label == Some(Label::Reloop) {
            "-.->"
        } else {
            "-->"
        };
        if edge.label == Some(Label::Fail) {
            failures.push(i.to_string());
        }
        let text = edge_label(edge)
            .map(|l| format!("|{}|", label(&l)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {arrow}{text} {}",
            ids.get(&edge.from),
            ids.get(&edge.to)
        );
    }
    for (class, style) in [
        ("async", "stroke-dasharray: 5 5"),
        ("bar", "fill:#000,color:#fff"),
        ("missing", "stroke:#c00,color:#c00,stroke-dasharray: 2 2"),
    ] {
        if let Some(members) = classes.get(class) {
            let _ = writeln!(out, "  classDef {class} {style}");
            let _ = writeln!(out, "  class {} {class}", members.join(","));
        }
    }
    if !failures.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#c00,color:#c00",
            failures.join(",")
        );
    }
    out
}

/// A quoted mermaid label. Characters mermaid would read as syntax or HTML become entity
/// codes; newlines become `<br/>`.
fn label(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '`' => out.push_str("#96;"),
            '|' => out.push_str("#124;"),
            '\n' => out.push_str("<br/>"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A stable, injective map from IR ids to mermaid ids, built in canonical id order.
struct SafeIds<'a> {
    map: BTreeMap<&'a str, String>,
}

impl<'a> SafeIds<'a> {
    fn new(ids: impl Iterator<Item = &'a str>) -> SafeIds<'a> {
        let mut map = BTreeMap::new();
        let mut taken = BTreeSet::new();
        for id in ids {
            if map.contains_key(id) {
                continue;
            }
            let mut base = String::from("n_");
            for c in id.chars() {
                match c {
                    c if c.is_ascii_alphanumeric() || c == '_' => base.push(c),
                    '.' => base.push_str("__"),
                    _ => base.push('_'),
                }
            }
            let mut safe = base.clone();
            let mut n = 2;
            while taken.contains(&safe) {
                safe = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(safe.clone());
            map.insert(id, safe);
        }
        SafeIds { map }
    }

    fn get(&self, id: &str) -> &str {
        // Every id of a node or edge endpoint was registered in `new`.
        self.map.get(id).map_or("n_unknown", String::as_str)
    }
}
