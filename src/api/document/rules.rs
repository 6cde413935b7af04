//! What the readers of every request hold, written into the document. Query strings
//! (`api::query::Query`): no parameter is given empty (leave it out instead). Bodies
//! (`api::body`, and the hand readers of policies and datasources): no value is `null`
//! (leave the field out instead), except the fields where `null` means something, and
//! except the agent's event batch, which the events contract reads with `null` as absent.
//! Rust's `Option` documents as nullable; this pass takes `null` out of every schema a
//! request body reaches (those shared with answers too: answers leave such fields out
//! rather than send `null`, and the answer check of the schema fuzzer holds them to it).

use std::collections::BTreeSet;

use yaml_serde::Value;

use super::links::operations;

/// Bodies read with `null` as absent (the events contract).
const NULL_AS_ABSENT: &[&str] = &["postClustersByClusterEvents"];

/// `(schema, field)`: top-level fields where `null` is a value (`teamId: null` is
/// fleet-wide; `role: null` is no fleet role).
pub const NULL_MEANS_SOMETHING: &[(&str, &str)] = &[
    ("ChannelInput", "teamId"),
    ("RuleInput", "teamId"),
    ("CreateUser", "role"),
    ("UpdateUser", "role"),
];

/// Every string query parameter is at least one character long.
pub fn no_empty_query_values(doc: &mut Value) {
    for op in operations(doc) {
        let params = op
            .get_mut("parameters")
            .and_then(Value::as_sequence_mut)
            .into_iter()
            .flatten();
        for p in params.filter(|p| p["in"].as_str() == Some("query")) {
            let Some(schema) = p.get_mut("schema").and_then(Value::as_mapping_mut) else {
                continue;
            };
            let is_string = match schema.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Sequence(ts)) => ts.iter().any(|t| t.as_str() == Some("string")),
                _ => false,
            };
            if is_string && !schema.contains_key("minLength") && !schema.contains_key("enum") {
                schema.insert("minLength".into(), 1.into());
            }
        }
    }
}

/// Applies the body rule to `doc`.
pub fn refuse_null(doc: &mut Value) {
    let mut names = BTreeSet::new();
    for op in operations(doc) {
        if op["operationId"]
            .as_str()
            .is_some_and(|id| NULL_AS_ABSENT.contains(&id))
        {
            continue;
        }
        let Some(content) = op
            .get_mut("requestBody")
            .and_then(|b| b.get_mut("content"))
            .and_then(Value::as_mapping_mut)
        else {
            continue;
        };
        for media in content.values_mut() {
            if let Some(schema) = media.get_mut("schema") {
                strip(schema);
                walk(schema, None, &mut names);
            }
        }
    }
    let Some(schemas) = doc.get_mut("components").and_then(|c| c.get_mut("schemas")) else {
        return;
    };
    let mut done = BTreeSet::new();
    while let Some(name) = names.iter().find(|n| !done.contains(*n)).cloned() {
        done.insert(name.clone());
        if let Some(schema) = schemas.get_mut(name.as_str()) {
            walk(schema, Some(&name), &mut names);
        }
    }
}

/// Strips `null` from every property under `schema` (the top-level properties of
/// component `name` keep theirs when listed) and collects the components it names.
fn walk(schema: &mut Value, name: Option<&str>, refs: &mut BTreeSet<String>) {
    match schema {
        Value::Mapping(o) => {
            if let Some(n) = o
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                refs.insert(n.to_string());
            }
            if let Some(Value::Mapping(props)) = o.get_mut("properties") {
                for (field, prop) in props.iter_mut() {
                    let field = field.as_str().unwrap_or_default();
                    let keep = name.is_some_and(|n| NULL_MEANS_SOMETHING.contains(&(n, field)));
                    if !keep {
                        strip(prop);
                    }
                }
            }
            for v in o.values_mut() {
                walk(v, None, refs);
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(|v| walk(v, None, refs)),
        _ => {}
    }
}

fn is_null_type(v: &Value) -> bool {
    v.as_str() == Some("null")
}

/// Takes `null` out of what one schema admits: `type: [T, "null"]` becomes `type: T`
/// and `oneOf: [S, {type: "null"}]` becomes `S`.
fn strip(schema: &mut Value) {
    let Value::Mapping(o) = schema else { return };
    if let Some(Value::Sequence(types)) = o.get_mut("type") {
        types.retain(|t| !is_null_type(t));
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".into(), only);
        }
    }
    let Some(Value::Sequence(alternatives)) = o.get("oneOf") else {
        return;
    };
    let kept: Vec<Value> = alternatives
        .iter()
        .filter(|a| !a.get("type").is_some_and(is_null_type))
        .cloned()
        .collect();
    if kept.len() == alternatives.len() {
        return;
    }
    if let [Value::Mapping(only)] = kept.as_slice() {
        let only = only.clone();
        o.remove("oneOf");
        for (k, v) in only {
            o.entry(k).or_insert(v);
        }
    } else {
        o.insert("oneOf".into(), Value::Sequence(kept));
    }
}
