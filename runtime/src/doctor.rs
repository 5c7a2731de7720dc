//! `factory doctor`: is this project set up for factory? Each check says what it found
//! and, when something is wrong, what to do about it. Nothing is changed.

use std::path::Path;

use serde::Serialize;

use crate::eval::discovery::{self, introspect};
use crate::project::config;
use crate::project::layout::FactoryPaths;

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub ok: bool,
    /// What was found.
    pub found: String,
    /// What to do, when not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    fn ok(check: &'static str, found: impl Into<String>) -> Self {
        Self {
            check,
            ok: true,
            found: found.into(),
            fix: None,
        }
    }

    fn problem(check: &'static str, found: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            check,
            ok: false,
            found: found.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Every check, in the order a new user meets them. Each applies the rule `factory
/// run` applies (the same functions), so doctor passes what a run accepts and fails
/// what it refuses.
/// `settings`: the runner flags a run would be given (`--runner`, `--agent-cmd`,
/// `--script`), checked as that run would check them.
pub fn diagnose(project: &Path, settings: &crate::exec::checkpoint::RunSettings) -> Vec<Finding> {
    vec![
        git(project),
        factory_md(project),
        config_json(project),
        ignored(project),
        eval_profile(project),
        toolchain(project),
        eval_command(project),
        pristine_checkout(project),
        runner(project, settings),
        sandbox(project, settings),
        event_log(project),
    ]
}

/// The sandbox's probe, as a run that asks for it makes it ([`Sandbox::prepare`]): a
/// problem only when the run's placement is `sandbox`.
///
/// [`Sandbox::prepare`]: crate::placement::Sandbox::prepare
fn sandbox(project: &Path, settings: &crate::exec::checkpoint::RunSettings) -> Finding {
    use crate::placement::{Placement, Sandbox};
    let placement = crate::placement::for_run(settings.placement, project);
    match (Sandbox::prepare(), placement) {
        (Ok(s), _) => Finding::ok(
            "sandbox",
            format!(
                "placement {placement}; {} confines here: its canary ran and could not write outside; {}",
                s.engine_text(),
                s.pids_text()
            ),
        ),
        (Err(why), Placement::Host) => Finding::ok(
            "sandbox",
            format!("placement host; the sandbox could not be used here: {why}"),
        ),
        (Err(why), Placement::Sandbox) => Finding::problem(
            "sandbox",
            format!("placement sandbox, but the sandbox cannot be used here: {why}"),
            "install bubblewrap (`apt-get install bubblewrap`) where user namespaces are allowed (not inside a default Docker container), or run on a kernel with landlock (Linux 5.13+) for the weaker landlock-only sandbox; until then runs fall back to the host with a warning and a placement.fallback event",
        ),
    }
}

/// `.factory/config.json` as a run reads it ([`config::load`]).
fn config_json(project: &Path) -> Finding {
    const C: &str = "config.json";
    match config::read_config(project) {
        Ok(_) => Finding::ok(C, "readable, derived from factory.md by `factory init`"),
        Err(config::ConfigError::Missing { .. }) => Finding::ok(
            C,
            "none yet: runs read factory.md (`factory init` writes it)",
        ),
        Err(e) => Finding::problem(
            C,
            e.to_string(),
            "run `factory init --reparse`: it rewrites config.json from factory.md and keeps the old one as config.json.bak",
        ),
    }
}

/// The event log a keep's evidence is read from: it must verify.
fn event_log(project: &Path) -> Finding {
    const C: &str = "event log";
    let paths = FactoryPaths::new(project);
    if !paths.events_jsonl().exists() {
        return Finding::ok(C, "none yet: the first run starts it");
    }
    match crate::events::verify(&paths) {
        Ok(log) => Finding::ok(
            C,
            format!("{} event(s); the chain verifies", log.events.len()),
        ),
        Err(e) => Finding::problem(C, e.to_string(), crate::events::chain::recovery(&paths)),
    }
}

/// What the gate does to each side, done to HEAD: written into a scratch directory from
/// git, factory.md's `## Setup` run there, then the provenance probe. Passing means the
/// code the tests and evals would run in a precheck comes from that checkout.
fn pristine_checkout(project: &Path) -> Finding {
    use crate::worktrees::setup::{self, Checkout, SideError};
    const C: &str = "checkout";
    let head = match crate::worktrees::pristine::write_head(project) {
        Ok(h) => h,
        Err(e) => return Finding::problem(C, e.problem, e.fix),
    };
    let _isolated = crate::sys::process::IsolatedBuilds::enter();
    let checkout = Checkout {
        side: "HEAD",
        code: &head.code,
        root: head.dir.path(),
    };
    let short = head.short();
    let commands = head.setup();
    let ran = if commands.is_empty() {
        "no `## Setup`".to_string()
    } else {
        format!("`## Setup` ({} command(s)) ran", commands.len())
    };
    match setup::prepare(
        &checkout,
        commands,
        head.timeout(),
        &crate::sys::progress::Progress::none(),
    ) {
        Ok(proven) => Finding::ok(
            C,
            format!(
                "a clean checkout of HEAD ({short}): {ran}; {}",
                proven.summary()
            ),
        ),
        Err(e @ SideError::Setup { .. }) => Finding::problem(
            C,
            format!("a clean checkout of HEAD ({short}): {e}"),
            "fix the command in factory.md's `## Setup` (run it by hand in a fresh clone) and commit it",
        ),
        Err(e @ SideError::Provenance { .. }) => Finding::problem(
            C,
            format!("a clean checkout of HEAD ({short}), {ran}: {e}"),
            "declare (or fix) factory.md's `## Setup` so each checkout gets its own environment (docs/configuration.md), and commit it",
        ),
    }
}

fn git(project: &Path) -> Finding {
    const C: &str = "git";
    match git2::Repository::open(project) {
        Err(_) => Finding::problem(
            C,
            format!("{} is not a git repository", project.display()),
            "run `git init` and commit your project: experiments are branches of it",
        ),
        Ok(repo) => match repo.head().ok().and_then(|h| h.peel_to_commit().ok()) {
            None => Finding::problem(
                C,
                "the repository has no commit yet",
                "commit your project (`git add -A && git commit -m initial`)",
            ),
            Some(c) => Finding::ok(
                C,
                format!(
                    "on {} at {}",
                    repo.head()
                        .ok()
                        .and_then(|h| h.shorthand().ok().map(str::to_string))
                        .unwrap_or_else(|| "a detached HEAD".into()),
                    &c.id().to_string()[..10]
                ),
            ),
        },
    }
}

fn factory_md(project: &Path) -> Finding {
    const C: &str = "factory.md";
    if !project.join("factory.md").is_file() {
        return Finding::problem(
            C,
            "no factory.md",
            "write factory.md with the sections Goal, Scope, Guards, Eval command, Eval \
             threshold and Constraints (docs/cli.md, `factory init`), then run `factory init`",
        );
    }
    match config::read_factory_md(project) {
        Err(e) => Finding::problem(C, e.to_string(), "fix factory.md at the line named"),
        Ok(cfg) => {
            let committed = git2::Repository::open(project)
                .ok()
                .and_then(|r| r.status_file(Path::new("factory.md")).ok())
                .is_some_and(|s| s.is_empty());
            if committed {
                Finding::ok(
                    C,
                    format!(
                        "valid: {} scope pattern(s), threshold {}",
                        cfg.scope.len(),
                        cfg.eval_threshold
                    ),
                )
            } else {
                Finding::problem(
                    C,
                    "valid, but not committed as it is: the gate reads factory.md from the \
                     experiment's base commit",
                    "commit factory.md (`git add factory.md && git commit`)",
                )
            }
        }
    }
}

fn ignored(project: &Path) -> Finding {
    const C: &str = "ignores";
    let Ok(repo) = git2::Repository::open(project) else {
        return Finding::problem(C, "no repository", "see the git check");
    };
    if !repo.is_path_ignored(".factory/x").unwrap_or(false) {
        return Finding::problem(
            C,
            ".factory/ is not ignored by git",
            "add `.factory/` to .gitignore (`factory init` does) and commit it",
        );
    }
    let committed = repo
        .status_file(Path::new(".gitignore"))
        .is_ok_and(|s| s.is_empty());
    if committed {
        Finding::ok(C, ".factory/ is ignored")
    } else {
        Finding::problem(
            C,
            ".factory/ is ignored, but .gitignore has uncommitted changes",
            "commit it: `git add .gitignore && git commit -m \"Ignore factory's state\"`",
        )
    }
}

/// The rule a run applies: no profile is fine (the checks introspection finds); one
/// pending review, or unreadable, stops the run.
fn eval_profile(project: &Path) -> Finding {
    const C: &str = "eval profile";
    let paths = FactoryPaths::new(project);
    match crate::eval::discovery::profile::eval_profile_pending(&paths) {
        None => Finding::ok(
            C,
            "none: the eval measures the checks introspection finds (`factory discover` proposes a reviewed profile)",
        ),
        Some(true) => Finding::problem(
            C,
            match discovery::load_profile(project) {
                Err(e) => e.to_string(),
                Ok(_) => "pending review (never approved, or changed since)".to_string(),
            },
            "read .factory/eval_profile.json, then run `factory discover --approve` (or `factory discover` to regenerate it)",
        ),
        Some(false) => match discovery::load_profile(project) {
            Ok(p) => Finding::ok(
                C,
                format!(
                    "approved: {} dimension(s) for {}",
                    p.dimensions.len(),
                    p.project_type
                ),
            ),
            Err(e) => Finding::problem(C, e.to_string(), "run `factory discover` to regenerate it"),
        },
    }
}

/// factory.md's `## Eval command`: a score in 0..=1, not a number a report happens to
/// end with (the last eval says which it got).
fn eval_command(project: &Path) -> Finding {
    const C: &str = "eval command";
    let Ok(cfg) = config::load(project) else {
        return Finding::ok(C, "not read (factory.md has a problem)");
    };
    let command = cfg.eval_command.trim();
    if crate::eval::declared::is_builtin_eval(command) {
        return Finding::ok(C, "factory eval: the dimensions factory measures");
    }
    let fix = "print the score as JSON, `{\"score\": 0.83}` on the last line (docs/cli.md, `## Eval command`), or write `factory eval`";
    if let Some(warning) = crate::eval::declared::test_runner_warning(command) {
        return Finding::problem(C, warning, fix);
    }
    let bare = crate::eval::load_last_eval(project).and_then(|r| {
        r.composite
            .results
            .into_iter()
            .find(|d| d.details.contains(crate::eval::declared::BARE_NUMBER_NOTE))
    });
    match bare {
        Some(d) => Finding::problem(C, format!("the last eval: {}", d.details), fix),
        None => Finding::ok(
            C,
            format!("`{command}`: its score is the project dimension"),
        ),
    }
}

fn toolchain(project: &Path) -> Finding {
    const C: &str = "toolchain";
    let profile = introspect::introspect(project);
    if profile.language == introspect::Language::Unknown {
        return Finding::problem(
            C,
            "no language recognised (no Cargo.toml, go.mod, package.json or Python files)",
            "declare the project's checks under `## Project eval` in factory.md",
        );
    }
    let missing: Vec<String> = profile
        .checks
        .iter()
        .filter(|c| c.command.is_none() && !c.not_applicable())
        .map(|c| {
            format!(
                "{} ({})",
                c.kind.name(),
                c.unavailable.as_deref().unwrap_or("no command")
            )
        })
        .collect();
    let tests_missing = profile
        .check(introspect::CheckKind::Tests)
        .is_none_or(|c| c.command.is_none());
    if tests_missing {
        Finding::problem(
            C,
            format!("{}: no way to run the tests", profile.language.as_str()),
            missing.join("; "),
        )
    } else if missing.is_empty() {
        Finding::ok(
            C,
            format!("{}: every check has its tool", profile.language.as_str()),
        )
    } else {
        Finding::ok(
            C,
            format!(
                "{}: a test command is available; not measured: {}",
                profile.language.as_str(),
                missing.join("; ")
            ),
        )
    }
}

/// The runner a run would use, built and asked whether it can start headless, as
/// `factory run` does before anything starts.
fn runner(project: &Path, settings: &crate::exec::checkpoint::RunSettings) -> Finding {
    const C: &str = "agent runner";
    let layers = match crate::user_config::resolve::Layers::load(Some(project)) {
        Ok(l) => l,
        Err(e) => {
            let file = crate::project::registry::user_home()
                .map(|h| h.join(crate::user_config::FILE_NAME).display().to_string())
                .unwrap_or_else(|| "config.toml".into());
            return Finding::problem(C, e.to_string(), format!("fix {file}"));
        }
    };
    let Some(spec) = crate::runners::RunnerSpec::resolve(
        settings.runner.as_deref(),
        settings.agent_cmd.as_deref(),
        settings.script.as_deref(),
        &layers,
    ) else {
        return Finding::problem(
            C,
            "no agent CLI runner (claude, codex, opencode, gemini) on PATH and none configured",
            "install one (e.g. `npm install -g @anthropic-ai/claude-code`), or run any command \
             with `--runner exec --agent-cmd \"...\"`, or set `[runners.exec] command` in \
             config.toml (docs/runners.md)",
        );
    };
    let from = layers
        .runner(settings.runner.as_deref())
        .map_or("the first agent CLI on PATH".to_string(), |r| {
            r.source.to_string()
        });
    let built = match crate::runners::build_runner(&spec) {
        Ok(r) => r,
        Err(e) => {
            let help = miette::Diagnostic::help(&e)
                .map(|h| h.to_string())
                .unwrap_or_else(|| "see docs/runners.md".into());
            return Finding::problem(C, format!("`{}` (from {from}): {e}", spec.name), help);
        }
    };
    match built.check_ready(&[]) {
        Ok(()) => Finding::ok(C, format!("`{}` (from {from})", spec.name)),
        Err(e) => {
            let help = miette::Diagnostic::help(&e)
                .map(|h| h.to_string())
                .unwrap_or_else(|| "see docs/runners.md".into());
            Finding::problem(C, format!("`{}` (from {from}): {e}", spec.name), help)
        }
    }
}

/// The report as text: one line per check, the fix indented under a problem.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!(
            "{}  {:<13} {}\n",
            if f.ok { "ok  " } else { "FAIL" },
            f.check,
            f.found
        ));
        if let Some(fix) = &f.fix {
            out.push_str(&format!("      → {fix}\n"));
        }
    }
    let problems = findings.iter().filter(|f| !f.ok).count();
    out.push_str(&match problems {
        0 => "ready: factory can run here\n".to_string(),
        n => format!("{n} problem(s) to fix before factory can run here\n"),
    });
    out
}
