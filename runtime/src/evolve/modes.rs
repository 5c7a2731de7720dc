//! Candidates as modes. A search registers its best candidates as ephemeral modes
//! `evolve-gen<N>-<id8>` (`.factory/evolve/modes/<name>.fwir`), which `factory modes`
//! lists and `factory run <name>` runs like any mode, each with the SHA-256 of its
//! text in `.factory/evolve/modes.json`. `factory evolve promote NAME --as MODE` makes
//! one a mode of the project (`.factory/workflows/MODE.fwir`, and beside it
//! `MODE.fwf`, a rendering that compiles back to the same IR) only when its file still
//! has the hash it was registered with: a candidate edited after the search scored it
//! is not what was scored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use factory_compiler::ir::{Ir, to_text};
use serde::{Deserialize, Serialize};

use super::EvolveError;
use super::archive::Elite;
use super::search::short;
use crate::events::chain::sha256_hex;
use crate::sys::files::atomic_write;

/// One registered candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Registered {
    /// Its file, relative to `.factory/evolve/`.
    pub file: String,
    /// SHA-256 of the file's text when it was registered.
    pub sha256: String,
    /// The candidate's canonical hash (its entry in the fitness cache).
    pub hash: String,
    pub fitness: f64,
    pub generation: u32,
}

fn dir(project: &Path) -> PathBuf {
    project.join(".factory").join("evolve")
}

fn registry_path(project: &Path) -> PathBuf {
    dir(project).join("modes.json")
}

/// The registered candidates by mode name.
pub fn registered(project: &Path) -> Result<BTreeMap<String, Registered>, EvolveError> {
    let path = registry_path(project);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| EvolveError::State {
            path,
            why: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(EvolveError::State {
            path,
            why: e.to_string(),
        }),
    }
}

/// The mode name of a candidate: `evolve-gen<N>-<first 8 hex digits of its hash>`.
pub fn name_of(elite: &Elite) -> String {
    format!(
        "evolve-gen{}-{}",
        elite.generation,
        &short(&elite.hash)[..8]
    )
}

/// Registers `elite` (whose IR is `ir`) as an ephemeral mode; returns its name.
pub fn register(project: &Path, elite: &Elite, ir: &Ir) -> Result<String, EvolveError> {
    let name = name_of(elite);
    let file = format!("modes/{name}.fwir");
    let path = dir(project).join(&file);
    let text = to_text(ir);
    let io = |path: &Path, e: std::io::Error| EvolveError::State {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    atomic_write(&path, text.as_bytes()).map_err(|e| io(&path, e))?;
    let mut all = registered(project)?;
    all.insert(
        name.clone(),
        Registered {
            file,
            sha256: sha256_hex(text.as_bytes()),
            hash: elite.hash.clone(),
            fitness: elite.fitness,
            generation: elite.generation,
        },
    );
    let json = serde_json::to_vec_pretty(&all)
        .map_err(|e| io(&registry_path(project), std::io::Error::other(e)))?;
    atomic_write(&registry_path(project), &json).map_err(|e| io(&registry_path(project), e))?;
    Ok(name)
}

/// Why a promotion was refused.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum PromoteError {
    #[error("`{name}` is not a registered candidate (registered: {known})")]
    #[diagnostic(
        code(factory::evolve::unknown_candidate),
        help("`factory modes` lists the candidates of the last search (evolve-gen<N>-<id>)")
    )]
    Unknown { name: String, known: String },
    #[error(
        "{path} changed since the search registered it (SHA-256 {found}, registered {expected})"
    )]
    #[diagnostic(
        code(factory::evolve::changed_candidate),
        help(
            "an edited candidate is not what was scored; run the search again, or promote a candidate as it was"
        )
    )]
    Changed {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("`{name}` is not a mode name")]
    #[diagnostic(
        code(factory::evolve::bad_mode_name),
        help("use letters, digits, `-` and `_`, starting with a letter")
    )]
    BadName { name: String },
    #[error("the project already has a mode `{name}` at {path}")]
    #[diagnostic(
        code(factory::evolve::mode_exists),
        help("choose another name, or move the existing file aside first")
    )]
    Exists { name: String, path: PathBuf },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Evolve(#[from] EvolveError),
}

/// What a promotion wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promoted {
    /// The candidate's IR text, as it was scored.
    pub fwir: PathBuf,
    /// The `.fwf` beside it that compiles back to the same IR (the mode's editable
    /// source, which `factory run` prefers), or why the IR has none.
    pub fwf: Result<PathBuf, String>,
}

/// Makes candidate `name` the project's mode `as_name`: its IR as `as_name.fwir`, and
/// when the IR has a faithful rendering, `as_name.fwf` beside it.
pub fn promote(project: &Path, name: &str, as_name: &str) -> Result<Promoted, PromoteError> {
    let valid = as_name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && as_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(PromoteError::BadName {
            name: as_name.to_string(),
        });
    }
    let all = registered(project)?;
    let Some(entry) = all.get(name) else {
        return Err(PromoteError::Unknown {
            name: name.to_string(),
            known: if all.is_empty() {
                "none".into()
            } else {
                all.keys().cloned().collect::<Vec<_>>().join(", ")
            },
        });
    };
    let path = dir(project).join(&entry.file);
    let text = std::fs::read(&path).map_err(|e| EvolveError::State {
        path: path.clone(),
        why: e.to_string(),
    })?;
    let found = sha256_hex(&text);
    if found != entry.sha256 {
        return Err(PromoteError::Changed {
            path,
            expected: entry.sha256.clone(),
            found,
        });
    }
    let workflows = project.join(".factory").join("workflows");
    for ext in ["fwf", "fwir"] {
        let existing = workflows.join(format!("{as_name}.{ext}"));
        if existing.exists() {
            return Err(PromoteError::Exists {
                name: as_name.to_string(),
                path: existing,
            });
        }
    }
    std::fs::create_dir_all(&workflows).map_err(|e| EvolveError::State {
        path: workflows.clone(),
        why: e.to_string(),
    })?;
    let out = workflows.join(format!("{as_name}.fwir"));
    atomic_write(&out, &text).map_err(|e| EvolveError::State {
        path: out.clone(),
        why: e.to_string(),
    })?;
    let fwf = match render(&text) {
        Ok(source) => {
            let path = workflows.join(format!("{as_name}.fwf"));
            atomic_write(&path, source.as_bytes()).map_err(|e| EvolveError::State {
                path: path.clone(),
                why: e.to_string(),
            })?;
            Ok(path)
        }
        Err(why) => Err(why),
    };
    Ok(Promoted { fwir: out, fwf })
}

/// The `.fwf` rendering of a candidate's IR text, or why there is none.
fn render(text: &[u8]) -> Result<String, String> {
    let text = std::str::from_utf8(text).map_err(|_| "the IR text is not UTF-8".to_string())?;
    let (ir, _) = factory_compiler::ir::parse_text(text).map_err(|errors| {
        let first = errors
            .first()
            .map_or_else(String::new, |e| e.message.clone());
        format!("the IR text does not parse ({first})")
    })?;
    factory_compiler::emit::to_fwf(&ir).map_err(|e| e.to_string())
}
