//! The playbook file (spec §8.15): Markdown with DO and DON'T bullets, each carrying
//! its id and its helpful/harmful counts in one parseable line:
//!
//! ```text
//! ---
//! role: builder
//! updated: 2026-12-01
//! item_count: 1
//! ---
//!
//! ## Playbook: builder
//!
//! ### DON'T
//! - [builder-00011] helpful=2 harmful=0 :: Don't change files outside the scope (README.md).
//! ```
//!
//! The built-in defaults (`prompts/playbooks/<role>.md`) and the evolved copies in
//! `~/.factory/playbooks/<role>.md` share this format. A line the parser does not
//! understand is an error naming the file and line: a playbook is never half-read, and
//! never rewritten over a file that could not be read.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::sys::files::atomic_write;

/// Whether a bullet is a strategy to follow or a pitfall to avoid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Do,
    Dont,
}

impl Kind {
    /// The section heading, `DO` or `DON'T`.
    pub fn heading(self) -> &'static str {
        match self {
            Self::Do => "DO",
            Self::Dont => "DON'T",
        }
    }

    /// The lowercase name used in candidates.json: `do` or `dont`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Do => "do",
            Self::Dont => "dont",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.heading())
    }
}

/// One DO or DON'T line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bullet {
    /// `<role>-NNNNN`; `None` until curation gives a new bullet its id.
    pub id: Option<String>,
    pub kind: Kind,
    /// Outcomes that support the bullet.
    pub helpful: u32,
    /// Outcomes that speak against it.
    pub harmful: u32,
    pub text: String,
}

impl Bullet {
    /// helpful − harmful.
    pub fn net(&self) -> i64 {
        i64::from(self.helpful) - i64::from(self.harmful)
    }

    /// Every outcome counted, either way.
    pub fn observations(&self) -> u32 {
        self.helpful.saturating_add(self.harmful)
    }

    /// The bullet's line without the leading `- `.
    pub fn line(&self) -> String {
        format!(
            "[{}] helpful={} harmful={} :: {}",
            self.id.as_deref().unwrap_or("new"),
            self.helpful,
            self.harmful,
            self.text
        )
    }
}

/// A role's playbook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playbook {
    pub role: String,
    /// `YYYY-MM-DD` of the last write.
    pub updated: String,
    /// In file order: DO bullets, then DON'T bullets.
    pub bullets: Vec<Bullet>,
}

/// Why a playbook file could not be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum PlaybookError {
    #[error("{path}:{line}: {problem}")]
    #[diagnostic(
        code(factory::playbook::malformed),
        help(
            "fix that line (bullets are `- [<role>-00001] helpful=0 harmful=0 :: text` under `### DO` or `### DON'T`), \
             or move the file aside; factory never overwrites a playbook it cannot read"
        )
    )]
    Malformed {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    #[error("cannot access the playbook {path}: {source}")]
    #[diagnostic(
        code(factory::playbook::io),
        help("check the file's permissions, or point FACTORY_HOME elsewhere")
    )]
    Io { path: PathBuf, source: io::Error },
}

/// The evolved playbook of `role` under the per-user directory `home`.
pub fn evolved_path(home: &Path, role: &str) -> PathBuf {
    home.join("playbooks").join(format!("{role}.md"))
}

/// Reads and parses `path`; `None` when there is no such file.
pub fn load(path: &Path) -> Result<Option<Playbook>, PlaybookError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(path, &text).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PlaybookError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// [`load`] for the playbook of `role`: one that names another role is an error, so a
/// copied file never teaches the wrong role.
pub fn load_role(path: &Path, role: &str) -> Result<Option<Playbook>, PlaybookError> {
    let book = load(path)?;
    if let Some(b) = &book
        && b.role != role
    {
        return Err(PlaybookError::Malformed {
            path: path.to_path_buf(),
            line: 1,
            problem: format!("this is the playbook of `{}`, not of `{role}`", b.role),
        });
    }
    Ok(book)
}

/// Writes `book` to `path` atomically (readers see the old file or the new one).
pub fn save(path: &Path, book: &Playbook) -> Result<(), PlaybookError> {
    atomic_write(path, render(book).as_bytes()).map_err(|source| PlaybookError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses a playbook's text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> Result<Playbook, PlaybookError> {
    let bad = |line: usize, problem: String| PlaybookError::Malformed {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut role = None;
    let mut updated = String::new();
    let mut at = 0;
    if lines.first().map(|l| l.trim_end()) == Some("---") {
        let end = lines
            .iter()
            .skip(1)
            .position(|l| l.trim_end() == "---")
            .ok_or_else(|| bad(1, "the front matter `---` is never closed".into()))?
            + 1;
        for (i, l) in lines.iter().enumerate().take(end).skip(1) {
            let Some((key, value)) = l.split_once(':') else {
                return Err(bad(i + 1, format!("expected `key: value`, got `{l}`")));
            };
            match key.trim() {
                "role" => role = Some(value.trim().to_string()),
                "updated" => updated = value.trim().to_string(),
                // Rewritten on every save; a hand edit that forgets it is harmless.
                "item_count" => {}
                other => return Err(bad(i + 1, format!("unknown front-matter key `{other}`"))),
            }
        }
        at = end + 1;
    }
    let mut section = None;
    let mut bullets: Vec<Bullet> = Vec::new();
    for (i, raw) in lines.iter().enumerate().skip(at) {
        let n = i + 1;
        let l = raw.trim_end();
        if l.trim().is_empty() {
            continue;
        }
        if let Some(r) = l.strip_prefix("## Playbook:") {
            let r = r.trim().to_string();
            match &role {
                Some(known) if *known != r => {
                    return Err(bad(
                        n,
                        format!("the heading names role `{r}` but the front matter `{known}`"),
                    ));
                }
                _ => role = Some(r),
            }
            continue;
        }
        match l {
            "### DO" => {
                section = Some(Kind::Do);
                continue;
            }
            "### DON'T" | "### DONT" => {
                section = Some(Kind::Dont);
                continue;
            }
            _ => {}
        }
        let Some(kind) = section else {
            return Err(bad(
                n,
                format!("expected `## Playbook: <role>`, `### DO` or `### DON'T`, got `{l}`"),
            ));
        };
        let bullet = parse_bullet(kind, l).map_err(|p| bad(n, p))?;
        if bullets.iter().any(|b| b.id == bullet.id) {
            return Err(bad(
                n,
                format!(
                    "the id `{}` is used twice",
                    bullet.id.as_deref().unwrap_or("")
                ),
            ));
        }
        bullets.push(bullet);
    }
    let Some(role) = role else {
        return Err(bad(
            1,
            "no role: start with front matter `role: <role>` or `## Playbook: <role>`".into(),
        ));
    };
    Ok(Playbook {
        role,
        updated,
        bullets,
    })
}

fn parse_bullet(kind: Kind, line: &str) -> Result<Bullet, String> {
    let expected =
        || format!("expected `- [<role>-00001] helpful=N harmful=N :: text`, got `{line}`");
    let rest = line.strip_prefix("- [").ok_or_else(expected)?;
    let (id, rest) = rest.split_once(']').ok_or_else(expected)?;
    let (counts, text) = rest.split_once("::").ok_or_else(expected)?;
    let mut helpful = None;
    let mut harmful = None;
    for part in counts.split_whitespace() {
        let (key, value) = part.split_once('=').ok_or_else(expected)?;
        let value: u32 = value
            .parse()
            .map_err(|_| format!("`{part}`: the count must be a whole number ≥ 0"))?;
        match key {
            "helpful" => helpful = Some(value),
            "harmful" => harmful = Some(value),
            _ => {
                return Err(format!(
                    "unknown count `{key}` (expected helpful and harmful)"
                ));
            }
        }
    }
    let (Some(helpful), Some(harmful)) = (helpful, harmful) else {
        return Err(expected());
    };
    let id = id.trim();
    let text = text.trim();
    if id.is_empty() || text.is_empty() {
        return Err(expected());
    }
    Ok(Bullet {
        id: Some(id.to_string()),
        kind,
        helpful,
        harmful,
        text: text.to_string(),
    })
}

/// The file text, front matter included; [`parse`] reads it back unchanged.
pub fn render(book: &Playbook) -> String {
    format!(
        "---\nrole: {}\nupdated: {}\nitem_count: {}\n---\n\n## Playbook: {}\n{}",
        book.role,
        book.updated,
        book.bullets.len(),
        book.role,
        render_sections(&book.bullets)
    )
}

/// The `### DO` and `### DON'T` sections (a section with no bullets is left out).
pub fn render_sections(bullets: &[Bullet]) -> String {
    let mut out = String::new();
    for kind in [Kind::Do, Kind::Dont] {
        let mut of_kind = bullets.iter().filter(|b| b.kind == kind).peekable();
        if of_kind.peek().is_none() {
            continue;
        }
        out.push_str(&format!("\n### {}\n", kind.heading()));
        for b in of_kind {
            out.push_str(&format!("- {}\n", b.line()));
        }
    }
    out
}

/// The highest number used by an id `<role>-NNNNN` among `bullets` (0 when none).
pub fn max_id_number(role: &str, bullets: &[Bullet]) -> u32 {
    let prefix = format!("{role}-");
    bullets
        .iter()
        .filter_map(|b| b.id.as_deref()?.strip_prefix(&prefix)?.parse::<u32>().ok())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_playbook_parses_and_renders_back() {
        for (role, _) in factory_compiler::builtin::prompts() {
            let Some(text) = factory_compiler::builtin::playbook(role) else {
                continue;
            };
            let book = parse(Path::new("builtin"), text).unwrap();
            assert_eq!(book.role, role);
            assert!(!book.bullets.is_empty(), "{role}");
            assert_eq!(parse(Path::new("x"), &render(&book)).unwrap(), book);
        }
    }

    #[test]
    fn a_bad_line_names_file_and_line() {
        let text = "---\nrole: builder\n---\n\n### DO\n- [builder-1] helpful=1 harmful=0 :: ok\n- [builder-2] helpful=x harmful=0 :: no\n";
        let err = parse(Path::new("/h/playbooks/builder.md"), text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("/h/playbooks/builder.md:7:"), "{msg}");
        assert!(msg.contains("helpful=x"), "{msg}");

        let err = parse(Path::new("p.md"), "## Playbook: builder\nstray text\n").unwrap_err();
        assert!(err.to_string().starts_with("p.md:2:"), "{err}");
        let err = parse(
            Path::new("p.md"),
            "## Playbook: b\n### DO\n- [b-1] helpful=0 harmful=0 :: a\n- [b-1] helpful=0 harmful=0 :: c\n",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("p.md:4: the id `b-1` is used twice"),
            "{err}"
        );
    }
}
