//! The public description of callable values (`prelude.md` §9): name, doc and the three JSON
//! Schemas of `language.md` §11.3, as `reflection.get_metadata` reports them and as
//! `reflection.call_agent` validates against.

use serde_json::{Map, Value as Json, json};

use crate::callable::Callable;
use crate::machine::{Ctx, Metadata};
use crate::value::{V, Value};

/// The metadata of a callable value; `None` for a non-callable value or a top-level callable the
/// machine has no metadata for.
pub fn metadata(ctx: &Ctx, callee: &Value) -> Option<Metadata> {
    let V::Callable(c) = &callee.v else {
        return None;
    };
    match &**c {
        // A value written `f[T]` carries its instantiation: the schemas are specialised to it.
        Callable::Agent {
            name,
            generics: Some(args),
            ..
        }
        | Callable::Request {
            name,
            generics: Some(args),
            ..
        }
        | Callable::Native {
            name,
            generics: Some(args),
            ..
        } => ctx
            .m
            .metadata
            .instantiated(name, &args.args)
            .or_else(|| ctx.m.metadata.get(name).cloned()),
        Callable::Constructor {
            ctor,
            generics: Some(args),
            ..
        } => ctx
            .m
            .metadata
            .instantiated(&ctor.name, &args.args)
            .or_else(|| ctx.m.metadata.get(&ctor.name).cloned()),
        Callable::Agent { name, .. }
        | Callable::Request { name, .. }
        | Callable::Native { name, .. } => ctx.m.metadata.get(name).cloned(),
        Callable::Constructor { ctor, .. } => ctx.m.metadata.get(&ctor.name).cloned(),
        Callable::Closure { fun, .. } => {
            if let Some(typed) = ctx.m.metadata.closure(*fun) {
                return Some(Metadata {
                    description: ctx.m.funs.get(fun.0 as usize)?.doc.clone(),
                    ..typed.clone()
                });
            }
            // Closures the checker did not see (continuations, clauses, handler values): the
            // schemas only name the parameters (any value, required unless defaulted).
            let fun = ctx.m.funs.get(fun.0 as usize)?;
            let mut properties = Map::new();
            let mut required = Vec::new();
            let mut names: Vec<_> = fun.params.iter().collect();
            names.sort_by(|a, b| a.name.cmp(&b.name));
            for p in names {
                properties.insert(p.name.to_string(), json!({}));
                if p.default.is_none() {
                    required.push(Json::String(p.name.to_string()));
                }
            }
            Some(Metadata {
                name: "".into(),
                description: fun.doc.clone(),
                input: object_schema(properties, required),
                output: json!({}),
                requests: json!([]),
                output_redactable: false,
            })
        }
        Callable::Partial { callee, holes, .. } => {
            let inner = metadata(ctx, callee)?;
            Some(Metadata {
                name: "".into(),
                description: inner.description,
                input: residual(&inner.input, holes),
                output: inner.output,
                requests: inner.requests,
                output_redactable: inner.output_redactable,
            })
        }
        Callable::Tool(tool) => {
            let wire = tool.wire();
            let description = wire
                .get("description")
                .and_then(Json::as_str)
                .unwrap_or_default();
            Some(Metadata {
                name: tool.name().into(),
                description: description.into(),
                input: wire
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({})),
                output: wire
                    .get("outputSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({})),
                requests: json!([]),
                // A server's reply is not private.
                output_redactable: false,
            })
        }
    }
}

/// The object schema of §11.3, keys in the specified order.
fn object_schema(properties: Map<String, Json>, required: Vec<Json>) -> Json {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Json::Object(properties));
    schema.insert("required".into(), Json::Array(required));
    schema.insert("additionalProperties".into(), json!(true));
    Json::Object(schema)
}

/// The input schema of a partial application: the callee's, restricted to the holed parameters.
fn residual(input: &Json, holes: &[std::sync::Arc<str>]) -> Json {
    let is_hole = |name: &str| holes.iter().any(|h| &**h == name);
    let properties = input
        .get("properties")
        .and_then(Json::as_object)
        .map(|p| {
            p.iter()
                .filter(|(k, _)| is_hole(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let required = input
        .get("required")
        .and_then(Json::as_array)
        .map(|r| {
            r.iter()
                .filter(|k| k.as_str().is_some_and(is_hole))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    object_schema(properties, required)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_residual_keeps_only_the_holes() {
        let input = json!({
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
            "additionalProperties": true
        });
        let out = residual(&input, &["y".into()]);
        assert_eq!(
            out.to_string(),
            r#"{"type":"object","properties":{"y":{"type":"integer"}},"required":["y"],"additionalProperties":true}"#
        );
    }
}
