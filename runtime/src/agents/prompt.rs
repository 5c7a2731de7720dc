//! Prompt resolution (spec §8.4): project `.factory/agents/<role>.md`, then a
//! `prompts/<role>.md` at or above the project, then the user's
//! `~/.factory/agents/prompts/<role>.md` (`factory_compiler::host::prompt_dirs`, the
//! rule `factory check` shares), then the built-in `prompts/<role>.md`. The
//! role's playbook is appended whichever tier wins, so an override never opts a role
//! out of learning: the default playbook (the project's `.factory/playbooks/<role>.md`,
//! else the built-in one), then the evolved playbook `~/.factory/playbooks/<role>.md`
//! that `factory ace` learns, over it (spec §8.15: appended over the factory default).

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use super::AgentError;
use crate::agents::playbook::Playbook;
use crate::project::layout::FactoryPaths;
use crate::project::registry::user_home;

/// Where a prompt or playbook came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptSource {
    /// `<project>/.factory/...`.
    Project(PathBuf),
    /// `~/.factory/...` (or `$FACTORY_HOME/...`).
    User(PathBuf),
    /// Embedded in the binary; the path is as in the repository.
    BuiltIn(String),
}

impl fmt::Display for PromptSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Project(p) => write!(f, "project {}", p.display()),
            Self::User(p) => write!(f, "user {}", p.display()),
            Self::BuiltIn(p) => write!(f, "built-in {p}"),
        }
    }
}

/// A role's prompt with its playbook appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPrompt {
    pub text: String,
    /// Where the prompt came from.
    pub source: PromptSource,
    /// Where the appended default playbook came from (`None`: the role has none).
    pub playbook: Option<PromptSource>,
    /// The evolved playbook appended after it, when the user has one for the role.
    pub evolved: Option<PromptSource>,
}

/// A role's playbooks as they are appended to its prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPlaybook {
    /// The default playbook's text and where it came from.
    pub default: Option<(String, PromptSource)>,
    /// The evolved playbook (parsed: a broken one is an error) and its file.
    pub evolved: Option<(Playbook, PathBuf)>,
}

impl ResolvedPlaybook {
    /// The text appended to the prompt: the default playbook, then the evolved
    /// bullets under a heading that says they win.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let Some((body, _)) = &self.default {
            out.push_str(body.trim_end());
            out.push('\n');
        }
        if let Some((book, _)) = &self.evolved
            && !book.bullets.is_empty()
        {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!(
                "## Learned playbook: {}\n\nLearned from keep/revert outcomes across your projects \
                 (`factory ace`). Where a bullet here conflicts with the playbook above, follow this one.\n",
                book.role
            ));
            out.push_str(&crate::agents::playbook::render_sections(&book.bullets));
        }
        out
    }
}

/// The playbooks of `role` in the project at `project`, with `home` the per-user
/// directory (`None`: no evolved playbook).
pub fn resolve_playbook(
    project: &Path,
    home: Option<&Path>,
    role: &str,
) -> Result<ResolvedPlaybook, AgentError> {
    let file = format!("{role}.md");
    let default = first_of(
        vec![(
            FactoryPaths::new(project)
                .dir()
                .join("playbooks")
                .join(&file),
            false,
        )],
        factory_compiler::builtin::playbook(role).map(|t| (format!("prompts/playbooks/{file}"), t)),
    )?;
    let evolved = match home {
        Some(h) => {
            let path = crate::agents::playbook::evolved_path(h, role);
            crate::agents::playbook::load_role(&path, role)?.map(|book| (book, path))
        }
        None => None,
    };
    Ok(ResolvedPlaybook { default, evolved })
}

/// The prompt of `role` for the project at `project`.
pub fn resolve_prompt(project: &Path, role: &str) -> Result<ResolvedPrompt, AgentError> {
    resolve_prompt_in(project, user_home().as_deref(), role)
}

/// [`resolve_prompt`] with the per-user directory given (`None`: no user tier).
pub fn resolve_prompt_in(
    project: &Path,
    home: Option<&Path>,
    role: &str,
) -> Result<ResolvedPrompt, AgentError> {
    if !is_role_name(role) {
        return Err(unknown_role(project, home, role));
    }
    let file = format!("{role}.md");
    let prompt = tier(
        project,
        home,
        &file,
        factory_compiler::builtin::prompt(role).map(|t| (format!("prompts/{file}"), t)),
    )?;
    let Some((mut text, source)) = prompt else {
        return Err(unknown_role(project, home, role));
    };
    let playbooks = resolve_playbook(project, home, role)?;
    let appended = playbooks.text();
    if !appended.is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&appended);
    }
    Ok(ResolvedPrompt {
        text,
        source,
        playbook: playbooks.default.map(|(_, s)| s),
        evolved: playbooks.evolved.map(|(_, p)| PromptSource::User(p)),
    })
}

/// The first tier that has the file: project, user, built-in.
/// The first of [`factory_compiler::host::prompt_dirs`] holding `file`, else the
/// built-in text.
fn tier(
    project: &Path,
    home: Option<&Path>,
    file: &str,
    builtin: Option<(String, &'static str)>,
) -> Result<Option<(String, PromptSource)>, AgentError> {
    let user = home.map(|h| h.join("agents").join("prompts"));
    let candidates = factory_compiler::host::prompt_dirs(project, home)
        .into_iter()
        .map(|dir| {
            let is_user = user.as_ref() == Some(&dir);
            (dir.join(file), is_user)
        })
        .collect();
    first_of(candidates, builtin)
}

/// The first of `candidates` (`(path, is the user's)`) that exists, else `builtin`.
fn first_of(
    candidates: Vec<(PathBuf, bool)>,
    builtin: Option<(String, &'static str)>,
) -> Result<Option<(String, PromptSource)>, AgentError> {
    for (path, is_user) in candidates {
        if let Some(text) = read_optional(&path)? {
            let source = if is_user {
                PromptSource::User(path)
            } else {
                PromptSource::Project(path)
            };
            return Ok(Some((text, source)));
        }
    }
    Ok(builtin.map(|(path, text)| (text.to_string(), PromptSource::BuiltIn(path))))
}

fn read_optional(path: &Path) -> Result<Option<String>, AgentError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AgentError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Every role a prompt exists for: built-in, the user's and the project's.
pub fn known_roles(project: &Path) -> Vec<String> {
    known_roles_in(project, user_home().as_deref())
}

fn known_roles_in(project: &Path, home: Option<&Path>) -> Vec<String> {
    let mut roles: BTreeSet<String> = factory_compiler::builtin::prompts()
        .into_iter()
        .map(|(r, _)| r.to_string())
        .collect();
    let dirs = factory_compiler::host::prompt_dirs(project, home);
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "md")
                && let Some(stem) = p.file_stem().and_then(|s| s.to_str())
                && is_role_name(stem)
            {
                roles.insert(stem.to_string());
            }
        }
    }
    roles.into_iter().collect()
}

/// Role names are plain words, so a role can never name a path outside the tiers.
pub fn is_role_name(role: &str) -> bool {
    !role.is_empty()
        && role
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn unknown_role(project: &Path, home: Option<&Path>, role: &str) -> AgentError {
    AgentError::UnknownRole {
        role: role.to_string(),
        known: known_roles_in(project, home).join(", "),
    }
}

/// The full prompt an agent receives: the role's prompt, then its task and where its
/// work goes. The paths of the node win over a prompt's defaults (spec §9.1).
pub fn compose_prompt(
    resolved: &ResolvedPrompt,
    task: &str,
    outputs: &[PathBuf],
    verdict_file: Option<&Path>,
) -> String {
    let mut text = resolved.text.trim_end().to_string();
    text.push_str("\n\n## Task\n\n");
    text.push_str(if task.trim().is_empty() {
        "Do your role's job as described above."
    } else {
        task.trim()
    });
    text.push('\n');
    if !outputs.is_empty() {
        text.push_str("\n## Write these files\n\n");
        for o in outputs {
            text.push_str(&format!("- {}\n", o.display()));
        }
    }
    if let Some(v) = verdict_file {
        text.push_str(&format!(
            "\n## Verdict file\n\nWrite your verdict (`## Verdict` then PROCEED, RELOOP or HALT) to {}\n",
            v.display()
        ));
    }
    text
}

/// What an agent is told about where it is.
pub struct Whereabouts<'a> {
    pub project: &'a Path,
    /// The graph node it runs as (none for `factory agent` by hand).
    pub node: Option<&'a str>,
    pub visit: u32,
    pub work_dir: &'a Path,
    /// `work_dir` is the experiment's worktree.
    pub in_worktree: bool,
    pub exp_id: Option<u32>,
    pub branch: Option<&'a str>,
}

/// The task's `Read:` list: the files the agent should read, where they are.
pub fn reads_section(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n\nRead:\n");
    for p in paths {
        s.push_str(&format!("- {}\n", p.display()));
    }
    s
}

/// The facts the role prompts promise an agent, as the task's last section: its node
/// and visit, where it runs, and the experiment (id, branch, base, records) when there
/// is one. `tests/e2e/experiment_evidence.rs` holds every prompt to it.
pub fn whereabouts(w: &Whereabouts<'_>) -> String {
    let mut s = String::from("\n\n## Where you are\n\n");
    match w.node {
        Some(node) => s.push_str(&format!("- Node: `{node}`, visit {}\n", w.visit)),
        None => s.push_str(&format!(
            "- Run by hand (`factory agent`), visit {}\n",
            w.visit
        )),
    }
    let place = if w.in_worktree {
        "the experiment's worktree, a checkout of its branch"
    } else {
        "the project root"
    };
    s.push_str(&format!(
        "- Working directory: {} ({place})\n",
        w.work_dir.display()
    ));
    s.push_str(&format!(
        "- Project: {} (its `.factory/` holds the reviews and records)\n",
        w.project.display()
    ));
    let Some(id) = w.exp_id else {
        return s;
    };
    let store = crate::store::ExperimentStore::open(w.project);
    let ws = store.info(id).ok().flatten().and_then(|i| i.workspace);
    let branch = w
        .branch
        .map(str::to_string)
        .or_else(|| ws.as_ref().map(|ws| ws.branch.clone()));
    let named = branch
        .as_deref()
        .map_or(String::new(), |b| format!(", branch `{b}`"));
    s.push_str(&format!("- Experiment: {id}{named}\n"));
    if let Some(base) = ws.map(|w| w.base_commit) {
        // Outside the worktree (an archivist after the verdict) HEAD is the user's
        // branch: the experiment's change is its own branch's.
        let head = match (&branch, w.in_worktree) {
            (Some(b), false) => b.as_str(),
            _ => "HEAD",
        };
        s.push_str(&format!(
            "- Base commit: {base} (what the experiment is measured against: `git diff {base}..{head}`)\n"
        ));
    }
    let dir = crate::project::layout::FactoryPaths::new(w.project).experiment_dir(id);
    s.push_str(&format!(
        "- Its records: {} (`hypothesis.md`; `precheck.json` and `precheck_eval.json` once measured; `verdict.json` once finalized; `evidence.jsonl` lists every report and verdict it produced, copies in `evidence/`)\n",
        dir.display()
    ));
    s
}
