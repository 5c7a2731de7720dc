//! The IR text form: round trips (property tests), tolerance of hand edits, errors with
//! spans, the JSON form and the content hash.

mod common;

use factory_compiler::ir::{
    Artifact, Attrs, Check, Edge, Evaluator, FloatText, IR_VERSION, Ir, Knob, KnobType, Label,
    Literal, Node, NodeKind, Placement, WorkflowMeta, content_hash, from_json, parse_text, to_json,
    to_text,
};
use proptest::prelude::*;
use proptest::sample::select;

// ---------- strategies ----------

/// Ids as the lowerer makes them (with dots for inlined instances) and, now and then,
/// any string at all, which must survive as a quoted name.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z][a-z0-9_]{0,5}(\\.[a-z][a-z0-9_]{0,4}){0,2}",
        1 => any::<String>(),
        1 => "[a-z =\"#>-]{0,6}",
    ]
}

/// Text with quotes, backslashes, newlines, `#`, unicode and control characters.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z \"\\\\\n\t#=\\[\\]{}é✓]{0,16}", any::<String>(),]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<bool>().prop_map(Literal::Bool),
        any::<i64>().prop_map(Literal::Int),
        text().prop_map(Literal::Str),
        any::<f64>().prop_map(|f| Literal::Float(FloatText::from_f64(f))),
        (-1000i32..1000).prop_map(|i| Literal::Float(FloatText::from_f64(f64::from(i) / 8.0))),
    ]
}

fn knob() -> impl Strategy<Value = Knob> {
    (
        name(),
        select(vec![
            KnobType::Int,
            KnobType::Float,
            KnobType::String,
            KnobType::Bool,
        ]),
        literal(),
        proptest::option::of(literal()),
        proptest::option::of(literal()),
        prop::collection::vec(text(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(name, ty, default, min, max, choices, expandable)| Knob {
            name,
            ty,
            default,
            min,
            max,
            choices,
            expandable,
        })
}

fn label() -> impl Strategy<Value = Label> {
    select(vec![
        Label::Proceed,
        Label::Reloop,
        Label::Halt,
        Label::Fail,
    ])
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (proptest::option::of(name()), text()).prop_map(|(name, path)| Artifact { name, path })
}

fn check() -> impl Strategy<Value = Check> {
    prop_oneof![
        Just(Check::Exists),
        any::<u64>().prop_map(Check::MinSize),
        text().prop_map(Check::Contains),
    ]
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(text())
}

fn attrs() -> impl Strategy<Value = Attrs> {
    let strings = (
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
    );
    let rest = (
        proptest::option::of(select(vec![
            Evaluator::Agent,
            Evaluator::Fn,
            Evaluator::User,
        ])),
        prop::collection::vec(label(), 0..3),
        prop::collection::vec(artifact(), 0..3),
        prop::collection::vec(artifact(), 0..3),
        prop::collection::vec(check(), 0..3),
        proptest::option::of(any::<u64>()),
        any::<bool>(),
        proptest::option::of(any::<u32>()),
        proptest::option::of(name()),
        proptest::option::of(select(Placement::ALL.to_vec())),
    );
    (strings, rest).prop_map(
        |(
            (doc, role, prompt, task, run, question, model, runner, isolation, strategy),
            (
                evaluator,
                outcomes,
                reads,
                writes,
                checks,
                timeout,
                is_async,
                count,
                count_knob,
                placement,
            ),
        )| Attrs {
            doc,
            role,
            prompt,
            task,
            run,
            evaluator,
            question,
            outcomes,
            reads,
            writes,
            checks,
            timeout,
            model,
            runner,
            placement,
            is_async,
            count,
            count_knob,
            isolation,
            strategy,
        },
    )
}

fn kind() -> impl Strategy<Value = NodeKind> {
    select(vec![
        NodeKind::Start,
        NodeKind::End,
        NodeKind::Agent,
        NodeKind::Fn,
        NodeKind::Gate,
        NodeKind::Fork,
        NodeKind::Join,
        NodeKind::Parallel,
        NodeKind::Select,
        NodeKind::Study,
        NodeKind::Llm,
    ])
}

/// Any canonical IR: unique node ids and knob names, edges mostly between declared
/// nodes (some dangling), reloops with and without bounds.
fn ir() -> impl Strategy<Value = Ir> {
    let nodes = prop::collection::btree_map(
        name(),
        (kind(), proptest::option::of(name()), attrs()),
        0..8,
    );
    let knobs = prop::collection::btree_map(name(), knob(), 0..4);
    let meta = (
        name(),
        prop_oneof![Just(String::new()), text()],
        prop_oneof![Just(String::new()), text()],
        any::<bool>(),
        prop::collection::vec(artifact(), 0..3),
        prop_oneof![3 => Just("start".to_string()), 1 => name()],
    );
    (nodes, knobs, meta)
        .prop_flat_map(|(nodes, knobs, meta)| {
            let mut ids: Vec<String> = nodes.keys().cloned().collect();
            ids.push("start".to_string());
            ids.push("ghost.node".to_string());
            let edge = (
                select(ids.clone()),
                select(ids),
                proptest::option::of(label()),
                proptest::option::of(any::<u32>()),
                proptest::option::of(name()),
            )
                .prop_map(|(from, to, label, max, max_knob)| Edge {
                    from,
                    to,
                    label,
                    max,
                    max_knob,
                });
            (
                Just(nodes),
                Just(knobs),
                Just(meta),
                prop::collection::vec(edge, 0..12),
            )
        })
        .prop_map(
            |(nodes, knobs, (name, description, doc, headless, inputs, start), edges)| {
                let mut ir = Ir {
                    ir_version: IR_VERSION,
                    workflow: WorkflowMeta {
                        name,
                        description,
                        doc,
                        headless,
                        inputs,
                    },
                    start,
                    knobs: knobs
                        .into_iter()
                        .map(|(name, k)| Knob { name, ..k })
                        .collect(),
                    nodes: nodes
                        .into_iter()
                        .map(|(id, (kind, parallel, attrs))| Node {
                            id,
                            kind,
                            parallel,
                            attrs,
                        })
                        .collect(),
                    edges,
                };
                ir.canonicalize();
                ir
            },
        )
}

fn has_non_finite_float(ir: &Ir) -> bool {
    let bad =
        |l: &Literal| matches!(l, Literal::Float(f) if !f.value().is_some_and(f64::is_finite));
    ir.knobs.iter().any(|k| {
        bad(&k.default) || k.min.as_ref().is_some_and(bad) || k.max.as_ref().is_some_and(bad)
    })
}

/// Lines of a text, and the byte range each one occupies.
fn line_ranges(src: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in src.split('\n') {
        out.push(at..at + line.len());
        at += line.len() + 1;
    }
    out
}

// ---------- round trips ----------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn text_round_trips(ir in ir()) {
        let text = to_text(&ir);
        let (parsed, spans) = match parse_text(&text) {
            Ok(ok) => ok,
            Err(errors) => return Err(TestCaseError::fail(format!("{errors:?}\n{text}"))),
        };
        prop_assert_eq!(&parsed, &ir);
        prop_assert_eq!(to_text(&parsed), text.clone());
        // Spans point at the line each item came from.
        prop_assert_eq!(spans.nodes.len(), ir.nodes.len());
        for (id, span) in &spans.nodes {
            let line = &text[span.clone()];
            prop_assert!(line.starts_with("node "), "{line}");
            prop_assert!(!line.contains('\n'));
            prop_assert!(ir.node(id).is_some());
        }
        prop_assert_eq!(spans.edges.len(), ir.edges.len());
        for span in spans.edges.iter().flatten() {
            prop_assert!(text[span.clone()].starts_with("edge "));
        }
        for span in spans.knobs.values() {
            prop_assert!(text[span.clone()].starts_with("knob "));
        }
        // One line per item: header, workflow, optional meta lines, then the items.
        let meta_lines = usize::from(!ir.workflow.description.is_empty())
            + usize::from(!ir.workflow.doc.is_empty())
            + ir.workflow.inputs.len();
        prop_assert_eq!(
            text.lines().count(),
            2 + meta_lines + ir.knobs.len() + ir.nodes.len() + ir.edges.len()
        );
    }

    #[test]
    fn json_round_trips(ir in ir()) {
        // JSON has no NaN or infinity; the text form keeps them, JSON cannot.
        prop_assume!(!has_non_finite_float(&ir));
        let json = to_json(&ir);
        prop_assert_eq!(from_json(&json).map_err(|e| TestCaseError::fail(e.message))?, ir);
    }

    #[test]
    fn shuffled_lines_parse_to_the_same_ir(ir in ir(), seed in any::<u64>()) {
        let text = to_text(&ir);
        let mut lines: Vec<&str> = text.lines().collect();
        let header = lines.remove(0);
        // Inputs keep their file order, so leave them out of the shuffle.
        let (inputs, mut body): (Vec<&str>, Vec<&str>) =
            lines.into_iter().partition(|l| l.starts_with("input "));
        let mut state = seed;
        for i in (1..body.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            body.swap(i, (state >> 33) as usize % (i + 1));
        }
        let shuffled = std::iter::once(header)
            .chain(["", "# a note a user added"])
            .chain(body)
            .chain(inputs)
            .collect::<Vec<_>>()
            .join("\n");
        let parsed = parse_text(&shuffled).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!(parsed.0, ir);
    }

    #[test]
    fn deleting_a_node_line_keeps_its_edges(ir in ir(), pick in any::<prop::sample::Index>()) {
        prop_assume!(!ir.nodes.is_empty());
        let gone = &ir.nodes[pick.index(ir.nodes.len())];
        let text = to_text(&ir);
        let (_, spans) = parse_text(&text).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let span = spans.nodes[&gone.id].clone();
        let edited = format!("{}{}", &text[..span.start], &text[span.end + 1..]);
        let (parsed, _) = parse_text(&edited).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert!(parsed.node(&gone.id).is_none());
        prop_assert_eq!(parsed.nodes.len(), ir.nodes.len() - 1);
        prop_assert_eq!(parsed.edges, ir.edges);
    }

    #[test]
    fn duplicating_a_node_line_is_an_error_on_the_copy(ir in ir(), pick in any::<prop::sample::Index>()) {
        prop_assume!(!ir.nodes.is_empty());
        let dup = &ir.nodes[pick.index(ir.nodes.len())];
        let text = to_text(&ir);
        let line = text.lines().find(|l| {
            parse_text(&format!("fwir 1\nworkflow w\n{l}\n"))
                .is_ok_and(|(p, _)| p.nodes.first().is_some_and(|n| n.id == dup.id))
        });
        let line = line.ok_or_else(|| TestCaseError::fail("node line not found"))?;
        let edited = format!("{text}{line}\n");
        let errors = parse_text(&edited).err().ok_or_else(|| TestCaseError::fail("no error"))?;
        prop_assert_eq!(errors.len(), 1);
        prop_assert!(errors[0].message.contains("duplicate node id"));
        let copy_start = text.len();
        prop_assert!(errors[0].span.start >= copy_start && errors[0].span.end <= edited.len());
    }

    #[test]
    fn parse_never_panics_on_any_string(src in any::<String>()) {
        let _ = parse_text(&src);
        let _ = from_json(&src);
    }

    #[test]
    fn parse_never_panics_on_line_like_noise(
        src in "(fwir 1\n)?((workflow|node|edge|knob|input|doc|description|#)[ a-z0-9\"=\\[\\]{}:,.>\\\\-]{0,30}\n){0,8}"
    ) {
        if let Err(errors) = parse_text(&src) {
            for e in errors {
                prop_assert!(e.span.start <= e.span.end && e.span.end <= src.len());
                prop_assert!(src.is_char_boundary(e.span.start) && src.is_char_boundary(e.span.end));
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    #[test]
    fn parse_never_panics_on_mutated_texts(
        ir in ir(),
        ops in prop::collection::vec((0u8..4, any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..5),
    ) {
        let text = to_text(&ir);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (op, a, b) in ops {
            if lines.is_empty() {
                break;
            }
            let i = a.index(lines.len());
            match op {
                0 => { lines.remove(i); }
                1 => { let l = lines[i].clone(); lines.insert(b.index(lines.len()), l); }
                2 => { let j = b.index(lines.len()); lines.swap(i, j); }
                _ => {
                    // Cut a line at a character boundary.
                    let l = &lines[i];
                    let cuts: Vec<usize> = l.char_indices().map(|(k, _)| k).collect();
                    if !cuts.is_empty() {
                        let at = cuts[b.index(cuts.len())];
                        lines[i] = l[..at].to_string();
                    }
                }
            }
        }
        let src = lines.join("\n");
        if let Err(errors) = parse_text(&src) {
            prop_assert!(!errors.is_empty());
            for e in errors {
                prop_assert!(e.span.end <= src.len());
                prop_assert!(e.help.is_some());
            }
        }
    }
}

// ---------- hand-written texts ----------

#[test]
fn representative_text_snapshot() {
    let ir = common::representative();
    let text = to_text(&ir);
    insta::assert_snapshot!(text);
    let (parsed, _) = parse_text(&text).expect("parses");
    assert_eq!(parsed, ir);
}

#[test]
fn comments_blank_lines_crlf_and_extra_spaces_are_accepted() {
    let src = "# generated by hand\r\nfwir 1\r\n\r\n  workflow   demo  headless\r\n# a note\r\n\
               node a agent   role=\"x y\"\r\nedge start -> a\r\n";
    let (ir, spans) = parse_text(src).expect("parses");
    assert_eq!(ir.workflow.name, "demo");
    assert!(ir.workflow.headless);
    assert_eq!(ir.nodes[0].attrs.role.as_deref(), Some("x y"));
    assert_eq!(
        &src[spans.nodes["a"].clone()],
        "node a agent   role=\"x y\""
    );
    assert_eq!(
        &src[spans.workflow.clone().expect("span")],
        "workflow   demo  headless"
    );
}

#[test]
fn edges_to_undeclared_nodes_are_kept() {
    let (ir, spans) =
        parse_text("fwir 1\nworkflow w\nnode a agent\nedge a -> gone\n").expect("parses");
    assert_eq!(ir.edges.len(), 1);
    assert_eq!(ir.edges[0].to, "gone");
    assert!(ir.node("gone").is_none());
    assert_eq!(spans.edges.len(), 1);
}

#[test]
fn edge_spans_follow_the_canonical_edge_order() {
    let src = "fwir 1\nworkflow w\nedge z -> a\nedge a -> z reloop max=2\n";
    let (ir, spans) = parse_text(src).expect("parses");
    assert_eq!(ir.edges[0].from, "a");
    let first = spans.edges[0].clone().expect("span");
    assert_eq!(&src[first], "edge a -> z reloop max=2");
}

#[test]
fn hand_written_json_values_may_contain_spaces() {
    let src = "fwir 1\nworkflow w\nnode a agent reads=[ \"x y.md\", {\"name\": \"p\", \"path\": \"p.md\"} ] checks=[\"exists\", {\"min_size\": 3}]\n";
    let (ir, _) = parse_text(src).expect("parses");
    let a = &ir.nodes[0].attrs;
    assert_eq!(a.reads.len(), 2);
    assert_eq!(a.reads[0].path, "x y.md");
    assert_eq!(a.reads[1].name.as_deref(), Some("p"));
    assert_eq!(a.checks, vec![Check::Exists, Check::MinSize(3)]);
}

/// Parses `src`, expects errors, and checks the first one: its message contains
/// `message`, its span lies on line `line` (1-based) and it has help.
fn assert_error(src: &str, message: &str, line: usize) -> Vec<factory_compiler::ir::TextError> {
    let errors = parse_text(src).expect_err("should fail");
    let e = &errors[0];
    assert!(
        e.message.contains(message),
        "expected `{message}` in `{}`",
        e.message
    );
    let range = line_ranges(src)[line - 1].clone();
    assert!(
        e.span.start >= range.start && e.span.end <= range.end,
        "span {:?} not on line {line} ({range:?}) of {src:?}",
        e.span
    );
    assert!(e.help.as_deref().is_some_and(|h| !h.is_empty()));
    errors
}

#[test]
fn unknown_item_keyword() {
    let errors = assert_error(
        "fwir 1\nworkflow w\nnodes a agent\n",
        "unknown item `nodes`",
        3,
    );
    assert!(errors[0].help.as_deref().unwrap_or("").contains("node"));
}

#[test]
fn bad_node_kind() {
    assert_error(
        "fwir 1\nworkflow w\nnode a robot\n",
        "unknown node kind `robot`",
        3,
    );
}

#[test]
fn bad_json_values() {
    assert_error(
        "fwir 1\nworkflow w\nnode a agent role=\"unterminated\n",
        "bad value for `role`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nnode a agent reads=[1]\n",
        "bad value for `reads`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nnode a agent timeout=-1\n",
        "bad value for `timeout`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nknob k int default=three\n",
        "bad value `three`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\ndoc not-json\n",
        "bad value for `doc`",
        3,
    );
}

#[test]
fn unknown_attribute_keys() {
    assert_error(
        "fwir 1\nworkflow w\nnode a agent colour=\"red\"\n",
        "unknown node attribute `colour`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nnode a agent fast\n",
        "unknown node attribute `fast`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nknob k int default=1 step=2\n",
        "unknown knob attribute `step`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nedge a -> b weight=2\n",
        "unknown edge attribute `weight`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w fast\n",
        "unknown workflow attribute `fast`",
        2,
    );
}

#[test]
fn duplicate_node_id_points_at_the_second_line_and_names_the_first() {
    let errors = assert_error(
        "fwir 1\nworkflow w\nnode a agent\nnode b fn\nnode a gate\n",
        "duplicate node id `a`",
        5,
    );
    assert!(errors[0].help.as_deref().unwrap_or("").contains("line 3"));
}

#[test]
fn other_duplicates() {
    assert_error(
        "fwir 1\nworkflow w\nknob k int default=1\nknob k int default=2\n",
        "duplicate knob `k`",
        4,
    );
    assert_error(
        "fwir 1\nworkflow w\nworkflow v\n",
        "duplicate workflow line",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\ndoc \"a\"\ndoc \"b\"\n",
        "duplicate `doc` line",
        4,
    );
    assert_error("fwir 1\nfwir 1\nworkflow w\n", "second `fwir` header", 2);
    assert_error(
        "fwir 1\nworkflow w\nnode a agent role=\"x\" role=\"y\"\n",
        "`role` given twice",
        3,
    );
}

#[test]
fn missing_header() {
    assert_error("workflow w\nnode a agent\n", "missing header", 1);
    let errors = parse_text("").expect_err("empty text fails");
    assert!(errors[0].message.contains("missing header"));
    assert_eq!(errors[0].span, 0..0);
    let errors = parse_text("# only a comment\n\n").expect_err("fails");
    assert!(errors[0].message.contains("missing header"));
}

#[test]
fn unsupported_ir_version_stops_parsing() {
    let errors = assert_error(
        "fwir 2\nworkflow w\nnode a robot\n",
        "unsupported IR version 2",
        1,
    );
    assert_eq!(errors.len(), 1, "nothing after an unknown version is read");
    assert_error("fwir one\nworkflow w\n", "bad IR version `one`", 1);
}

#[test]
fn missing_workflow_line_and_knob_default() {
    assert_error("fwir 1\nnode a agent\n", "missing `workflow` line", 1);
    assert_error(
        "fwir 1\nworkflow w\nknob k int min=1\n",
        "knob `k` has no default",
        3,
    );
}

#[test]
fn bad_edges() {
    assert_error("fwir 1\nworkflow w\nedge a b\n", "an edge line is", 3);
    assert_error("fwir 1\nworkflow w\nedge a => b\n", "expected `->`", 3);
    assert_error(
        "fwir 1\nworkflow w\nedge a -> b retry\n",
        "unknown edge label `retry`",
        3,
    );
    assert_error(
        "fwir 1\nworkflow w\nedge a=b -> c\n",
        "bad edge source `a=b`",
        3,
    );
}

#[test]
fn every_bad_line_is_reported() {
    let errors = parse_text("fwir 1\nworkflow w\nnode a robot\nnode b agent\nedge b => a\nbogus\n")
        .expect_err("fails");
    assert_eq!(errors.len(), 3, "{errors:?}");
}

// ---------- JSON and hash ----------

#[test]
fn json_errors_have_spans_and_versions_are_checked() {
    let e = from_json("{\n  \"ir_version\": 1,\n  \"workflow\": 3\n}").expect_err("fails");
    assert!(e.message.contains("invalid IR JSON"));
    assert!(e.span.start >= 22 && e.span.start <= 38, "{:?}", e.span);
    let mut ir = common::representative();
    ir.ir_version = 9;
    let e = from_json(&serde_json::to_string(&ir).expect("json")).expect_err("fails");
    assert!(e.message.contains("unsupported IR version 9"));
}

#[test]
fn json_round_trip_of_the_representative_ir() {
    let ir = common::representative();
    let json = to_json(&ir);
    assert!(json.contains("\"qa.gate\""));
    assert_eq!(from_json(&json).expect("parses"), ir);
}

#[test]
fn content_hash_ignores_order_and_formatting_but_not_content() {
    let ir = common::representative();
    let hash = content_hash(&ir);
    assert_eq!(hash.len(), 64);
    assert!(
        hash.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );

    let mut reversed = ir.clone();
    reversed.nodes.reverse();
    reversed.edges.reverse();
    reversed.knobs.reverse();
    assert_eq!(content_hash(&reversed), hash);

    let messy = to_text(&ir)
        .replace('\n', "\n\n# note\n")
        .replace(" -> ", "  ->  ");
    let (reparsed, _) = parse_text(&messy).expect("parses");
    assert_eq!(content_hash(&reparsed), hash);

    let mut changed = ir.clone();
    changed.edges[0].max = Some(7);
    assert_ne!(content_hash(&changed), hash);
}

#[test]
fn non_finite_floats_survive_the_text_form() {
    let mut ir = common::representative();
    for (i, v) in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -0.0]
        .into_iter()
        .enumerate()
    {
        ir.knobs.push(Knob {
            name: format!("f{i}"),
            ty: KnobType::Float,
            default: Literal::Float(FloatText::from_f64(v)),
            min: None,
            max: None,
            choices: vec![],
            expandable: false,
        });
    }
    ir.canonicalize();
    let (parsed, _) = parse_text(&to_text(&ir)).expect("parses");
    assert_eq!(parsed, ir);
}

#[test]
fn weird_names_are_quoted() {
    let mut ir = common::representative();
    ir.nodes.push(common::node(
        "has space \"q\"",
        NodeKind::Fn,
        Attrs::default(),
    ));
    ir.edges
        .push(common::edge("end", "has space \"q\"", Some(Label::Fail)));
    ir.workflow.name = String::new();
    ir.canonicalize();
    let text = to_text(&ir);
    assert!(text.contains("node \"has space \\\"q\\\"\" fn\n"), "{text}");
    assert!(text.contains("workflow \"\""));
    assert_eq!(parse_text(&text).expect("parses").0, ir);
}
