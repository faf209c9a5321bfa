//! Minted MCP tools (`prelude.md` §14.3–14.5, `language.md` §11.1): the callable that carries a
//! server's tool and its descriptor, its `$tool` wire form and the decoder that turns that form
//! back into a working tool, and the conversion of `tools/call` results into values (minted
//! tools) or literal `json` trees (`mcp.call`).
//!
//! **Secrets:** header values never appear in the wire form. A descriptor with headers is
//! written as `{"url": …, "headers": {"<name>": {"$redacted": true}, …}, "handle": n}`, where
//! `handle` names the descriptor in this process's registry; the decoder restores the tool from
//! that registry, so `json.decode(json.encode(tool))` works within the process and nowhere else.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Map, Value as Json, json};

use super::client::{self, Auth, Descriptor, McpFailure};
use super::text::sanitize;
use crate::callable::{Callable, Tool};
use crate::control::{Ctl, panic};
use crate::machine::{Ctx, Machine};
use crate::value::{Privacy, V, Value, record_with_capacity, to_wire};
use crate::wire::{JsonCtors, json_to_tree};

/// The qualified constructors of the two MCP errors.
const SERVER_ERROR: &str = "prelude.mcp.server_error";
const AUTH_ERROR: &str = "prelude.mcp.auth_error";

// -------------------------------------------------------------------------------------------
// The descriptor registry
// -------------------------------------------------------------------------------------------

#[derive(Default)]
struct Registry {
    by_key: HashMap<Arc<str>, (u64, Arc<Descriptor>)>,
    by_handle: HashMap<u64, Arc<Descriptor>>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);

/// The process's one descriptor for `d`'s key, with its wire handle. Descriptors are few (one
/// per distinct server address and credentials) and kept for the life of the process, so that
/// any `$tool` this process wrote can be decoded again.
pub fn intern(d: Descriptor) -> (u64, Arc<Descriptor>) {
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((handle, existing)) = registry.by_key.get(d.key()) {
        return (*handle, existing.clone());
    }
    let handle = registry.by_handle.len() as u64 + 1;
    let d = Arc::new(d);
    registry.by_key.insert(d.key().into(), (handle, d.clone()));
    registry.by_handle.insert(handle, d.clone());
    (handle, d)
}

fn registered(handle: u64) -> Option<Arc<Descriptor>> {
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry.by_handle.get(&handle).cloned()
}

/// The `context` member of the wire form: no header value, ever.
fn context(handle: u64, d: &Descriptor) -> Json {
    let mut out = Map::new();
    out.insert("url".into(), Json::String(d.url.clone()));
    match &d.auth {
        Auth::OAuth(name) => {
            out.insert("oauth".into(), Json::String(name.clone()));
        }
        Auth::Headers(headers) if headers.is_empty() || d.url.starts_with("mcp:") => {}
        Auth::Headers(headers) => {
            let redacted: Map<String, Json> = headers
                .iter()
                .map(|(name, _)| (name.clone(), json!({"$redacted": true})))
                .collect();
            out.insert("headers".into(), Json::Object(redacted));
            out.insert("handle".into(), json!(handle));
        }
    }
    Json::Object(out)
}

// -------------------------------------------------------------------------------------------
// Minted tools
// -------------------------------------------------------------------------------------------

/// A server's tool, callable from the script.
#[derive(Debug)]
pub struct MintedTool {
    name: Arc<str>,
    descriptor: Arc<Descriptor>,
    /// The `$tool` object, built once.
    wire: Json,
}

impl MintedTool {
    fn new(
        handle: u64,
        descriptor: Arc<Descriptor>,
        name: &str,
        description: &str,
        input: Json,
        output: Option<Json>,
    ) -> MintedTool {
        let mut wire = Map::new();
        wire.insert("$tool".into(), Json::String(name.to_string()));
        wire.insert("reactor".into(), Json::String("mcp".into()));
        wire.insert("context".into(), context(handle, &descriptor));
        wire.insert("description".into(), Json::String(description.to_string()));
        wire.insert("inputSchema".into(), input);
        if let Some(output) = output {
            wire.insert("outputSchema".into(), output);
        }
        MintedTool {
            name: name.into(),
            descriptor,
            wire: Json::Object(wire),
        }
    }
}

impl Tool for MintedTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn wire(&self) -> Json {
        self.wire.clone()
    }

    fn call(&self, ctx: &mut Ctx, argument: Value) -> Result<Value, Ctl> {
        let arguments = arguments(&self.name, &argument)?;
        let host = ctx.m.host.clone();
        let reply = crate::reactor::block_on(
            ctx,
            client::call_tool(&self.descriptor, &host, &self.name, arguments),
        )?;
        let converted = reply.and_then(|r| convert(ctx, &self.descriptor.url, &self.name, r));
        match converted {
            Ok(Converted::Files { text, files }) => {
                let mut record = record_with_capacity(2);
                record.insert("text".into(), Value::str(text));
                let files = files
                    .into_iter()
                    .map(|id| Value::new(V::File(id.as_ref().into())))
                    .collect();
                record.insert("files".into(), Value::array(files));
                Ok(Value::record(record))
            }
            Ok(Converted::Structured(json)) => match crate::wire::decode(&ctx.m, &json) {
                Ok(value) => Ok(value),
                Err(reason) => Err(fail(
                    ctx,
                    McpFailure::Server(format!(
                        "MCP server '{}' sent structured content for tool \"{}\" that cannot be decoded — {}",
                        self.descriptor.url,
                        self.name,
                        sanitize(&reason)
                    )),
                )),
            },
            Ok(Converted::Text(text)) => Ok(Value::str(text)),
            Err(failure) => Err(fail(ctx, failure)),
        }
    }
}

/// The argument record as a JSON object for `tools/call`. A private value would be revealed to
/// the server: like an io external (`language.md` §8.6 rule 7), the call panics before sending.
fn arguments(name: &str, argument: &Value) -> Result<JsonObject, Ctl> {
    let fields: Vec<(&str, &Value)> = match &argument.v {
        V::Record(r) => r.iter().map(|(k, v)| (&**k, v)).collect(),
        V::Data(d) => d
            .ctor
            .fields
            .iter()
            .map(|k| &**k)
            .zip(d.fields.iter())
            .collect(),
        V::Null => Vec::new(),
        _ => {
            return Err(panic(format!(
                "tool \"{name}\": expected an argument record, got {}",
                argument.describe()
            )));
        }
    };
    let mut out = JsonObject::new();
    for (key, value) in fields {
        if value.any_private() || argument.private() {
            return Err(panic(format!(
                "a private value cannot be sent to tool \"{name}\" ({key})"
            )));
        }
        let json = to_json(value)
            .map_err(|()| panic("a non-finite number has no JSON representation".to_string()))?;
        out.insert(escape_key(key), json);
    }
    Ok(out)
}

fn escape_key(key: &str) -> String {
    if key.starts_with('$') {
        format!("${key}")
    } else {
        key.to_string()
    }
}

/// The wire JSON of a value (`language.md` §11.1), built directly (no text round trip).
fn to_json(value: &Value) -> Result<Json, ()> {
    Ok(match &value.v {
        V::Null => Json::Null,
        V::Bool(b) => Json::Bool(b.get()),
        V::Int(n) | V::Num(n) => {
            if !n.is_finite() {
                return Err(());
            }
            if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                Json::from(*n as i64)
            } else {
                serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number)
            }
        }
        V::Str(s) => Json::String(s.to_string()),
        V::Array(items) => Json::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        V::Record(r) => {
            let mut out = Map::with_capacity(r.len());
            for (k, v) in r.iter() {
                out.insert(escape_key(k), to_json(v)?);
            }
            Json::Object(out)
        }
        V::Data(d) => {
            let mut fields = Map::with_capacity(d.fields.len());
            for (k, v) in d.ctor.fields.iter().zip(&d.fields) {
                fields.insert(escape_key(k), to_json(v)?);
            }
            json!({"$constructor": &*d.ctor.name, "value": fields})
        }
        V::File(id) => json!({"$ref": &**id, "semanticKind": "file"}),
        V::Callable(_) => {
            let text = to_wire(value, Privacy::Reveal).map_err(|_| ())?;
            serde_json::from_str(&text).map_err(|_| ())?
        }
    })
}

/// Turns a failure into the matching throw.
pub fn fail(ctx: &mut Ctx, failure: McpFailure) -> Ctl {
    let (ctor, message) = match failure {
        McpFailure::Server(m) => (SERVER_ERROR, m),
        McpFailure::Auth(m) => (AUTH_ERROR, m),
    };
    if !ctx.m.ctors.contains_key(ctor) {
        return panic(format!("internal: the constructor {ctor} is not loaded"));
    }
    let payload = ctx.data(ctor, vec![Value::str(sanitize(&message))]);
    ctx.throw(payload)
}

// -------------------------------------------------------------------------------------------
// The `$tool` decoder
// -------------------------------------------------------------------------------------------

/// Mints a tool from a `$tool` wire object (`language.md` §11.1); `None` when it is malformed
/// or names headers this process does not hold.
pub fn decode(_: &Machine, wire: &Json) -> Option<Value> {
    let name = wire.get("$tool")?.as_str()?;
    let context = wire.get("context")?.as_object()?;
    let url = context.get("url")?.as_str()?;
    let input = wire.get("inputSchema").filter(|s| s.is_object())?.clone();
    let description = match wire.get("description") {
        None => "",
        Some(d) => d.as_str()?,
    };
    let output = match wire.get("outputSchema") {
        None => None,
        Some(s) if s.is_object() => Some(s.clone()),
        Some(_) => return None,
    };
    let headers = context
        .get("headers")
        .and_then(Json::as_object)
        .filter(|h| !h.is_empty());
    let (handle, descriptor) = match (context.get("oauth"), headers) {
        (Some(cred), _) => intern(Descriptor::new(
            url.to_string(),
            Auth::OAuth(cred.as_str()?.to_string()),
        )),
        (None, Some(headers)) => {
            let handle = context.get("handle")?.as_u64()?;
            let known = registered(handle)?;
            let Auth::Headers(held) = &known.auth else {
                return None;
            };
            let same = known.url == url
                && held.len() == headers.len()
                && held.iter().all(|(n, _)| headers.contains_key(n));
            if !same {
                return None;
            }
            (handle, known)
        }
        (None, None) => intern(Descriptor::new(url.to_string(), Auth::Headers(Vec::new()))),
    };
    let tool = MintedTool::new(handle, descriptor, name, description, input, output);
    Some(Value::callable(Callable::Tool(Arc::new(tool))))
}

// -------------------------------------------------------------------------------------------
// Listing
// -------------------------------------------------------------------------------------------

/// `mcp.tools`: the server's tools as a record of minted tools in listing order (a name listed
/// twice keeps its first position and its last definition).
pub fn list(ctx: &mut Ctx, descriptor: Descriptor) -> Result<Value, Ctl> {
    let (handle, descriptor) = intern(descriptor);
    let host = ctx.m.host.clone();
    let listed = crate::reactor::block_on(ctx, client::list_tools(&descriptor, &host))?;
    let tools = match listed {
        Ok(tools) => tools,
        Err(failure) => return Err(fail(ctx, failure)),
    };
    let mut record = record_with_capacity(tools.len());
    for tool in tools {
        let input = Json::Object((*tool.input_schema).clone());
        let output = tool.output_schema.map(|s| Json::Object((*s).clone()));
        let minted = MintedTool::new(
            handle,
            descriptor.clone(),
            &tool.name,
            tool.description.as_deref().unwrap_or(""),
            input,
            output,
        );
        record.insert(
            Arc::from(&*tool.name),
            Value::callable(Callable::Tool(Arc::new(minted))),
        );
    }
    Ok(Value::record(record))
}

// -------------------------------------------------------------------------------------------
// Results
// -------------------------------------------------------------------------------------------

/// A `tools/call` result resolved as in `prelude.md` §14.4 steps 3–5.
enum Converted {
    Files { text: String, files: Vec<Arc<str>> },
    Structured(Json),
    Text(String),
}

fn convert(
    ctx: &Ctx,
    url: &str,
    tool: &str,
    result: CallToolResult,
) -> Result<Converted, McpFailure> {
    let mut lines: Vec<String> = Vec::new();
    let mut files = Vec::new();
    let error = result.is_error == Some(true);
    for block in result.content {
        match block {
            ContentBlock::Text(t) => lines.push(t.text),
            ContentBlock::Image(image) if !error => {
                files.push(store(
                    ctx,
                    url,
                    tool,
                    "image",
                    &image.data,
                    &image.mime_type,
                )?);
            }
            ContentBlock::Audio(audio) if !error => {
                files.push(store(
                    ctx,
                    url,
                    tool,
                    "audio",
                    &audio.data,
                    &audio.mime_type,
                )?);
            }
            ContentBlock::Image(_) => lines.push("(image content)".into()),
            ContentBlock::Audio(_) => lines.push("(audio content)".into()),
            ContentBlock::Resource(_) => lines.push("(resource content)".into()),
            ContentBlock::ResourceLink(_) => lines.push("(resource_link content)".into()),
            _ => lines.push("(unknown content)".into()),
        }
    }
    let text = lines.join("\n");
    if error {
        return Err(McpFailure::Server(if text.is_empty() {
            format!("tool \"{tool}\" of MCP server '{url}' reported an error")
        } else {
            text
        }));
    }
    Ok(if !files.is_empty() {
        Converted::Files { text, files }
    } else if let Some(structured) = result.structured_content {
        Converted::Structured(structured)
    } else {
        Converted::Text(text)
    })
}

/// Decodes a base64 block into the blob store.
fn store(
    ctx: &Ctx,
    url: &str,
    tool: &str,
    kind: &str,
    data: &str,
    mime: &str,
) -> Result<Arc<str>, McpFailure> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|_| {
            McpFailure::Server(format!(
                "MCP server '{url}' sent {kind} content for tool \"{tool}\" whose data is not base64"
            ))
        })?;
    super::blob::store(&ctx.host().blob_dir(), &bytes, mime)
        .map(Arc::from)
        .map_err(|e| {
            McpFailure::Server(format!(
                "cannot store {kind} content from tool \"{tool}\" in the blob folder: {e}"
            ))
        })
}

/// `mcp.call`: one call with literal JSON arguments; the reply as a literal `json` tree
/// (`prelude.md` §14.5).
pub fn call_literal(
    ctx: &mut Ctx,
    descriptor: Descriptor,
    tool: &str,
    arguments: JsonObject,
) -> Result<Value, Ctl> {
    let (_, descriptor) = intern(descriptor);
    let host = ctx.m.host.clone();
    let reply =
        crate::reactor::block_on(ctx, client::call_tool(&descriptor, &host, tool, arguments))?;
    let converted = match reply.and_then(|r| convert(ctx, &descriptor.url, tool, r)) {
        Ok(c) => c,
        Err(failure) => return Err(fail(ctx, failure)),
    };
    let c = JsonCtors::of(&ctx.m).map_err(|e| panic(format!("internal: {e}")))?;
    Ok(match converted {
        Converted::Files { text, files } => {
            let files = files
                .into_iter()
                .map(|id| json!({"$ref": &*id, "semanticKind": "file"}))
                .collect();
            json_to_tree(&c, &json!({"text": text, "files": Json::Array(files)}))
        }
        Converted::Structured(json) => json_to_tree(&c, &json),
        Converted::Text(text) => c.string(text),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Record;

    #[test]
    fn the_wire_form_never_holds_header_values() {
        let (handle, d) = intern(Descriptor::new(
            "http://127.0.0.1:9/mcp".into(),
            Auth::Headers(vec![("Authorization".into(), "Bearer s3cret".into())]),
        ));
        let tool = MintedTool::new(handle, d, "echo", "Echoes.", json!({}), None);
        let text = tool.wire().to_string();
        assert!(!text.contains("s3cret"), "{text}");
        assert_eq!(
            text,
            format!(
                r#"{{"$tool":"echo","reactor":"mcp","context":{{"url":"http://127.0.0.1:9/mcp","headers":{{"Authorization":{{"$redacted":true}}}},"handle":{handle}}},"description":"Echoes.","inputSchema":{{}}}}"#
            )
        );
    }

    #[test]
    fn arguments_escape_dollar_keys_and_keep_integers() {
        let mut r = Record::default();
        r.insert("$kind".into(), Value::str("x"));
        r.insert("n".into(), Value::int(3.0));
        r.insert("x".into(), Value::num(2.5));
        let value = Value::record(r);
        let V::Record(r) = &value.v else {
            unreachable!("a record")
        };
        let json: Map<String, Json> = r
            .iter()
            .map(|(k, v)| (escape_key(k), to_json(v).expect("finite")))
            .collect();
        assert_eq!(
            Json::Object(json).to_string(),
            r#"{"$$kind":"x","n":3,"x":2.5}"#
        );
    }
}
