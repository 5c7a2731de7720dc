//! Subgraph instances and parallel blocks: binding arguments to parameters, inlining
//! a body under a prefix, and exporting its named artifacts.

use std::collections::BTreeMap;

use super::body::{Binding, Endpoints, Lowering, Scope, closest};
use crate::diagnostic::{Code, Subject};
use crate::ir::{Attrs, Edge, KnobType, Literal, Node, NodeKind};
use crate::syntax::{Arg, ArgValue, Bounds, Loc, Param, ParamType};
use crate::validate::Finding;

/// Deeper nesting of instances is refused (no stack overflow from hostile input).
const MAX_INSTANCE_DEPTH: usize = 64;

impl Lowering<'_> {
    pub(super) fn instantiate(
        &mut self,
        scope: &mut Scope,
        u: &crate::syntax::UseDecl,
    ) -> Option<Endpoints> {
        let use_loc = Loc::Use(scope.key.clone(), u.alias.clone());
        let Some((file, decl)) = self.subgraphs.get(&u.subgraph).cloned() else {
            let known: Vec<&str> = self.subgraphs.keys().map(String::as_str).collect();
            let hint = closest(&u.subgraph, &known)
                .map_or(String::new(), |c| format!("did you mean `{c}`? "));
            self.report(
                Finding::new(
                    Code::UnknownSubgraph,
                    scope.at(Loc::UseSubgraph(scope.key.clone(), u.alias.clone())),
                    format!("no subgraph named `{}`", u.subgraph),
                )
                .about(Subject::Subgraph(u.subgraph.clone()))
                .label("unknown subgraph")
                .help(format!(
                    "{hint}import the file that declares it (e.g. `import std/{}`)",
                    u.subgraph
                )),
            );
            return None;
        };
        self.used_subgraphs.insert(u.subgraph.clone());
        if self.stack.len() >= MAX_INSTANCE_DEPTH {
            self.report(
                Finding::new(Code::ImportCycle, scope.at(use_loc), format!("subgraph instances are nested more than {MAX_INSTANCE_DEPTH} deep"))
                    .about(Subject::Instance(u.alias.clone()))
                    .help("flatten the subgraphs: an instance inside an instance inside ... this deep is almost certainly a mistake"),
            );
            return None;
        }
        if self.stack.contains(&u.subgraph) {
            self.report(
                Finding::new(
                    Code::ImportCycle,
                    scope.at(use_loc),
                    format!("subgraph `{}` ends up using itself", u.subgraph),
                )
                .about(Subject::Subgraph(u.subgraph.clone()))
                .help("a subgraph cannot contain an instance of itself; break the cycle"),
            );
            return None;
        }
        let key = scope.key.clone();
        let params = self.bind_args(scope, &u.subgraph, &decl.params, &u.args, |a| {
            Loc::UseArg(key.clone(), u.alias.clone(), a)
        })?;
        let mut inner = Scope {
            file: file.clone(),
            key: decl.name.clone(),
            prefix: format!("{}{}.", scope.prefix, u.alias),
            parallel: scope.parallel.clone(),
            top: false,
            knobs: false,
            params,
            names: rustc_hash::FxHashMap::default(),
            artifacts: Default::default(),
            slot: None,
            origin: Some(scope.at(use_loc)),
            entries: Vec::new(),
            exits: Vec::new(),
        };
        self.stack.push(u.subgraph.clone());
        self.quiet += 1;
        self.body(&mut inner, &decl.body);
        self.quiet -= 1;
        self.stack.pop();
        // The instance's named artifacts are visible as `alias.name`.
        for (name, art) in inner.artifacts.iter() {
            if !name.contains('.') {
                std::sync::Arc::make_mut(&mut scope.artifacts)
                    .insert(format!("{}.{name}", u.alias), art.clone());
            }
        }
        Some(Endpoints {
            entries: inner.entries.into(),
            exits: inner.exits.into(),
            single: false,
        })
    }

    /// Binds the arguments of a `use` to the subgraph's parameters.
    fn bind_args(
        &mut self,
        scope: &Scope,
        subgraph: &str,
        params: &[Param],
        args: &[Arg],
        loc: impl Fn(String) -> Loc,
    ) -> Option<BTreeMap<String, Binding>> {
        let mut out = BTreeMap::new();
        let mut ok = true;
        for a in args {
            if !params.iter().any(|p| p.name == a.name) {
                let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                self.report(
                    Finding::new(
                        Code::BadArgument,
                        scope.at(loc(a.name.clone())),
                        format!("`{subgraph}` has no parameter `{}`", a.name),
                    )
                    .about(Subject::Argument {
                        of: subgraph.to_string(),
                        name: a.name.clone(),
                    })
                    .label("unknown argument")
                    .help(format!(
                        "its parameters are: {}",
                        if names.is_empty() {
                            "(none)".to_string()
                        } else {
                            names.join(", ")
                        }
                    )),
                );
                ok = false;
            }
        }
        for p in params {
            let arg = args.iter().find(|a| a.name == p.name);
            // A missing argument has no span of its own; its `UseArg` falls back to
            // the `use` it belongs to.
            let at = scope.at(loc(arg.map_or(&p.name, |a| &a.name).clone()));
            let Some(arg) = arg else {
                match &p.default {
                    Some(d) => {
                        out.insert(
                            p.name.clone(),
                            Binding::Value {
                                lit: d.clone(),
                                knob: None,
                            },
                        );
                    }
                    None => {
                        self.report(
                            Finding::new(
                                Code::BadArgument,
                                at,
                                format!(
                                    "`{subgraph}` needs the argument `{}` ({})",
                                    p.name,
                                    p.ty.as_str()
                                ),
                            )
                            .about(Subject::Argument {
                                of: subgraph.to_string(),
                                name: p.name.clone(),
                            })
                            .label("missing argument")
                            .help(format!("pass it: `{}: ...`", p.name)),
                        );
                        ok = false;
                    }
                }
                continue;
            };
            let binding = match (&arg.value, p.ty) {
                (ArgValue::Name(n), ParamType::Node) => {
                    match self.resolve_name(scope, n, loc(arg.name.clone())) {
                        Some(e) => Binding::Node(e),
                        None => {
                            ok = false;
                            continue;
                        }
                    }
                }
                (ArgValue::Literal(l), _) => Binding::Value {
                    lit: l.clone(),
                    knob: None,
                },
                (ArgValue::Name(n), _) => match self.value_of(scope, n) {
                    Some((lit, knob)) => Binding::Value { lit, knob },
                    None => {
                        self.report(
                            Finding::new(
                                Code::BadArgument,
                                at,
                                format!("`{n}` is not a knob or parameter"),
                            )
                            .about(Subject::Argument {
                                of: subgraph.to_string(),
                                name: p.name.clone(),
                            })
                            .label("unknown value")
                            .help(format!(
                                "pass a literal or the name of a knob for `{}`",
                                p.name
                            )),
                        );
                        ok = false;
                        continue;
                    }
                },
            };
            if let Binding::Value { lit, .. } = &binding {
                if p.ty == ParamType::Node {
                    self.report(
                        Finding::new(
                            Code::BadArgument,
                            at,
                            format!("`{}` takes a node, not {lit}", p.name),
                        )
                        .about(Subject::Argument {
                            of: subgraph.to_string(),
                            name: p.name.clone(),
                        })
                        .help("pass the name of a node, instance or parallel block"),
                    );
                    ok = false;
                    continue;
                }
                let (min, max, choices) = match &p.bounds {
                    Some(Bounds::Range(lo, hi)) => (Some(lo), Some(hi), Vec::new()),
                    Some(Bounds::Choices(c)) => (
                        None,
                        None,
                        c.iter()
                            .map(|l| match l {
                                Literal::Str(s) => s.clone(),
                                o => o.to_string(),
                            })
                            .collect(),
                    ),
                    None => (None, None, Vec::new()),
                };
                let ty = match p.ty {
                    ParamType::Int => KnobType::Int,
                    ParamType::Float => KnobType::Float,
                    ParamType::Bool => KnobType::Bool,
                    _ => KnobType::String,
                };
                if let Some(problem) =
                    crate::validate::literal_fits(lit, ty, min, max, &choices, false)
                {
                    let code = if problem.starts_with("is not of type") {
                        Code::BadArgument
                    } else {
                        Code::OutOfBounds
                    };
                    self.report(
                        Finding::new(code, at, format!("argument `{}` = {lit} {problem}", p.name))
                            .about(Subject::Argument {
                                of: subgraph.to_string(),
                                name: p.name.clone(),
                            })
                            .label("bad value")
                            .help(format!(
                                "pass a {} value{}",
                                ty_name(ty),
                                bounds_text(&p.bounds)
                            )),
                    );
                    ok = false;
                    continue;
                }
            }
            out.insert(p.name.clone(), binding);
        }
        ok.then_some(out)
    }

    /// Lowers parallel block `p`, the `index`th of its body.
    pub(super) fn parallel(
        &mut self,
        scope: &mut Scope,
        p: &crate::syntax::Parallel,
        index: usize,
    ) -> Endpoints {
        let id = scope.id(&p.name);
        let mut attrs = Attrs {
            doc: (!p.doc.is_empty()).then(|| p.doc.clone()),
            isolation: Some(p.isolation.clone().unwrap_or_else(|| "worktrees".into())),
            ..Attrs::default()
        };
        if attrs.isolation.as_deref() != Some("worktrees") {
            self.report(
                Finding::new(
                    Code::BadArgument,
                    scope.at(Loc::Parallel(scope.key.clone(), p.name.clone())),
                    format!(
                        "unknown isolation `{}`",
                        attrs.isolation.clone().unwrap_or_default()
                    ),
                )
                .about(Subject::Parallel(p.name.clone()))
                .help("write `in worktrees` (each branch runs in its own git worktree)"),
            );
        }
        for a in &p.args {
            let loc = scope.at(Loc::ParallelArg(
                scope.key.clone(),
                p.name.clone(),
                a.name.clone(),
            ));
            if a.name != "count" {
                self.report(
                    Finding::new(
                        Code::BadArgument,
                        loc,
                        format!("a parallel block has no argument `{}`", a.name),
                    )
                    .about(Subject::Argument {
                        of: p.name.clone(),
                        name: a.name.clone(),
                    })
                    .help("its one argument is `count: N` (how many branches run)"),
                );
                continue;
            }
            let value = match &a.value {
                ArgValue::Literal(l) => Some((l.clone(), None)),
                ArgValue::Name(n) => self.value_of(scope, n),
            };
            // The range (1..=MAX_PARALLEL) is checked on the IR (FWF027), so IR files
            // get the same check; only what the IR cannot hold is reported here.
            match value {
                Some((Literal::Int(n), knob)) => match u32::try_from(n) {
                    Ok(n) => {
                        attrs.count = Some(n);
                        attrs.count_knob = knob;
                    }
                    Err(_) => {
                        let (message, help) = crate::validate::count_problem(&p.name, n);
                        self.report(
                            Finding::new(Code::ParallelCount, loc, message)
                                .about(Subject::Parallel(p.name.clone()))
                                .help(help),
                        );
                    }
                },
                _ => self.report(
                    Finding::new(
                        Code::BadArgument,
                        loc,
                        "`count` must be a whole number or an int knob",
                    )
                    .about(Subject::Parallel(p.name.clone()))
                    .help("e.g. `parallel hypotheses(count: 3) in worktrees { ... }`"),
                ),
            }
        }
        self.origins.nodes.insert(
            id.clone(),
            scope.at(Loc::Parallel(scope.key.clone(), p.name.clone())),
        );
        self.nodes.push(Node {
            id: id.clone(),
            kind: NodeKind::Parallel,
            parallel: scope.parallel.clone(),
            attrs,
        });
        let mut inner = Scope {
            file: scope.file.clone(),
            key: format!("{}/{}", scope.key, p.name),
            prefix: format!("{id}."),
            parallel: Some(id.clone()),
            top: false,
            knobs: scope.knobs,
            params: scope.params.clone(),
            names: rustc_hash::FxHashMap::default(),
            artifacts: scope.artifacts.clone(),
            slot: scope.slot.as_ref().map(|path| {
                let mut path = path.clone();
                path.parallels.push(index);
                path
            }),
            origin: scope.origin.clone(),
            entries: Vec::new(),
            exits: Vec::new(),
        };
        self.body(&mut inner, &p.body);
        if inner.entries.is_empty() {
            self.report(
                Finding::new(
                    Code::MissingStart,
                    scope.at(Loc::Parallel(scope.key.clone(), p.name.clone())),
                    format!("parallel block `{}` has no `start ->` edge", p.name),
                )
                .about(Subject::Parallel(p.name.clone()))
                .help("begin its flow with `start -> <first node>` and end it with `-> end`"),
            );
        }
        for to in &inner.entries {
            let edge = Edge {
                from: id.clone(),
                to: to.clone(),
                label: None,
                max: None,
                max_knob: None,
            };
            let at = Some(scope.at(Loc::Parallel(scope.key.clone(), p.name.clone())));
            self.edges.push((edge, at.clone(), at));
        }
        Endpoints {
            entries: std::sync::Arc::new([id]),
            exits: inner.exits.into(),
            single: false,
        }
    }
}

fn ty_name(ty: KnobType) -> &'static str {
    crate::validate::knob_type_name(ty)
}

fn bounds_text(b: &Option<Bounds>) -> String {
    match b {
        Some(Bounds::Range(lo, hi)) => format!(" in {lo}..={hi}"),
        Some(Bounds::Choices(c)) => format!(
            " among {}",
            c.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => String::new(),
    }
}
