//! A bench suite: a directory of small projects a candidate mode is scored on. Each
//! project is a directory with `project/` (its files, `factory.md` and eval; a file
//! named `gitignore` becomes `.gitignore`) and `replay.yaml`, the scripted agents it
//! runs with offline. A project with a `holdout` file is held out: the search never
//! sees its score; the best candidate is checked on it at the end.

use std::path::{Path, PathBuf};

use super::EvolveError;

/// One bench project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchProject {
    pub name: String,
    /// Its `project/` directory.
    pub files: PathBuf,
    /// Its replay script.
    pub script: PathBuf,
    pub holdout: bool,
}

/// The projects of a suite, by name.
#[derive(Debug, Clone)]
pub struct Suite {
    pub dir: PathBuf,
    pub projects: Vec<BenchProject>,
}

impl Suite {
    /// Reads the suite at `dir`; a directory there that is not a bench project is an
    /// error naming it and what it lacks.
    pub fn load(dir: &Path) -> Result<Suite, EvolveError> {
        // Absolute: the projects are run from scratch directories elsewhere.
        let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let entries = std::fs::read_dir(dir).map_err(|e| EvolveError::NoSuite {
            dir: dir.to_path_buf(),
            why: e.to_string(),
        })?;
        let mut projects = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let files = path.join("project");
            let script = path.join("replay.yaml");
            for (needed, what) in [(&files, "project/ directory"), (&script, "replay.yaml")] {
                if !needed.exists() {
                    return Err(EvolveError::BadProject {
                        dir: path.clone(),
                        why: format!("it has no {what}"),
                    });
                }
            }
            if !files.join("factory.md").is_file() {
                return Err(EvolveError::BadProject {
                    dir: path.clone(),
                    why: "its project/ has no factory.md".into(),
                });
            }
            projects.push(BenchProject {
                name,
                files,
                script,
                holdout: path.join("holdout").exists(),
            });
        }
        projects.sort_by(|a, b| a.name.cmp(&b.name));
        if projects.iter().all(|p| p.holdout) {
            return Err(EvolveError::EmptySuite {
                dir: dir.to_path_buf(),
            });
        }
        Ok(Suite {
            dir: dir.to_path_buf(),
            projects,
        })
    }

    /// The projects the search scores candidates on.
    pub fn train(&self) -> Vec<&BenchProject> {
        self.projects.iter().filter(|p| !p.holdout).collect()
    }

    /// The projects only the final check sees.
    pub fn holdout(&self) -> Vec<&BenchProject> {
        self.projects.iter().filter(|p| p.holdout).collect()
    }

    /// The suite's identity for a resumed search: its projects and their split.
    pub fn signature(&self) -> String {
        self.projects
            .iter()
            .map(|p| format!("{}{}", p.name, if p.holdout { "*" } else { "" }))
            .collect::<Vec<_>>()
            .join(",")
    }
}
