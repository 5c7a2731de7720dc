//! Lowering one node declaration: its attributes, checked against its kind, become IR
//! attributes with names resolved and subgraph parameters substituted.

use super::attrs::{self, allowed};
use super::body::{Binding, Lowering, Scope};
use crate::diagnostic::{Code, Subject};
use crate::ir::{Artifact, Attrs, Evaluator, Literal, Node, NodeKind};
use crate::syntax::{GateBy, Loc, NodeDecl, Value};
use crate::validate::{Finding, a_kind};

impl Lowering<'_> {
    pub(super) fn node(&mut self, scope: &Scope, n: &NodeDecl) -> Node {
        let id = scope.id(&n.name);
        let mut a = Attrs {
            doc: (!n.doc.is_empty()).then(|| n.doc.clone()),
            ..Attrs::default()
        };
        match &n.gate_by {
            Some(GateBy::Agent(role)) => {
                a.evaluator = Some(Evaluator::Agent);
                a.role = Some(self.text(scope, role));
            }
            Some(GateBy::Fn(cmd)) => {
                a.evaluator = Some(Evaluator::Fn);
                a.run = Some(self.text(scope, cmd));
            }
            Some(GateBy::User) => a.evaluator = Some(Evaluator::User),
            None => {}
        }
        if let Some(inline) = &n.inline {
            let text = self.text(scope, inline);
            match n.kind {
                NodeKind::Gate => a.question = Some(text),
                _ => a.run = Some(text),
            }
        }
        a.strategy = n.strategy.clone();
        if n.kind == NodeKind::Select && a.strategy.as_deref() != Some("best_score") {
            self.report(
                Finding::new(
                    Code::BadAttribute,
                    scope.at(Loc::Node(scope.key.clone(), n.name.clone())),
                    format!(
                        "unknown selection strategy `{}`",
                        a.strategy.clone().unwrap_or_default()
                    ),
                )
                .about(Subject::Node(n.name.clone()))
                .help("write `select NAME by best_score`"),
            );
        }
        let keys = allowed(n.kind);
        for attr in &n.attrs {
            let loc = Loc::Attr(scope.key.clone(), n.name.clone(), attr.key.clone());
            if !keys.contains(&attr.key.as_str()) {
                let help = if keys.is_empty() {
                    format!("{} takes no attributes", a_kind(n.kind))
                } else {
                    format!("{} accepts: {}", a_kind(n.kind), keys.join(", "))
                };
                self.report(
                    Finding::new(
                        Code::BadAttribute,
                        scope.at(loc),
                        format!("`{}` is not an attribute of {}", attr.key, a_kind(n.kind)),
                    )
                    .about(Subject::Attribute {
                        node: n.name.clone(),
                        attr: attr.key.clone(),
                    })
                    .label("unknown attribute")
                    .help(help),
                );
                continue;
            }
            if let Err((message, help)) = self.attr(scope, &mut a, &n.name, &attr.key, &attr.values)
            {
                self.report(
                    Finding::new(Code::BadAttribute, scope.at(loc), message)
                        .about(Subject::Attribute {
                            node: n.name.clone(),
                            attr: attr.key.clone(),
                        })
                        .label("bad value")
                        .help(help),
                );
            }
        }
        if n.kind == NodeKind::Agent && a.role.is_none() {
            a.role = Some(n.name.clone());
        }
        if n.kind == NodeKind::Fn && a.run.is_none() {
            self.report(
                Finding::new(
                    Code::BadAttribute,
                    scope.at(Loc::Node(scope.key.clone(), n.name.clone())),
                    format!("fn `{}` has no command", n.name),
                )
                .about(Subject::Node(n.name.clone()))
                .label("nothing to run")
                .help(format!(
                    "write `fn {} \"command\"` or give it `run: \"command\"`",
                    n.name
                )),
            );
        }
        Node {
            id,
            kind: n.kind,
            parallel: scope.parallel.clone(),
            attrs: a,
        }
    }

    /// Substitutes subgraph parameters (`{{loops}}`, `{{fix}}`) in a template; runtime
    /// variables are left for the runtime.
    fn text(&self, scope: &Scope, text: &str) -> String {
        if scope.params.is_empty() || !text.contains("{{") {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for p in crate::ir::conventions::placeholders(text).0 {
            out.push_str(&text[copied..p.whole.start]);
            match scope.params.get(&text[p.expr.clone()]) {
                Some(Binding::Value {
                    lit: Literal::Str(s),
                    ..
                }) => out.push_str(s),
                Some(Binding::Value { lit, .. }) => out.push_str(&lit.to_string()),
                Some(Binding::Node(e)) => {
                    out.push_str(e.entries.first().map_or("", String::as_str))
                }
                None => out.push_str(&text[p.whole.clone()]),
            }
            copied = p.whole.end;
        }
        out.push_str(&text[copied..]);
        out
    }

    fn one<'v>(&self, key: &str, values: &'v [Value]) -> Result<&'v Value, (String, String)> {
        match values {
            [v] => Ok(v),
            _ => Err((
                format!("`{key}` takes one value, not {}", values.len()),
                format!("give `{key}` a single value"),
            )),
        }
    }

    fn string(
        &self,
        scope: &Scope,
        key: &str,
        values: &[Value],
        names_ok: bool,
    ) -> Result<String, (String, String)> {
        match self.one(key, values)? {
            Value::Literal(Literal::Str(s)) => Ok(self.text(scope, s)),
            Value::Name(n) if names_ok => Ok(match scope.params.get(n) {
                Some(Binding::Value {
                    lit: Literal::Str(s),
                    ..
                }) => s.clone(),
                _ => n.clone(),
            }),
            v => Err((
                format!("`{key}` takes a string, not {}", attrs::describe(v)),
                format!("write `{key}: \"...\"`"),
            )),
        }
    }

    fn attr(
        &mut self,
        scope: &Scope,
        a: &mut Attrs,
        node: &str,
        key: &str,
        values: &[Value],
    ) -> Result<(), (String, String)> {
        match key {
            "role" => a.role = Some(self.string(scope, key, values, true)?),
            "model" => a.model = Some(self.string(scope, key, values, true)?),
            "runner" => a.runner = Some(self.string(scope, key, values, true)?),
            "placement" => {
                let word = self.string(scope, key, values, true)?;
                a.placement = Some(crate::ir::Placement::parse(&word).ok_or_else(|| {
                    (
                        format!("unknown placement `{word}`"),
                        "write `placement: host` (the user's rights) or `placement: sandbox` \
                         (only the node's workspace and writes are writable)"
                            .to_string(),
                    )
                })?);
            }
            "prompt" => a.prompt = Some(self.string(scope, key, values, false)?),
            "task" => a.task = Some(self.string(scope, key, values, false)?),
            "run" => a.run = Some(self.string(scope, key, values, false)?),
            "question" => a.question = Some(self.string(scope, key, values, false)?),
            "async" => match self.one(key, values)? {
                Value::Literal(Literal::Bool(b)) => a.is_async = *b,
                v => {
                    return Err((
                        format!("`async` is true or false, not {}", attrs::describe(v)),
                        "write `async: true`".into(),
                    ));
                }
            },
            "timeout" => {
                let v = self.one(key, values)?;
                let secs = match v {
                    Value::Literal(Literal::Int(n)) => Some(*n),
                    Value::Name(n) => match self.value_of(scope, n) {
                        Some((Literal::Int(n), _)) => Some(n),
                        _ => None,
                    },
                    _ => None,
                };
                match secs {
                    Some(s) if s > 0 => a.timeout = Some(s as u64),
                    _ => {
                        return Err((
                            format!(
                                "`timeout` must be a positive number of seconds, not {}",
                                attrs::describe(v)
                            ),
                            "write e.g. `timeout: 600`".into(),
                        ));
                    }
                }
            }
            "check" => {
                for v in values {
                    a.checks.push(
                        attrs::check(v)
                            .map_err(|m| (format!("bad check {}", attrs::describe(v)), m))?,
                    );
                }
            }
            "outcomes" => {
                for v in values {
                    a.outcomes.push(
                        attrs::outcome(v)
                            .map_err(|m| (format!("bad outcome {}", attrs::describe(v)), m))?,
                    );
                }
                a.outcomes.sort();
                a.outcomes.dedup();
            }
            "writes" => {
                for v in values {
                    a.writes.push(match v {
                        Value::Literal(Literal::Str(p)) => Artifact {
                            name: None,
                            path: self.text(scope, p),
                        },
                        Value::Named { name, path } => Artifact {
                            name: Some(scope.id(name)),
                            path: self.text(scope, path),
                        },
                        v => {
                            return Err((
                                format!("`writes` takes paths, not {}", attrs::describe(v)),
                                "write `writes: \"path\"` or `writes: name = \"path\"`".into(),
                            ));
                        }
                    });
                }
            }
            "reads" => {
                for v in values {
                    a.reads.push(match v {
                        Value::Literal(Literal::Str(p)) => Artifact { name: None, path: self.text(scope, p) },
                        Value::Name(n) => match scope.artifacts.get(n) {
                            Some(art) => art.clone(),
                            None => {
                                let known: Vec<&str> = scope.artifacts.keys().map(String::as_str).collect();
                                self.report(
                                    Finding::new(Code::UnknownArtifact, scope.at(Loc::Attr(scope.key.clone(), node.to_string(), key.to_string())), format!("no artifact is named `{n}`"))
                                        .about(Subject::Artifact(n.clone()))
                                        .label("unknown artifact")
                                        .help(format!(
                                            "name it where it is written (`writes: {n} = \"path\"`), declare `input {n} = \"path\"`, or read it by path; known names: {}",
                                            if known.is_empty() { "(none)".to_string() } else { known.join(", ") }
                                        )),
                                );
                                continue;
                            }
                        },
                        v => return Err((format!("`reads` takes paths or artifact names, not {}", attrs::describe(v)), "write `reads: \"path\"` or `reads: name`".into())),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }
}
