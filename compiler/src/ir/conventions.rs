//! What the compiler, the SKILL.md emitter and the executor agree on beyond the graph
//! itself: the variables a run fills into templates, and where a gate's verdict goes.
//! One definition here, so the three cannot drift.

use super::{Evaluator, Node};

/// Variables the runtime fills in when it runs a node.
pub const RUNTIME_VARS: &[&str] = &[
    "project_path",
    "exp_id",
    "goal",
    "run_id",
    "iteration",
    "hypothesis",
    "branch",
    "worktree",
    "node",
    "verdict",
    "score_before",
    "score_after",
    // Why the walk took its last halt or fail edge: what a revert records.
    "reason",
];

/// One `{{ … }}` of a template, as byte ranges into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// From the `{{` to just after the `}}`.
    pub whole: std::ops::Range<usize>,
    /// The expression inside, trimmed (`{{ x }}` → `x`).
    pub expr: std::ops::Range<usize>,
}

/// Every placeholder of `text`, in order, and where a `{{` that is never closed starts
/// (the scan stops there). The one template scanner: the compiler's template rule,
/// lowering's parameter substitution, the SKILL.md emitter, the runtime's command
/// rendering and the language server all read templates through it.
pub fn placeholders(text: &str) -> (Vec<Placeholder>, Option<usize>) {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let inner = open + 2;
        let Some(close) = text[inner..].find("}}").map(|i| inner + i) else {
            return (out, Some(open));
        };
        let raw = &text[inner..close];
        let start = inner + (raw.len() - raw.trim_start().len());
        let end = (start + raw.trim().len()).max(start);
        out.push(Placeholder {
            whole: open..close + 2,
            expr: start..end,
        });
        from = close + 2;
    }
    (out, None)
}

/// The variable expressions used in `text`, in order, trimmed (`{{ x }}` is `x`).
pub fn template_vars(text: &str) -> Vec<&str> {
    placeholders(text)
        .0
        .into_iter()
        .map(|p| &text[p.expr])
        .collect()
}

/// The largest reloop bound the compiler accepts. Each reloop is a whole agent round
/// trip (minutes); a bound past this is a typo or a way of writing "forever", and the
/// checker treats it like a missing bound.
pub const MAX_RELOOP: u32 = 1_000;

/// The most copies of a `parallel` block that run at once (its `count`, and factory.md's
/// `parallel_hypotheses`). Each copy is a worktree and an agent session: past this
/// the machine, not the search, is the bottleneck.
pub const MAX_PARALLEL: u32 = 8;

/// Whether `count` copies of a `parallel` block may run: the one rule for a count,
/// wherever it is written (a literal, a knob's bounds, factory.md's `## Parallel`).
pub fn parallel_count_ok(count: i64) -> bool {
    (1..=i64::from(MAX_PARALLEL)).contains(&count)
}

/// The identity of an artifact path: two spellings of one file (`./out/a.md`,
/// `out//a.md`, `out/x/../a.md`) give the same key. Lexical only (the file need not
/// exist yet, [`crate::paths::normalize`]). A path that is already normal is borrowed, not copied.
pub fn artifact_key(path: &str) -> std::borrow::Cow<'_, str> {
    let key = crate::paths::normalize(path);
    if key == path {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(key)
    }
}

/// Where an agent gate that declares no `writes` has its verdict written.
pub fn default_verdict_path(role: &str, node: &str) -> String {
    format!(".factory/reviews/{role}-verdict-{node}.md")
}

/// The role that evaluates an agent gate (`ceo` when none is named).
pub fn gate_role(node: &Node) -> &str {
    node.attrs.role.as_deref().unwrap_or("ceo")
}

/// Where the verdict of an agent gate is written: its first declared write, else
/// [`default_verdict_path`]. `None` for nodes that are not agent gates.
pub fn verdict_file(node: &Node) -> Option<String> {
    if node.kind != super::NodeKind::Gate
        || !matches!(node.attrs.evaluator, Some(Evaluator::Agent) | None)
    {
        return None;
    }
    Some(
        node.attrs
            .writes
            .first()
            .map(|w| w.path.clone())
            .unwrap_or_else(|| default_verdict_path(gate_role(node), &node.id)),
    )
}

/// The heading under which a verdict file states PROCEED, RELOOP or HALT.
pub const VERDICT_HEADING: &str = "## Verdict";

/// The roles that must each have completed for an experiment to have had QA: the
/// precheck's `qa_execution` requires all three (Sacred Rule 9), and the compiler warns
/// (FWF106) when a workflow that prechecks an experiment runs fewer.
pub const REQUIRED_QA_ROLES: &[&str] = &["health_checker", "code_reviewer", "adversarial_tester"];

/// Whether `node` is the keep gate of an experiment (`factory precheck … --exp …`).
pub fn prechecks_experiment(node: &Node) -> bool {
    node.attrs
        .run
        .as_deref()
        .is_some_and(|r| r.contains("factory precheck") && r.contains("--exp"))
}

/// Whether `node` begins an experiment (its command is `factory begin …`): the nodes
/// after it work in that experiment's worktree, which the SKILL.md says with
/// `factory agent ROLE --exp {{exp_id}}` as the executor does with its worktree root.
pub fn begins_experiment(node: &Node) -> bool {
    node.kind == super::NodeKind::Fn
        && node
            .attrs
            .run
            .as_deref()
            .is_some_and(|r| r.trim_start().starts_with("factory begin"))
}

#[cfg(test)]
mod tests {
    use super::{artifact_key, placeholders, template_vars};

    #[test]
    fn spellings_of_one_path_share_a_key() {
        for (a, b) in [
            ("./out/a.md", "out/a.md"),
            ("out//a.md", "out/a.md"),
            ("out/x/../a.md", "out/a.md"),
            ("out/./a.md", "out/a.md"),
            ("out/", "out"),
            ("/tmp/../a", "/a"),
            ("/../a", "/a"),
            ("../a", "../a"),
            ("x/../../a", "../a"),
        ] {
            assert_eq!(artifact_key(a), b, "{a}");
        }
        assert!(matches!(
            artifact_key("out/a.md"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn placeholders_give_the_whole_and_the_trimmed_expression_and_stop_at_an_unclosed_one() {
        let text = "a {{ x }}b{{y}}{{}} c {{ open";
        let (found, unclosed) = placeholders(text);
        let shown: Vec<(&str, &str)> = found
            .iter()
            .map(|p| (&text[p.whole.clone()], &text[p.expr.clone()]))
            .collect();
        assert_eq!(shown, [("{{ x }}", "x"), ("{{y}}", "y"), ("{{}}", "")]);
        assert_eq!(unclosed, Some(text.find("{{ open").unwrap()));
        assert_eq!(template_vars(text), ["x", "y", ""]);
        assert_eq!(placeholders("no braces"), (Vec::new(), None));
    }
}
