//! ACE (spec §8.15): per-role playbooks learned from experiment outcomes, in three
//! deterministic steps with no model call.
//!
//! - [`reflect`]: candidate bullets with helpful/harmful counts from every registered
//!   project's `results.tsv` notes and agent-failure events, saved to
//!   `~/.factory/ace/candidates.json`.
//! - [`curate`]: prune net-negative bullets, merge near-duplicates, cap by net score;
//!   the result is the evolved playbook `~/.factory/playbooks/<role>.md`.
//! - [`report`]: what the `factory ace` commands print.
//! - [`playbook`]: that file's format. `agents::prompt` appends the evolved playbook
//!   after the role's default one in every resolved prompt.
//!
//! `~/.factory` is `$FACTORY_HOME` when set. docs/ace.md describes the whole loop.

pub mod curate;
pub mod reflect;
pub mod report;

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agents::playbook::{self, Bullet, Playbook, PlaybookError};
use crate::events::{self, EventsError};
use crate::project::layout::FactoryPaths;
use crate::project::registry::{self, RegistryError};
use crate::store::{self, StoreError};
use crate::sys::files::atomic_write;
use curate::Curation;
use reflect::{Candidate, ProjectInput};

/// Why an ACE step could not run.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum AceError {
    #[error("no per-user directory: neither FACTORY_HOME nor a home directory is set")]
    #[diagnostic(
        code(factory::ace::no_home),
        help("set FACTORY_HOME to the directory that should hold playbooks/ and ace/")
    )]
    NoHome,
    #[error("{path} is not a project directory")]
    #[diagnostic(
        code(factory::ace::not_a_dir),
        help("pass a project's root with --project DIR")
    )]
    NotADirectory { path: PathBuf },
    #[error("no candidate bullets yet: {path} does not exist")]
    #[diagnostic(
        code(factory::ace::no_candidates),
        help("run `factory ace reflect` first")
    )]
    NoCandidates { path: PathBuf },
    #[error("{path}:{line}:{column}: {problem}")]
    #[diagnostic(
        code(factory::ace::bad_candidates),
        help("fix the file, or delete it and run `factory ace reflect` again to rebuild it")
    )]
    BadCandidates {
        path: PathBuf,
        line: usize,
        column: usize,
        problem: String,
    },
    #[error("cannot access {path}: {source}")]
    #[diagnostic(code(factory::ace::io), help("check the file's permissions"))]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Playbook(#[from] PlaybookError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Registry(#[from] RegistryError),
    #[error("cannot read the history of {project}: {source}")]
    #[diagnostic(
        code(factory::ace::history),
        help("run `factory history` there to see the problem")
    )]
    History {
        project: PathBuf,
        #[source]
        source: StoreError,
    },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Events(#[from] EventsError),
}

/// The per-user directory, or [`AceError::NoHome`].
pub fn home() -> Result<PathBuf, AceError> {
    registry::user_home().ok_or(AceError::NoHome)
}

/// Where reflection saves its candidates.
pub fn candidates_path(home: &Path) -> PathBuf {
    home.join("ace").join("candidates.json")
}

/// `candidates.json`: the projects reflected over and every candidate bullet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidatesFile {
    pub projects: Vec<PathBuf>,
    pub candidates: Vec<Candidate>,
}

/// What [`run_reflect`] did.
#[derive(Debug)]
pub struct Reflected {
    pub file: CandidatesFile,
    /// Registered projects whose directory is gone, skipped.
    pub missing: Vec<PathBuf>,
    /// Lines reflection could not read (bad `results.tsv` rows, corrupt event lines):
    /// skipped, and said.
    pub warnings: Vec<String>,
    /// Where the candidates went (or would go, on a dry run).
    pub path: PathBuf,
    /// False on a dry run, or when the file already said the same.
    pub written: bool,
}

/// Reflects over every project registered under `home` and each of `extra`, and
/// (unless `dry_run`) saves the candidates.
pub fn run_reflect(home: &Path, extra: &[PathBuf], dry_run: bool) -> Result<Reflected, AceError> {
    let mut seen = BTreeSet::new();
    let mut projects = Vec::new();
    let mut missing = Vec::new();
    for entry in registry::load(home)?.projects {
        if !entry.path.is_dir() {
            missing.push(entry.path);
        } else if seen.insert(entry.path.clone()) {
            projects.push(entry.path);
        }
    }
    for dir in extra {
        if !dir.is_dir() {
            return Err(AceError::NotADirectory { path: dir.clone() });
        }
        let path = std::fs::canonicalize(dir).map_err(|source| AceError::Io {
            path: dir.clone(),
            source,
        })?;
        if seen.insert(path.clone()) {
            projects.push(path);
        }
    }
    let mut inputs = Vec::new();
    let mut warnings = Vec::new();
    for path in &projects {
        let history = store::load_history(path).map_err(|source| AceError::History {
            project: path.clone(),
            source,
        })?;
        let paths = FactoryPaths::new(path);
        let log = events::read(&paths)?;
        warnings.extend(history.warnings);
        if !log.corrupt_lines.is_empty() {
            let lines: Vec<String> = log.corrupt_lines.iter().map(|n| n.to_string()).collect();
            warnings.push(format!(
                "{}: lines {} are not events; skipped",
                paths.events_jsonl().display(),
                lines.join(", ")
            ));
        }
        inputs.push(ProjectInput {
            path: path.clone(),
            records: history.records,
            events: log.events,
        });
    }
    let file = CandidatesFile {
        projects,
        candidates: reflect::reflect(&inputs),
    };
    let path = candidates_path(home);
    let mut text = serde_json::to_string_pretty(&file).map_err(|e| AceError::Io {
        path: path.clone(),
        source: io::Error::other(e),
    })?;
    text.push('\n');
    let unchanged = std::fs::read_to_string(&path).is_ok_and(|old| old == text);
    let written = !dry_run && !unchanged;
    if written {
        atomic_write(&path, text.as_bytes()).map_err(|source| AceError::Io {
            path: path.clone(),
            source,
        })?;
    }
    Ok(Reflected {
        file,
        missing,
        warnings,
        path,
        written,
    })
}

/// Reads `candidates.json`; a bad file is an error naming its line and column.
pub fn load_candidates(home: &Path) -> Result<CandidatesFile, AceError> {
    let path = candidates_path(home);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(AceError::NoCandidates { path });
        }
        Err(source) => return Err(AceError::Io { path, source }),
    };
    let file: CandidatesFile =
        serde_json::from_str(&text).map_err(|e| AceError::BadCandidates {
            path: path.clone(),
            line: e.line(),
            column: e.column(),
            problem: e.to_string(),
        })?;
    if let Some(c) = file
        .candidates
        .iter()
        .find(|c| !crate::agents::prompt::is_role_name(&c.role))
    {
        return Err(AceError::BadCandidates {
            path,
            line: 1,
            column: 1,
            problem: format!("`{}` is not a role name", c.role),
        });
    }
    Ok(file)
}

/// One role's curation.
#[derive(Debug)]
pub struct RoleCuration {
    pub role: String,
    /// `~/.factory/playbooks/<role>.md`.
    pub path: PathBuf,
    pub curation: Curation,
    /// False on a dry run, or when the playbook already said the same.
    pub written: bool,
}

/// Curates every role that has candidates or an evolved playbook, and (unless
/// `dry_run`) writes each changed playbook. A playbook that cannot be parsed stops
/// everything before anything is written.
pub fn run_curate(home: &Path, dry_run: bool) -> Result<Vec<RoleCuration>, AceError> {
    let candidates = load_candidates(home)?.candidates;
    let mut roles: BTreeSet<String> = candidates.iter().map(|c| c.role.clone()).collect();
    if let Ok(entries) = std::fs::read_dir(home.join("playbooks")) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "md")
                && let Some(stem) = p.file_stem().and_then(|s| s.to_str())
                && crate::agents::prompt::is_role_name(stem)
            {
                roles.insert(stem.to_string());
            }
        }
    }
    // Read every playbook first: one broken file must not leave the others half-done.
    let mut books = Vec::new();
    for role in roles {
        let path = playbook::evolved_path(home, &role);
        let existing = playbook::load_role(&path, &role)?;
        books.push((role, path, existing));
    }
    let today = crate::sys::clock::now_iso8601()
        .chars()
        .take(10)
        .collect::<String>();
    let mut out = Vec::new();
    for (role, path, existing) in books {
        let old = existing.map(|b| b.bullets).unwrap_or_default();
        let ours: Vec<&Candidate> = candidates.iter().filter(|c| c.role == role).collect();
        let mut curation = curate::curate(combine(&old, &ours), curate::CAPACITY);
        assign_ids(&role, &old, &mut curation.kept);
        // The file lists DO then DON'T: keep that order so a re-read compares equal.
        curation.kept.sort_by_key(|b| b.kind);
        let written = !dry_run && curation.kept != old;
        if written {
            playbook::save(
                &path,
                &Playbook {
                    role: role.clone(),
                    updated: today.clone(),
                    bullets: curation.kept.clone(),
                },
            )?;
        }
        out.push(RoleCuration {
            role,
            path,
            curation,
            written,
        });
    }
    Ok(out)
}

/// The bullets to curate: reflection recounts its bullets from the whole history, so
/// a candidate's counts replace those of the same bullet in the playbook. Order:
/// candidates already in the playbook (in file order, keeping their ids), new
/// candidates, then bullets reflection did not produce (hand-written, or learned from
/// projects no longer registered), which keep their counts. Candidates come first so
/// a merge always lands in a bullet whose counts are recomputed: never counted twice.
fn combine(old: &[Bullet], candidates: &[&Candidate]) -> Vec<Bullet> {
    let same = |b: &Bullet, c: &Candidate| b.kind == c.kind && b.text == c.text;
    let mut out = Vec::new();
    for b in old {
        if let Some(c) = candidates.iter().find(|c| same(b, c)) {
            out.push(Bullet {
                helpful: c.helpful,
                harmful: c.harmful,
                ..b.clone()
            });
        }
    }
    for c in candidates {
        if !old.iter().any(|b| same(b, c)) {
            out.push(Bullet {
                id: None,
                kind: c.kind,
                helpful: c.helpful,
                harmful: c.harmful,
                text: c.text.clone(),
            });
        }
    }
    out.extend(
        old.iter()
            .filter(|b| !candidates.iter().any(|c| same(b, c)))
            .cloned(),
    );
    out
}

/// New bullets get ids after every id the role's default and evolved playbooks use,
/// so an id is never shared with a default bullet nor reused.
fn assign_ids(role: &str, old: &[Bullet], kept: &mut [Bullet]) {
    let default = factory_compiler::builtin::playbook(role)
        .and_then(|t| playbook::parse(Path::new("default"), t).ok())
        .map(|b| playbook::max_id_number(role, &b.bullets))
        .unwrap_or(0);
    let first = default
        .max(playbook::max_id_number(role, old))
        .max(playbook::max_id_number(role, kept))
        + 1;
    for (n, b) in (first..).zip(kept.iter_mut().filter(|b| b.id.is_none())) {
        b.id = Some(format!("{role}-{n:05}"));
    }
}

#[cfg(test)]
mod tests;
