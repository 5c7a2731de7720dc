//! `.fwf` rendered from an IR (`--emit fwf`): every built-in mode compiles to IR text,
//! renders, and compiles back to the same bytes; IRs with no faithful file are refused
//! with the reason; and the dotted names the rendering relies on are checked by the
//! compiler (a name that clashes with an instance or a label is an error).

use factory_compiler::builtin;
use factory_compiler::driver::{self, compile_text};
use factory_compiler::emit::to_fwf;
use factory_compiler::ir::{Ir, parse_text, to_text};

/// The IR of built-in mode `name`, as `factory compile NAME` gives it.
fn mode(name: &str) -> Ir {
    let dir = tempfile::tempdir().unwrap();
    match driver::compile(name, dir.path(), None) {
        Ok(c) => c.ir,
        Err(e) => panic!("built-in mode {name} does not compile: {e:?}"),
    }
}

/// Compiles `.fwf` text, panicking with the diagnostics if it has errors.
fn compile(text: &str) -> Ir {
    compile_text("t.fwf", text).unwrap_or_else(|d| {
        let msgs: Vec<String> = d.iter().map(|l| l.diagnostic.message.clone()).collect();
        panic!("does not compile: {msgs:?}\n{text}")
    })
}

/// The error messages of `.fwf` text that must not compile.
fn errors(text: &str) -> Vec<String> {
    match compile_text("t.fwf", text) {
        Ok(_) => panic!("compiled, but should not have:\n{text}"),
        Err(d) => d
            .into_iter()
            .filter(|l| l.diagnostic.is_error())
            .map(|l| format!("{}: {}", l.diagnostic.code.as_str(), l.diagnostic.message))
            .collect(),
    }
}

#[test]
fn every_built_in_mode_renders_to_fwf_that_compiles_back_to_the_same_ir_text() {
    let names: Vec<&str> = builtin::workflows().into_iter().map(|(n, _)| n).collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let text = to_text(&mode(name));
        // From the IR text, as `factory compile X.fwir --emit fwf` does.
        let (ir, _) = parse_text(&text).unwrap();
        let fwf = to_fwf(&ir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let flat = fwf
            .lines()
            .map(str::trim_start)
            .all(|l| !l.starts_with("import ") && !l.starts_with("use "));
        assert!(flat, "{name} is not flat:\n{fwf}");
        assert_eq!(to_text(&compile(&fwf)), text, "{name} does not round-trip");
        // `factory fmt` leaves it as it is.
        assert_eq!(factory_compiler::format::format(&fwf), fwf, "{name}");
        // The rendering of the rendering is the same file: it is a fixed point.
        assert_eq!(to_fwf(&compile(&fwf)).unwrap(), fwf, "{name}");
    }
}

#[test]
fn improve_renders_like_a_hand_written_file() {
    insta::assert_snapshot!(to_fwf(&mode("improve")).unwrap());
}

#[test]
fn parallel_improve_keeps_its_parallel_block_with_the_body_inside() {
    let fwf = to_fwf(&mode("parallel-improve")).unwrap();
    assert!(
        fwf.contains("    parallel branches(count: branches) in worktrees {\n"),
        "{fwf}"
    );
    // Body ids lose the block's prefix inside it; the body leaves through `end`.
    assert!(
        fwf.contains("            start -> trial.begin -> trial.builder -> trial.review\n"),
        "{fwf}"
    );
    assert!(
        fwf.contains("            trial.precheck.proceed -> end\n"),
        "{fwf}"
    );
    assert!(fwf.contains("approve.proceed -> branches -> best"), "{fwf}");
}

/// A small IR text with a parallel block, for the refusals below.
const PARALLEL: &str = "fwir 1
workflow w
knob n int default=2 min=1 max=4
node end end
node start start
node p parallel count=2 count_knob=n isolation=\"worktrees\"
node p.a agent in=p role=\"builder\"
node p.b agent in=p role=\"builder\"
node g gate evaluator=agent role=\"ceo\"
node pick select strategy=\"best_score\"
node fix agent role=\"builder\"
edge start -> p
edge p -> p.a
edge p.a -> p.b
edge p.b -> pick
edge pick -> fix
edge fix -> g
edge g -> end proceed
edge g -> end halt
edge g -> fix reloop max=2
";

fn refusal(text: &str) -> String {
    let (ir, _) = parse_text(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    match to_fwf(&ir) {
        Ok(fwf) => panic!("rendered, but should not have:\n{fwf}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_parallel_fixture_itself_renders() {
    let (ir, _) = parse_text(PARALLEL).unwrap();
    let fwf = to_fwf(&ir).unwrap();
    assert!(fwf.contains("parallel p(count: n) in worktrees {"), "{fwf}");
    assert!(fwf.contains("g.reloop(max 2) -> fix"), "{fwf}");
}

#[test]
fn irs_with_no_faithful_fwf_are_refused_with_the_reason() {
    let cases: &[(&str, &str, &str)] = &[
        // Two ways out of one parallel body: a block has one `par -> next`.
        (
            "edge p.a -> p.b\n",
            "edge p.a -> p.b\nedge p.a -> g fail\n",
            "the body of parallel `p` leaves it for different places",
        ),
        // Into a body from outside.
        (
            "edge g -> fix reloop max=2\n",
            "edge g -> p.b reloop max=2\n",
            "enters the body of parallel `p` from outside",
        ),
        // A parallel node with a way out of its own.
        (
            "edge p -> p.a\n",
            "edge p -> p.a\nedge p -> g fail\n",
            "parallel node `p` has its own edge to `g`",
        ),
        // Names .fwf cannot write.
        ("p.a", "p.a-x", "node `p.a-x` is not a .fwf name"),
        // A body node whose id does not say its block (a .fwf body names its nodes
        // under the block's name).
        (
            "p.b",
            "b",
            "node `b` is in the body of parallel `p` but its id does not start with `p.`",
        ),
        (
            "workflow w\n",
            "workflow w-2\n",
            "its name is not a .fwf name",
        ),
        // A knob bound that is not the knob's value.
        (
            "count=2 count_knob=n",
            "count=3 count_knob=n",
            "count that does not match its knob's value",
        ),
        (
            "reloop max=2\n",
            "reloop max=3 max_knob=n\n",
            "bounded by knob `n` at 3",
        ),
        // A float .fwf has no way to write.
        (
            "default=2 min=1 max=4",
            "default=2 min=1 max=1e300",
            "the upper bound of knob `n` is the float 1e300",
        ),
        // An attribute the kind cannot carry.
        (
            "node pick select",
            "node pick select timeout=5",
            "select `pick` has `timeout`",
        ),
        // A read by a name nothing declares with that path.
        (
            "node p.b agent in=p role=\"builder\"",
            "node p.b agent in=p role=\"builder\" reads=[{\"name\":\"plan\",\"path\":\"x.md\"}]",
            "reads the artifact `plan` (x.md)",
        ),
    ];
    for (from, to, why) in cases {
        assert!(PARALLEL.contains(from), "{from}");
        let text = PARALLEL.replace(from, to);
        let got = refusal(&text);
        assert!(got.starts_with("workflow `"), "{got}");
        assert!(got.contains(why), "{to}: {got}");
    }
}

#[test]
fn a_float_written_with_an_exponent_is_refused() {
    let text = PARALLEL.replace(
        "knob n int default=2 min=1 max=4",
        "knob n int default=2 min=1 max=4\nknob t float default=1e300",
    );
    let got = refusal(&text);
    assert!(got.contains("the float 1e300"), "{got}");
}

#[test]
fn dotted_names_declare_nodes_parallel_blocks_and_artifacts() {
    let ir = compile(
        r#"workflow w {
    agent plan.writer {
        role: builder
        writes: plan.plan = "plan.md"
    }
    gate plan.check by agent(ceo) "Sound?" {
        reads: plan.plan
    }
    parallel tries.all(count: 2) in worktrees {
        agent go.build { role: builder }
        flow { start -> go.build -> end }
    }
    select pick by best_score
    flow {
        start -> plan.writer -> plan.check
        plan.check.proceed -> tries.all -> pick -> end
        plan.check.reloop(max 2) -> plan.writer
        plan.check.halt -> end
    }
}
"#,
    );
    let text = to_text(&ir);
    assert!(text.contains("node plan.writer agent role=\"builder\" writes=[{\"name\":\"plan.plan\",\"path\":\"plan.md\"}]"), "{text}");
    assert!(
        text.contains("reads=[{\"name\":\"plan.plan\",\"path\":\"plan.md\"}]"),
        "{text}"
    );
    assert!(
        text.contains("edge plan.check -> plan.writer reloop max=2\n"),
        "{text}"
    );
    assert!(
        text.contains("edge tries.all -> tries.all.go.build\n"),
        "{text}"
    );
    assert!(text.contains("edge tries.all.go.build -> pick\n"), "{text}");
}

#[test]
fn a_dotted_name_that_clashes_with_an_instance_a_block_or_a_label_is_fwf002() {
    let wrap = |decls: &str, flow: &str| {
        format!(
            "subgraph sub() {{\n    agent a {{ role: builder\n writes: out = \"o.md\" }}\n    flow {{ start -> a -> end }}\n}}\nworkflow w {{\n{decls}\n    flow {{\n{flow}\n    }}\n}}\n"
        )
    };
    let cases = [
        (
            "use sub() as s\n agent s.a { role: builder }",
            "start -> s -> s.a -> end",
            "`s.a` collides with the ids of instance `s`",
        ),
        (
            "parallel p() in worktrees {\n agent a { role: builder }\n flow { start -> a -> end }\n}\n select pick by best_score\n agent p.x { role: builder }",
            "start -> p -> pick -> p.x -> end",
            "`p.x` collides with the ids of parallel block `p`",
        ),
        (
            "agent x { role: builder }\n agent x.halt { role: builder }",
            "start -> x -> end",
            "`x.halt` ends in the label `halt`",
        ),
        (
            "use sub() as s\n agent b { role: builder\n writes: s.out = \"p.md\" }",
            "start -> s -> b -> end",
            "artifact `s.out` takes a name from the artifacts of instance `s`",
        ),
    ];
    for (decls, flow, want) in cases {
        let got = errors(&wrap(decls, flow));
        assert!(
            got.iter()
                .any(|m| m.starts_with("FWF002") && m.contains(want)),
            "{decls}: {got:?}"
        );
    }
}
