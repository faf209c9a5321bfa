//! The MCP client of `prelude.md` §14.2–14.5 end to end: `katari run` scripts that list and call
//! the tools of real servers (server-everything over Streamable HTTP, legacy HTTP+SSE and stdio;
//! a server written with the Python SDK), and check what the script prints.
//!
//! Every script runs in a fresh folder with its own `KATARI_HOME`. The fault-injection servers
//! at the end are fakes written here on purpose; everything else is a real peer.

use std::path::Path;
use std::process::Command;

use katari_tests::e2e::Outcome;
use katari_tests::peers::{Peer, everything_entry, free_port, python_mcp, start_everything};

/// A fresh folder holding `files`, with an empty `home/` for `KATARI_HOME`.
fn scratch(files: &[(&str, &str)]) -> katari_tests::e2e::Scratch {
    katari_tests::e2e::scratch("mcp-client", files)
}

fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    katari_tests::e2e::run(env!("CARGO_BIN_EXE_katari"), dir, args, env)
}

/// Runs `source` (with `URL` replaced by `url`) as `main.kt`; expects success and returns stdout.
fn run_ok(url: &str, source: &str) -> String {
    let dir = scratch(&[("main.kt", &source.replace("URL", url))]);
    let out = run_in(
        &dir,
        &["main.kt"],
        &[("KATARI_TEST_API_KEY", "s3cret-value")],
    );
    assert_eq!(
        out.code, 0,
        "the run failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
    out.stdout
}

/// The agents every script below uses: call a listed tool by name, and catch the MCP errors.
const LIB: &str = r#"
agent call(tools: mcp.toolbox, name: string, args: unknown) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error | reflection.call_error) -> never {
      break match (error) {
        case mcp.server_error(message => m) -> f"server_error: ${m}"
        case mcp.auth_error(message => m) -> f"auth_error: ${m}"
        case reflection.call_error(message => m) -> f"call_error: ${m}"
      }
    }
  }
  match (record.get(target = tools, key = name)) {
    case null -> f"no tool ${name}"
    case tool -> json.to_text(value = reflection.call_agent(target = tool, args = args))
  }
}
"#;

fn script(body: &str) -> String {
    format!("{LIB}\n{body}")
}

// -------------------------------------------------------------------------------------------
// server-everything
// -------------------------------------------------------------------------------------------

const EVERYTHING: &str = r#"
agent main() -> string {
  let tools = mcp.tools(url = "URL", auth = mcp.headers(values = record.empty()))
  let keys = record.keys(target = tools)
  let listed = string.join(parts = array.filter(target = keys, keep = agent (value: string) -> boolean { value == "echo" || value == "get-sum" || value == "get-tiny-image" }), separator = ",")
  let image = match (record.get(target = tools, key = "get-tiny-image")) {
    case null -> "no image tool"
    case tool -> match (reflection.call_agent(target = tool, args = {})) {
      case { text => string(_), files => array(files) } -> match (array.get(target = files, index = 0)) {
        case file(f) -> f"${file.content_type(value = f)} ${string.slice(value = file.read_base64(value = f), start = 0, end = 11)} ${json.to_text(value = array.length(target = files))}"
        case _ -> "no file"
      }
      case _ -> "not a {text, files} record"
    }
  }
  string.join(parts = [
    listed,
    call(tools = tools, name = "echo", args = { message = "hi there" }),
    call(tools = tools, name = "get-sum", args = { a = 2, b = 40 }),
    call(tools = tools, name = "get-structured-content", args = { location = "New York" }),
    image,
  ], separator = "\n")
}
"#;

/// The lines a user sees from [`EVERYTHING`], whatever the transport.
fn check_everything(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert_eq!(lines[0], "echo,get-sum,get-tiny-image");
    assert_eq!(lines[1], r#""Echo: hi there""#);
    assert_eq!(lines[2], r#""The sum of 2 and 40 is 42.""#);
    // Structured content comes back as a record (wire-decoded), in the server's key order.
    assert!(
        lines[3].starts_with(r#"{"temperature":"#) && lines[3].contains(r#""conditions":"#),
        "{}",
        lines[3]
    );
    // The image is a file in the blob store whose bytes are a PNG (base64 of the PNG magic).
    assert_eq!(lines[4], "image/png iVBORw0KGgo 1");
}

#[test]
fn streamable_http_lists_and_calls_server_everything() {
    let server = start_everything("streamableHttp", false);
    let out = run_ok(&format!("{}/mcp", server.base()), &script(EVERYTHING));
    check_everything(&out);
}

#[test]
fn legacy_sse_is_the_fallback_when_streamable_http_fails() {
    let server = start_everything("sse", false);
    let out = run_ok(&format!("{}/sse", server.base()), &script(EVERYTHING));
    check_everything(&out);
}

#[test]
fn mcp_call_returns_literal_json_trees() {
    let server = start_everything("streamableHttp", false);
    let out = run_ok(
        &format!("{}/mcp", server.base()),
        r#"
agent main() -> string {
  let auth = mcp.headers(values = record.empty())
  let sum = mcp.call(url = "URL", auth = auth, tool = "get-sum", arguments = json.parse(text = "{\"a\": 1, \"b\": 2}"))
  let structured = mcp.call(url = "URL", auth = auth, tool = "get-structured-content", arguments = json.parse(text = "{\"location\": \"Chicago\"}"))
  let image = mcp.call(url = "URL", auth = auth, tool = "get-tiny-image", arguments = json.json_object(entries = record.empty()))
  let refused = {
    use handler { request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never { break "refused" } }
    json.stringify(value = mcp.call(url = "URL", auth = auth, tool = "no-such-tool", arguments = json.json_null()))
  }
  string.join(parts = [
    json.stringify(value = sum),
    match (json.field(target = structured, key = "temperature")) { case json.json_integer(value => t) -> "integer temperature" case _ -> json.stringify(value = structured) },
    match (json.field(target = image, key = "files")) { case null -> "no files" case files -> json.stringify(value = files) },
    refused,
  ], separator = "\n")
}
"#,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], r#""The sum of 1 and 2 is 3.""#);
    assert_eq!(lines[1], "integer temperature");
    assert!(
        lines[2].starts_with(r#"[{"$ref":"sha256-"#)
            && lines[2].ends_with(r#"","semanticKind":"file"}]"#),
        "{}",
        lines[2]
    );
    assert_eq!(lines[3], "refused");
}

// -------------------------------------------------------------------------------------------
// A server written with the Python SDK
// -------------------------------------------------------------------------------------------

const PY_SERVER: &str = r#"
import sys
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("katari-test")
calls = {"add": 0}

@server.tool(structured_output=False)
def answer() -> str:
    """Returns the answer."""
    return "42"

@server.tool(structured_output=False)
def explode(reason: str = "boom") -> str:
    """Always fails."""
    raise ToolError(f"exploded: {reason}")

@server.tool(structured_output=False)
def add(a: int, b: int) -> str:
    """Adds two integers."""
    calls["add"] += 1
    return str(a + b)

@server.tool(structured_output=False)
def check_key(ctx: Context) -> str:
    """Says whether the request carried the expected API key (without echoing it)."""
    headers = ctx.headers or {}
    return "key ok" if headers.get("x-api-key") == "s3cret-value" else "key missing"

@server.tool(structured_output=False)
async def chatty(ctx: Context) -> str:
    """Sends unsolicited notifications (logging, progress, list changes) before answering."""
    await ctx.info("working on it")
    await ctx.report_progress(1, 2)
    await ctx.session.send_resource_list_changed()
    await ctx.session.send_tool_list_changed()
    return "done"

@server.tool(structured_output=False)
def count() -> str:
    """How many times add ran."""
    return str(calls["add"])

server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
"#;

/// The Python SDK server above, on a free port.
fn start_python() -> (Peer, katari_tests::e2e::Scratch) {
    let dir = scratch(&[("server.py", PY_SERVER)]);
    let port = free_port();
    let mut command = Command::new(python_mcp());
    command.arg(dir.join("server.py")).arg(port.to_string());
    (Peer::start(command, port), dir)
}

#[test]
fn python_sdk_text_errors_and_client_side_validation() {
    let (server, dir) = start_python();
    let out = run_ok(
        &format!("{}/mcp", server.base()),
        &script(
            r#"
agent main() -> string {
  let tools = mcp.tools(url = "URL", auth = mcp.headers(values = record.empty()))
  string.join(parts = [
    json.to_text(value = tools),
    call(tools = tools, name = "answer", args = {}),
    call(tools = tools, name = "explode", args = { reason = "on purpose" }),
    call(tools = tools, name = "add", args = { a = 1, b = "two" }),
    call(tools = tools, name = "count", args = {}),
    call(tools = tools, name = "add", args = { a = 1, b = 2 }),
    call(tools = tools, name = "count", args = {}),
    call(tools = tools, name = "chatty", args = {}),
    call(tools = tools, name = "answer", args = {}),
  ], separator = "\n")
}
"#,
        ),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 9, "{out}");
    // The toolbox keeps the server's listing order (its wire form shows it).
    let order: Vec<usize> = ["answer", "explode", "add", "check_key", "chatty", "count"]
        .iter()
        .map(|name| {
            lines[0]
                .find(&format!(r#""{name}":{{"$tool":"{name}""#))
                .unwrap_or_else(|| panic!("{name} is not in {}", lines[0]))
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", lines[0]);
    // A text reply is a string, even when it looks like a number.
    assert_eq!(lines[1], r#""42""#);
    assert!(
        lines[2].starts_with("server_error: ") && lines[2].contains("exploded: on purpose"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        r#"call_error: tool "add": the argument does not conform to the tool's input schema — $.b: expected a value of type integer, got a value of type string"#
    );
    // The refused call never reached the server.
    assert_eq!(lines[4], r#""0""#);
    assert_eq!(lines[5], r#""3""#);
    assert_eq!(lines[6], r#""1""#);
    // Unsolicited notifications before a reply are tolerated, and the session stays usable.
    assert_eq!(lines[7], r#""done""#);
    assert_eq!(lines[8], r#""42""#);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn minted_tools_have_metadata_and_survive_the_wire() {
    let (server, dir) = start_python();
    let out = run_ok(
        &format!("{}/mcp", server.base()),
        &script(
            r#"
agent main() -> string {
  let auth = mcp.headers(values = { "X-Api-Key" = env.get_secret(key = "KATARI_TEST_API_KEY") })
  let tools = mcp.tools(url = "URL", auth = auth)
  match (record.get(target = tools, key = "add")) {
    case null -> "no add"
    case tool -> {
      let checked = call(tools = tools, name = "check_key", args = {})
      let anonymous = call(tools = mcp.tools(url = "URL", auth = mcp.headers(values = record.empty())), name = "check_key", args = {})
      let m = reflection.get_metadata(value = tool)
      let text = json.to_text(value = tool)
      let back = json.parse_as[mcp.tool](text = text)
      let again = json.decode[mcp.tool](value = json.encode(value = tool))
      string.join(parts = [
        m.name,
        m.description,
        json.stringify(value = m.input),
        text,
        json.to_text(value = reflection.call_agent(target = back, args = { a = 20, b = 22 })),
        json.to_text(value = reflection.call_agent(target = again, args = { a = 1, b = 1 })),
        checked,
        anonymous,
      ], separator = "\n")
    }
  }
}
"#,
        ),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "{out}");
    assert_eq!(lines[0], "add");
    assert_eq!(lines[1], "Adds two integers.");
    assert!(
        lines[2].contains(r#""a":{"#) && lines[2].contains(r#""required":["a","b"]"#),
        "{}",
        lines[2]
    );
    // The wire form names the header but never holds its value.
    assert!(
        lines[3].starts_with(r#"{"$tool":"add","reactor":"mcp","context":{"url":"#)
            && lines[3].contains(r#""headers":{"X-Api-Key":{"$redacted":true}}"#)
            && !lines[3].contains("s3cret"),
        "{}",
        lines[3]
    );
    assert_eq!(lines[4], r#""42""#);
    assert_eq!(lines[5], r#""2""#);
    // The private header value reached that server (and only through the header); a descriptor
    // without headers is a different connection.
    assert_eq!(lines[6], r#""key ok""#);
    assert_eq!(lines[7], r#""key missing""#);
    assert!(!out.contains("s3cret"));
    let _ = std::fs::remove_dir_all(dir);
}

// -------------------------------------------------------------------------------------------
// Failures every script can meet
// -------------------------------------------------------------------------------------------

#[test]
fn unknown_servers_and_refused_connections_are_server_errors() {
    let port = free_port();
    let out = run_ok(
        &format!("http://127.0.0.1:{port}/mcp"),
        r#"
agent try(url: string) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) { case mcp.server_error(message => m) -> f"server_error: ${m}" case mcp.auth_error(message => m) -> f"auth_error: ${m}" }
    }
  }
  json.to_text(value = record.keys(target = mcp.tools(url = url, auth = mcp.headers(values = record.empty()))))
}
agent main() -> string {
  let oauth = {
    use handler {
      request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
        break match (error) { case mcp.server_error(message => m) -> f"server_error: ${m}" case mcp.auth_error(message => m) -> f"auth_error: ${m}" }
      }
    }
    json.to_text(value = record.keys(target = mcp.tools(url = "URL", auth = mcp.oauth(name = "gh"))))
  }
  string.join(parts = [try(url = "mcp:nowhere"), try(url = "URL"), try(url = "ftp://example.org/"), oauth], separator = "\n")
}
"#,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(
        lines[0],
        r#"server_error: no MCP server named "nowhere" is configured"#
    );
    assert!(
        lines[1].starts_with(&format!(
            "server_error: cannot connect to MCP server 'http://127.0.0.1:{port}/mcp': "
        )) && lines[1].contains("Connection refused"),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        r#"server_error: unsupported MCP server URL "ftp://example.org/": use http://, https:// or mcp:NAME"#
    );
    // A missing OAuth credential is an auth_error naming the login command; nothing is sent.
    assert_eq!(
        lines[3],
        format!(
            "auth_error: MCP server 'http://127.0.0.1:{port}/mcp' needs you to log in: there is no credential named 'gh'."
        )
    );
    assert_eq!(
        lines[4],
        format!("Run: katari mcp login --url http://127.0.0.1:{port}/mcp --name gh")
    );
}

#[test]
fn a_private_argument_is_never_sent() {
    let server = start_everything("streamableHttp", false);
    let dir = scratch(&[(
        "main.kt",
        &script(
            r#"
agent main(token: string of private) -> string {
  let tools = mcp.tools(url = "URL", auth = mcp.headers(values = record.empty()))
  call(tools = tools, name = "echo", args = { message = token })
}
"#,
        )
        .replace("URL", &format!("{}/mcp", server.base())),
    )]);
    let out = run_in(&dir, &["main.kt", "--arg", r#"{"token": "s3cret"}"#], &[]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains(r#"a private value cannot be sent to tool "echo" (message)"#),
        "{out:?}"
    );
    assert!(!out.stdout.contains("s3cret") && !out.stderr.contains("s3cret"));
    let _ = std::fs::remove_dir_all(dir);
}

// -------------------------------------------------------------------------------------------
// stdio servers configured for the host
// -------------------------------------------------------------------------------------------

#[test]
fn a_configured_stdio_server_is_reached_as_mcp_name() {
    let entry = everything_entry(false);
    let config = format!(
        "[mcp.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        entry.display().to_string()
    );
    let dir = scratch(&[(
        "main.kt",
        &script(EVERYTHING).replace("URL", "mcp:everything"),
    )]);
    std::fs::write(dir.join("home").join("config.toml"), config).expect("write config.toml");
    let out = run_in(&dir, &["main.kt"], &[]);
    assert_eq!(
        out.code, 0,
        "the run failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    check_everything(&out.stdout);
    // The server's stderr went to its log, not to ours.
    assert!(!out.stderr.contains("Starting"), "{}", out.stderr);
    let log = dir.join("home/cache/logs/mcp-everything.log");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("Starting"), "{}: {logged:?}", log.display());
    let _ = std::fs::remove_dir_all(dir);
}

// -------------------------------------------------------------------------------------------
// Faults: a fake server written here on purpose, because no real server misbehaves on demand
// -------------------------------------------------------------------------------------------

mod fake {
    //! A fault-injecting fake MCP server (Streamable HTTP with plain JSON replies, no sessions):
    //! each tool misbehaves in its own way. It is a fake by design; the happy paths above use
    //! real servers.

    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use serde_json::{Value, json};

    pub struct Fake {
        pub url: String,
        /// How many `initialize` requests arrived (one per connection the client opened).
        pub initializations: Arc<AtomicUsize>,
    }

    pub fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake server");
        let port = listener.local_addr().expect("its address").port();
        let initializations = Arc::new(AtomicUsize::new(0));
        let counter = initializations.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let counter = counter.clone();
                std::thread::spawn(move || serve(stream, &counter));
            }
        });
        Fake {
            url: format!("http://127.0.0.1:{port}/mcp"),
            initializations,
        }
    }

    fn respond(stream: &mut TcpStream, status: &str, body: &[u8]) -> std::io::Result<()> {
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        stream.flush()
    }

    fn result(id: &Value, result: Value) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": id, "result": result})
            .to_string()
            .into_bytes()
    }

    fn text(id: &Value, text: &str, error: bool) -> Vec<u8> {
        result(
            id,
            json!({"content": [{"type": "text", "text": text}], "isError": error}),
        )
    }

    fn serve(stream: TcpStream, initializations: &AtomicUsize) {
        let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
        let mut stream = stream;
        loop {
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                return;
            }
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            if !request_line.starts_with("POST") {
                let _ = respond(&mut stream, "405 Method Not Allowed", b"");
                continue;
            }
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let id = message["id"].clone();
            let reply = match message["method"].as_str().unwrap_or("") {
                "initialize" => {
                    initializations.fetch_add(1, Ordering::SeqCst);
                    result(
                        &id,
                        json!({
                            "protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "fault-injector", "version": "0"}
                        }),
                    )
                }
                "tools/call" => match message["params"]["name"].as_str().unwrap_or("") {
                    "ok" => text(&id, "fine", false),
                    // Killed mid-call: the connection drops without a reply.
                    "die" => return,
                    "hang" => {
                        std::thread::sleep(Duration::from_secs(30));
                        return;
                    }
                    "malformed" => b"{\"jsonrpc\": \"2.0\", \"id\": ".to_vec(),
                    "huge" => text(&id, &"x".repeat(10 * 1024 * 1024), false),
                    "invalid_utf8" => {
                        let mut bytes = text(&id, "@@", false);
                        let at = bytes.windows(2).position(|w| w == b"@@").unwrap_or(0);
                        bytes.splice(at..at + 2, [0xff, 0xfe]);
                        bytes
                    }
                    "escapes" => text(&id, "\u{1b}[31mred alert\u{1b}[0m\u{7}\r done", true),
                    _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "unknown tool"}})
                        .to_string()
                        .into_bytes(),
                },
                "tools/list" => result(&id, json!({"tools": []})),
                _ if id.is_null() => {
                    let _ = stream.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
                    continue;
                }
                _ => result(&id, json!({})),
            };
            if respond(&mut stream, "200 OK", &reply).is_err() {
                return;
            }
        }
    }
}

#[test]
fn faults_are_server_errors_and_the_next_call_reconnects() {
    let server = fake::start();
    let dir = scratch(&[(
        "main.kt",
        &r#"
agent try(tool: string) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) { case mcp.server_error(message => m) -> f"${tool}: server_error: ${m}" case mcp.auth_error(message => m) -> f"${tool}: auth_error: ${m}" }
    }
  }
  let reply = mcp.call(url = "URL", auth = mcp.headers(values = record.empty()), tool = tool, arguments = json.json_null())
  f"${tool}: ${json.stringify(value = reply)}"
}
agent main() -> string {
  string.join(parts = [
    try(tool = "ok"), try(tool = "die"), try(tool = "ok"), try(tool = "hang"), try(tool = "malformed"),
    try(tool = "huge"), try(tool = "invalid_utf8"), try(tool = "escapes"), try(tool = "ok"),
  ], separator = "\n")
}
"#
        .replace("URL", &server.url),
    )]);
    let out = run_in(&dir, &["main.kt"], &[("KATARI_MCP_TIMEOUT", "1")]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 9, "{}", out.stdout);
    let url = &server.url;
    assert_eq!(lines[0], r#"ok: "fine""#);
    assert!(
        lines[1].starts_with(&format!("die: server_error: MCP server '{url}' ")),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], r#"ok: "fine""#);
    assert_eq!(
        lines[3],
        format!(
            "hang: server_error: MCP server '{url}' did not answer tools/call \"hang\" within 1 s"
        )
    );
    for (line, tool) in lines[4..7]
        .iter()
        .zip(["malformed", "huge", "invalid_utf8"])
    {
        assert!(
            line.starts_with(&format!("{tool}: server_error: MCP server '{url}' ")),
            "{line}"
        );
    }
    // A tool error's text is the message, with escape sequences and controls removed.
    assert_eq!(lines[7], "escapes: server_error: red alert done");
    assert!(!out.stdout.contains('\u{1b}') && !out.stdout.contains('\r'));
    assert_eq!(lines[8], r#"ok: "fine""#);
    // Every failed call dropped its connection, so the next call opened a new one.
    let opened = server
        .initializations
        .load(std::sync::atomic::Ordering::SeqCst);
    assert!(opened >= 5, "{opened} initialisations");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn configured_servers_that_fail_to_start_are_server_errors() {
    let config = "[mcp.missing]\ncommand = \"katari-no-such-command\"\n\n\
                  [mcp.broken]\ncommand = \"node\"\nargs = [\"-e\", \"console.error('bad start'); process.exit(3)\"]\n";
    let dir = scratch(&[(
        "main.kt",
        r#"
agent try(url: string) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) { case mcp.server_error(message => m) -> f"server_error: ${m}" case mcp.auth_error(message => m) -> f"auth_error: ${m}" }
    }
  }
  json.to_text(value = record.keys(target = mcp.tools(url = url, auth = mcp.headers(values = record.empty()))))
}
agent main() -> string { string.join(parts = [try(url = "mcp:missing"), try(url = "mcp:broken")], separator = "\n") }
"#,
    )]);
    std::fs::write(dir.join("home").join("config.toml"), config).expect("write config.toml");
    let out = run_in(&dir, &["main.kt"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(
        lines[0].starts_with(
            "server_error: cannot start MCP server 'missing' (katari-no-such-command): "
        ),
        "{}",
        lines[0]
    );
    let log = dir.join("home/cache/logs/mcp-broken.log");
    assert!(
        lines[1].starts_with("server_error: cannot connect to MCP server 'broken': ")
            && lines[1].ends_with(&format!("(its stderr is in {})", log.display())),
        "{}",
        lines[1]
    );
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("bad start"), "{logged:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_tool_reference_from_outside_decodes_to_a_working_tool() {
    let server = start_everything("streamableHttp", false);
    let url = format!("{}/mcp", server.base());
    let dir = scratch(&[(
        "main.kt",
        r#"
agent main(tool: mcp.tool) -> string {
  let m = reflection.get_metadata(value = tool)
  f"${m.name}: ${json.to_text(value = reflection.call_agent(target = tool, args = { message = "from outside" }))}"
}
"#,
    )]);
    let reference = serde_json::json!({
        "tool": {"$tool": "echo", "reactor": "mcp", "context": {"url": url}, "inputSchema": {"type": "object"}}
    });
    let forged = serde_json::json!({
        "tool": {"$tool": "echo", "reactor": "mcp", "context": {"url": url, "headers": {"X-Key": {"$redacted": true}}, "handle": 1}, "inputSchema": {}}
    });
    let out = run_in(&dir, &["main.kt", "--arg", &reference.to_string()], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim_end(), r#"echo: "Echo: from outside""#);
    // Headers held by another process cannot be conjured up from a reference.
    let out = run_in(&dir, &["main.kt", "--arg", &forged.to_string()], &[]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("malformed tool reference"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_server_killed_mid_call_is_a_server_error_and_the_next_call_reconnects() {
    let server = start_everything("streamableHttp", false);
    let port = server.port;
    let url = format!("{}/mcp", server.base());
    let dir = scratch(&[(
        "main.kt",
        &r#"
agent try(tool: string, arguments: json.json) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) { case mcp.server_error(message => m) -> f"server_error: ${m}" case mcp.auth_error(message => m) -> f"auth_error: ${m}" }
    }
  }
  json.stringify(value = mcp.call(url = "URL", auth = mcp.headers(values = record.empty()), tool = tool, arguments = arguments))
}
agent main() -> string {
  let before = try(tool = "echo", arguments = json.parse(text = "{\"message\": \"before\"}"))
  let killed = try(tool = "trigger-long-running-operation", arguments = json.parse(text = "{\"duration\": 30, \"steps\": 30}"))
  time.sleep(milliseconds = 6000)
  let after = try(tool = "echo", arguments = json.parse(text = "{\"message\": \"after\"}"))
  string.join(parts = [before, killed, after], separator = "\n")
}
"#
        .replace("URL", &url),
    )]);
    let child = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["run", "main.kt"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("katari starts");
    // Kill the server while the long call runs, then start a fresh one on the same port.
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(server);
    let mut command = Command::new(katari_tests::peers::node());
    command
        .arg(everything_entry(false))
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let _restarted = Peer::start(command, port);
    let out = child.wait_with_output().expect("katari finishes");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], r#""Echo: before""#);
    assert!(
        lines[1].starts_with(&format!("server_error: MCP server '{url}' ")),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], r#""Echo: after""#);
    let _ = std::fs::remove_dir_all(dir);
}
