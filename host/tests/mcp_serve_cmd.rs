//! `katari mcp serve` (`host.md` §14) driven from outside: the Python SDK client (`mcp==2.3.0`)
//! spawning it over stdio and connecting over HTTP with the bearer token, raw JSON-RPC lines on
//! stdin, raw HTTP requests for every status row (401, 403, 404, 405, 400 with -32700 and -32600,
//! 202), the startup error messages and exit statuses, and Ctrl-C.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::{Duration, Instant};

use katari_tests::peers;
use serde_json::{Value, json};

/// Documented agents of every kind the command distinguishes: typed parameters, a record
/// result, a typed throw, a panic, an agent handling its own request and one that does not
/// (`lookup_remote`, so serving every documented agent fails), plus an undocumented one.
const FIXTURE: &str = r#"// Fixture of host/tests/mcp_serve_cmd.rs: agents published by `katari mcp serve`.

data refusal(reason: string, code: integer)

request lookup(key: string) -> string

@"Adds two integers."
agent add(@"the first term" a: integer, b: integer) -> integer { a + b }

@"Greets someone."
agent greet(name: string, excited: boolean ?= false) -> string {
  if (excited) { f"Hello, ${name}!" } else { f"Hello, ${name}." }
}

@"Describes a name as a record."
agent describe(name: string, tags: array[string]) -> { name: string, length: integer, tags: array[string] } {
  { name = name, length = string.length(value = name), tags = tags }
}

@"Always refuses with a typed error."
agent refuse(reason: string) -> string with prelude.throw[mcp.server_error] {
  prelude.throw(error = mcp.server_error(message = reason))
}

@"Refuses with an error type of its own, which a published agent may not leave unhandled."
agent refuse_own(reason: string) -> string with prelude.throw[refusal] {
  prelude.throw(error = refusal(reason = reason, code = 7))
}

@"The remainder of a by b; zero b panics."
agent divide(a: integer, b: integer) -> integer { a % b }

@"Looks a key up with its own handler."
agent lookup_local(key: string) -> string {
  use handler { request lookup(key: string) { next f"value of ${key}" } }
  lookup(key = key)
}

@"Looks a key up, leaving the request to its caller."
agent lookup_remote(key: string) -> string { lookup(key = key) }

@"Prints a line, then answers."
agent chatty() -> string {
  console.print(text = "chatty was called")
  "ok"
}

@"Sleeps, then answers."
agent nap(milliseconds: integer) -> string {
  time.sleep(milliseconds = milliseconds)
  "rested"
}

agent helper() -> string { "not published" }
"#;

/// Every publishable agent of the fixture, deliberately not in order.
const AGENTS: &str = "nap,add,greet,describe,refuse,divide,lookup_local,chatty";

/// The published names, sorted as `tools/list` must give them.
const SORTED: [&str; 8] = [
    "add",
    "chatty",
    "describe",
    "divide",
    "greet",
    "lookup_local",
    "nap",
    "refuse",
];

/// A fresh folder holding `fixture.kt` (and `home/` for `KATARI_HOME`); the fixture's path.
fn scratch(name: &str, text: &str) -> katari_tests::e2e::ScratchFile {
    katari_tests::e2e::ScratchFile::new("serve-cmd", name, text)
}

fn fixture() -> katari_tests::e2e::ScratchFile {
    scratch("fixture.kt", FIXTURE)
}

/// `katari ARGS` with colour off and a private `KATARI_HOME` next to `script`.
fn katari(script: &Path, args: &[&str]) -> Command {
    let dir = script.parent().expect("the script has a folder");
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .env_remove("KATARI_LISTEN")
        .env_remove("KATARI_PUBLIC_URL");
    command
}

fn run_to_end(script: &Path, args: &[&str]) -> Output {
    katari(script, args)
        .stdin(Stdio::null())
        .output()
        .expect("run katari")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

// -------------------------------------------------------------------------------------------
// Startup
// -------------------------------------------------------------------------------------------

#[test]
fn startup_errors_name_the_problem_and_exit_2() {
    let script = fixture();
    let file = script.display().to_string();
    let serve = |extra: &[&str]| {
        let mut args = vec!["mcp", "serve", file.as_str()];
        args.extend_from_slice(extra);
        let out = run_to_end(&script, &args);
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };

    // Every documented agent: two of them leave a request to a caller that does not exist (a
    // throw of anything but the two MCP errors counts, as in the language's `tool` type).
    let (code, stdout, stderr) = serve(&[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: Agent 'refuse_own' performs request 'prelude.throw' without handling it; a published agent must handle its own requests.\n\
         error: Agent 'lookup_remote' performs request 'lookup' without handling it; a published agent must handle its own requests.\n"
    );

    let (code, _, stderr) = serve(&["--agents", "add,nope"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("error: No top-level agent 'nope' in {file}.\n")
    );

    let (code, _, stderr) = serve(&["--agents", "helper"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: Agent 'helper' in {file} has no doc annotation; only documented agents are published.\n"
        )
    );

    let (code, _, stderr) = serve(&["--listen", "0.0.0.0:0", "--no-auth", "--agents", "add"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: --no-auth is only allowed on a loopback address\n"
    );

    let (code, _, stderr) = serve(&["--stdio", "--listen", "0"]);
    assert_eq!(code, Some(2), "--stdio with --listen is a usage error");
    assert!(
        stderr.contains("--stdio") && stderr.contains("--listen"),
        "{stderr}"
    );

    let (code, _, stderr) = serve(&["--listen", "not-a-port"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("error: --listen expects [HOST:]PORT"),
        "{stderr}"
    );
}

#[test]
fn a_script_with_errors_gets_its_diagnostics_and_exit_2() {
    let script = scratch(
        "broken.kt",
        "@\"Broken.\"\nagent broken() -> integer { \"text\" }\n",
    );
    let out = run_to_end(&script, &["mcp", "serve", &script.display().to_string()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error[K3001]"), "{stderr}");
    assert!(!stderr.contains("Serving"), "{stderr}");
    assert_eq!(text(&out.stdout), "");
}

// -------------------------------------------------------------------------------------------
// stdio
// -------------------------------------------------------------------------------------------

/// Runs the Python SDK client `script` with `args`; its stdout parsed as JSON.
fn python(script: &str, args: &[&str]) -> Value {
    let out = Command::new(peers::python_mcp())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run the Python SDK client");
    assert!(
        out.status.success(),
        "Python client failed:\n{}",
        text(&out.stderr)
    );
    serde_json::from_str(text(&out.stdout).trim())
        .unwrap_or_else(|e| panic!("the client printed no JSON ({e}): {}", text(&out.stdout)))
}

/// The client's checks, shared by both transports: listing, every kind of result, and the
/// JSON-RPC errors raised as `MCPError`.
const PY_CHECKS: &str = r#"
import asyncio, json, sys
from mcp.client import Client
from mcp.shared.exceptions import MCPError

async def checks(c):
    tools = await c.list_tools()
    add = await c.call_tool("add", {"a": 2, "b": 3})
    greet = await c.call_tool("greet", {"name": "Ada", "excited": True})
    desc = await c.call_tool("describe", {"name": "ada", "tags": ["x"]})
    refuse = await c.call_tool("refuse", {"reason": "no"})
    local = await c.call_tool("lookup_local", {"key": "k"})
    errors = {}
    for name, args in [("divide", {"a": 1, "b": 0}), ("add", {"a": "two", "b": 3}), ("missing", {})]:
        try:
            await c.call_tool(name, args)
            errors[name] = None
        except MCPError as e:
            errors[name] = [e.error.code, e.error.message]
    by_name = {t.name: t for t in tools.tools}
    return {
        "names": [t.name for t in tools.tools],
        "add_description": by_name["add"].description,
        "add_input": by_name["add"].input_schema,
        "describe_output": by_name["describe"].output_schema,
        "add_output": by_name["add"].output_schema,
        "add": [b.text for b in add.content],
        "greet": [b.text for b in greet.content],
        "describe": desc.structured_content,
        "describe_text": [b.text for b in desc.content],
        "refuse": [refuse.is_error, [json.loads(b.text) for b in refuse.content]],
        "local": [b.text for b in local.content],
        "errors": errors,
    }
"#;

const PY_STDIO: &str = r#"
from mcp.client.stdio import StdioServerParameters

async def main(katari, file, agents, mode, home):
    params = StdioServerParameters(command=katari, args=["mcp", "serve", file, "--agents", agents],
                                   env={"KATARI_HOME": home, "NO_COLOR": "1"})
    async with Client(params, mode=mode) as c:
        print(json.dumps(await checks(c)))

asyncio.run(main(*sys.argv[1:]))
"#;

const PY_HTTP: &str = r#"
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

async def main(url, token, mode):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            print(json.dumps(await checks(c)))

asyncio.run(main(*sys.argv[1:]))
"#;

/// What both transports must answer the client's checks with.
fn expected_checks() -> Value {
    json!({
        "names": SORTED,
        "add_description": "Adds two integers.",
        "add_input": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        },
        "describe_output": {
            "type": "object",
            "properties": {
                "length": {"type": "integer"},
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["length", "name", "tags"]
        },
        "add_output": null,
        "add": ["5"],
        "greet": ["Hello, Ada!"],
        "describe": {"name": "ada", "length": 3, "tags": ["x"]},
        "describe_text": [r#"{"name":"ada","length":3,"tags":["x"]}"#],
        "local": ["value of k"],
    })
}

/// Compares the client's report with [`expected_checks`], the throw and the errors apart.
fn assert_checks(out: &Value, what: &str) {
    let mut expected = expected_checks();
    let mut got = out.clone();
    for key in ["refuse", "errors"] {
        got.as_object_mut().expect("an object").remove(key);
    }
    // Schemas carry keys the fixture does not pin down (`additionalProperties`): compare the
    // ones given.
    for key in ["add_input", "describe_output"] {
        let want = expected[key].take();
        for (k, v) in want.as_object().expect("a schema") {
            assert_eq!(&got[key][k], v, "{what}: {key}.{k}");
        }
        got.as_object_mut().expect("an object").remove(key);
        expected.as_object_mut().expect("an object").remove(key);
    }
    assert_eq!(got, expected, "{what}");

    // The typed throw: an `isError` result whose text is the payload's wire JSON.
    let refuse = &out["refuse"];
    assert_eq!(refuse[0], json!(true), "{what}: {refuse}");
    assert_eq!(
        refuse[1][0],
        json!({"$constructor": "prelude.mcp.server_error", "value": {"message": "no"}}),
        "{what}"
    );

    let errors = &out["errors"];
    assert_eq!(
        errors["divide"],
        json!([-32603, "the tool call failed"]),
        "{what}: a panic's details stay on the server"
    );
    assert_eq!(errors["add"][0], json!(-32602), "{what}: {errors}");
    let message = errors["add"][1].as_str().unwrap_or_default();
    assert!(
        message.contains("does not conform to the input schema"),
        "{what}: {message}"
    );
    assert_eq!(
        errors["missing"],
        json!([-32602, "unknown tool \"missing\""]),
        "{what}"
    );
}

#[test]
fn the_python_sdk_client_spawns_it_over_stdio() {
    let script = fixture();
    let home = script.parent().expect("a folder").join("home");
    for mode in ["auto", "legacy"] {
        let out = python(
            &format!("{PY_CHECKS}{PY_STDIO}"),
            &[
                env!("CARGO_BIN_EXE_katari"),
                &script.display().to_string(),
                AGENTS,
                mode,
                &home.display().to_string(),
            ],
        );
        assert_checks(&out, &format!("stdio, mode {mode}"));
    }
}

#[test]
fn stdio_answers_raw_lines_on_stdout_only_and_ends_with_stdin() {
    let script = fixture();
    let file = script.display().to_string();
    let mut child = katari(
        &script,
        &["mcp", "serve", &file, "--stdio", "--agents", AGENTS],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start katari");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        String::new(),
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "chatty"}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "server/discover"}).to_string(),
        "this is not JSON".to_string(),
        "[]".to_string(),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "greet", "arguments": {"name": "Bo"}}}).to_string(),
    ];
    {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        for line in &lines {
            writeln!(stdin, "{line}").expect("write a line");
        }
        // Dropping stdin ends the input: the server answers what it has and exits 0.
    }
    let status = wait_with_timeout(&mut child, Duration::from_secs(60));
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    assert_eq!(status, Some(0), "stderr: {stderr}");
    assert!(
        stderr.starts_with(&format!("Serving 8 tools from {file} on stdio\n")),
        "{stderr}"
    );
    // The script's console output is for the person: stderr, never stdout.
    assert!(stderr.contains("chatty was called\n"), "{stderr}");

    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}"))
        })
        .collect();
    // One reply per request and per bad line; none for the notification or the empty line.
    assert_eq!(replies.len(), 8, "{stdout}");
    let by_id = |id: Value| {
        replies
            .iter()
            .find(|r| r["id"] == id && r.get("result").is_some())
            .cloned()
            .unwrap_or_else(|| panic!("no result for id {id}: {stdout}"))
    };
    assert_eq!(
        by_id(json!(1))["result"],
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "katari-mcp-serve", "version": env!("CARGO_PKG_VERSION")}
        })
    );
    assert_eq!(by_id(json!("p"))["result"], json!({}));
    let names: Vec<&str> = replies
        .iter()
        .find(|r| r["id"] == json!(2))
        .and_then(|r| r["result"]["tools"].as_array())
        .expect("a tool listing")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, SORTED);
    assert_eq!(
        by_id(json!(3))["result"],
        json!({"content": [{"type": "text", "text": "ok"}]})
    );
    assert_eq!(
        by_id(json!(5))["result"]["content"][0]["text"],
        json!("Hello, Bo.")
    );
    let error_of = |id: Value, code: i64| {
        assert!(
            replies
                .iter()
                .any(|r| r["id"] == id && r["error"]["code"] == json!(code)),
            "expected error {code} for id {id}: {stdout}"
        );
    };
    error_of(json!(4), -32601);
    error_of(Value::Null, -32700);
    error_of(Value::Null, -32600);
}

/// Waits for the child to exit; kills it after `limit`.
fn wait_with_timeout(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for katari") {
            return status.code();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("katari mcp serve did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// -------------------------------------------------------------------------------------------
// HTTP
// -------------------------------------------------------------------------------------------

/// A running `katari mcp serve --listen …`; killed when dropped.
struct Listening {
    child: Child,
    file: String,
    /// `http://127.0.0.1:PORT/mcp`.
    url: String,
    token: Option<String>,
    /// The start lines, as printed.
    banner: String,
    stderr: BufReader<ChildStderr>,
}

impl Listening {
    fn start(script: &Path, extra: &[&str]) -> Listening {
        let file = script.display().to_string();
        let mut args = vec!["mcp", "serve", file.as_str(), "--agents", AGENTS];
        args.extend_from_slice(extra);
        let mut child = katari(script, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start katari");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let mut banner = String::new();
        stderr.read_line(&mut banner).expect("read the start line");
        let prefix = format!("Serving 8 tools from {file} at ");
        let url = banner
            .trim_end()
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("unexpected start line: {banner:?}"))
            .to_string();
        let token = if extra.contains(&"--no-auth") {
            None
        } else {
            let mut line = String::new();
            stderr.read_line(&mut line).expect("read the token line");
            banner.push_str(&line);
            Some(
                line.trim_end()
                    .strip_prefix("Bearer token: ")
                    .unwrap_or_else(|| panic!("unexpected token line: {line:?}"))
                    .to_string(),
            )
        };
        Listening {
            child,
            file,
            url,
            token,
            banner,
            stderr,
        }
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token.as_deref().unwrap_or(""))
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("reply body is not JSON ({e}): {:?}", self.body))
    }
}

/// One HTTP/1.1 request over a fresh connection, with extra header lines.
fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect to the server");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("set a timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send the head");
    stream.write_all(body.as_bytes()).expect("send the body");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    Reply {
        status,
        headers: headers.to_string(),
        body: body.to_string(),
    }
}

fn rpc(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn the_python_sdk_client_connects_over_http_with_the_bearer_token() {
    let script = fixture();
    let served = Listening::start(&script, &["--listen", "127.0.0.1:0"]);
    let token = served.token.clone().expect("a token");
    assert_eq!(token.len(), 43, "32 bytes in base64url without padding");
    assert!(
        token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "{token}"
    );
    assert!(
        served.url.starts_with("http://127.0.0.1:"),
        "{}",
        served.url
    );
    assert!(served.url.ends_with("/mcp"), "{}", served.url);
    assert!(
        !served.url.ends_with(":0/mcp"),
        "port 0 is replaced by the bound port"
    );
    assert_eq!(
        served.banner,
        format!(
            "Serving 8 tools from {} at {}\nBearer token: {token}\n",
            served.file, served.url
        )
    );
    for mode in ["auto", "legacy"] {
        let out = python(
            &format!("{PY_CHECKS}{PY_HTTP}"),
            &[&served.url, &token, mode],
        );
        assert_checks(&out, &format!("HTTP, mode {mode}"));
    }
}

#[test]
fn http_answers_every_status_row() {
    let script = fixture();
    let served = Listening::start(&script, &["--listen", "0"]);
    let url = served.url.clone();
    let bearer = served.bearer();
    let auth = [("Authorization", bearer.as_str())];
    let ping = rpc(1, "ping", json!({}));

    // No token, a wrong one, another scheme: 401 for every method.
    for (method, headers) in [
        ("POST", vec![]),
        ("GET", vec![]),
        ("POST", vec![("Authorization", "Bearer wrong")]),
        ("POST", vec![("Authorization", "Basic Zm9vOmJhcg==")]),
    ] {
        let r = request(method, &url, &headers, &ping);
        assert_eq!(r.status, 401, "{method} {headers:?}: {r:?}");
        assert!(
            r.headers
                .to_ascii_lowercase()
                .contains("www-authenticate: bearer"),
            "{r:?}"
        );
    }
    // Right token.
    let r = request("POST", &url, &auth, &ping);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert!(r.headers.contains("application/json"), "{r:?}");

    // Methods other than POST.
    for method in ["GET", "DELETE"] {
        let r = request(method, &url, &auth, "");
        assert_eq!(r.status, 405, "{method}: {r:?}");
    }
    // Bodies.
    let r = request("POST", &url, &auth, "{not json");
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], json!(-32700));
    for bad in [
        "[]",
        "42",
        r#"{"id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
    ] {
        let r = request("POST", &url, &auth, bad);
        assert_eq!(r.status, 400, "{bad}: {r:?}");
        assert_eq!(r.json()["error"]["code"], json!(-32600), "{bad}");
    }
    let r = request(
        "POST",
        &url,
        &auth,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(r.status, 202, "{r:?}");
    assert_eq!(r.body, "");
    // JSON-RPC errors on 200.
    let r = request("POST", &url, &auth, &rpc(2, "resources/list", json!({})));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["error"]["code"], json!(-32601));
    let r = request(
        "POST",
        &url,
        &auth,
        &rpc(
            3,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1}}),
        ),
    );
    assert_eq!(r.json()["error"]["code"], json!(-32602), "{r:?}");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("does not conform to the input schema"),
        "{r:?}"
    );
    // Only /mcp is served.
    let other = url.replace("/mcp", "/other");
    let r = request("POST", &other, &auth, &ping);
    assert_eq!(r.status, 404, "{r:?}");

    // DNS rebinding: a non-loopback Host or Origin while bound to loopback, even with the token.
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_string();
    let evil_host = format!("evil.example:{port}");
    for headers in [
        vec![auth[0], ("Host", evil_host.as_str())],
        vec![auth[0], ("Origin", "http://evil.example")],
    ] {
        let r = request("POST", &url, &headers, &ping);
        assert_eq!(r.status, 403, "{headers:?}: {r:?}");
    }
    for origin in ["http://localhost:3000", "http://127.0.0.1"] {
        let r = request("POST", &url, &[auth[0], ("Origin", origin)], &ping);
        assert_eq!(r.status, 200, "{origin}: {r:?}");
    }
}

#[test]
fn no_auth_on_loopback_needs_no_token() {
    let script = fixture();
    let served = Listening::start(&script, &["--listen", "127.0.0.1:0", "--no-auth"]);
    assert_eq!(
        served.banner,
        format!("Serving 8 tools from {} at {}\n", served.file, served.url)
    );
    let r = request(
        "POST",
        &served.url,
        &[],
        &rpc(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 40, "b": 2}}),
        ),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.json()["result"],
        json!({"content": [{"type": "text", "text": "42"}]})
    );
}

#[test]
fn http_calls_run_concurrently_and_failures_stay_on_the_server() {
    let script = fixture();
    let mut served = Listening::start(&script, &["--listen", "0"]);
    let url = served.url.clone();
    let bearer = served.bearer();
    let start = Instant::now();
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let (url, bearer) = (url.clone(), bearer.clone());
            std::thread::spawn(move || {
                let body = rpc(
                    i,
                    "tools/call",
                    json!({"name": "nap", "arguments": {"milliseconds": 1500}}),
                );
                request("POST", &url, &[("Authorization", &bearer)], &body)
            })
        })
        .collect();
    for call in calls {
        let r = call.join().expect("a call");
        assert_eq!(r.json()["result"]["content"][0]["text"], json!("rested"));
    }
    assert!(
        start.elapsed() < Duration::from_millis(4000),
        "three 1.5 s calls took {:?}: they did not run concurrently",
        start.elapsed()
    );

    let r = request(
        "POST",
        &url,
        &[("Authorization", &bearer)],
        &rpc(
            9,
            "tools/call",
            json!({"name": "divide", "arguments": {"a": 1, "b": 0}}),
        ),
    );
    assert_eq!(
        r.json()["error"],
        json!({"code": -32603, "message": "the tool call failed"})
    );
    assert!(
        !r.body.contains("modulo"),
        "details stay on the server: {r:?}"
    );
    let mut line = String::new();
    served
        .stderr
        .read_line(&mut line)
        .expect("read the failure report");
    assert!(
        line.contains("tool \"divide\" failed: panic: modulo by zero"),
        "{line:?}"
    );
}

#[test]
fn ctrl_c_stops_the_http_server_with_status_0() {
    let script = fixture();
    let mut served = Listening::start(&script, &["--listen", "0"]);
    let pid = served.child.id().to_string();
    let killed = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("send SIGINT");
    assert!(killed.success());
    let status = wait_with_timeout(&mut served.child, Duration::from_secs(20));
    assert_eq!(status, Some(0));
}

// -------------------------------------------------------------------------------------------
// Reference clients
// -------------------------------------------------------------------------------------------

/// The conformance suite's fixture (`tests/conformance/server.kt`): its documented agents are
/// the suite's tools.
fn conformance_fixture() -> PathBuf {
    peers::repo_root().join("tests/conformance/server.kt")
}

#[test]
fn the_conformance_suite_passes_against_mcp_serve_except_its_baseline() {
    let script = conformance_fixture();
    let file = script.display().to_string();
    let unused = scratch("unused.kt", "");
    let home = unused.with_file_name("home");
    let mut child = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args([
            "mcp",
            "serve",
            &file,
            "--listen",
            "127.0.0.1:0",
            "--no-auth",
        ])
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start katari");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut banner = String::new();
    stderr.read_line(&mut banner).expect("read the start line");
    let url = banner
        .trim_end()
        .strip_prefix(&format!("Serving 9 tools from {file} at "))
        .unwrap_or_else(|| panic!("unexpected start line: {banner:?}"))
        .to_string();
    let baseline = peers::repo_root().join("tests/conformance/server-baseline.yml");
    let out = Command::new(peers::node22())
        .arg(peers::conformance())
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(&baseline)
        .output()
        .expect("run the conformance suite");
    let _ = child.kill();
    let _ = child.wait();
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Baseline check passed"),
        "conformance suite:\n{stdout}{}",
        text(&out.stderr)
    );
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "dns-rebinding-protection",
    ] {
        assert!(
            stdout.contains(&format!("✓ {scenario}:")),
            "{scenario} must pass:\n{stdout}"
        );
    }
}

#[test]
fn the_inspector_cli_spawns_it_over_stdio() {
    let script = fixture();
    let file = script.display().to_string();
    let inspector = |extra: &[&str]| -> Value {
        let cli =
            peers::peer_path("npm/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
        let home = script.parent().expect("a folder").join("home");
        let out = Command::new(peers::node())
            .arg(cli)
            .arg("--cli")
            .args(["-e", &format!("KATARI_HOME={}", home.display())])
            .args([
                env!("CARGO_BIN_EXE_katari"),
                "mcp",
                "serve",
                &file,
                "--agents",
                AGENTS,
            ])
            .args(extra)
            .output()
            .expect("run the MCP Inspector CLI");
        assert!(
            out.status.success(),
            "Inspector failed:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        serde_json::from_str(&text(&out.stdout)).expect("the Inspector prints JSON")
    };
    let list = inspector(&["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .expect("a listing")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, SORTED);
    let called = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=1",
        "b=2",
    ]);
    assert_eq!(called["content"][0]["text"], "3");
}

// -------------------------------------------------------------------------------------------
// Workspace servers
// -------------------------------------------------------------------------------------------

/// A served agent reaching a workspace stdio server: nobody can be asked on stdio (stdin carries
/// JSON-RPC), so the server does not start and the call is a tool error naming the approval.
#[test]
fn over_stdio_a_workspace_server_is_not_started_without_approval() {
    let script = scratch(
        "remote.kt",
        r#"@"Lists the tools of the workspace server."
agent remote() -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
  let tools = mcp.tools(url = "mcp:side", auth = mcp.headers(values = record.empty()))
  "connected"
}
"#,
    );
    let dir = script.parent().expect("a folder");
    let marker = dir.join("started");
    std::fs::write(
        dir.join(".mcp.json"),
        json!({"mcpServers": {"side": {"command": "sh", "args": ["-c", format!("touch '{}'", marker.display())]}}})
            .to_string(),
    )
    .expect("write .mcp.json");
    let mut child = katari(&script, &["mcp", "serve", &script.display().to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start katari");
    {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remote"}});
        writeln!(stdin, "{call}").expect("write the call");
    }
    let status = wait_with_timeout(&mut child, Duration::from_secs(60));
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    assert_eq!(status, Some(0));
    let reply: Value = serde_json::from_str(stdout.trim()).expect("one JSON-RPC reply");
    assert_eq!(reply["result"]["isError"], json!(true), "{reply}");
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("has not been approved"), "{text}");
    assert!(!marker.exists(), "the workspace server must not start");
}

#[test]
fn a_configured_server_answering_401_names_the_login_and_the_entry_to_change() {
    let script = fixture();
    let served = Listening::start(&script, &["--listen", "127.0.0.1:0"]);
    let home = script.parent().expect("folder").join("home");
    std::fs::create_dir_all(&home).expect("home");
    let config = home.join("config.toml");
    std::fs::write(&config, format!("[mcp.locked]\nurl = \"{}\"\n", served.url)).expect("config");

    // `host.md` §9.3.3, third form: the server's configured name, its URL and the file.
    let out = run_to_end(&script, &["mcp", "list", "--probe", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let probe = &listed[0]["probe"];
    assert_eq!(probe["status"], "auth required", "{listed}");
    assert_eq!(
        probe["error"],
        format!(
            "MCP server 'locked' rejected the request as unauthorised (HTTP 401).\n\
             Log in with: katari mcp login --url {url} --name locked\n\
             then add oauth = \"locked\" to [mcp.locked] in {file}",
            url = served.url,
            file = config.display()
        ),
        "{listed}"
    );
}
