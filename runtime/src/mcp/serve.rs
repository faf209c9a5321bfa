//! `mcp.serve` (`prelude.md` §14.6): a record of agents published as a stateless MCP server
//! (JSON-RPC 2.0 over `POST /mcp/<token>`, no sessions, no server-sent events) for the extent of
//! a subscriber. Replies are written directly as JSON text.
//!
//! The same JSON-RPC core also serves the host's `katari mcp serve` ([`Server`], `host.md` §14):
//! over stdio (one message per line) and over a listener of its own at `/mcp` with a bearer
//! token. There each call runs in a fresh interpreter run instead of at a call site.

use std::io::{BufRead, Write};
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

/// The published tools and their `tools/list` result.
struct Toolset {
    /// Sorted by name.
    tools: Vec<Tool>,
    /// The `tools/list` result, written once.
    listing: String,
}

struct Endpoint {
    toolset: Toolset,
    pool: Pool,
    /// Turns `true` when the subscriber has finished.
    released: watch::Receiver<bool>,
    /// The program, for decoding arguments.
    machine: Arc<crate::machine::Machine>,
    in_flight: listener::InFlight,
    abandon: Arc<listener::Abandon>,
    /// Reports served-side failures (panics) on the host's stderr.
    host: Arc<dyn crate::machine::Host>,
    /// How server-side reports name the endpoint: `mcp.serve`, or the host command's name.
    label: &'static str,
    /// Each call runs in a fresh interpreter run (the host's `katari mcp serve`) instead of as
    /// if at a `serve` call site.
    fresh: bool,
}

impl Toolset {
    /// The tools with their metadata; `Err` names a tool whose metadata is unknown.
    fn new(ctx: &Ctx, tools: Vec<(Arc<str>, Value)>) -> Result<Toolset, String> {
        let mut published = Vec::with_capacity(tools.len());
        let mut entries = Vec::with_capacity(tools.len());
        for (name, callee) in tools {
            let Some(md) = crate::reflect::metadata(ctx, &callee) else {
                return Err(format!("no metadata is known for the tool \"{name}\""));
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
            // A result whose type has private parts is sent redacted, which the schema (types
            // with attributes erased) does not describe: a client that validates structured
            // content against it would reject the reply. Such tools advertise no output schema
            // (their structured content is still sent).
            if md.output.get("type").and_then(Json::as_str) == Some("object")
                && !md.output_redactable
            {
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
        let listing = serde_json::json!({
            "tools": entries.into_iter().map(|(_, e)| e).collect::<Vec<_>>()
        })
        .to_string();
        Ok(Toolset {
            tools: published,
            listing,
        })
    }
}

/// Runs `subscriber(url = …)` while `tools` are served; its outcome is the result.
pub fn serve(
    ctx: &mut Ctx,
    tools: Vec<(Arc<str>, Value)>,
    subscriber: &Value,
) -> Result<Value, Ctl> {
    let toolset = Toolset::new(ctx, tools).map_err(|e| panic(format!("mcp.serve: {e}")))?;
    let (release, released) = watch::channel(false);
    let endpoint = Arc::new(Endpoint {
        toolset,
        // Served calls run behind a fence: their throws and panics are their replies.
        pool: Pool::new(&ctx.fenced()),
        released,
        machine: ctx.m.clone(),
        host: ctx.m.host.clone(),
        in_flight: listener::InFlight::default(),
        abandon: Arc::new(listener::Abandon::default()),
        label: "mcp.serve",
        fresh: false,
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

/// Agents published by the host's `katari mcp serve` (`host.md` §14): the endpoint of
/// `mcp.serve` without a subscriber, whose calls each run in a fresh interpreter run (a new
/// context with no handlers, on one of the endpoint's big-stack evaluator threads), reached over
/// stdio ([`Server::serve_stdio`]) or a listener of its own ([`Server::listen`]).
pub struct Server {
    endpoint: Arc<Endpoint>,
    /// Kept so that calls are never answered "released" while the server runs.
    _release: watch::Sender<bool>,
}

impl Server {
    /// Publishes `tools` (name and top-level agent) of `machine`'s program. `label` prefixes the
    /// server-side reports of failed calls on the host's stderr.
    pub fn new(
        machine: Arc<crate::machine::Machine>,
        tools: Vec<(Arc<str>, Value)>,
        label: &'static str,
    ) -> Result<Server, String> {
        let proto = Ctx::new(machine.clone());
        let toolset = Toolset::new(&proto, tools)?;
        let (release, released) = watch::channel(false);
        let endpoint = Arc::new(Endpoint {
            toolset,
            pool: Pool::new(&proto),
            released,
            host: machine.host.clone(),
            machine,
            in_flight: listener::InFlight::default(),
            abandon: Arc::new(listener::Abandon::default()),
            label,
            fresh: true,
        });
        Ok(Server {
            endpoint,
            _release: release,
        })
    }

    /// How many tools are published.
    pub fn tool_count(&self) -> usize {
        self.endpoint.toolset.tools.len()
    }

    /// Answers one JSON-RPC message: the JSON-RPC reply, or `None` for a notification or a
    /// client's response (nothing to send back).
    pub async fn answer(&self, message: &[u8]) -> Option<String> {
        let reply = self.endpoint.answer(message).await;
        (!reply.body.is_empty()).then_some(reply.body)
    }

    /// Serves newline-delimited JSON-RPC from `input` until it ends, writing one reply per
    /// line to `output` (nothing else). Messages are answered concurrently, each reply written
    /// whole as soon as it is ready; at the end of the input the answers still being worked out
    /// are waited for and written before this returns.
    pub fn serve_stdio<R: BufRead, W: Write + Send + 'static>(
        &self,
        input: R,
        output: W,
    ) -> std::io::Result<()> {
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        // One writer, so replies never interleave and a client slow to read stalls only it.
        let writer = std::thread::Builder::new()
            .name("katari-stdio-out".into())
            .spawn(move || {
                let mut output = output;
                for reply in rx {
                    let ok = output
                        .write_all(reply.as_bytes())
                        .and_then(|()| output.write_all(b"\n"))
                        .and_then(|()| output.flush());
                    // The client closed its end: nobody reads the rest.
                    if ok.is_err() {
                        return;
                    }
                }
            })?;
        let rt = crate::reactor::runtime();
        let mut pending = Vec::new();
        let mut outcome = Ok(());
        let mut input = input;
        loop {
            let line = match read_line(&mut input, listener::BODY_LIMIT) {
                Ok(Line::End) => break,
                Ok(Line::Text(line)) => line,
                Ok(Line::TooLong) => {
                    // The message cannot be read, so neither can its id: the error goes to
                    // `null`, as JSON-RPC says for a request whose id cannot be determined.
                    let _ = tx.send(error(
                        "null",
                        -32600,
                        &format!(
                            "Invalid Request: the message is larger than {} bytes",
                            listener::BODY_LIMIT
                        ),
                    ));
                    continue;
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let endpoint = self.endpoint.clone();
            let tx = tx.clone();
            pending.push(rt.spawn(async move {
                let _answering = endpoint.in_flight.enter();
                let reply = endpoint.answer(&line).await;
                if !reply.body.is_empty() {
                    let _ = tx.send(reply.body);
                }
            }));
            pending.retain(|task| !task.is_finished());
        }
        rt.block_on(async {
            for task in pending {
                let _ = task.await;
            }
        });
        drop(tx);
        let _ = writer.join();
        outcome
    }

    /// Serves `POST /mcp` on the bound `listener` from now on (`host.md` §14.4–6).
    pub fn listen(
        &self,
        socket: std::net::TcpListener,
        guard: listener::Guard,
    ) -> Result<(), String> {
        listener::serve_standalone(socket, self.endpoint.clone(), guard)
    }

    /// Stops the calls still running (they end at their next call or loop iteration).
    pub fn close(&self) {
        self.endpoint.pool.close();
    }
}

/// One line of stdio input.
enum Line {
    /// A whole line, without its newline.
    Text(Vec<u8>),
    /// A line longer than the limit, read to its end and dropped.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads one line of at most `limit` bytes. A longer line is read to its end without being
/// kept, so a client cannot make the server hold more than `limit` bytes of one message (the
/// same bound the HTTP listener sets on a body).
fn read_line(input: &mut impl BufRead, limit: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (read_any, too_long) {
                (false, _) => Line::End,
                (true, true) => Line::TooLong,
                (true, false) => Line::Text(line),
            });
        }
        read_any = true;
        let (chunk, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], true),
            None => (available, false),
        };
        if !too_long {
            if line.len() + chunk.len() > limit {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(ended);
        input.consume(used);
        if ended {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
    }
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
            "tools/list" => ok(result(&id, &self.toolset.listing)),
            "tools/call" => self.call(&id, params).await,
            _ => ok(error(&id, -32601, &format!("Method not found: {method}"))),
        }
    }

    async fn call(&self, id: &str, params: Option<&Json>) -> Reply {
        let name = params.and_then(|p| p.get("name")).and_then(Json::as_str);
        let Some(name) = name else {
            return ok(error(id, -32602, "tools/call needs a tool name"));
        };
        let tools = &self.toolset.tools;
        let Ok(i) = tools.binary_search_by(|t| (*t.name).cmp(name)) else {
            return ok(error(id, -32602, &format!("unknown tool \"{name}\"")));
        };
        let tool = &tools[i];
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
        // A fresh run has no call site to jump back to.
        let abandon = (!self.fresh).then(|| self.abandon.clone());
        let (label, fresh) = (self.label, self.fresh);
        let reply_id = id.to_string();
        let job = Box::new(move |ctx: &mut Ctx| {
            let outcome = if fresh {
                // The thread's context was forked from a context with no handlers; a fork of it
                // is a fresh run (no handlers, no state) sized for this thread's stack.
                let mut run = ctx.fork_with(ctx.cancel_flag());
                run.call(&callee, args)
            } else {
                ctx.call(&callee, args)
            };
            let failure = Failure {
                id: &reply_id,
                tool: &tool_name,
                label,
                host: &*host,
            };
            let _ = tx.send(reply(&failure, outcome, abandon.as_deref()));
        });
        if let Err(e) = self.pool.submit(job) {
            self.host
                .eprint(&format!("{}: tool \"{name}\": {e}", self.label));
            return ok(error(id, -32603, "the tool call failed"));
        }
        let mut released = self.released.clone();
        tokio::select! {
            reply = rx => reply.unwrap_or_else(|_| gone(id)),
            _ = released.wait_for(|r| *r) => gone(id),
        }
    }
}

/// Which call a reply answers, and where its server-side failures are reported.
struct Failure<'a> {
    id: &'a str,
    tool: &'a str,
    label: &'static str,
    host: &'a dyn crate::machine::Host,
}

/// The reply to a finished call (`prelude.md` §14.6, both tables). `abandon` is where a jump
/// out of the call goes (`None` in a fresh run, where one is an internal failure).
fn reply(
    call: &Failure<'_>,
    outcome: Result<Value, Ctl>,
    abandon: Option<&listener::Abandon>,
) -> Reply {
    let id = call.id;
    let failed = |detail: &str| {
        call.host.eprint(&format!(
            "{}: tool \"{}\" failed: {detail}",
            call.label, call.tool
        ));
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
                V::Str(s) if !value.private() => write_json_string(&mut body, s),
                _ => write_json_string(&mut body, &wire),
            }
            body.push_str("}]");
            if matches!(value.v, V::Record(_) | V::Data(_)) && !value.private() {
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
                match abandon {
                    Some(abandon) => {
                        abandon.record(Box::new(jump));
                        gone(id)
                    }
                    None => failed("panic: internal: a jump escaped its target"),
                }
            }
        },
    }
}
