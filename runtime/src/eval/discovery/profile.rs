//! The eval profile (spec §6.3, §8.6): what discovery proposes to measure, written to
//! `.factory/eval_profile.json` with `human_reviewed: false` until a person approves it
//! (`factory discover --approve`). Until then the project is in EVALS_PENDING_REVIEW.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::eval_spec::{SpecClass, classify_eval_spec_item, dimension_name};
use super::introspect::{Check, CheckKind, Language, OutputParser, ProjectProfile};
use crate::project::layout::{FactoryPaths, LayoutError, ensure_factory_dir};
use crate::sys::clock::now_iso8601;
use crate::sys::files::atomic_write;

/// Where a dimension came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimensionSource {
    /// Named by the user (factory.md `eval_spec`).
    Explicit,
    /// Found by introspection.
    Discovered,
    Researched,
    Fallback,
}

/// How a dimension's output is read: the spec's `exit_code` / `json` / `regex`, plus the
/// parsers hygiene checks use (`empty_output`, `test_summary`, `coverage_percent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimensionParser {
    ExitCode,
    Json,
    Regex,
    EmptyOutput,
    TestSummary,
    CoveragePercent,
}

impl DimensionParser {
    /// How a hygiene check reads this parser's output (JSON and regex dimensions are
    /// project dimensions; as a hygiene check they fall back to the exit code).
    pub fn as_output_parser(self) -> OutputParser {
        match self {
            Self::EmptyOutput => OutputParser::EmptyOutput,
            Self::TestSummary => OutputParser::TestSummary,
            Self::CoveragePercent => OutputParser::CoveragePercent,
            Self::ExitCode | Self::Json | Self::Regex => OutputParser::ExitCode,
        }
    }
}

impl From<OutputParser> for DimensionParser {
    fn from(p: OutputParser) -> Self {
        match p {
            OutputParser::ExitCode => Self::ExitCode,
            OutputParser::EmptyOutput => Self::EmptyOutput,
            OutputParser::TestSummary => Self::TestSummary,
            OutputParser::CoveragePercent => Self::CoveragePercent,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalDimension {
    pub name: String,
    pub command: String,
    pub weight: f64,
    pub parser: DimensionParser,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex_pattern: Option<String>,
    pub description: String,
    pub source: DimensionSource,
}

/// A check discovery could not propose, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unavailable {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalProfile {
    pub project_type: String,
    #[serde(default)]
    pub framework: Option<String>,
    pub dimensions: Vec<EvalDimension>,
    /// "discovered" when the language was recognised, else "fallback".
    pub tier: String,
    /// Share of the five hygiene checks discovery found a command for (a check that does
    /// not apply to the language, such as Rust's separate type check, counts as found).
    pub confidence: f64,
    pub human_reviewed: bool,
    #[serde(default)]
    pub ci: Vec<String>,
    #[serde(default)]
    pub unavailable: Vec<Unavailable>,
    /// Judgmental `eval_spec` bullets: advisory text for the Strategist and QA agents.
    #[serde(default)]
    pub advisory: Vec<String>,
    pub generated_at: String,
    /// [`EvalProfile::content_hash`] when it was approved: an edit after approval puts
    /// the profile back into review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_hash: Option<String>,
}

impl EvalProfile {
    /// A hash of what the profile measures (language and dimensions), not of when it
    /// was generated: a re-discovery that proposes the same thing has the same hash.
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let body =
            serde_json::to_string(&(&self.project_type, &self.dimensions)).unwrap_or_default();
        let digest = Sha256::digest(body.as_bytes());
        digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
    }

    /// Reviewed, and unchanged since (a profile approved before hashes were recorded
    /// counts as approved).
    pub fn is_approved(&self) -> bool {
        self.human_reviewed
            && self
                .approved_hash
                .as_ref()
                .is_none_or(|h| *h == self.content_hash())
    }

    /// The checks eval runs, from this profile: what was approved is what runs. A
    /// hygiene check the profile does not hold is skipped with the profile's reason.
    pub fn to_project_profile(&self) -> ProjectProfile {
        let language = match self.project_type.as_str() {
            "rust" => Language::Rust,
            "go" => Language::Go,
            "typescript" => Language::TypeScript,
            "javascript" => Language::JavaScript,
            "python" => Language::Python,
            _ => Language::Unknown,
        };
        let checks = CheckKind::ALL
            .iter()
            .map(|kind| {
                let dim = self.dimensions.iter().find(|d| d.name == kind.name());
                match dim {
                    Some(d) => Check {
                        kind: *kind,
                        command: Some(d.command.clone()),
                        parser: d.parser.as_output_parser(),
                        unavailable: None,
                        fails: false,
                    },
                    None => Check {
                        kind: *kind,
                        command: None,
                        parser: OutputParser::ExitCode,
                        unavailable: Some(
                            self.unavailable
                                .iter()
                                .find(|u| u.name == kind.name())
                                .map(|u| u.reason.clone())
                                .unwrap_or_else(|| "not in the eval profile".into()),
                        ),
                        fails: false,
                    },
                }
            })
            .collect();
        ProjectProfile {
            language,
            languages: vec![language],
            framework: self.framework.clone(),
            checks,
            ci: self.ci.clone(),
        }
    }
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ProfileError {
    #[error("{path} does not exist")]
    #[diagnostic(help("run `factory discover` to generate it, then review it"))]
    Missing { path: PathBuf },
    #[error("{path} is not a valid eval profile: {message}")]
    #[diagnostic(help("fix the JSON by hand, or run `factory discover` to regenerate it"))]
    Corrupt { path: PathBuf, message: String },
    #[error("could not write {path}: {source}")]
    #[diagnostic(help("check the permissions of the project's .factory/ directory"))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Layout(#[from] LayoutError),
}

/// Turns introspection plus the factory.md `eval_spec` bullets into a profile awaiting review.
pub fn build_eval_profile(profile: &ProjectProfile, eval_spec: &[String]) -> EvalProfile {
    let mut dimensions = Vec::new();
    let mut unavailable = Vec::new();
    for check in &profile.checks {
        match &check.command {
            Some(command) => dimensions.push(EvalDimension {
                name: check.kind.name().to_string(),
                command: command.clone(),
                weight: crate::eval::hygiene::default_weight(check.kind),
                parser: check.parser.into(),
                regex_pattern: None,
                description: format!("{} check found by introspection", check.kind.name()),
                source: DimensionSource::Discovered,
            }),
            None => unavailable.push(Unavailable {
                name: check.kind.name().to_string(),
                reason: check.unavailable.clone().unwrap_or_default(),
            }),
        }
    }
    let mut advisory = Vec::new();
    for item in eval_spec {
        match classify_eval_spec_item(item) {
            SpecClass::Executable { command } => dimensions.push(EvalDimension {
                name: dimension_name(&command),
                command,
                weight: 1.0,
                parser: DimensionParser::ExitCode,
                regex_pattern: None,
                description: item.clone(),
                source: DimensionSource::Explicit,
            }),
            SpecClass::Judgmental => advisory.push(item.clone()),
        }
    }
    let hygiene = [
        CheckKind::Build,
        CheckKind::Tests,
        CheckKind::Lint,
        CheckKind::Format,
        CheckKind::TypeCheck,
    ];
    let found = hygiene
        .iter()
        .filter(|k| {
            profile
                .check(**k)
                .is_some_and(|c| c.command.is_some() || c.not_applicable())
        })
        .count();
    EvalProfile {
        project_type: profile.language.as_str().to_string(),
        framework: profile.framework.clone(),
        dimensions,
        tier: if profile.language == Language::Unknown {
            "fallback"
        } else {
            "discovered"
        }
        .to_string(),
        confidence: found as f64 / hygiene.len() as f64,
        human_reviewed: false,
        ci: profile.ci.clone(),
        unavailable,
        advisory,
        generated_at: now_iso8601(),
        approved_hash: None,
    }
}

pub fn profile_path(root: &Path) -> PathBuf {
    FactoryPaths::new(root).eval_profile_json()
}

pub fn load_profile(root: &Path) -> Result<EvalProfile, ProfileError> {
    let path = profile_path(root);
    let text =
        std::fs::read_to_string(&path).map_err(|_| ProfileError::Missing { path: path.clone() })?;
    serde_json::from_str(&text).map_err(|e| ProfileError::Corrupt {
        path,
        message: e.to_string(),
    })
}

/// Writes the profile. A different profile already there is kept beside it as
/// `eval_profile.json.previous`, so a reviewed or hand-edited profile is never lost.
pub fn write_profile(root: &Path, profile: &EvalProfile) -> Result<PathBuf, ProfileError> {
    ensure_factory_dir(root)?;
    let path = profile_path(root);
    let text = serde_json::to_string_pretty(profile).unwrap_or_default() + "\n";
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ProfileError::Write { path, source }
    };
    if let Ok(old) = std::fs::read_to_string(&path)
        && old != text
    {
        let previous = path.with_file_name("eval_profile.json.previous");
        atomic_write(&previous, old.as_bytes()).map_err(write_err(&previous))?;
    }
    atomic_write(&path, text.as_bytes()).map_err(write_err(&path))?;
    Ok(path)
}

/// Marks the existing profile as human-reviewed, as it is now (its content hash).
pub fn approve_profile(root: &Path) -> Result<EvalProfile, ProfileError> {
    let mut profile = load_profile(root)?;
    profile.human_reviewed = true;
    profile.approved_hash = Some(profile.content_hash());
    write_profile(root, &profile)?;
    Ok(profile)
}

/// `Some(true)` when the eval profile exists and `human_reviewed` is not `true`;
/// `Some(false)` when reviewed; `None` when there is no profile. An unreadable or
/// corrupt profile counts as not reviewed: a human must look at it either way.
pub fn eval_profile_pending(paths: &FactoryPaths) -> Option<bool> {
    let file = paths.eval_profile_json();
    if !file.exists() {
        return None;
    }
    // Approved and unchanged since; an unreadable profile is pending (it cannot be
    // what a person approved).
    let approved = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<EvalProfile>(&t).ok())
        .is_some_and(|p| p.is_approved());
    Some(!approved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::discovery::introspect::introspect;

    fn rust_project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        dir
    }

    #[test]
    fn new_profile_awaits_review_and_splits_spec_items() {
        let dir = rust_project();
        let spec = vec![
            "`cargo test --doc` passes".to_string(),
            "APIs read naturally".to_string(),
        ];
        let p = build_eval_profile(&introspect(dir.path()), &spec);
        assert!(!p.human_reviewed);
        assert_eq!(p.project_type, "rust");
        let explicit: Vec<_> = p
            .dimensions
            .iter()
            .filter(|d| d.source == DimensionSource::Explicit)
            .collect();
        assert_eq!(explicit.len(), 1);
        assert_eq!(explicit[0].command, "cargo test --doc");
        assert_eq!(p.advisory, vec!["APIs read naturally"]);
        assert!(p.unavailable.iter().any(|u| u.name == "type_check"));
        // Rust's type check is part of the build: it does not lower confidence. The
        // other four depend on which tools this machine has.
        let tools = ["cargo", "cargo-clippy", "cargo-fmt"]
            .iter()
            .filter(|t| crate::sys::process::which(t).is_some())
            .count();
        if tools == 3 {
            assert_eq!(p.confidence, 1.0);
        }
    }

    #[test]
    fn approve_flips_the_flag_and_keeps_the_previous_file() {
        let dir = rust_project();
        let err = approve_profile(dir.path()).unwrap_err();
        assert!(matches!(err, ProfileError::Missing { .. }));
        assert!(
            miette::Diagnostic::help(&err)
                .unwrap()
                .to_string()
                .contains("factory discover")
        );
        let p = build_eval_profile(&introspect(dir.path()), &[]);
        write_profile(dir.path(), &p).unwrap();
        let approved = approve_profile(dir.path()).unwrap();
        assert!(approved.human_reviewed);
        assert!(load_profile(dir.path()).unwrap().human_reviewed);
        let previous =
            std::fs::read_to_string(dir.path().join(".factory/eval_profile.json.previous"))
                .unwrap();
        assert!(previous.contains("\"human_reviewed\": false"));
    }

    #[test]
    fn corrupt_profile_is_reported_with_its_path() {
        let dir = rust_project();
        std::fs::create_dir(dir.path().join(".factory")).unwrap();
        std::fs::write(profile_path(dir.path()), "{oops").unwrap();
        let err = approve_profile(dir.path()).unwrap_err();
        assert!(err.to_string().contains("eval_profile.json"), "{err}");
        // The corrupt file is left for the user to repair.
        assert_eq!(
            std::fs::read_to_string(profile_path(dir.path())).unwrap(),
            "{oops"
        );
    }
}
