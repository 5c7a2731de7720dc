//! Glob patterns for scope and fixed surfaces, with ONE matching function for both
//! (spec §8.5): a pattern written for scope and reused as a fixed surface matches the
//! same files. Semantics are fnmatch-like (`*` may cross `/`), plus `**` for any depth;
//! a pattern ending in `/` means everything under that directory.

use std::path::{Component, Path};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::GuardError;

/// Lock files that dependency tools rewrite as a side effect; never a guard violation.
pub const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "uv.lock",
    "poetry.lock",
    "Pipfile.lock",
    "pdm.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "go.sum",
    "Gemfile.lock",
    "composer.lock",
    "flake.lock",
];

/// True for a path whose file name is on the lock-file allowlist.
pub fn is_lock_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    LOCK_FILES.contains(&name)
}

/// A compiled list of patterns.
#[derive(Debug, Clone)]
pub struct Patterns {
    set: GlobSet,
    pub sources: Vec<String>,
}

impl Patterns {
    /// Compiles `patterns`; a pattern that is not a valid glob, is absolute, or climbs out
    /// of the repository with `..` is an error naming the pattern.
    pub fn new(patterns: &[String]) -> Result<Self, GuardError> {
        let mut builder = GlobSetBuilder::new();
        for raw in patterns {
            let pattern = raw.trim();
            if Path::new(pattern).is_absolute()
                || Path::new(pattern)
                    .components()
                    .any(|c| c == Component::ParentDir)
            {
                return Err(GuardError::BadPattern {
                    pattern: raw.clone(),
                    message: "patterns are relative to the repository root and may not use `..` or start with `/`".into(),
                });
            }
            let pattern = pattern.trim_start_matches("./");
            let pattern = if pattern.ends_with('/') {
                format!("{pattern}**")
            } else {
                pattern.to_string()
            };
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(|e| GuardError::BadPattern {
                    pattern: raw.clone(),
                    message: e.to_string(),
                })?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|e| GuardError::BadPattern {
            pattern: patterns.join(", "),
            message: e.to_string(),
        })?;
        Ok(Self {
            set,
            sources: patterns.to_vec(),
        })
    }

    /// The one matching function scope and fixed surfaces share.
    pub fn matches(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(list: &[&str]) -> Patterns {
        Patterns::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn double_star_single_star_and_directories() {
        let pats = p(&["src/**/*.rs", "docs/", "README.md"]);
        assert!(pats.matches("src/a/b/c.rs"));
        assert!(pats.matches("src/c.rs"));
        assert!(pats.matches("docs/deep/x.md"));
        assert!(pats.matches("README.md"));
        assert!(!pats.matches("tests/a.rs"));
        assert!(!pats.matches("srcx/a.rs"));
        // fnmatch-style: `*` crosses directories, so `eval/*` guards nested files too.
        assert!(p(&["eval/*"]).matches("eval/sub/score.py"));
    }

    #[test]
    fn escaping_and_absolute_patterns_are_rejected() {
        for bad in ["src/../secret.txt", "../x", "/etc/passwd"] {
            let err = Patterns::new(&[bad.to_string()]).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
        assert!(Patterns::new(&["src/[".to_string()]).is_err());
    }

    #[test]
    fn lock_files_are_recognised_anywhere() {
        assert!(is_lock_file("Cargo.lock"));
        assert!(is_lock_file("web/package-lock.json"));
        assert!(!is_lock_file("src/lock.rs"));
    }
}
