//! The second surface of a workflow: a SKILL.md (Agent Skills format) that an interactive
//! agent follows step by step, and SKILL.annotations.yaml, which maps every step back to
//! its IR nodes and their source. Fed only by the IR and the node-location side table.

mod steps;
mod text;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::diagnostic::SourceLocation;
use crate::ir::conventions::template_vars;
use crate::ir::{END, Ir, Knob, KnobType};
use steps::{Context, StepView};
use text::{code, meaning};

/// Longest skill name the Agent Skills format allows.
pub const MAX_NAME: usize = 64;
/// Longest description the Agent Skills format allows, in characters.
pub const MAX_DESCRIPTION: usize = 1024;

const TEMPLATE: &str = include_str!("../../templates/SKILL.md.tera");

/// A rendered skill: the directory it lives in and its two files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `workflow-<name>`: also the skill's `name`.
    pub dir_name: String,
    pub skill_md: String,
    pub annotations_yaml: String,
}

/// The skill name of a workflow: `workflow-<name>`, lowercase letters, digits and single
/// hyphens only (anything else becomes a hyphen), at most 64 characters.
pub fn skill_name(workflow: &str) -> String {
    let mut name = String::from("workflow-");
    for c in workflow.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && name.ends_with('-')) {
            name.push(c);
        }
    }
    name.truncate(MAX_NAME);
    while name.ends_with('-') {
        name.pop();
    }
    name
}

/// Whether `name` is a valid Agent Skills name: 1 to 64 characters of lowercase ASCII
/// letters, digits and hyphens, no leading, trailing or doubled hyphen.
pub fn is_valid_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// What the mode does (the first paragraph of its `//!` doc) and when to use it, on one
/// line, cut at a word boundary to fit the format's 1024 characters.
pub fn skill_description(ir: &Ir) -> String {
    // Modes are named like their files (`parallel-improve`); identifiers use `_`.
    let name = ir.workflow.name.replace('_', "-");
    let what = text::one_line(&ir.workflow.description);
    let what = if what.is_empty() {
        format!("Runs the factory `{name}` workflow.")
    } else {
        what
    };
    let when = format!(
        "Use when asked to run the factory {name} mode interactively: it lists each step's \
         exact command, the checks to make and where every review verdict leads."
    );
    truncate_words(&format!("{what} {when}"), MAX_DESCRIPTION)
}

fn truncate_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    // Leave room for the ellipsis.
    let cut: String = text.chars().take(max - 1).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(i) if i > 0 => cut[..i].trim_end().to_string(),
        _ => cut,
    };
    format!("{cut}…")
}

#[derive(Serialize)]
struct FrontMatter<'a> {
    name: &'a str,
    description: &'a str,
}

#[derive(Serialize)]
struct View<'a> {
    front_matter: String,
    workflow: &'a str,
    doc: String,
    headless: bool,
    inputs: Vec<String>,
    knobs: Vec<String>,
    steps: &'a [StepView],
    legend: Vec<String>,
}

fn knob_line(k: &Knob) -> String {
    let ty = match k.ty {
        KnobType::Int => "int",
        KnobType::Float => "float",
        KnobType::String => "string",
        KnobType::Bool => "bool",
    };
    let mut line = format!("{} = {} ({ty}", code(&k.name), k.default);
    match (&k.min, &k.max) {
        (Some(lo), Some(hi)) => line.push_str(&format!(", {lo} to {hi}")),
        (Some(lo), None) => line.push_str(&format!(", at least {lo}")),
        (None, Some(hi)) => line.push_str(&format!(", at most {hi}")),
        (None, None) => {}
    }
    if !k.choices.is_empty() {
        let choices: Vec<String> = k.choices.iter().map(|c| code(c)).collect();
        line.push_str(&format!(", one of {}", choices.join(", ")));
    }
    line.push(')');
    line
}

fn legend(ir: &Ir) -> Vec<String> {
    let mut vars: BTreeSet<String> = BTreeSet::new();
    for n in &ir.nodes {
        let a = &n.attrs;
        for t in [&a.task, &a.run, &a.question, &a.prompt, &a.model]
            .into_iter()
            .flatten()
        {
            vars.extend(template_vars(t).into_iter().map(str::to_string));
        }
    }
    vars.iter()
        .map(|v| format!("{}: {}", code(&format!("{{{{{v}}}}}")), meaning(ir, v)))
        .collect()
}

/// Renders the skill of `ir`. `locations` (node id → source) feeds the annotations;
/// nodes missing from it (IR with no source behind it) are annotated without a place.
pub fn to_skill(ir: &Ir, locations: &BTreeMap<String, SourceLocation>) -> Skill {
    let dir_name = skill_name(&ir.workflow.name);
    let description = skill_description(ir);
    let order = crate::ir::execution_order(ir);
    let cx = Context::new(ir, &order);
    let steps: Vec<StepView> = order.iter().map(|n| steps::build(&cx, n)).collect();

    let front_matter = serde_yaml_ng::to_string(&FrontMatter {
        name: &dir_name,
        description: &description,
    })
    // Two plain strings always serialize.
    .unwrap_or_default();
    let doc = if ir.workflow.doc.trim().is_empty() {
        ir.workflow.description.trim().to_string()
    } else {
        ir.workflow.doc.trim().to_string()
    };
    let view = View {
        front_matter,
        workflow: &ir.workflow.name,
        doc,
        headless: ir.workflow.headless,
        inputs: ir
            .workflow
            .inputs
            .iter()
            .map(|i| match &i.name {
                Some(n) => format!("{} ({n})", code(&i.path)),
                None => code(&i.path),
            })
            .collect(),
        knobs: ir.knobs.iter().map(knob_line).collect(),
        steps: &steps,
        legend: legend(ir),
    };
    let skill_md = render(&view);
    let annotations_yaml = annotations(ir, &dir_name, &skill_md, &steps, locations);
    Skill {
        dir_name,
        skill_md,
        annotations_yaml,
    }
}

fn render(view: &View<'_>) -> String {
    let context = match tera::Context::from_serialize(view) {
        Ok(c) => c,
        Err(err) => return format!("<!-- factory: cannot build the skill: {err} -->\n"),
    };
    // The template is embedded and covered by the snapshot tests, so it cannot fail on
    // any user input; should it ever, the file says so instead of panicking.
    match tera::Tera::one_off(TEMPLATE, &context, false) {
        Ok(text) => tidy(&text),
        Err(err) => format!("<!-- factory: cannot render the skill: {err:?} -->\n"),
    }
}

/// No runs of blank lines, no trailing spaces, exactly one final newline.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[derive(Serialize)]
struct Annotations {
    skill: String,
    workflow: String,
    entry: NodeAnnotation,
    exit: NodeAnnotation,
    steps: Vec<StepAnnotation>,
}

#[derive(Serialize)]
struct StepAnnotation {
    step: usize,
    /// First and last line of the step in SKILL.md (1-based, inclusive).
    skill_lines: [usize; 2],
    nodes: Vec<NodeAnnotation>,
}

#[derive(Serialize)]
struct NodeAnnotation {
    id: String,
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<SourceLocation>,
}

fn node_annotation(
    ir: &Ir,
    id: &str,
    locations: &BTreeMap<String, SourceLocation>,
) -> NodeAnnotation {
    NodeAnnotation {
        id: id.to_string(),
        kind: ir
            .node(id)
            .map(|n| n.kind.as_str().to_string())
            .unwrap_or_default(),
        source: locations.get(id).cloned(),
    }
}

/// Where each `### Step N:` section of `skill_md` starts and ends.
fn step_lines(skill_md: &str) -> BTreeMap<usize, [usize; 2]> {
    let lines: Vec<&str> = skill_md.lines().collect();
    let mut out = BTreeMap::new();
    let mut open: Option<(usize, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let heading = line.starts_with("## ") || line.starts_with("### ");
        if heading && let Some((n, from)) = open.take() {
            out.insert(n, [from, last_text_line(&lines, from, i)]);
        }
        if let Some(rest) = line.strip_prefix("### Step ")
            && let Some(n) = rest.split(':').next().and_then(|n| n.parse().ok())
        {
            open = Some((n, i + 1));
        }
    }
    if let Some((n, from)) = open {
        out.insert(n, [from, last_text_line(&lines, from, lines.len())]);
    }
    out
}

/// The last non-blank line before index `before` (1-based), at least `from`.
fn last_text_line(lines: &[&str], from: usize, before: usize) -> usize {
    (from..=before)
        .rev()
        .find(|&l| lines.get(l - 1).is_some_and(|t| !t.trim().is_empty()))
        .unwrap_or(from)
}

fn annotations(
    ir: &Ir,
    dir_name: &str,
    skill_md: &str,
    steps: &[StepView],
    locations: &BTreeMap<String, SourceLocation>,
) -> String {
    let lines = step_lines(skill_md);
    let doc = Annotations {
        skill: dir_name.to_string(),
        workflow: ir.workflow.name.clone(),
        entry: node_annotation(ir, &ir.start, locations),
        exit: node_annotation(ir, END, locations),
        steps: steps
            .iter()
            .map(|s| StepAnnotation {
                step: s.number,
                skill_lines: lines.get(&s.number).copied().unwrap_or([0, 0]),
                nodes: vec![node_annotation(ir, &s.id, locations)],
            })
            .collect(),
    };
    let body = serde_yaml_ng::to_string(&doc).unwrap_or_default();
    format!(
        "# Generated by factory from the workflow `{}`; do not edit.\n\
         # Maps each step of SKILL.md to its IR node(s) and where they are written.\n{body}",
        ir.workflow.name
    )
}
