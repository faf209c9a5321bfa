//! `mcp_describe_S` (`host.md` §10.5): the full schema or metadata of one catalog entry, in the
//! documented shape for each kind.

use serde_json::{Map, Value, json};

use super::catalog::{Entry, Kind};
use super::read;

/// The describe object of `entry`.
pub fn describe(entry: &Entry) -> Value {
    let mut o = Map::new();
    let mut put = |key: &str, value: Value| {
        o.insert(key.into(), value);
    };
    put("kind", json!(entry.kind.as_str()));
    put("id", json!(entry.id));
    match entry.kind {
        Kind::Resource => put("uri", json!(entry.id)),
        Kind::Template => put("uri_template", json!(entry.id)),
        Kind::Tool | Kind::Prompt => {}
    }
    put("name", json!(entry.name));
    if let Some(t) = &entry.title {
        put("title", json!(t));
    }
    if let Some(d) = &entry.description {
        put("description", json!(d));
    }
    match entry.kind {
        Kind::Tool => {
            let schema = entry
                .input_schema
                .clone()
                .unwrap_or_else(|| json!({"type": "object"}));
            put(
                "invocation",
                json!({"type": "object", "required": ["tool", "arguments"], "properties": {
                    "tool": {"type": "string", "const": entry.raw_id},
                    "arguments": schema}}),
            );
            if let Some(s) = &entry.output_schema {
                put("output_schema", s.clone());
            }
            if let Some(a) = &entry.annotations {
                put("annotations", a.clone());
            }
        }
        Kind::Resource | Kind::Template => {
            if let Some(m) = &entry.mime_type {
                put("mime_type", json!(m));
            }
            if let Some(s) = entry.size {
                put("size", json!(s));
            }
            if let Some(a) = &entry.audience {
                put("audience", json!(a));
            }
            if entry.kind == Kind::Template {
                let (variables, expandable) = match read::expressions(&entry.raw_id) {
                    Ok(list) => {
                        let mut names: Vec<&str> = Vec::new();
                        for n in list.iter().flat_map(|e| e.names.iter().copied()) {
                            if !n.is_empty() && !names.contains(&n) {
                                names.push(n);
                            }
                        }
                        (names, list.iter().all(|e| e.simple))
                    }
                    Err(_) => (Vec::new(), false),
                };
                put("variables", json!(variables));
                put("expandable", json!(expandable));
            }
        }
        Kind::Prompt => {
            if let Some(args) = &entry.arguments {
                let list: Vec<Value> = args
                    .iter()
                    .map(|a| {
                        let mut o = Map::new();
                        o.insert("name".into(), json!(a.name));
                        if let Some(d) = &a.description {
                            o.insert("description".into(), json!(d));
                        }
                        o.insert("required".into(), json!(a.required));
                        Value::Object(o)
                    })
                    .collect();
                put("arguments", Value::Array(list));
            }
        }
    }
    Value::Object(o)
}
