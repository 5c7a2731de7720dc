//! What each tool does, as plain functions from arguments to JSON. They call the same
//! compiler and runtime functions the CLI commands call, so a tool and its command
//! never disagree; an `Err` is the reason a tool failed, returned to the agent as a
//! tool error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use factory_compiler::diagnostic::Located;
use factory_compiler::driver::{self, CompileError};
use factory_compiler::host::{self, ModeSource};
use factory_compiler::{emit, ir, skills};
use factory_runtime::detect::{self, DetectOptions};
use factory_runtime::eval::{self, EvalSettings};
use factory_runtime::exec::checkpoint::list_runs;
use factory_runtime::precheck::{self, PrecheckOptions};
use factory_runtime::project::config;
use factory_runtime::store::ExperimentStore;
use factory_runtime::{eval::EvalReport, experiment};
use serde_json::{Value, json};

use super::params::*;

/// Why a tool failed, in words that say what to do.
pub type ToolResult = Result<Value, String>;

/// The project a call names, else the server's; it must be a directory.
pub fn project_of(default: &Path, given: Option<&str>) -> Result<PathBuf, String> {
    let path = match given {
        Some(p) if !p.trim().is_empty() => default.join(p),
        _ => default.to_path_buf(),
    };
    if !path.is_dir() {
        return Err(format!(
            "{} is not a directory; pass `project` as the path of the project's directory",
            path.display()
        ));
    }
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

pub fn project_state(project: &Path) -> ToolResult {
    let detection = detect::detect(
        project,
        &DetectOptions {
            gh_timeout: Duration::from_secs(5),
            ..DetectOptions::default()
        },
    );
    let history = ExperimentStore::open(project).history().ok();
    let last = history.as_ref().and_then(|h| h.records.last());
    let runs = list_runs(project);
    let config = config::load(project).ok();
    Ok(json!({
        "state": detection,
        "goal": config.as_ref().map(|c| c.goal.clone()),
        "experiments": history.as_ref().map_or(0, |h| h.records.len()),
        "pending_experiments": history.as_ref().map_or(0, |h| h.pending.len()),
        "last_experiment": last,
        "runs": runs.len(),
        "last_run": runs.last(),
    }))
}

pub fn history(project: &Path, args: &HistoryArgs) -> ToolResult {
    let history = ExperimentStore::open(project)
        .history()
        .map_err(|e| e.to_string())?;
    let skip = args
        .limit
        .map_or(0, |n| history.records.len().saturating_sub(n));
    let pending: Vec<Value> = history
        .pending
        .iter()
        .map(|p| json!({"id": p.id, "hypothesis": p.hypothesis}))
        .collect();
    Ok(json!({
        "records": &history.records[skip..],
        "pending": pending,
        "warnings": history.warnings,
    }))
}

/// `factory eval` (without --record-baseline): the first eval of a project becomes
/// its growth baseline, as on the command line.
pub fn eval(project: &Path, args: &EvalArgs) -> ToolResult {
    // The configuration precheck reads: factory.md (at the experiment's base for exp).
    let mut settings = match args.exp {
        Some(id) => experiment::eval_settings(project, id).map_err(|e| report(&e))?,
        None => {
            EvalSettings::for_project(project)
                .map_err(|e| report(&e))?
                .0
        }
    };
    if let Some(secs) = args.timeout_secs {
        settings.test_timeout = Duration::from_secs(secs.max(1));
    }
    let result: EvalReport = match args.exp {
        Some(id) => experiment::eval(project, id, &settings).map_err(|e| report(&e))?,
        None => {
            let r = eval::run_eval(project, &settings).map_err(|e| report(&e))?;
            eval::record_first_baseline(project, &r).map_err(|e| report(&e))?;
            r
        }
    };
    serde_json::to_value(&result).map_err(|e| format!("cannot encode the result: {e}"))
}

pub fn precheck(project: &Path, args: PrecheckArgs) -> ToolResult {
    let opts = PrecheckOptions {
        exp_id: args.exp,
        hypothesis: args.hypothesis,
        use_last_eval: args.use_last_eval,
        allow_dirty: args.allow_dirty,
        ..PrecheckOptions::default()
    };
    if args.exp.is_some() && (opts.use_last_eval || opts.allow_dirty) {
        return Err("use_last_eval and allow_dirty do not apply with exp: an experiment is always measured fresh on its committed worktree".into());
    }
    let (result, commit) = match args.exp {
        Some(id) => {
            let (r, record) = experiment::precheck(project, id, opts).map_err(|e| report(&e))?;
            (r, Some(record.commit))
        }
        None => {
            let config = config::load_synced(project).map_err(|e| report(&e))?.config;
            let r = precheck::run_precheck(project, &config, &opts).map_err(|e| report(&e))?;
            (r, None)
        }
    };
    let mut value =
        serde_json::to_value(&result).map_err(|e| format!("cannot encode the result: {e}"))?;
    if let (Some(commit), Some(obj)) = (commit, value.as_object_mut()) {
        obj.insert("commit".into(), commit.into());
    }
    Ok(value)
}

pub fn list_modes(project: &Path) -> ToolResult {
    let modes: Vec<Value> = host::modes(project)
        .into_iter()
        .map(|m| {
            let (source, path) = match &m.source {
                ModeSource::BuiltIn => ("built-in", None),
                ModeSource::Project(p) => ("project", Some(p.display().to_string())),
                ModeSource::Evolved(p) => ("evolved", Some(p.display().to_string())),
            };
            json!({
                "name": m.name,
                "source": source,
                "path": path,
                "overrides_built_in": m.overrides,
                "description": driver::describe_mode(&m.key).unwrap_or_default(),
            })
        })
        .collect();
    Ok(json!({ "modes": modes }))
}

pub fn compile(project: &Path, args: &CompileArgs) -> ToolResult {
    let compiled =
        driver::compile(&args.mode, project, args.workflow.as_deref()).map_err(compile_error)?;
    let ir = &compiled.ir;
    let (output, format) = match args.emit {
        Emit::Ir => (ir::to_text(ir), "ir"),
        Emit::IrJson => (ir::to_json(ir), "ir_json"),
        Emit::Mermaid => (emit::to_mermaid(ir), "mermaid"),
        Emit::Dot => (emit::to_dot(ir), "dot"),
        Emit::Skill => (skills::skill_of(&compiled, project).skill_md, "skill"),
    };
    Ok(json!({
        "workflow": ir.workflow.name,
        "emit": format,
        "output": output,
        "warnings": compiled.warnings.iter().map(Located::to_json).collect::<Vec<_>>(),
    }))
}

/// Diagnostics of unsaved text. Errors in the text are a successful check: the
/// diagnostics are the answer.
pub fn check(project: &Path, args: &CheckArgs) -> ToolResult {
    let name = args.name.as_deref().unwrap_or("workflow.fwf");
    if name.contains('/') || name.contains('\\') {
        return Err(format!(
            "`name` is a file name, not a path (got `{name}`); the text is checked as if saved in the project's directory"
        ));
    }
    let found = driver::check_text(name, &args.text, project);
    let errors = found.iter().filter(|l| l.diagnostic.is_error()).count();
    Ok(json!({
        "ok": errors == 0,
        "errors": errors,
        "warnings": found.len() - errors,
        "diagnostics": found.iter().map(Located::to_json).collect::<Vec<_>>(),
    }))
}

/// A compile failure in words, with every error's place and fix: the error as every
/// front end words it, then what an MCP client passes instead.
pub fn compile_error(err: CompileError) -> String {
    let hint = match &err {
        CompileError::Io(_) => {
            "; call list_modes for the modes, or pass an existing .fwf/.fwir path"
        }
        CompileError::NoWorkflow(_) => "; pass `workflow` to pick one",
        CompileError::Invalid(_) => ":",
    };
    let mut text = format!("{err}{hint}");
    for l in err.located().iter().filter(|l| l.diagnostic.is_error()) {
        let v = l.to_json();
        text.push_str(&format!(
            "\n{}:{}:{}: {} [{}]; help: {}",
            v["file"].as_str().unwrap_or(""),
            v["line"],
            v["column"],
            v["message"].as_str().unwrap_or(""),
            v["code"].as_str().unwrap_or(""),
            v["help"].as_str().unwrap_or("")
        ));
    }
    text
}

/// An error with its help, as the CLI would print it but on one line each.
pub fn report<E: miette::Diagnostic + ?Sized>(e: &E) -> String {
    match e.help() {
        Some(help) => format!("{e}\nhelp: {help}"),
        None => e.to_string(),
    }
}
