//! Python: functions, methods, classes and their bases; `import` and `from ... import`;
//! calls; `test_*` functions and `Test*` classes.

use tree_sitter::Node as TsNode;

use super::{Cx, last_segment};
use crate::model::{Kind, Relation};

pub(super) fn walk(cx: &mut Cx, node: TsNode) {
    match node.kind() {
        "function_definition" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, walk);
            };
            let kind = if cx.in_type() {
                Kind::Method
            } else {
                Kind::Function
            };
            let id = cx.define(kind, &name, node);
            if name.starts_with("test") && (cx.facts.file.test || in_test_class(cx)) {
                cx.mark_test(&id);
                cx.test_ref(&id, &name, node);
            }
            cx.push(id, &name, false);
            cx.children(node, walk);
            cx.pop();
        }
        "class_definition" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, walk);
            };
            let id = cx.define(Kind::Class, &name, node);
            if let Some(bases) = node.child_by_field_name("superclasses") {
                let mut cursor = bases.walk();
                let names: Vec<String> = bases
                    .named_children(&mut cursor)
                    .filter(|b| matches!(b.kind(), "identifier" | "attribute"))
                    .map(|b| last_segment(&cx.text(b)))
                    .collect();
                for base in names {
                    cx.reference(id.clone(), Relation::Inherits, base, None, bases);
                }
            }
            if name.starts_with("Test") {
                cx.mark_test(&id);
                cx.test_ref(&id, &name, node);
            }
            cx.push(id, &name, true);
            cx.children(node, walk);
            cx.pop();
        }
        "call" => {
            if let Some(f) = node.child_by_field_name("function") {
                match f.kind() {
                    "identifier" => {
                        let name = cx.text(f);
                        cx.call(name, None, node);
                    }
                    "attribute" => {
                        if let Some(name) = cx.field_text(f, "attribute") {
                            let qual = cx.field_text(f, "object").map(|o| last_segment(&o));
                            cx.call(name, qual, node);
                        }
                    }
                    _ => {}
                }
            }
            cx.children(node, walk);
        }
        "import_statement" => {
            let mut cursor = node.walk();
            let names: Vec<String> = node
                .children_by_field_name("name", &mut cursor)
                .filter_map(|n| module_name(cx, n))
                .collect();
            for n in names {
                cx.import(n, None, node);
            }
        }
        "import_from_statement" => {
            let Some(module) = cx.field_text(node, "module_name") else {
                return;
            };
            let mut cursor = node.walk();
            let names: Vec<String> = node
                .children_by_field_name("name", &mut cursor)
                .filter_map(|n| module_name(cx, n))
                .collect();
            if names.is_empty() {
                cx.import(module.clone(), None, node);
            }
            for n in names {
                let full = if module.ends_with('.') {
                    format!("{module}{n}")
                } else {
                    format!("{module}.{n}")
                };
                cx.import(full, None, node);
            }
        }
        _ => cx.children(node, walk),
    }
}

fn in_test_class(cx: &Cx) -> bool {
    cx.scope
        .last()
        .is_some_and(|s| s.is_type && s.name.starts_with("Test"))
}

fn module_name(cx: &Cx, node: TsNode) -> Option<String> {
    match node.kind() {
        "dotted_name" => Some(cx.text(node)),
        "aliased_import" => cx.field_text(node, "name"),
        _ => None,
    }
}
