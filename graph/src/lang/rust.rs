//! Rust: functions, methods, structs, enums, unions, traits, type aliases and inline
//! modules; `use` and `mod x;` imports; calls; `impl Trait for Type`; `#[test]`s.

use tree_sitter::Node as TsNode;

use super::{Cx, last_segment};
use crate::model::{Kind, Relation};

pub(super) fn walk(cx: &mut Cx, node: TsNode) {
    match node.kind() {
        "function_item" | "function_signature_item" => function(cx, node),
        "struct_item" | "union_item" => simple_type(cx, node, Kind::Struct),
        "enum_item" => simple_type(cx, node, Kind::Enum),
        "type_item" => simple_type(cx, node, Kind::Type),
        "trait_item" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, walk);
            };
            let id = cx.define(Kind::Trait, &name, node);
            if let Some(bounds) = node.child_by_field_name("bounds") {
                let mut cursor = bounds.walk();
                let supers: Vec<String> = bounds
                    .named_children(&mut cursor)
                    .filter(|b| {
                        matches!(
                            b.kind(),
                            "type_identifier" | "scoped_type_identifier" | "generic_type"
                        )
                    })
                    .map(|b| last_segment(&cx.text(b)))
                    .collect();
                for s in supers {
                    cx.reference(id.clone(), Relation::Inherits, s, None, bounds);
                }
            }
            cx.push(id, &name, true);
            cx.children(node, walk);
            cx.pop();
        }
        "impl_item" => implementation(cx, node),
        "mod_item" => {
            let Some(name) = cx.field_text(node, "name") else {
                return;
            };
            if node.child_by_field_name("body").is_some() {
                let id = cx.define(Kind::Module, &name, node);
                cx.push(id, &name, false);
                cx.children(node, walk);
                cx.pop();
            } else {
                cx.import(name, Some("mod".to_owned()), node);
            }
        }
        "use_declaration" => {
            if let Some(arg) = node.child_by_field_name("argument") {
                for path in use_paths(cx, arg) {
                    cx.import(path, None, node);
                }
            }
        }
        "call_expression" => {
            if let Some(f) = node.child_by_field_name("function") {
                callee(cx, f, node);
            }
            cx.children(node, walk);
        }
        "token_tree" => macro_calls(cx, node),
        _ => cx.children(node, walk),
    }
}

/// Calls inside a macro's arguments (`assert_eq!(parse(x), ...)`), which tree-sitter
/// leaves as a flat token tree: an identifier followed by a parenthesised group.
fn macro_calls(cx: &mut Cx, tree: TsNode) {
    let mut cursor = tree.walk();
    let kids: Vec<TsNode> = tree.children(&mut cursor).collect();
    for (i, k) in kids.iter().enumerate() {
        if k.kind() == "token_tree" {
            macro_calls(cx, *k);
            continue;
        }
        if k.kind() != "identifier" {
            continue;
        }
        let opens_call = kids
            .get(i + 1)
            .is_some_and(|n| n.kind() == "token_tree" && cx.text(*n).starts_with('('));
        if !opens_call {
            continue;
        }
        let qual = match i.checked_sub(1).map(|j| kids[j].kind()) {
            Some("::") => i.checked_sub(2).map(|j| cx.text(kids[j])),
            Some(".") => i
                .checked_sub(2)
                .map(|j| cx.text(kids[j]))
                .filter(|q| q == "self"),
            _ => None,
        };
        let name = cx.text(*k);
        cx.call(name, qual, *k);
    }
}

fn simple_type(cx: &mut Cx, node: TsNode, kind: Kind) {
    let Some(name) = cx.field_text(node, "name") else {
        return;
    };
    cx.define(kind, &name, node);
}

fn function(cx: &mut Cx, node: TsNode) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, walk);
    };
    let kind = if cx.in_type() {
        Kind::Method
    } else {
        Kind::Function
    };
    let id = cx.define(kind, &name, node);
    if has_test_attribute(cx, node) {
        cx.mark_test(&id);
        cx.test_ref(&id, &name, node);
    }
    cx.push(id, &name, false);
    cx.children(node, walk);
    cx.pop();
}

/// `#[test]`, `#[tokio::test]`, ... among the attributes right before the item.
fn has_test_attribute(cx: &Cx, node: TsNode) -> bool {
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => {
                let text = cx.text(p);
                let inner = text.trim_start_matches("#[").trim_end_matches(']');
                if inner == "test" || inner.ends_with("::test") {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
        prev = p.prev_named_sibling();
    }
    false
}

fn implementation(cx: &mut Cx, node: TsNode) {
    let Some(ty) = node.child_by_field_name("type") else {
        return cx.children(node, walk);
    };
    let type_name = last_segment(&cx.text(ty));
    // The id the type has when it is defined in this file, in this module.
    let mut type_id = cx.path.to_owned();
    for s in &cx.scope {
        type_id.push_str("::");
        type_id.push_str(&s.name);
    }
    type_id.push_str("::");
    type_id.push_str(&type_name);
    if let Some(tr) = node.child_by_field_name("trait") {
        let trait_name = last_segment(&cx.text(tr));
        cx.reference(
            type_id.clone(),
            Relation::Implements,
            trait_name,
            None,
            node,
        );
    }
    cx.push(type_id, &type_name, true);
    if let Some(body) = node.child_by_field_name("body") {
        cx.children(body, walk);
    }
    cx.pop();
}

fn callee(cx: &mut Cx, f: TsNode, call: TsNode) {
    match f.kind() {
        "identifier" => {
            let name = cx.text(f);
            cx.call(name, None, call);
        }
        "scoped_identifier" => {
            let Some(name) = cx.field_text(f, "name") else {
                return;
            };
            let qual = cx.field_text(f, "path").map(|p| last_segment(&p));
            cx.call(name, qual, call);
        }
        "field_expression" => {
            let Some(name) = cx.field_text(f, "field") else {
                return;
            };
            let qual = cx.field_text(f, "value").filter(|v| v == "self");
            cx.call(name, qual, call);
        }
        "generic_function" => {
            if let Some(inner) = f.child_by_field_name("function") {
                callee(cx, inner, call);
            }
        }
        _ => {}
    }
}

/// The module paths a `use` tree names (`a::{b, c::d}` → `a::b`, `a::c::d`).
fn use_paths(cx: &Cx, arg: TsNode) -> Vec<String> {
    let mut out = Vec::new();
    collect_use(cx, arg, String::new(), &mut out);
    out
}

fn join(prefix: &str, rest: &str) -> String {
    if prefix.is_empty() {
        rest.to_owned()
    } else if rest.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}::{rest}")
    }
}

fn collect_use(cx: &Cx, node: TsNode, prefix: String, out: &mut Vec<String>) {
    match node.kind() {
        "scoped_use_list" => {
            let path = cx.field_text(node, "path").unwrap_or_default();
            let prefix = join(&prefix, &path);
            if let Some(list) = node.child_by_field_name("list") {
                collect_use(cx, list, prefix, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                collect_use(cx, child, prefix.clone(), out);
            }
        }
        "use_as_clause" => {
            if let Some(p) = node.child_by_field_name("path") {
                collect_use(cx, p, prefix, out);
            }
        }
        "use_wildcard" => {
            let text = cx.text(node);
            out.push(join(
                &prefix,
                text.trim_end_matches("::*").trim_end_matches('*'),
            ));
        }
        "line_comment" | "block_comment" => {}
        _ => out.push(join(&prefix, &cx.text(node))),
    }
}
