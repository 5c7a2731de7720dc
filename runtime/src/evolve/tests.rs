use std::collections::BTreeMap;

use factory_compiler::builtin;
use factory_compiler::driver;
use factory_compiler::ir::{
    Ir, Knob, KnobType, Label, Literal, Node, NodeKind, parse_text, to_text,
};

use super::operators::*;
use super::*;

/// The IR of built-in mode `name`, compiled as `factory compile NAME` does in a
/// directory with no modes of its own.
fn mode(name: &str) -> Ir {
    let dir = tempfile::tempdir().unwrap();
    match driver::compile(name, dir.path(), None) {
        Ok(c) => c.ir,
        Err(e) => panic!("built-in mode {name} does not compile: {e:?}"),
    }
}

fn modes() -> Vec<(&'static str, Ir)> {
    builtin::workflows()
        .into_iter()
        .map(|(name, _)| (name, mode(name)))
        .collect()
}

fn rules() -> Rules {
    Rules::near(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// Asserts a candidate passes the compiler's IR check with no error and no warning
/// (the built-in modes have none) and survives the trip through its text.
fn assert_valid(ir: &Ir, what: &str) {
    let findings: Vec<String> = rules()
        .findings(ir)
        .into_iter()
        .map(|l| l.diagnostic.message)
        .collect();
    assert!(
        findings.is_empty(),
        "{what} is invalid: {findings:?}\n{}",
        to_text(ir)
    );
    let (back, _) = parse_text(&to_text(ir)).unwrap();
    assert_eq!(&back, ir, "{what} does not round-trip through its text");
}

#[test]
fn every_operator_gives_valid_candidates_or_counts_the_discard() {
    let rules = rules();
    let mut produced: BTreeMap<Op, usize> = BTreeMap::new();
    for (name, ir) in modes() {
        for op in Op::ALL {
            let got = generate(&ir, &[op], 3, &rules, &mut Source::new(11));
            let s = got.stats[&op];
            assert_eq!(
                s.tried,
                s.produced + s.discarded_invalid + s.duplicates + s.not_applicable,
                "{name} {op}: {s:?}"
            );
            assert_eq!(s.produced, got.candidates.len());
            for c in &got.candidates {
                assert_eq!(c.op, op);
                assert_valid(&c.ir, &format!("{op} on {name}"));
                assert_eq!(c.hash, canonical_hash(&c.ir));
                assert_ne!(
                    c.hash,
                    canonical_hash(&ir),
                    "{op} on {name} changed nothing"
                );
            }
            *produced.entry(op).or_default() += s.produced;
        }
    }
    // PARALLELIZE has no chain of independent nodes in the built-in modes (each step
    // reads what the one before wrote); it is covered on a serialized mode below.
    for op in Op::ALL.into_iter().filter(|op| *op != Op::Parallelize) {
        assert!(
            produced[&op] > 0,
            "{op} produced nothing on any built-in mode"
        );
    }
}

#[test]
fn blind_edits_are_discarded_and_counted() {
    let got = generate(
        &mode("improve"),
        &[Op::EdgeRedirect],
        5,
        &rules(),
        &mut Source::new(3),
    );
    let s = got.stats[&Op::EdgeRedirect];
    assert!(s.discarded_invalid > 0, "{s:?}");
    for c in &got.candidates {
        assert_valid(&c.ir, "EDGE_REDIRECT on improve");
    }
}

#[test]
fn the_same_seed_gives_the_same_candidates() {
    let ir = mode("build");
    let texts = |seed| {
        generate(&ir, &Op::ALL, 6, &rules(), &mut Source::new(seed))
            .candidates
            .iter()
            .map(|c| to_text(&c.ir))
            .collect::<Vec<_>>()
    };
    let first = texts(42);
    assert_eq!(first.len(), 6);
    assert_eq!(first, texts(42));
    assert_ne!(first, texts(43));
}

#[test]
fn node_insert_splices_one_node_into_an_edge() {
    let ir = mode("qa");
    for seed in 0..20 {
        let Some(out) = node_insert(&ir, &mut Source::new(seed)) else {
            panic!("no insertion in qa")
        };
        let new: Vec<&Node> = out
            .nodes
            .iter()
            .filter(|n| ir.node(&n.id).is_none())
            .collect();
        assert_eq!(new.len(), 1, "seed {seed}");
        let id = &new[0].id;
        assert!(id.starts_with("evo_"));
        assert!(out.edges.iter().any(|e| &e.to == id));
        assert!(out.edges.iter().any(|e| &e.from == id));
        if new[0].kind == NodeKind::Gate {
            let labels: Vec<Option<Label>> = out
                .edges
                .iter()
                .filter(|e| &e.from == id)
                .map(|e| e.label)
                .collect();
            for l in [Label::Proceed, Label::Reloop, Label::Halt] {
                assert!(labels.contains(&Some(l)), "review gate lacks {l}");
            }
        }
        assert_valid(&out, &format!("NODE_INSERT seed {seed}"));
    }
}

#[test]
fn node_remove_reconnects_and_never_removes_start_or_end() {
    let ir = mode("improve");
    for seed in 0..20 {
        let out = operators::node_remove(&ir, &mut Source::new(seed)).unwrap();
        assert_eq!(out.nodes.len(), ir.nodes.len() - 1);
        assert!(out.node("start").is_some() && out.node("end").is_some());
        let gone = ir.nodes.iter().find(|n| out.node(&n.id).is_none()).unwrap();
        assert!(
            !out.edges
                .iter()
                .any(|e| e.from == gone.id || e.to == gone.id)
        );
    }
}

#[test]
fn serialize_then_parallelize_gives_back_the_fork() {
    let ir = mode("qa");
    let chain = serialize(&ir, &mut Source::new(1)).unwrap();
    assert!(!chain.nodes.iter().any(|n| n.kind == NodeKind::Fork));
    assert_valid(&chain, "SERIALIZE on qa");
    // The three reviewers are independent, so PARALLELIZE applies to the chain; one of
    // its choices (all three) is the original graph, up to the fork and join's ids.
    let original = canonical_hash(&ir);
    let mut found = false;
    for seed in 0..30 {
        let forked = parallelize(&chain, &mut Source::new(seed)).unwrap();
        assert_valid(&forked, "PARALLELIZE on serialized qa");
        found |= canonical_hash(&forked) == original;
    }
    assert!(found, "no PARALLELIZE choice restored the qa fork");
}

#[test]
fn parallelize_refuses_dependent_chains() {
    // study.graph writes .factory/graph.json, which study.observe reads.
    let ir = mode("improve");
    let out = parallelize(&ir, &mut Source::new(0));
    assert!(out.is_none(), "parallelized a dependent chain");
}

#[test]
fn param_mutate_changes_one_agent_attribute() {
    let ir = mode("qa");
    for seed in 0..20 {
        let out = param_mutate(&ir, &mut Source::new(seed)).unwrap();
        let changed: Vec<(&Node, &Node)> = ir
            .nodes
            .iter()
            .zip(&out.nodes)
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(changed.len(), 1, "seed {seed}");
        let (a, b) = changed[0];
        assert_eq!(a.kind, NodeKind::Agent);
        let diff = [
            a.attrs.timeout != b.attrs.timeout,
            a.attrs.model != b.attrs.model,
            a.attrs.runner != b.attrs.runner,
        ];
        assert_eq!(diff.iter().filter(|d| **d).count(), 1, "seed {seed}");
    }
}

struct Fixed;

impl Suggest for Fixed {
    fn rewrite_task(&self, _: &Node, task: &str) -> Option<String> {
        Some(format!("{task} (rewritten)"))
    }
    fn expand_knob(&self, _: &Knob) -> Option<Literal> {
        Some(Literal::Int(9))
    }
}

fn changed_task(before: &Ir, after: &Ir) -> (String, String) {
    let (a, b) = before
        .nodes
        .iter()
        .zip(&after.nodes)
        .find(|(a, b)| a != b)
        .unwrap();
    (
        a.attrs.task.clone().unwrap_or_default(),
        b.attrs.task.clone().unwrap_or_default(),
    )
}

#[test]
fn prompt_mutate_appends_a_rewrite_offline_and_asks_the_hook_when_given() {
    let ir = mode("qa");
    let offline = prompt_mutate(&ir, &mut Source::new(5)).unwrap();
    let (before, after) = changed_task(&ir, &offline);
    let added = after.strip_prefix(&before).unwrap().trim();
    assert!(REWRITES.contains(&added), "{added:?}");

    let hooked = prompt_mutate(&ir, &mut Source::new(5).with_hook(&Fixed)).unwrap();
    let (before, after) = changed_task(&ir, &hooked);
    assert_eq!(after, format!("{before} (rewritten)"));
}

fn with_knob(ir: &Ir, default: i64, max: i64, expandable: bool) -> Ir {
    let mut ir = ir.clone();
    let k = ir.knobs.iter_mut().find(|k| k.name == "qa_loops").unwrap();
    assert_eq!(k.ty, KnobType::Int);
    k.default = Literal::Int(default);
    k.max = Some(Literal::Int(max));
    k.expandable = expandable;
    for e in ir
        .edges
        .iter_mut()
        .filter(|e| e.max_knob.as_deref() == Some("qa_loops"))
    {
        e.max = Some(default as u32);
    }
    ir
}

fn qa_loops(ir: &Ir) -> (Literal, Option<Literal>, Vec<Option<u32>>) {
    let k = ir.knob("qa_loops").unwrap();
    let bounds = ir
        .edges
        .iter()
        .filter(|e| e.max_knob.as_deref() == Some("qa_loops"))
        .map(|e| e.max)
        .collect();
    (k.default.clone(), k.max.clone(), bounds)
}

#[test]
fn knob_mutate_stays_in_bounds_and_the_reloop_bounds_follow() {
    let ir = mode("qa"); // qa_loops = 3 in 1..=5, the only knob
    let mut seen = Vec::new();
    for seed in 0..10 {
        let out = knob_mutate(&ir, &mut Source::new(seed)).unwrap();
        let (value, max, bounds) = qa_loops(&out);
        let Literal::Int(n) = value else { panic!() };
        assert!(n == 2 || n == 4, "{n}");
        assert_eq!(max, Some(Literal::Int(5)));
        assert!(bounds.iter().all(|b| *b == Some(n as u32)));
        assert_valid(&out, "KNOB_MUTATE on qa");
        seen.push(n);
    }
    assert!(seen.contains(&2) && seen.contains(&4));

    // At its bound and not expandable: only down.
    let capped = with_knob(&ir, 5, 5, false);
    for seed in 0..5 {
        let out = knob_mutate(&capped, &mut Source::new(seed)).unwrap();
        assert_eq!(qa_loops(&out).0, Literal::Int(4));
    }
    // At its bound and expandable: offline bound + 1 (and the bound moves), or the
    // hook's value.
    let open = with_knob(&ir, 5, 5, true);
    let mut ups = Vec::new();
    for seed in 0..10 {
        let out = knob_mutate(&open, &mut Source::new(seed)).unwrap();
        let (v, max, bounds) = qa_loops(&out);
        if v == Literal::Int(6) {
            assert_eq!(max, Some(Literal::Int(6)));
            assert!(bounds.iter().all(|b| *b == Some(6)));
            assert_valid(&out, "expanded knob");
            ups.push(seed);
        }
        let hooked = knob_mutate(&open, &mut Source::new(seed).with_hook(&Fixed)).unwrap();
        let v = qa_loops(&hooked).0;
        assert!(v == Literal::Int(4) || v == Literal::Int(9), "{v:?}");
    }
    assert!(
        !ups.is_empty(),
        "an expandable knob never went past its bound"
    );
}

/// `ir` with every node id replaced (`n0`, `n1`, … in reverse order of the originals)
/// and nodes and edges in reverse order, without canonicalizing.
fn renamed_and_reordered(ir: &Ir) -> Ir {
    let names: BTreeMap<String, String> = ir
        .nodes
        .iter()
        .rev()
        .enumerate()
        .map(|(i, n)| (n.id.clone(), format!("n{i}")))
        .collect();
    let mut out = ir.clone();
    for n in &mut out.nodes {
        n.id = names[&n.id].clone();
    }
    for e in &mut out.edges {
        e.from = names[&e.from].clone();
        e.to = names[&e.to].clone();
    }
    out.start = names[&out.start].clone();
    out.nodes.reverse();
    out.edges.reverse();
    out
}

#[test]
fn renamed_and_reordered_copies_share_the_hash() {
    for (name, ir) in modes() {
        let copy = renamed_and_reordered(&ir);
        assert_ne!(
            factory_compiler::ir::content_hash(&ir),
            factory_compiler::ir::content_hash(&copy),
            "{name}: the copy should differ as text"
        );
        assert_eq!(canonical_hash(&ir), canonical_hash(&copy), "{name}");
        let mut sorted = copy.clone();
        sorted.canonicalize();
        assert_eq!(canonical_hash(&ir), canonical_hash(&sorted), "{name}");
    }
}

#[test]
fn one_edge_label_or_bound_changed_changes_the_hash() {
    let ir = mode("improve");
    let base = canonical_hash(&ir);
    for i in 0..ir.edges.len() {
        let mut other = ir.clone();
        let e = &mut other.edges[i];
        e.label = match e.label {
            None => Some(Label::Fail),
            Some(Label::Fail) => None,
            Some(Label::Proceed) => Some(Label::Halt),
            Some(Label::Halt) => Some(Label::Proceed),
            Some(Label::Reloop) => Some(Label::Proceed),
        };
        assert_ne!(canonical_hash(&other), base, "edge {i} relabelled");
        let mut bound = ir.clone();
        bound.edges[i].max = Some(bound.edges[i].max.unwrap_or(0) + 1);
        assert_ne!(canonical_hash(&bound), base, "edge {i} rebounded");
    }
}

#[test]
fn a_retargeted_edge_changes_the_hash() {
    // Same nodes, same edge labels, one edge pointing elsewhere.
    let ir = mode("qa");
    let mut other = ir.clone();
    let e = other
        .edges
        .iter_mut()
        .find(|e| e.from == "qa.verdict" && e.label == Some(Label::Halt))
        .unwrap();
    e.to = "builder".into();
    assert_ne!(canonical_hash(&ir), canonical_hash(&other));
}

#[test]
fn every_builtin_mode_hashes_differently() {
    let hashes: BTreeMap<String, &str> = modes()
        .iter()
        .map(|(name, ir)| (canonical_hash(ir), *name))
        .collect();
    assert_eq!(hashes.len(), builtin::workflows().len(), "{hashes:?}");
}

#[test]
fn op_names_parse_in_any_spelling() {
    for op in Op::ALL {
        assert_eq!(Op::parse(op.name()), Some(op));
        assert_eq!(
            Op::parse(&op.name().to_lowercase().replace('_', "-")),
            Some(op)
        );
    }
    assert_eq!(Op::parse("NODE_SPLIT"), None);
}

#[test]
fn a_mutant_with_a_warning_its_parent_lacks_is_rejected() {
    let rules = rules();
    let ir = mode("qa");
    let mut broken = ir.clone();
    // Nobody writes the adversarial report any more, but the verdict still reads it.
    let adversary = broken
        .nodes
        .iter_mut()
        .find(|n| n.id == "qa.review.adversary")
        .unwrap();
    adversary.attrs.writes.clear();
    adversary.attrs.checks.clear();
    assert!(
        rules
            .findings(&broken)
            .iter()
            .all(|l| !l.diagnostic.is_error())
    );
    assert!(!rules.accepts(&broken, &rules.warnings(&ir)));
    // Held to its own warnings, the same graph passes: a parent's warnings are allowed.
    assert!(rules.accepts(&broken, &rules.warnings(&broken)));
}

#[test]
fn composed_candidates_take_several_valid_steps_and_repeat_with_the_seed() {
    let parent = mode("improve");
    let draw = |seed| generate_composed(&parent, &Op::ALL, 3, 3, &rules(), &mut Source::new(seed));
    let got = draw(11);
    assert_eq!(got.candidates.len(), 3, "{}", got.render_stats());
    for c in &got.candidates {
        assert_valid(&c.ir, "a composed candidate");
        assert_ne!(c.hash, canonical_hash(&parent));
    }
    // Three steps per candidate: at least nine valid edits were produced on the way.
    let produced: usize = got.stats.values().map(|s| s.produced).sum();
    assert!(produced >= 9, "{}", got.render_stats());
    let hashes = |g: &Generated| {
        g.candidates
            .iter()
            .map(|c| c.hash.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(hashes(&got), hashes(&draw(11)));
    assert_ne!(hashes(&got), hashes(&draw(12)));
}

#[test]
fn a_seed_is_a_number_or_the_hash_of_any_text() {
    assert_eq!(seed_from("42"), 42);
    assert_eq!(seed_from(" 7 "), 7);
    let run = seed_from("20261201T162931-32747");
    assert_eq!(run, seed_from("20261201T162931-32747"));
    assert_ne!(run, seed_from("20261201T162931-32748"));
}

/// Promotion writes a `.fwf` beside the `.fwir` (issue 15, item 4): every mutant the
/// operators make either renders to a `.fwf` that compiles back to the same IR text, or
/// is refused for one of the reasons a flat file cannot express.
#[test]
fn every_mutant_renders_to_fwf_that_compiles_back_or_is_refused_for_a_known_reason() {
    use factory_compiler::emit::to_fwf;
    // What a `.fwf` file cannot say: the shapes a parallel block cannot have.
    const KNOWN: [&str; 3] = [
        "enters the body of parallel",
        "leaves it for different places",
        "has its own edge to",
    ];
    let rules = rules();
    let (mut rendered, mut refused) = (0usize, BTreeMap::<(&str, &str), usize>::new());
    for (name, ir) in modes() {
        for seed in [5, 6] {
            for c in generate(&ir, &Op::ALL, 12, &rules, &mut Source::new(seed)).candidates {
                let what = format!("{} on {name} (seed {seed})", c.op);
                match to_fwf(&c.ir) {
                    Ok(fwf) => {
                        let back = driver::compile_text("mutant.fwf", &fwf)
                            .unwrap_or_else(|_| panic!("{what}: the .fwf does not compile\n{fwf}"));
                        assert_eq!(to_text(&back), to_text(&c.ir), "{what}\n{fwf}");
                        rendered += 1;
                    }
                    Err(e) => {
                        let why = e.to_string();
                        let reason =
                            KNOWN.iter().find(|k| why.contains(**k)).unwrap_or_else(|| {
                                panic!("{what}: refused for an unexpected reason: {why}")
                            });
                        *refused.entry((name, *reason)).or_default() += 1;
                    }
                }
            }
        }
    }
    let total = rendered + refused.values().sum::<usize>();
    assert!(total >= 300, "only {total} mutants");
    // Every mutant of the built-ins renders: nodes spliced into a parallel body take
    // the body's prefix (`edit::fresh_id`), so no operator makes an edge into a body.
    assert_eq!(refused, BTreeMap::new(), "{rendered} of {total} rendered");
}

#[test]
fn a_node_spliced_into_a_parallel_body_belongs_to_the_body() {
    let ir = mode("parallel-improve");
    let (rules, baseline) = (rules(), rules().warnings(&ir));
    let mut inside = 0;
    for seed in 0..60 {
        // What the generator would keep (a splice into a reloop edge may break a rule).
        let Some(out) =
            node_insert(&ir, &mut Source::new(seed)).filter(|out| rules.accepts(out, &baseline))
        else {
            continue;
        };
        let new: Vec<&Node> = out.nodes.iter().filter(|n| n.id.contains("evo_")).collect();
        assert_eq!(new.len(), 1);
        let id = &new[0].id;
        // The new node is in the body exactly when an end of the edge it was spliced
        // into is (a body's exit edge included).
        let next = out.edges.iter().find(|e| e.from == *id).unwrap();
        let prev = out.edges.iter().find(|e| e.to == *id).unwrap();
        let in_body = |n: &str| out.in_body("branches", n);
        assert_eq!(
            in_body(id),
            in_body(&prev.from) || in_body(&next.to),
            "seed {seed}: {} -> {id} -> {}",
            prev.from,
            next.to
        );
        if in_body(id) {
            inside += 1;
            assert!(
                !id.contains("evo_review"),
                "a review's halt would leave the body: {id}"
            );
        }
    }
    assert!(inside > 0, "no seed spliced into the body");
}
