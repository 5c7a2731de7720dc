//! Go: functions, methods (attached to their receiver type), structs, interfaces and
//! other named types; embedded fields as inheritance; imports; calls; `TestX` tests.

use tree_sitter::Node as TsNode;

use super::{Cx, last_segment};
use crate::model::{Kind, Relation};

pub(super) fn walk(cx: &mut Cx, node: TsNode) {
    match node.kind() {
        "function_declaration" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, walk);
            };
            let id = cx.define(Kind::Function, &name, node);
            if cx.facts.file.test && name.starts_with("Test") {
                cx.mark_test(&id);
                cx.test_ref(&id, &name, node);
            }
            cx.push(id, &name, false);
            cx.children(node, walk);
            cx.pop();
        }
        "method_declaration" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, walk);
            };
            let receiver = node
                .child_by_field_name("receiver")
                .and_then(|r| receiver_type(cx, r));
            let Some(receiver) = receiver else {
                return cx.children(node, walk);
            };
            let type_id = format!("{}::{receiver}", cx.path);
            cx.push(type_id, &receiver, true);
            let id = cx.define(Kind::Method, &name, node);
            cx.push(id, &name, false);
            cx.children(node, walk);
            cx.pop();
            cx.pop();
        }
        "type_spec" | "type_alias" => {
            let Some(name) = cx.field_text(node, "name") else {
                return;
            };
            let ty = node.child_by_field_name("type");
            let kind = match ty.map(|t| t.kind()) {
                Some("struct_type") => Kind::Struct,
                Some("interface_type") => Kind::Interface,
                _ => Kind::Type,
            };
            let id = cx.define(kind, &name, node);
            if let Some(t) = ty {
                embedded(cx, &id, t);
            }
        }
        "import_spec" => {
            if let Some(path) = cx.field_text(node, "path") {
                let path = path.trim_matches(['"', '`']).to_owned();
                cx.import(path, None, node);
            }
        }
        "call_expression" => {
            if let Some(f) = node.child_by_field_name("function") {
                match f.kind() {
                    "identifier" => {
                        let name = cx.text(f);
                        cx.call(name, None, node);
                    }
                    "selector_expression" => {
                        if let Some(name) = cx.field_text(f, "field") {
                            let qual = cx.field_text(f, "operand").map(|o| last_segment(&o));
                            cx.call(name, qual, node);
                        }
                    }
                    _ => {}
                }
            }
            cx.children(node, walk);
        }
        _ => cx.children(node, walk),
    }
}

/// `(s *Server)` → `Server`.
fn receiver_type(cx: &Cx, params: TsNode) -> Option<String> {
    let mut cursor = params.walk();
    let param = params
        .named_children(&mut cursor)
        .find(|p| p.kind() == "parameter_declaration")?;
    let ty = param.child_by_field_name("type")?;
    let name = last_segment(&cx.text(ty));
    (!name.is_empty()).then_some(name)
}

/// Embedded struct fields and embedded interfaces: `type A struct { B; *C }`.
fn embedded(cx: &mut Cx, id: &str, ty: TsNode) {
    let mut stack = vec![ty];
    let mut found = Vec::new();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "field_declaration" if n.child_by_field_name("name").is_none() => {
                if let Some(t) = n.child_by_field_name("type") {
                    found.push((last_segment(&cx.text(t)), n));
                }
            }
            "type_elem" => found.push((last_segment(&cx.text(n)), n)),
            "struct_type" | "interface_type" | "field_declaration_list" => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
            _ => {}
        }
    }
    for (name, n) in found {
        cx.reference(id.to_owned(), Relation::Inherits, name, None, n);
    }
}
