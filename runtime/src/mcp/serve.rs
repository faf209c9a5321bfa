//! `mcp.serve` (`prelude.md` §14.6): a record of agents published as a stateless MCP server
//! (JSON-RPC 2.0 over `POST /mcp/<token>`, no sessions, no server-sent events) for the extent of
//! a subscriber. Replies are written directly as JSON text.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::{Map, Value as Json};
use tokio::sync::{oneshot, watch};

use crate::control::{Control, Ctl, panic};
use crate::listener::{self, Pool, Reply, ReplyFuture, Route, RouteKind};
use crate::machine::Ctx;
use crate::value::{Privacy, V, Value, to_wire, write_json_string};

/// The protocol versions answered as requested; anything else gets the first.
const VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// One published tool.
struct Tool {
    name: Arc<str>,
    callee: Value,
    input: Json,
}

struct Endpoint {
    /// Sorted by name.
    tools: Vec<Tool>,
    /// The `tools/list` result, written once.
    listing: String,
    pool: Pool,
    /// Turns `true` when the subscriber has finished.
    released: watch::Receiver<bool>,
    /// The program, for decoding arguments.
    machine: Arc<crate::machine::Machine>,
    in_flight: listener::InFlight,
    abandon: Arc<listener::Abandon>,
    /// Reports served-side failures (panics) on the host's stderr.
    host: Arc<dyn crate::machine::Host>,
}

/// Runs `subscriber(url = …)` while `tools` are served; its outcome is the result.
pub fn serve(
    ctx: &mut Ctx,
    tools: Vec<(Arc<str>, Value)>,
    subscriber: &Value,
) -> Result<Value, Ctl> {
    let mut published = Vec::with_capacity(tools.len());
    let mut entries = Vec::with_capacity(tools.len());
    for (name, callee) in tools {
        let Some(md) = crate::reflect::metadata(ctx, &callee) else {
            return Err(panic(format!(
                "mcp.serve: no metadata is known for the tool \"{name}\""
            )));
        };
        let mut input = Map::new();
        input.insert("type".into(), Json::String("object".into()));
        if let Json::Object(schema) = &md.input {
            for (k, v) in schema {
                input.insert(k.clone(), v.clone());
            }
        }
        let input = Json::Object(input);
        let mut entry = Map::new();
        entry.insert("name".into(), Json::String(name.to_string()));
        entry.insert(
            "description".into(),
            Json::String(md.description.to_string()),
        );
        entry.insert("inputSchema".into(), input.clone());
        if md.output.get("type").and_then(Json::as_str) == Some("object") {
            entry.insert("outputSchema".into(), md.output.clone());
        }
        entries.push((name.clone(), Json::Object(entry)));
        published.push(Tool {
            name,
            callee,
            input,
        });
    }
    published.sort_by(|a, b| a.name.cmp(&b.name));
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let listing =
        serde_json::json!({ "tools": entries.into_iter().map(|(_, e)| e).collect::<Vec<_>>() })
            .to_string();
    let (release, released) = watch::channel(false);
    let endpoint = Arc::new(Endpoint {
        tools: published,
        listing,
        pool: Pool::new(ctx),
        released,
        machine: ctx.m.clone(),
        host: ctx.m.host.clone(),
        in_flight: listener::InFlight::default(),
        abandon: Arc::new(listener::Abandon::default()),
    });
    let registration = listener::register(RouteKind::Mcp, endpoint.clone())
        .map_err(|e| panic(format!("mcp.serve: {e}")))?;
    let outcome = listener::run_subscriber(ctx, subscriber, &registration.url, &endpoint.abandon);
    registration.release();
    endpoint.pool.close();
    let _ = release.send(true);
    endpoint.in_flight.drain();
    outcome
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`.
fn result(id: &str, result: &str) -> String {
    let mut out = String::with_capacity(32 + id.len() + result.len());
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(id);
    out.push_str(r#","result":"#);
    out.push_str(result);
    out.push('}');
    out
}

/// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`.
fn error(id: &str, code: i32, message: &str) -> String {
    let mut out = String::with_capacity(64 + id.len() + message.len());
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(id);
    out.push_str(r#","error":{"code":"#);
    out.push_str(&code.to_string());
    out.push_str(r#","message":"#);
    write_json_string(&mut out, message);
    out.push_str("}}");
    out
}

fn ok(body: String) -> Reply {
    Reply::json(StatusCode::OK, body)
}

/// HTTP 410 and JSON-RPC -32000 for a call cut short by the end of the subscriber.
fn gone(id: &str) -> Reply {
    Reply::json(
        StatusCode::GONE,
        error(
            id,
            -32000,
            "the MCP endpoint was released while the call was running",
        ),
    )
}

impl Route for Endpoint {
    fn post(self: Arc<Self>, body: Bytes) -> ReplyFuture {
        Box::pin(async move {
            let _answering = self.in_flight.enter();
            self.answer(&body).await
        })
    }
}

impl Endpoint {
    async fn answer(&self, body: &[u8]) -> Reply {
        let Ok(message) = serde_json::from_slice::<Json>(body) else {
            return Reply::json(
                StatusCode::BAD_REQUEST,
                error("null", -32700, "Parse error: the body is not JSON"),
            );
        };
        let invalid = || {
            Reply::json(
                StatusCode::BAD_REQUEST,
                error(
                    "null",
                    -32600,
                    "Invalid Request: expected a single JSON-RPC 2.0 request object",
                ),
            )
        };
        let Json::Object(message) = message else {
            return invalid();
        };
        if message.get("jsonrpc").and_then(Json::as_str) != Some("2.0") {
            return invalid();
        }
        let method = message.get("method");
        let id = message.get("id");
        let is_response = message.contains_key("result") || message.contains_key("error");
        match (method, id) {
            // A notification: accepted, nothing to answer.
            (Some(Json::String(_)), None) => return Reply::empty(StatusCode::ACCEPTED),
            // A client's response to a request this server never sends.
            (None, Some(_)) if is_response => return Reply::empty(StatusCode::ACCEPTED),
            (Some(Json::String(_)), Some(Json::String(_) | Json::Number(_))) => {}
            _ => return invalid(),
        }
        let id = id.map(Json::to_string).unwrap_or_else(|| "null".into());
        let method = method.and_then(Json::as_str).unwrap_or_default();
        let params = message.get("params");
        match method {
            "initialize" => {
                let requested = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                let version = VERSIONS
                    .iter()
                    .find(|v| **v == requested)
                    .unwrap_or(&VERSIONS[0]);
                let body = format!(
                    r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"katari-mcp-serve","version":"{}"}}}}"#,
                    env!("CARGO_PKG_VERSION")
                );
                ok(result(&id, &body))
            }
            "ping" => ok(result(&id, "{}")),
            "tools/list" => ok(result(&id, &self.listing)),
            "tools/call" => self.call(&id, params).await,
            _ => ok(error(&id, -32601, &format!("Method not found: {method}"))),
        }
    }

    async fn call(&self, id: &str, params: Option<&Json>) -> Reply {
        let name = params.and_then(|p| p.get("name")).and_then(Json::as_str);
        let Some(name) = name else {
            return ok(error(id, -32602, "tools/call needs a tool name"));
        };
        let Ok(i) = self.tools.binary_search_by(|t| (*t.name).cmp(name)) else {
            return ok(error(id, -32602, &format!("unknown tool \"{name}\"")));
        };
        let tool = &self.tools[i];
        let empty = Json::Object(Map::new());
        let json = params
            .and_then(|p| p.get("arguments"))
            .filter(|a| !a.is_null())
            .unwrap_or(&empty);
        let args = match listener::arguments(&self.machine, &tool.callee, &tool.input, json) {
            Ok(args) => args,
            Err(message) => return ok(error(id, -32602, &message)),
        };
        if self.pool.cancelled() {
            return gone(id);
        }
        let (tx, rx) = oneshot::channel::<Reply>();
        let callee = tool.callee.clone();
        let tool_name = tool.name.clone();
        let host = self.host.clone();
        let abandon = self.abandon.clone();
        let reply_id = id.to_string();
        let job = Box::new(move |ctx: &mut Ctx| {
            let outcome = ctx.call(&callee, args);
            let reply = reply(&reply_id, &tool_name, outcome, &*host, &abandon);
            let _ = tx.send(reply);
        });
        if let Err(e) = self.pool.submit(job) {
            self.host
                .eprint(&format!("mcp.serve: tool \"{name}\": {e}"));
            return ok(error(id, -32603, "the tool call failed"));
        }
        let mut released = self.released.clone();
        tokio::select! {
            reply = rx => reply.unwrap_or_else(|_| gone(id)),
            _ = released.wait_for(|r| *r) => gone(id),
        }
    }
}

/// The reply to a finished call (`prelude.md` §14.6, both tables).
fn reply(
    id: &str,
    tool: &str,
    outcome: Result<Value, Ctl>,
    host: &dyn crate::machine::Host,
    abandon: &listener::Abandon,
) -> Reply {
    let failed = |detail: &str| {
        host.eprint(&format!("mcp.serve: tool \"{tool}\" failed: {detail}"));
        ok(error(id, -32603, "the tool call failed"))
    };
    match outcome {
        Ok(value) => {
            let Ok(wire) = to_wire(&value, Privacy::Redact) else {
                return failed("a non-finite number has no JSON representation");
            };
            let mut body = String::with_capacity(wire.len() * 2 + 48);
            body.push_str(r#"{"content":[{"type":"text","text":"#);
            match &value.v {
                V::Str(s) if !value.private => write_json_string(&mut body, s),
                _ => write_json_string(&mut body, &wire),
            }
            body.push_str("}]");
            if matches!(value.v, V::Record(_) | V::Data(_)) && !value.private {
                body.push_str(r#","structuredContent":"#);
                body.push_str(&wire);
            }
            body.push('}');
            ok(result(id, &body))
        }
        Err(c) => match *c {
            Control::Throw(payload) => {
                let text = to_wire(&payload, Privacy::Redact)
                    .unwrap_or_else(|_| r#"{"$redacted":true}"#.to_string());
                let mut body = String::with_capacity(text.len() + 64);
                body.push_str(r#"{"content":[{"type":"text","text":"#);
                write_json_string(&mut body, &text);
                body.push_str(r#"}],"isError":true}"#);
                ok(result(id, &body))
            }
            Control::Interrupted => gone(id),
            Control::Panic(msg) | Control::Failed(msg) => failed(&format!("panic: {msg}")),
            Control::Unhandled { request, .. } => failed(&format!("unhandled request {request}")),
            Control::BadAnswer { request, failures } => {
                failed(&format!("invalid answer for {request}: {failures}"))
            }
            jump @ (Control::Return { .. } | Control::Next { .. } | Control::Break { .. }) => {
                abandon.record(Box::new(jump));
                gone(id)
            }
        },
    }
}
