//! Parsing the IR text form back into an [`Ir`] and its [`IrSpans`].
//!
//! Lines may come in any order (parsing canonicalizes); each bad line yields one
//! [`TextError`] and parsing goes on, so a user sees every problem at once. Edges may
//! name nodes that have no line: the graph validator reports those, not the parser.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde::de::DeserializeOwned;

use super::lex::{self, ArtifactText, Tok};
use super::{NODE_KEYS, TextError, knob_type_str};
use crate::ir::{
    Attrs, Edge, Evaluator, IR_VERSION, Ir, IrSpans, Knob, KnobType, Label, Literal, Node,
    NodeKind, Placement, START, Span, WorkflowMeta,
};

const ITEMS: &str = "fwir, workflow, description, doc, input, knob, node, edge";

type LineResult = Result<(), TextError>;

fn err(span: Range<usize>, message: impl Into<String>, help: impl Into<String>) -> TextError {
    TextError {
        span,
        message: message.into(),
        help: Some(help.into()),
    }
}

/// Parses an IR text. On success the IR is canonical and the spans point at the lines
/// each knob, node and edge came from.
pub fn parse_text(src: &str) -> Result<(Ir, IrSpans), Vec<TextError>> {
    let mut p = Parser {
        src,
        ..Parser::default()
    };
    let mut offset = 0;
    for raw in src.split('\n') {
        let start = offset;
        offset += raw.len() + 1;
        let line = raw.trim_end_matches('\r');
        let toks = lex::tokens(line, start);
        let Some(first) = toks.first() else { continue };
        if first.text.starts_with('#') {
            continue;
        }
        let last = toks[toks.len() - 1];
        let span = first.start..last.start + last.text.len();
        if let Err(e) = p.line(&toks, span) {
            p.errors.push(e);
            if p.unsupported_version {
                // The rest may be a format this parser does not know: say only that.
                return Err(p.errors);
            }
        }
    }
    p.finish()
}

#[derive(Default)]
struct Parser<'s> {
    src: &'s str,
    unsupported_version: bool,
    errors: Vec<TextError>,
    header: Option<Span>,
    workflow: Option<(WorkflowMeta, String, Span)>,
    description: Option<(String, Span)>,
    doc: Option<(String, Span)>,
    inputs: Vec<crate::ir::Artifact>,
    knobs: Vec<(Knob, Span)>,
    knob_lines: HashMap<String, Span>,
    nodes: Vec<(Node, Span)>,
    node_lines: HashMap<String, Span>,
    edges: Vec<(Edge, Span)>,
}

impl Parser<'_> {
    /// A duplicate of an item first given at `first`, reported on this line.
    fn duplicate(&self, what: &str, first: &Span, span: Span) -> TextError {
        let line = self
            .src
            .get(..first.start)
            .unwrap_or("")
            .matches('\n')
            .count()
            + 1;
        err(
            span,
            format!("duplicate {what}"),
            format!("the first is on line {line}; rename or delete one"),
        )
    }

    fn line(&mut self, toks: &[Tok<'_>], span: Span) -> LineResult {
        let keyword = toks[0];
        if self.header.is_none() {
            self.header = Some(span.clone());
            if keyword.text != "fwir" {
                // Report once, then read the rest as if the header were there.
                self.errors.push(err(
                    keyword.span(),
                    "missing header: an IR text starts with `fwir <version>`",
                    format!("add `fwir {IR_VERSION}` as the first line"),
                ));
            } else {
                let result = header(toks, span);
                self.unsupported_version = matches!(
                    toks.get(1).map(|v| v.text.parse::<u32>()),
                    Some(Ok(n)) if n != IR_VERSION
                );
                return result;
            }
        }
        match keyword.text {
            "fwir" => Err(err(
                span,
                "second `fwir` header",
                "an IR text has one header, on its first line; delete this one",
            )),
            "workflow" => self.workflow_line(toks, span),
            "description" => {
                let text = single_string(toks, &span, "description")?;
                if let Some((_, first)) = &self.description {
                    return Err(self.duplicate("`description` line", first, span));
                }
                self.description = Some((text, span));
                Ok(())
            }
            "doc" => {
                let text = single_string(toks, &span, "doc")?;
                if let Some((_, first)) = &self.doc {
                    return Err(self.duplicate("`doc` line", first, span));
                }
                self.doc = Some((text, span));
                Ok(())
            }
            "input" => self.input_line(toks, span),
            "knob" => self.knob_line(toks, span),
            "node" => self.node_line(toks, span),
            "edge" => self.edge_line(toks, span),
            other => Err(err(
                keyword.span(),
                format!("unknown item `{other}`"),
                format!("a line starts with one of: {ITEMS}; `#` starts a comment line"),
            )),
        }
    }

    fn workflow_line(&mut self, toks: &[Tok<'_>], span: Span) -> LineResult {
        let Some(name_tok) = toks.get(1) else {
            return Err(err(
                span,
                "`workflow` needs a name",
                "write `workflow <name>`, e.g. `workflow improve headless`",
            ));
        };
        let mut meta = WorkflowMeta {
            name: parse_name(name_tok, "workflow name")?,
            ..WorkflowMeta::default()
        };
        let mut start = START.to_string();
        let mut seen = Seen::default();
        for tok in &toks[2..] {
            match tok.pair() {
                None if tok.text == "headless" => {
                    seen.check(tok, "headless")?;
                    meta.headless = true;
                }
                Some((key, value)) if key.text == "start" => {
                    seen.check(&key, "start")?;
                    start = parse_name(&value, "start node id")?;
                }
                _ => {
                    return Err(err(
                        tok.span(),
                        format!("unknown workflow attribute `{}`", tok.text),
                        "a workflow line takes `headless` and `start=<node id>`",
                    ));
                }
            }
        }
        if let Some((_, _, first)) = &self.workflow {
            return Err(self.duplicate("workflow line", first, span));
        }
        self.workflow = Some((meta, start, span));
        Ok(())
    }

    fn input_line(&mut self, toks: &[Tok<'_>], span: Span) -> LineResult {
        let input = match toks {
            [_, path] => crate::ir::Artifact {
                name: None,
                path: json_value::<String>(path, "input path", "\".factory/config.json\"")?,
            },
            [_, name, path] => crate::ir::Artifact {
                name: Some(parse_name(name, "input name")?),
                path: json_value::<String>(path, "input path", "\".factory/config.json\"")?,
            },
            _ => {
                return Err(err(
                    span,
                    "an input line is `input [name] \"path\"`",
                    "e.g. `input config \".factory/config.json\"`",
                ));
            }
        };
        self.inputs.push(input);
        Ok(())
    }

    fn knob_line(&mut self, toks: &[Tok<'_>], span: Span) -> LineResult {
        let (Some(name_tok), Some(ty_tok)) = (toks.get(1), toks.get(2)) else {
            return Err(err(
                span,
                "a knob line needs a name, a type and a default",
                "e.g. `knob qa_loops int default=3 min=1 max=5`",
            ));
        };
        let name = parse_name(name_tok, "knob name")?;
        let ty = match ty_tok.text {
            "int" => KnobType::Int,
            "float" => KnobType::Float,
            "string" => KnobType::String,
            "bool" => KnobType::Bool,
            other => {
                return Err(err(
                    ty_tok.span(),
                    format!("unknown knob type `{other}`"),
                    format!(
                        "a knob type is one of: {}",
                        [
                            KnobType::Int,
                            KnobType::Float,
                            KnobType::String,
                            KnobType::Bool
                        ]
                        .map(knob_type_str)
                        .join(", ")
                    ),
                ));
            }
        };
        let mut default = None;
        let mut knob = Knob {
            name: name.clone(),
            ty,
            default: Literal::Bool(false),
            min: None,
            max: None,
            choices: Vec::new(),
            expandable: false,
        };
        let mut seen = Seen::default();
        for tok in &toks[3..] {
            let Some((key, value)) = tok.pair() else {
                if tok.text == "expandable" {
                    seen.check(tok, "expandable")?;
                    knob.expandable = true;
                    continue;
                }
                return Err(unknown_key(
                    tok,
                    "knob",
                    "default, min, max, choices, expandable",
                ));
            };
            seen.check(&key, key.text)?;
            match key.text {
                "default" => default = Some(parse_lit(&value)?),
                "min" => knob.min = Some(parse_lit(&value)?),
                "max" => knob.max = Some(parse_lit(&value)?),
                "choices" => knob.choices = json_value(&value, "choices", "[\"a\",\"b\"]")?,
                _ => {
                    return Err(unknown_key(
                        &key,
                        "knob",
                        "default, min, max, choices, expandable",
                    ));
                }
            }
        }
        let Some(default) = default else {
            return Err(err(
                span,
                format!("knob `{name}` has no default"),
                "add `default=<value>`, e.g. `default=3`",
            ));
        };
        knob.default = default;
        if let Some(first) = self.knob_lines.get(&name) {
            return Err(self.duplicate(&format!("knob `{name}`"), first, span));
        }
        self.knob_lines.insert(name, span.clone());
        self.knobs.push((knob, span));
        Ok(())
    }

    fn node_line(&mut self, toks: &[Tok<'_>], span: Span) -> LineResult {
        let (Some(id_tok), Some(kind_tok)) = (toks.get(1), toks.get(2)) else {
            return Err(err(
                span,
                "a node line needs an id and a kind",
                "e.g. `node review agent role=\"reviewer\"`",
            ));
        };
        let id = parse_name(id_tok, "node id")?;
        // The id decides first: a second line for one id is a duplicate whatever else is
        // wrong with either line (and a bad first line still claims its id).
        if let Some(first) = self.node_lines.get(&id) {
            return Err(self.duplicate(&format!("node id `{id}`"), first, span));
        }
        self.node_lines.insert(id.clone(), span.clone());
        let Some(kind) = NodeKind::parse(kind_tok.text) else {
            return Err(err(
                kind_tok.span(),
                format!("unknown node kind `{}`", kind_tok.text),
                "a node kind is one of: start, end, agent, fn, gate, fork, join, parallel, \
                 select, study, llm",
            ));
        };
        let mut attrs = Attrs::default();
        let mut parallel = None;
        let mut seen = Seen::default();
        for tok in &toks[3..] {
            let Some((key, value)) = tok.pair() else {
                if tok.text == "async" {
                    seen.check(tok, "async")?;
                    attrs.is_async = true;
                    continue;
                }
                return Err(unknown_node_key(tok));
            };
            seen.check(&key, key.text)?;
            if key.text == "in" {
                parallel = Some(parse_name(&value, "parallel node id")?);
                continue;
            }
            node_attr(&mut attrs, &key, &value)?;
        }
        self.nodes.push((
            Node {
                id,
                kind,
                parallel,
                attrs,
            },
            span,
        ));
        Ok(())
    }

    fn edge_line(&mut self, toks: &[Tok<'_>], span: Span) -> LineResult {
        let (Some(from), Some(arrow), Some(to)) = (toks.get(1), toks.get(2), toks.get(3)) else {
            return Err(err(
                span,
                "an edge line is `edge <from> -> <to> [label] [max=N] [max_knob=name]`",
                "e.g. `edge review -> implement reloop max=2`",
            ));
        };
        if arrow.text != "->" {
            return Err(err(
                arrow.span(),
                format!("expected `->`, found `{}`", arrow.text),
                "an edge line is `edge <from> -> <to> [label] [max=N] [max_knob=name]`",
            ));
        }
        let mut edge = Edge {
            from: parse_name(from, "edge source")?,
            to: parse_name(to, "edge target")?,
            label: None,
            max: None,
            max_knob: None,
        };
        let mut seen = Seen::default();
        for tok in &toks[4..] {
            match tok.pair() {
                None => {
                    let Some(label) = Label::parse(tok.text) else {
                        return Err(err(
                            tok.span(),
                            format!("unknown edge label `{}`", tok.text),
                            "an edge label is one of: proceed, reloop, halt, fail",
                        ));
                    };
                    seen.check(tok, "label")?;
                    edge.label = Some(label);
                }
                Some((key, value)) => {
                    seen.check(&key, key.text)?;
                    match key.text {
                        "max" => edge.max = Some(json_value(&value, "max", "2")?),
                        "max_knob" => edge.max_knob = Some(parse_name(&value, "max_knob")?),
                        _ => return Err(unknown_key(&key, "edge", "max, max_knob")),
                    }
                }
            }
        }
        self.edges.push((edge, span));
        Ok(())
    }

    fn finish(mut self) -> Result<(Ir, IrSpans), Vec<TextError>> {
        let head = self.header.clone().unwrap_or(0..0);
        if self.header.is_none() {
            self.errors.push(err(
                0..0,
                "empty IR text: missing header",
                format!("an IR text starts with `fwir {IR_VERSION}` and a `workflow` line"),
            ));
        } else if self.workflow.is_none() {
            self.errors.push(err(
                head,
                "missing `workflow` line",
                "add `workflow <name>` after the header",
            ));
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        let Some((mut workflow, start, wf_span)) = self.workflow else {
            return Err(self.errors);
        };
        workflow.description = self.description.map(|d| d.0).unwrap_or_default();
        workflow.doc = self.doc.map(|d| d.0).unwrap_or_default();
        workflow.inputs = self.inputs;

        self.knobs.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        self.nodes.sort_by(|a, b| a.0.id.cmp(&b.0.id));
        self.edges.sort_by(|a, b| a.0.cmp(&b.0));
        let spans = IrSpans {
            workflow: Some(wf_span),
            nodes: self
                .nodes
                .iter()
                .map(|(n, s)| (n.id.clone(), s.clone()))
                .collect::<BTreeMap<_, _>>(),
            edges: self.edges.iter().map(|(_, s)| Some(s.clone())).collect(),
            knobs: self
                .knobs
                .iter()
                .map(|(k, s)| (k.name.clone(), s.clone()))
                .collect(),
        };
        let ir = Ir {
            ir_version: IR_VERSION,
            workflow,
            start,
            knobs: self.knobs.into_iter().map(|k| k.0).collect(),
            nodes: self.nodes.into_iter().map(|n| n.0).collect(),
            edges: self.edges.into_iter().map(|e| e.0).collect(),
        };
        Ok((ir, spans))
    }
}

fn header(toks: &[Tok<'_>], span: Span) -> LineResult {
    let version = match toks {
        [_, v] => v,
        _ => {
            return Err(err(
                span,
                "the header is `fwir <version>`",
                format!("write `fwir {IR_VERSION}`"),
            ));
        }
    };
    match version.text.parse::<u32>() {
        Ok(IR_VERSION) => Ok(()),
        Ok(n) => Err(err(
            version.span(),
            format!("unsupported IR version {n}"),
            format!("this factory reads IR version {IR_VERSION}; upgrade factory to read it"),
        )),
        Err(_) => Err(err(
            version.span(),
            format!("bad IR version `{}`", version.text),
            format!("write `fwir {IR_VERSION}`"),
        )),
    }
}

fn node_attr(a: &mut Attrs, key: &Tok<'_>, v: &Tok<'_>) -> LineResult {
    let string = |v: &Tok<'_>| json_value::<String>(v, key.text, "\"text\"").map(Some);
    match key.text {
        "doc" => a.doc = string(v)?,
        "role" => a.role = string(v)?,
        "prompt" => a.prompt = string(v)?,
        "task" => a.task = string(v)?,
        "run" => a.run = string(v)?,
        "question" => a.question = string(v)?,
        "model" => a.model = string(v)?,
        "runner" => a.runner = string(v)?,
        "isolation" => a.isolation = string(v)?,
        "strategy" => a.strategy = string(v)?,
        "placement" => {
            a.placement = Some(Placement::parse(v.text).ok_or_else(|| {
                err(
                    v.span(),
                    format!("unknown placement `{}`", v.text),
                    "a placement is one of: host, sandbox",
                )
            })?)
        }
        "evaluator" => {
            a.evaluator = Some(match v.text {
                "agent" => Evaluator::Agent,
                "fn" => Evaluator::Fn,
                "user" => Evaluator::User,
                other => {
                    return Err(err(
                        v.span(),
                        format!("unknown evaluator `{other}`"),
                        "an evaluator is one of: agent, fn, user",
                    ));
                }
            })
        }
        "outcomes" => a.outcomes = json_value(v, "outcomes", "[\"proceed\",\"halt\"]")?,
        "reads" | "writes" => {
            let list: Vec<ArtifactText> = json_value(
                v,
                key.text,
                "[\"path.md\",{\"name\":\"plan\",\"path\":\"plan.md\"}]",
            )?;
            let list = list.into_iter().map(ArtifactText::into_artifact).collect();
            if key.text == "reads" {
                a.reads = list;
            } else {
                a.writes = list;
            }
        }
        "checks" => {
            a.checks = json_value(
                v,
                "checks",
                "[\"exists\",{\"min_size\":200},{\"contains\":\"## Plan\"}]",
            )?
        }
        "timeout" => a.timeout = Some(json_value(v, "timeout", "600")?),
        "count" => a.count = Some(json_value(v, "count", "3")?),
        "count_knob" => a.count_knob = Some(parse_name(v, "count_knob")?),
        _ => return Err(unknown_node_key(key)),
    }
    Ok(())
}

/// Keys (and flags) already given on one line.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn check(&mut self, tok: &Tok<'_>, key: &str) -> LineResult {
        if self.0.iter().any(|k| k == key) {
            return Err(err(
                tok.span(),
                format!("`{key}` given twice on one line"),
                "keep one of them",
            ));
        }
        self.0.push(key.to_string());
        Ok(())
    }
}

fn single_string(toks: &[Tok<'_>], span: &Span, what: &str) -> Result<String, TextError> {
    match toks {
        [_, value] => json_value::<String>(value, what, "\"text\""),
        _ => Err(err(
            span.clone(),
            format!("a `{what}` line is `{what} \"text\"`"),
            "write the text as one JSON string (newlines as \\n)",
        )),
    }
}

fn unknown_key(tok: &Tok<'_>, item: &str, keys: &str) -> TextError {
    err(
        tok.span(),
        format!("unknown {item} attribute `{}`", tok.text),
        format!("a {item} line takes: {keys}"),
    )
}

fn unknown_node_key(tok: &Tok<'_>) -> TextError {
    unknown_key(tok, "node", &format!("async, in, {}", NODE_KEYS.join(", ")))
}

/// A name: a bare word, or a JSON string when it has other characters.
fn parse_name(tok: &Tok<'_>, what: &str) -> Result<String, TextError> {
    if tok.text.starts_with('"') {
        return json_value::<String>(tok, what, "\"a name\"");
    }
    if lex::is_bare(tok.text) {
        return Ok(tok.text.to_string());
    }
    Err(err(
        tok.span(),
        format!("bad {what} `{}`", tok.text),
        "a bare name has only letters, digits, `_`, `.` and `-`; quote other names as a JSON \
         string",
    ))
}

fn parse_lit(tok: &Tok<'_>) -> Result<Literal, TextError> {
    lex::parse_literal(tok.text).ok_or_else(|| {
        err(
            tok.span(),
            format!("bad value `{}`", tok.text),
            "a value is true, false, an integer, a float like 0.5, or a JSON string",
        )
    })
}

fn json_value<T: DeserializeOwned>(
    tok: &Tok<'_>,
    what: &str,
    example: &str,
) -> Result<T, TextError> {
    serde_json::from_str(tok.text).map_err(|e| {
        err(
            tok.span(),
            format!("bad value for `{what}`: {e}"),
            format!("write it as JSON, e.g. {example}"),
        )
    })
}
