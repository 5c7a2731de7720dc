//! A hand-built representative workflow shared by the IR text and emitter tests.

#![allow(dead_code)]

use factory_compiler::ir::{
    Artifact, Attrs, Check, Edge, Evaluator, FloatText, IR_VERSION, Ir, Knob, KnobType, Label,
    Literal, Node, NodeKind, WorkflowMeta,
};

pub fn node(id: &str, kind: NodeKind, attrs: Attrs) -> Node {
    Node {
        id: id.to_string(),
        kind,
        parallel: None,
        attrs,
    }
}

/// A node in the body of `parallel` node `p`.
pub fn body_node(p: &str, id: &str, kind: NodeKind, attrs: Attrs) -> Node {
    Node {
        parallel: Some(p.to_string()),
        ..node(id, kind, attrs)
    }
}

pub fn edge(from: &str, to: &str, label: Option<Label>) -> Edge {
    Edge {
        from: from.to_string(),
        to: to.to_string(),
        label,
        max: None,
        max_knob: None,
    }
}

/// A workflow with a gate and a bounded reloop, a fork/join, a parallel+select, an
/// async node, a dotted instance id, a failure edge and text that needs escaping.
pub fn representative() -> Ir {
    let s = |v: &str| Some(v.to_string());
    let nodes = vec![
        node("start", NodeKind::Start, Attrs::default()),
        node("end", NodeKind::End, Attrs::default()),
        node("study", NodeKind::Study, Attrs::default()),
        node(
            "plan",
            NodeKind::Agent,
            Attrs {
                role: s("strategist"),
                doc: s("Writes the plan.\nOne hypothesis per run."),
                writes: vec![Artifact {
                    name: s("plan"),
                    path: ".factory/strategy/current.md".to_string(),
                }],
                checks: vec![Check::Exists, Check::MinSize(200)],
                timeout: Some(600),
                ..Attrs::default()
            },
        ),
        node(
            "review",
            NodeKind::Gate,
            Attrs {
                evaluator: Some(Evaluator::Agent),
                role: s("ceo"),
                question: s("Is the \"plan\" sound?"),
                reads: vec![Artifact {
                    name: None,
                    path: ".factory/strategy/current.md".to_string(),
                }],
                outcomes: vec![Label::Proceed, Label::Reloop, Label::Halt],
                ..Attrs::default()
            },
        ),
        node("fork1", NodeKind::Fork, Attrs::default()),
        node(
            "impl_a",
            NodeKind::Agent,
            Attrs {
                role: s("implementer"),
                task: s("Implement {{plan}}"),
                ..Attrs::default()
            },
        ),
        node(
            "bench",
            NodeKind::Fn,
            Attrs {
                run: s("cargo bench -- --save-baseline \"main\""),
                ..Attrs::default()
            },
        ),
        node("join1", NodeKind::Join, Attrs::default()),
        node(
            "explore",
            NodeKind::Parallel,
            Attrs {
                count: Some(3),
                count_knob: s("branches"),
                isolation: s("worktrees"),
                ..Attrs::default()
            },
        ),
        body_node(
            "explore",
            "explore.try",
            NodeKind::Agent,
            Attrs {
                role: s("builder"),
                ..Attrs::default()
            },
        ),
        node(
            "pick",
            NodeKind::Select,
            Attrs {
                strategy: s("best_score"),
                ..Attrs::default()
            },
        ),
        node(
            "qa.gate",
            NodeKind::Gate,
            Attrs {
                evaluator: Some(Evaluator::Fn),
                run: s("cargo test"),
                ..Attrs::default()
            },
        ),
        node(
            "qa.fix",
            NodeKind::Agent,
            Attrs {
                role: s("fixer"),
                writes: vec![Artifact {
                    name: None,
                    path: "src/lib.rs".to_string(),
                }],
                checks: vec![Check::Contains("## Fixed ✓".to_string())],
                ..Attrs::default()
            },
        ),
        node(
            "notify",
            NodeKind::Llm,
            Attrs {
                is_async: true,
                model: s("haiku"),
                ..Attrs::default()
            },
        ),
    ];
    let reloop = |from: &str, to: &str, max: u32, knob: Option<&str>| Edge {
        max: Some(max),
        max_knob: knob.map(str::to_string),
        ..edge(from, to, Some(Label::Reloop))
    };
    let edges = vec![
        edge("start", "study", None),
        edge("study", "plan", None),
        edge("plan", "review", None),
        edge("review", "fork1", Some(Label::Proceed)),
        reloop("review", "plan", 2, Some("qa_loops")),
        edge("review", "end", Some(Label::Halt)),
        edge("fork1", "impl_a", None),
        edge("fork1", "bench", None),
        edge("impl_a", "join1", None),
        edge("bench", "join1", None),
        edge("bench", "end", Some(Label::Fail)),
        edge("join1", "explore", None),
        edge("explore", "explore.try", None),
        edge("explore.try", "pick", None),
        edge("pick", "qa.gate", None),
        edge("qa.gate", "notify", Some(Label::Proceed)),
        reloop("qa.gate", "qa.fix", 3, None),
        edge("qa.fix", "qa.gate", None),
        edge("notify", "end", None),
    ];
    let knobs = vec![
        Knob {
            name: "qa_loops".to_string(),
            ty: KnobType::Int,
            default: Literal::Int(3),
            min: Some(Literal::Int(1)),
            max: Some(Literal::Int(5)),
            choices: vec![],
            expandable: true,
        },
        Knob {
            name: "branches".to_string(),
            ty: KnobType::Int,
            default: Literal::Int(3),
            min: Some(Literal::Int(1)),
            max: None,
            choices: vec![],
            expandable: false,
        },
        Knob {
            name: "temperature".to_string(),
            ty: KnobType::Float,
            default: Literal::Float(FloatText::from_f64(0.7)),
            min: Some(Literal::Float(FloatText::from_f64(0.0))),
            max: Some(Literal::Float(FloatText::from_f64(1.0))),
            choices: vec![],
            expandable: false,
        },
        Knob {
            name: "style".to_string(),
            ty: KnobType::String,
            default: Literal::Str("terse".to_string()),
            min: None,
            max: None,
            choices: vec!["terse".to_string(), "chatty".to_string()],
            expandable: false,
        },
        Knob {
            name: "verbose".to_string(),
            ty: KnobType::Bool,
            default: Literal::Bool(false),
            min: None,
            max: None,
            choices: vec![],
            expandable: false,
        },
    ];
    let mut ir = Ir {
        ir_version: IR_VERSION,
        workflow: WorkflowMeta {
            name: "improve".to_string(),
            description: "Improve: take the top hypothesis and test it.".to_string(),
            doc: "Improve: take the top hypothesis and test it.\n\nKeeps or reverts by \
                  the numbers."
                .to_string(),
            headless: true,
            inputs: vec![
                Artifact {
                    name: Some("config".to_string()),
                    path: ".factory/config.json".to_string(),
                },
                Artifact {
                    name: None,
                    path: "README.md".to_string(),
                },
            ],
        },
        start: "start".to_string(),
        knobs,
        nodes,
        edges,
    };
    ir.canonicalize();
    ir
}
