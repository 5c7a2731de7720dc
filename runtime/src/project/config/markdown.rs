//! The markdown side of `factory.md`: splitting into sections at `#`/`##`/`###`
//! headings and reading a section body as text or as list items (spec §8.7).
//!
//! Nothing here knows config fields; see `parse.rs` for the mapping.

/// A problem in `factory.md`, located where possible.
#[derive(Debug, Clone, PartialEq)]
pub struct MdProblem {
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong, naming the heading.
    pub message: String,
}

/// One heading and the lines under it, up to the next heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The heading text as written (without `#`s).
    pub heading: String,
    /// The heading in lower snake case (`"Eval Command:"` → `eval_command`).
    pub key: String,
    /// 1-based line of the heading.
    pub line: usize,
    /// The body lines with their 1-based line numbers.
    pub body: Vec<(usize, String)>,
}

/// One list item with its indented continuation lines joined by `\n`.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// 1-based line of the bullet.
    pub line: usize,
    /// The item's text.
    pub text: String,
}

/// Lower snake case of a heading: lowercase, runs of anything but letters and digits
/// become `_`, no leading or trailing `_`.
pub fn snake_case(heading: &str) -> String {
    let mut out = String::new();
    let mut pending_sep = false;
    for c in heading.chars() {
        if c.is_alphanumeric() {
            if pending_sep && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            out.extend(c.to_lowercase());
        } else {
            pending_sep = true;
        }
    }
    out
}

/// A `#`, `##` or `###` heading's text, or `None` for any other line.
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    if !(1..=3).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim())
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Splits `text` into sections. Text before the first heading is ignored (a
/// preamble); headings inside fenced code blocks are not boundaries.
pub fn sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_fence = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        if is_fence(raw) {
            in_fence = !in_fence;
        }
        if !in_fence && let Some(h) = heading_text(raw) {
            out.push(Section {
                heading: h.to_owned(),
                key: snake_case(h),
                line: line_no,
                body: Vec::new(),
            });
            continue;
        }
        if let Some(s) = out.last_mut() {
            s.body.push((line_no, raw.to_owned()));
        }
    }
    out
}

impl Section {
    /// The body lines without blank edges and HTML comment lines.
    fn content(&self) -> Vec<(usize, &str)> {
        let lines: Vec<(usize, &str)> = self
            .body
            .iter()
            .map(|(n, l)| (*n, l.as_str()))
            .filter(|(_, l)| {
                let t = l.trim();
                !(t.starts_with("<!--") && t.ends_with("-->"))
            })
            .collect();
        let start = lines.iter().position(|(_, l)| !l.trim().is_empty());
        let end = lines.iter().rposition(|(_, l)| !l.trim().is_empty());
        match (start, end) {
            (Some(s), Some(e)) => lines[s..=e].to_vec(),
            _ => Vec::new(),
        }
    }

    /// The first content line's number, or the heading's line for an empty section.
    pub fn first_line(&self) -> usize {
        self.content().first().map(|(n, _)| *n).unwrap_or(self.line)
    }

    /// The whole body as one trimmed string (comments dropped), for `extra_sections`.
    pub fn raw_text(&self) -> String {
        self.content()
            .iter()
            .map(|(_, l)| *l)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The body as a single value: the content of a fenced block if the body is one;
    /// the item's text if the body is a single list item; otherwise the trimmed lines
    /// joined by `\n`. One pair of enclosing backticks is removed.
    pub fn text(&self) -> String {
        let content = self.content();
        if content.len() >= 2 && is_fence(content[0].1) && is_fence(content[content.len() - 1].1) {
            let inner: Vec<&str> = content[1..content.len() - 1]
                .iter()
                .map(|(_, l)| *l)
                .collect();
            return inner.join("\n");
        }
        let items = self.items();
        if items.len() == 1 && content.first().is_some_and(|(_, l)| bullet(l).is_some()) {
            return unquote(&items[0].text);
        }
        let joined = content
            .iter()
            .map(|(_, l)| l.trim())
            .collect::<Vec<_>>()
            .join("\n");
        unquote(&joined)
    }

    /// A fenced block's content, if the section holds one (its info string, e.g.
    /// `json`, is ignored).
    pub fn fenced(&self) -> Option<String> {
        let content = self.content();
        let open = content.iter().position(|(_, l)| is_fence(l))?;
        let close = content[open + 1..].iter().position(|(_, l)| is_fence(l))? + open + 1;
        Some(
            content[open + 1..close]
                .iter()
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// The body as list items. A bulleted line (`-`, `*`, `+`, `1.`) at the list's
    /// own indentation (that of its least-indented bullet) starts an item; a line
    /// indented deeper is appended to the item above with `\n` (this is how
    /// multi-line `name:`/`command:` blocks are written); a plain line directly after
    /// an item continues it too (markdown's lazy continuation). Prose before the first
    /// bullet is not an item. A section with no bullets at all yields one item per
    /// non-blank line.
    pub fn items(&self) -> Vec<Item> {
        let content = self.content();
        let Some(base) = content
            .iter()
            .filter(|(_, l)| bullet(l).is_some())
            .map(|(_, l)| indentation(l))
            .min()
        else {
            return content
                .iter()
                .filter(|(_, l)| !l.trim().is_empty() && !is_fence(l))
                .map(|(n, l)| Item {
                    line: *n,
                    text: unquote(l.trim()),
                })
                .collect();
        };
        let mut items: Vec<Item> = Vec::new();
        let mut after_blank = false;
        for (n, l) in content {
            if l.trim().is_empty() {
                after_blank = true;
                continue;
            }
            let deeper = indentation(l) > base;
            match (deeper, bullet(l)) {
                (false, Some(rest)) => items.push(Item {
                    line: n,
                    text: rest.trim().to_owned(),
                }),
                _ => {
                    if let Some(last) = items.last_mut()
                        && (deeper || !after_blank)
                    {
                        last.text.push('\n');
                        last.text.push_str(l.trim());
                    }
                }
            }
            after_blank = false;
        }
        for item in &mut items {
            item.text = unquote(&item.text);
        }
        items
    }
}

/// Leading whitespace width, a tab counting as four columns.
fn indentation(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// The text after a list bullet, if `line` starts with one.
pub(super) fn bullet(line: &str) -> Option<&str> {
    let t = line.trim_start();
    for b in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(b) {
            return Some(rest);
        }
    }
    if t == "-" || t == "*" {
        return Some("");
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        let rest = &t[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(rest);
        }
    }
    None
}

/// Removes one pair of enclosing backticks from a single-line value.
pub fn unquote(s: &str) -> String {
    let t = s.trim();
    if !t.contains('\n') && t.len() >= 2 && t.starts_with('`') && t.ends_with('`') {
        let inner = &t[1..t.len() - 1];
        if !inner.contains('`') {
            return inner.to_owned();
        }
    }
    t.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_cases_headings() {
        assert_eq!(snake_case("Eval Command:"), "eval_command");
        assert_eq!(
            snake_case("  Scope (modifiable files) "),
            "scope_modifiable_files"
        );
        assert_eq!(snake_case("Clean-PR   include"), "clean_pr_include");
    }

    #[test]
    fn every_level_one_to_three_heading_is_a_boundary_but_not_four_or_fenced() {
        let s = sections("pre\n# A\na\n## B\n#### not\n```\n# in fence\n```\n### C\n#nospace\n");
        let keys: Vec<_> = s.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, vec!["a", "b", "c"]);
        assert_eq!(s[1].body.len(), 4);
        assert_eq!(s[2].text(), "#nospace");
    }

    #[test]
    fn indented_lines_continue_the_previous_item() {
        let s = &sections(
            "## X\nIntro prose.\n- name: a\n  command: run\n    --flag\n- `b`\n\n- c\nlazy\n",
        )[0];
        let items = s.items();
        let texts: Vec<_> = items.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(texts, vec!["name: a\ncommand: run\n--flag", "b", "c\nlazy"]);
        assert_eq!(items[1].line, 6);
    }

    #[test]
    fn an_indented_list_is_still_a_list() {
        let s = &sections("## X\n  - a\n    more\n  - b\n")[0];
        let texts: Vec<_> = s.items().into_iter().map(|i| i.text).collect();
        assert_eq!(texts, vec!["a\nmore", "b"]);
    }

    #[test]
    fn text_unwraps_single_items_fences_and_backticks() {
        let one = |t: &str| sections(t)[0].text();
        assert_eq!(one("## A\n\n- `cargo test`\n"), "cargo test");
        assert_eq!(one("## A\n```sh\nmake a\nmake b\n```\n"), "make a\nmake b");
        assert_eq!(one("## A\nline one\n  line two\n"), "line one\nline two");
    }
}
