//! JavaScript and TypeScript: functions (declared, or arrow/function expressions bound
//! to a name), classes, methods, interfaces, type aliases, enums; `extends` and
//! `implements`; `import`, `export ... from` and `require`; calls and `new`.

use tree_sitter::Node as TsNode;

use super::{Cx, last_segment};
use crate::model::{Kind, Relation};

pub(super) fn walk(cx: &mut Cx, node: TsNode) {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            named_scope(cx, node, Kind::Function, false);
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, walk);
            };
            let id = cx.define(Kind::Class, &name, node);
            let mut cursor = node.walk();
            let heritage: Vec<TsNode> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "class_heritage")
                .collect();
            for h in heritage {
                heritage_refs(cx, &id, h);
            }
            cx.push(id, &name, true);
            if let Some(body) = node.child_by_field_name("body") {
                cx.children(body, walk);
            }
            cx.pop();
        }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            named_scope(cx, node, Kind::Method, false);
        }
        "interface_declaration" => {
            let Some(name) = cx.field_text(node, "name") else {
                return;
            };
            let id = cx.define(Kind::Interface, &name, node);
            let mut cursor = node.walk();
            let clauses: Vec<TsNode> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "extends_type_clause")
                .collect();
            for c in clauses {
                type_refs(cx, &id, c, Relation::Inherits);
            }
            cx.push(id, &name, true);
            if let Some(body) = node.child_by_field_name("body") {
                cx.children(body, walk);
            }
            cx.pop();
        }
        "type_alias_declaration" => {
            if let Some(name) = cx.field_text(node, "name") {
                cx.define(Kind::Type, &name, node);
            }
        }
        "enum_declaration" => {
            if let Some(name) = cx.field_text(node, "name") {
                cx.define(Kind::Enum, &name, node);
            }
        }
        "variable_declarator" => {
            let is_function = node.child_by_field_name("value").is_some_and(|v| {
                matches!(
                    v.kind(),
                    "arrow_function" | "function_expression" | "function" | "generator_function"
                )
            });
            let named = node
                .child_by_field_name("name")
                .is_some_and(|n| n.kind() == "identifier");
            if is_function && named {
                named_scope(cx, node, Kind::Function, false);
            } else {
                cx.children(node, walk);
            }
        }
        "import_statement" | "export_statement" => {
            if let Some(source) = cx.field_text(node, "source") {
                cx.import(unquote(&source), None, node);
            }
            cx.children(node, walk);
        }
        "call_expression" => {
            if let Some(f) = node.child_by_field_name("function") {
                match f.kind() {
                    "identifier" => {
                        let name = cx.text(f);
                        if name == "require" {
                            require(cx, node);
                        } else {
                            cx.call(name, None, node);
                        }
                    }
                    "member_expression" => {
                        if let Some(name) = cx.field_text(f, "property") {
                            let qual = cx.field_text(f, "object").map(|o| last_segment(&o));
                            cx.call(name, qual, node);
                        }
                    }
                    _ => {}
                }
            }
            cx.children(node, walk);
        }
        "new_expression" => {
            if let Some(c) = node.child_by_field_name("constructor") {
                let name = last_segment(&cx.text(c));
                cx.call(name, None, node);
            }
            cx.children(node, walk);
        }
        _ => cx.children(node, walk),
    }
}

/// A definition with a `name` field whose body is walked inside it.
fn named_scope(cx: &mut Cx, node: TsNode, kind: Kind, is_type: bool) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, walk);
    };
    let id = cx.define(kind, &name, node);
    cx.push(id, &name, is_type);
    cx.children(node, walk);
    cx.pop();
}

fn unquote(s: &str) -> String {
    s.trim_matches(['"', '\'', '`']).to_owned()
}

/// `require("x")` with a literal string is an import.
fn require(cx: &mut Cx, call: TsNode) {
    let Some(args) = call.child_by_field_name("arguments") else {
        return;
    };
    let mut cursor = args.walk();
    let first = args.named_children(&mut cursor).next();
    if let Some(arg) = first.filter(|a| a.kind() == "string") {
        let name = unquote(&cx.text(arg));
        cx.import(name, None, call);
    }
}

/// `extends A` (JavaScript: the expression; TypeScript: `extends_clause`) and
/// `implements I, J`.
fn heritage_refs(cx: &mut Cx, id: &str, heritage: TsNode) {
    let mut cursor = heritage.walk();
    let kids: Vec<TsNode> = heritage.named_children(&mut cursor).collect();
    for k in kids {
        match k.kind() {
            "extends_clause" => type_refs(cx, id, k, Relation::Inherits),
            "implements_clause" => type_refs(cx, id, k, Relation::Implements),
            "identifier" | "member_expression" => {
                let name = last_segment(&cx.text(k));
                cx.reference(id.to_owned(), Relation::Inherits, name, None, k);
            }
            _ => {}
        }
    }
}

fn type_refs(cx: &mut Cx, id: &str, clause: TsNode, relation: Relation) {
    let mut cursor = clause.walk();
    let names: Vec<(String, TsNode)> = clause
        .named_children(&mut cursor)
        .filter(|t| {
            matches!(
                t.kind(),
                "identifier"
                    | "type_identifier"
                    | "generic_type"
                    | "member_expression"
                    | "nested_type_identifier"
            )
        })
        .map(|t| (last_segment(&cx.text(t)), t))
        .collect();
    for (name, t) in names {
        cx.reference(id.to_owned(), relation, name, None, t);
    }
}
