//! The built-in modes and standard library, as embedded in the binary: all check clean,
//! and the modes have the shape the spec describes.

use std::sync::Arc;

use factory_compiler::check::{file_diagnostics, lower_file};
use factory_compiler::db::{Database, Db};
use factory_compiler::host::{BUILTIN_ROLES, FsLoader};
use factory_compiler::ir::{Evaluator, Ir, Label, NodeKind};
use factory_compiler::{builtin, host};

fn db() -> Database {
    let roles = BUILTIN_ROLES.iter().map(|r| r.to_string()).collect();
    Database::new(Arc::new(FsLoader::default()), Some(roles))
}

fn mode(name: &str) -> Ir {
    let db = db();
    let file = db.file(&format!("{}{name}.fwf", host::BUILTIN_PREFIX));
    assert!(file.exists(&db), "no built-in mode {name}");
    let diags = file_diagnostics(&db, file);
    assert!(diags.is_empty(), "{name}: {diags:#?}");
    lower_file(&db, file).workflows[0].ir.clone()
}

#[test]
fn every_built_in_mode_and_stdlib_file_checks_without_errors_or_warnings() {
    let db = db();
    let mut keys: Vec<String> = builtin::workflows()
        .iter()
        .map(|(n, _)| format!("{}{n}.fwf", host::BUILTIN_PREFIX))
        .collect();
    keys.extend(
        builtin::stdlib_files()
            .iter()
            .map(|(n, _)| format!("std/{n}.fwf")),
    );
    assert!(
        keys.len() >= 16 + 5,
        "modes and stdlib are embedded: {keys:?}"
    );
    for key in keys {
        let file = db.file(&key);
        let diags = file_diagnostics(&db, file);
        assert!(diags.is_empty(), "{key}: {diags:#?}");
    }
}

#[test]
fn the_modes_the_issue_names_all_exist() {
    let names: Vec<&str> = builtin::workflows().iter().map(|(n, _)| *n).collect();
    for expected in [
        "improve",
        "parallel-improve",
        "build",
        "design",
        "create",
        "discover",
        "review",
        "plan",
        "refine",
        "research",
        "qa",
        "spec-generate",
        "spec-update",
        "doc-generate",
        "doc-update",
        "evolve",
    ] {
        assert!(
            names.contains(&expected),
            "missing mode {expected}: {names:?}"
        );
    }
}

fn has(ir: &Ir, id: &str, kind: NodeKind) -> bool {
    ir.node(id).is_some_and(|n| n.kind == kind)
}

#[test]
fn improve_runs_the_experiment_lifecycle() {
    let ir = mode("improve");
    assert!(ir.workflow.headless);
    // study, research, strategist and the CEO gates
    assert!(has(&ir, "study.observe", NodeKind::Study));
    assert!(has(&ir, "researcher", NodeKind::Agent));
    assert!(has(&ir, "plan.strategist", NodeKind::Agent));
    let ceo_gates = ir
        .nodes
        .iter()
        .filter(|n| {
            n.kind == NodeKind::Gate
                && n.attrs.evaluator == Some(Evaluator::Agent)
                && n.attrs.role.as_deref() == Some("ceo")
        })
        .count();
    assert!(
        ceo_gates >= 4,
        "research, plan, build review and QA gates: {ceo_gates}"
    );
    // begin, builder, deep-QA fork/join and the bounded QA reloop
    let begin = ir.node("experiment.trial.begin").expect("begin");
    assert!(
        begin
            .attrs
            .run
            .as_deref()
            .is_some_and(|r| r.starts_with("factory begin"))
    );
    assert!(has(&ir, "experiment.trial.builder", NodeKind::Agent));
    assert!(has(&ir, "experiment.trial.qa.review.split", NodeKind::Fork));
    assert!(has(
        &ir,
        "experiment.trial.qa.review.merged",
        NodeKind::Join
    ));
    let qa_reloop = ir
        .edges
        .iter()
        .find(|e| e.from == "experiment.trial.qa.verdict" && e.label == Some(Label::Reloop))
        .expect("QA gate reloops");
    assert_eq!(qa_reloop.to, "experiment.trial.builder");
    assert_eq!(
        (qa_reloop.max, qa_reloop.max_knob.as_deref()),
        (Some(3), Some("qa_loops"))
    );
    // the precheck gate decides keep or revert through finalize
    let precheck = ir.node("experiment.trial.precheck").expect("precheck");
    assert_eq!(precheck.attrs.evaluator, Some(Evaluator::Fn));
    assert!(
        precheck
            .attrs
            .run
            .as_deref()
            .is_some_and(|r| r.contains("factory precheck"))
    );
    for (label, to) in [
        (Label::Proceed, "experiment.keep"),
        (Label::Halt, "experiment.revert"),
    ] {
        assert!(
            ir.edges
                .iter()
                .any(|e| e.from == precheck.id && e.label == Some(label) && e.to == to),
            "{label} -> {to}"
        );
    }
    assert!(
        ir.node("experiment.keep")
            .and_then(|n| n.attrs.run.clone())
            .is_some_and(|r| r.contains("--verdict keep"))
    );
    // the archivist runs asynchronously after the verdict
    let archivist = ir.node("archivist").expect("archivist");
    assert!(archivist.attrs.is_async);
}

#[test]
fn build_follows_the_spec_sequence() {
    let ir = mode("build");
    assert!(has(&ir, "research.split", NodeKind::Fork));
    assert_eq!(
        ir.edges
            .iter()
            .filter(|e| e.from == "research.split")
            .count(),
        3,
        "three researchers"
    );
    assert!(has(&ir, "research.merged", NodeKind::Join));
    assert!(
        ir.node("deliver.archive_plan")
            .is_some_and(|n| n.attrs.is_async)
    );
    assert!(
        ir.node("deliver.spec").is_some_and(|n| n.attrs.is_async),
        "spec-generate does not block"
    );
    let qa = ir
        .edges
        .iter()
        .find(|e| e.from == "deliver.qa.verdict" && e.label == Some(Label::Reloop))
        .expect("QA reloop");
    assert_eq!(qa.max, Some(3));
    assert!(
        has(&ir, "deliver.docs", NodeKind::Gate),
        "doc-freshness gate"
    );
    assert!(has(&ir, "deliver.precheck", NodeKind::Gate));
}

#[test]
fn design_adds_a_conditional_entry_and_a_user_approved_plan() {
    let ir = mode("design");
    assert!(!ir.workflow.headless);
    let entry: Vec<&str> = ir
        .edges
        .iter()
        .filter(|e| e.from == "start")
        .map(|e| e.to.as_str())
        .collect();
    assert_eq!(entry, ["has_factory"]);
    assert!(ir.edges.iter().any(|e| e.from == "has_factory"
        && e.label == Some(Label::Proceed)
        && e.to == "study.graph"));
    assert!(
        ir.edges
            .iter()
            .any(|e| e.from == "has_factory" && e.label == Some(Label::Halt) && e.to == "discover")
    );
    assert_eq!(
        ir.node("approve").and_then(|n| n.attrs.evaluator),
        Some(Evaluator::User)
    );
}

#[test]
fn parallel_improve_fans_out_into_worktrees_and_selects_the_best() {
    let ir = mode("parallel-improve");
    let par = ir.node("branches").expect("parallel node");
    assert_eq!(par.kind, NodeKind::Parallel);
    assert_eq!(par.attrs.isolation.as_deref(), Some("worktrees"));
    assert_eq!(
        (par.attrs.count, par.attrs.count_knob.as_deref()),
        (Some(3), Some("branches"))
    );
    assert_eq!(ir.node("best").map(|n| n.kind), Some(NodeKind::Select));
}

#[test]
fn every_agent_declares_and_checks_what_it_writes_and_every_agent_gate_reads_what_it_reviews() {
    for (name, _) in builtin::workflows() {
        let ir = mode(name);
        for n in &ir.nodes {
            if n.kind == NodeKind::Agent {
                assert!(
                    !n.attrs.writes.is_empty(),
                    "{name}: agent {} writes nothing",
                    n.id
                );
                use factory_compiler::ir::Check;
                let c = &n.attrs.checks;
                assert!(
                    c.contains(&Check::Exists),
                    "{name}: agent {} does not check its output exists",
                    n.id
                );
                assert!(
                    c.iter().any(|c| matches!(c, Check::MinSize(_))),
                    "{name}: agent {} has no minimum size",
                    n.id
                );
                assert!(
                    c.iter()
                        .any(|c| matches!(c, Check::Contains(h) if h.starts_with('#'))),
                    "{name}: agent {} requires no heading",
                    n.id
                );
            }
            if n.kind == NodeKind::Gate && n.attrs.evaluator != Some(Evaluator::Fn) {
                assert!(
                    !n.attrs.reads.is_empty(),
                    "{name}: gate {} reviews nothing",
                    n.id
                );
            }
        }
    }
}

#[test]
fn every_built_in_role_has_a_working_prompt_and_a_playbook() {
    let prompts: Vec<&str> = builtin::prompts().iter().map(|(r, _)| *r).collect();
    assert_eq!(
        prompts, BUILTIN_ROLES,
        "prompts/ and BUILTIN_ROLES list the same roles"
    );
    for role in BUILTIN_ROLES {
        let text = builtin::prompt(role).expect("prompt");
        for heading in [
            "## Purpose",
            "## Reads",
            "## Writes",
            "## Sacred Rules",
            "## Never",
            "## Done when",
        ] {
            assert!(text.contains(heading), "prompts/{role}.md lacks {heading}");
        }
        assert!(
            text.len() > 2000,
            "prompts/{role}.md is a placeholder ({} bytes)",
            text.len()
        );
        let playbook = builtin::playbook(role).expect("playbook");
        assert!(
            playbook.contains("helpful=0 harmful=0"),
            "playbooks/{role}.md has no counted bullets"
        );
    }
}

#[test]
fn every_role_used_by_a_mode_has_a_prompt_that_names_the_files_it_writes() {
    for (name, _) in builtin::workflows() {
        let ir = mode(name);
        for n in ir.nodes.iter().filter(|n| n.kind == NodeKind::Agent) {
            let role = n.attrs.role.as_deref().expect("agents have roles");
            let prompt = builtin::prompt(role)
                .unwrap_or_else(|| panic!("{name}: no prompt for role {role}"));
            for w in &n.attrs.writes {
                let file = w.path.rsplit('/').next().unwrap_or(&w.path);
                assert!(
                    prompt.contains(file),
                    "{name}: prompts/{role}.md never mentions {file}, which {} writes",
                    n.id
                );
            }
        }
    }
}
