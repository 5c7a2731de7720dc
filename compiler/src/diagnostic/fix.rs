//! Machine-applicable fixes. A finding carries a [`Fix`] without positions (findings stay
//! position-free until they are placed); [`edits`] turns it into concrete [`FixEdits`]
//! once the finding's spans are known. The language server's quick fixes and
//! `factory check --fix` apply these edits and hold no fix logic of their own.

use std::ops::Range;

use serde::Serialize;

use super::Label;
use crate::lexical::is_ident;

/// The bound given to an unbounded reloop.
pub const DEFAULT_BOUND: u32 = 3;

/// A repair, as data about the finding's subject, before positions are known.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    /// Write `(max N)` after the reloop term at the finding's place.
    BoundReloop { bound: u32 },
    /// Declare `join <fork>_join` after the fork at the finding's place and route each
    /// branch (the finding's labels) into it.
    AddJoin { fork: String },
    /// Create the prompt file of a role, `prompts/<role>.md`.
    CreatePrompt { role: String },
    /// Delete the line declaring the finding's place (and its `///` docs): a one-line
    /// declaration starting with `keyword` (`import`, `knob`).
    RemoveLine { keyword: String },
    /// Delete the `(max N)` at the finding's place (a bound on an edge that is not a
    /// reloop, which bounds nothing).
    DropBound,
}

/// A fix with positions: what to change where.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct FixEdits {
    /// What the fix does, for a person choosing it ("Bound the reloop: ...").
    pub title: String,
    /// Edits of existing text; several in one file never overlap.
    pub edits: Vec<TextEdit>,
    /// Files to create (never overwriting one that exists).
    pub creates: Vec<FileCreate>,
}

/// Replace the bytes `range` of `file` (a key, as the diagnostic's `file`) with
/// `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct TextEdit {
    pub file: String,
    pub range: Range<usize>,
    pub replacement: String,
}

/// Create the file at `path` holding `contents`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct FileCreate {
    pub path: String,
    pub contents: String,
}

/// Where a placed finding is, as far as its fix needs to know.
pub(super) struct Site<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub span: Range<usize>,
    pub labels: &'a [Label],
    /// Whether a node of this name is declared in the finding's scope.
    pub declares: &'a dyn Fn(&str) -> bool,
    /// Whether a file's text, as a fix leaves it, still parses.
    pub parses: &'a dyn Fn(&str) -> bool,
    pub prompt_path: &'a dyn Fn(&str) -> Option<String>,
}

/// The concrete edits of `fix` at `site`; `None` when the text is not what the fix
/// expects (then there is nothing safe to do mechanically).
pub(super) fn edits(fix: &Fix, site: &Site<'_>) -> Option<FixEdits> {
    match fix {
        Fix::BoundReloop { bound } => bound_reloop(*bound, site),
        Fix::AddJoin { fork } => add_join(fork, site),
        Fix::CreatePrompt { role } => create_prompt(role, site),
        Fix::RemoveLine { keyword } => remove_line(keyword, site),
        Fix::DropBound => drop_bound(site),
    }
}

fn insert(site: &Site<'_>, at: usize, text: String) -> TextEdit {
    TextEdit {
        file: site.file.to_string(),
        range: at..at,
        replacement: text,
    }
}

fn bound_reloop(bound: u32, site: &Site<'_>) -> Option<FixEdits> {
    let term = site.text.get(site.span.clone())?;
    if !term.ends_with(".reloop") {
        return None;
    }
    Some(FixEdits {
        title: format!("Bound the reloop: `{term}(max {bound})`"),
        edits: vec![insert(site, site.span.end, format!("(max {bound})"))],
        creates: Vec::new(),
    })
}

fn add_join(fork: &str, site: &Site<'_>) -> Option<FixEdits> {
    // Only a fork of this file's own (an instance's fork has a dotted id).
    if !is_ident(fork) || site.text.get(site.span.clone())? != fork {
        return None;
    }
    let text = site.text;
    let mut name = format!("{fork}_join");
    while (site.declares)(&name) {
        name.push('_');
    }
    // Declare the join on the line after the fork, indented like it.
    let line = text[..site.span.start].rfind('\n').map_or(0, |i| i + 1);
    let indent: String = text[line..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let next_line = text[site.span.end..]
        .find('\n')
        .map_or(text.len(), |i| site.span.end + i + 1);
    let mut edits = vec![insert(site, next_line, format!("{indent}join {name}\n"))];
    // Route the branches: after each branch, its next `-> ` now leads to the join.
    let mut routed = Vec::new();
    for l in site.labels {
        let end = l.span.end.min(text.len());
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let Some(arrow) = text.get(end..line_end).and_then(|t| t.find("->")) else {
            continue;
        };
        let mut at = end + arrow + 2;
        while text[at..].starts_with(' ') {
            at += 1;
        }
        if !routed.contains(&at) {
            routed.push(at);
            edits.push(insert(site, at, format!("{name} -> ")));
        }
    }
    if routed.is_empty() {
        return None;
    }
    Some(FixEdits {
        title: format!("Add `join {name}` and route the branches of `{fork}` into it"),
        edits,
        creates: Vec::new(),
    })
}

fn create_prompt(role: &str, site: &Site<'_>) -> Option<FixEdits> {
    // Only a plain name becomes a file name.
    if !is_ident(role) {
        return None;
    }
    let path = (site.prompt_path)(role)?;
    Some(FixEdits {
        title: format!("Create {path}"),
        edits: Vec::new(),
        creates: vec![FileCreate {
            contents: format!(
                "# {role}\n\nYou are the {role}. Describe here what this role does, what it \
reads, what it must write, and how its work is judged.\n"
            ),
            path,
        }],
    })
}

fn remove_line(keyword: &str, site: &Site<'_>) -> Option<FixEdits> {
    let text = site.text;
    let line_start = text[..site.span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[site.span.end..]
        .find('\n')
        .map_or(text.len(), |i| site.span.end + i + 1);
    let line = text.get(line_start..end)?;
    let rest = line.trim_start().strip_prefix(keyword)?;
    if !rest.starts_with([' ', '\t']) || line.contains(['{', '}', ';']) {
        return None;
    }
    // Its doc comment goes with it (left behind, it would document the next item).
    let mut start = line_start;
    while start > 0 {
        let above = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        if !text[above..start].trim_start().starts_with("///") {
            break;
        }
        start = above;
    }
    let edit = TextEdit {
        file: site.file.to_string(),
        range: start..end,
        replacement: String::new(),
    };
    // A declaration may continue on the next line (`knob k: int = 3` / `in 1..=5`);
    // a deletion that leaves text the parser rejects is not offered.
    let mut after = text.to_string();
    after.replace_range(edit.range.clone(), "");
    if !(site.parses)(&after) {
        return None;
    }
    Some(FixEdits {
        title: format!("Remove `{}`", line.trim()),
        edits: vec![edit],
        creates: Vec::new(),
    })
}

fn drop_bound(site: &Site<'_>) -> Option<FixEdits> {
    let bound = site.text.get(site.span.clone())?;
    if !(bound.starts_with("(max") && bound.ends_with(')')) {
        return None;
    }
    Some(FixEdits {
        title: format!("Remove `{bound}`"),
        edits: vec![TextEdit {
            file: site.file.to_string(),
            range: site.span.clone(),
            replacement: String::new(),
        }],
        creates: Vec::new(),
    })
}
