//! `mcp.serve` and `webhook.inbound` on the loopback listener (`prelude.md` §13, §14.6), driven
//! from outside while the script's subscriber waits: plain HTTP for every row of the endpoint
//! tables, and real MCP clients — the Python SDK (both handshakes), the MCP Inspector CLI and the
//! official conformance suite with its committed baseline.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::time::Duration;

use katari_tests::peers;
use serde_json::{Value, json};

/// The fixture of the conformance suite and most tests here.
fn server_fixture() -> PathBuf {
    peers::repo_root().join("tests/conformance/server.kt")
}

/// A running `katari run` whose subscriber printed its URL; killed when dropped.
struct Served {
    child: Child,
    url: String,
    stdout: BufReader<ChildStdout>,
    stderr: Option<ChildStderr>,
}

impl Served {
    /// Runs `script` with `args` and waits for the first stdout line (the served URL).
    fn start(script: &Path, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
        command
            .arg("run")
            .arg(script)
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("KATARI_PUBLIC_URL")
            .env_remove("KATARI_LISTEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("start katari");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read the served URL");
        let url = line.trim().to_string();
        let mut stderr = child.stderr.take();
        if url.is_empty() {
            let mut err = String::new();
            if let Some(s) = stderr.as_mut() {
                let _ = s.read_to_string(&mut err);
            }
            panic!("{} printed no URL:\n{err}", script.display());
        }
        let served = Served {
            child,
            url,
            stdout,
            stderr,
        };
        assert!(
            served.url.starts_with("http"),
            "expected a served URL on stdout, got {:?}",
            served.url
        );
        served
    }

    /// The fixture server, open for `seconds`.
    fn fixture(seconds: u32) -> Served {
        let seconds = format!("seconds={seconds}");
        Served::start(&server_fixture(), &["-a", &seconds], &[])
    }

    /// Waits for the run to end: its stderr.
    fn finish(self) -> String {
        self.finish_with_stdout().1
    }

    /// Waits for the run to end: the rest of its stdout (after the URL line) and its stderr.
    fn finish_with_stdout(mut self) -> (String, String) {
        let mut out = String::new();
        let _ = self.stdout.read_to_string(&mut out);
        let mut err = String::new();
        if let Some(mut stderr) = self.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        let _ = self.child.wait();
        (out, err)
    }
}

impl Drop for Served {
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

/// One HTTP/1.1 request over a fresh connection (`Connection: close`), with the Host header
/// given (`None`: the URL's authority).
fn request(method: &str, url: &str, host: Option<&str>, body: &[u8]) -> Reply {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect to the listener");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("set a timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        host.unwrap_or(authority),
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send the head");
    // The server may answer (413) before the whole body is sent and close the connection.
    let _ = stream.write_all(body);
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

fn post(url: &str, body: &str) -> Reply {
    request("POST", url, None, body.as_bytes())
}

fn rpc(url: &str, method: &str, params: Value) -> Reply {
    post(
        url,
        &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string(),
    )
}

fn call(url: &str, tool: &str, arguments: Value) -> Reply {
    rpc(
        url,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

#[test]
fn the_mcp_endpoint_answers_every_row_of_its_table() {
    let served = Served::fixture(120);
    let url = served.url.clone();

    assert_eq!(request("GET", &url, None, b"").status, 405);
    assert_eq!(request("DELETE", &url, None, b"").status, 405);

    let r = post(&url, "{not json");
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32700);
    for invalid in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#""ping""#,
    ] {
        let r = post(&url, invalid);
        assert_eq!(r.status, 400, "{invalid}");
        assert_eq!(r.json()["error"]["code"], -32600, "{invalid}");
    }

    let r = post(
        &url,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!((r.status, r.body.as_str()), (202, ""));

    let (base, _) = url.rsplit_once('/').expect("a token");
    let r = post(
        &format!("{base}/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"]["code"], -32000);

    let r = rpc(&url, "initialize", json!({"protocolVersion": "2025-06-18"}));
    assert_eq!(r.status, 200);
    assert!(
        r.headers
            .to_ascii_lowercase()
            .contains("content-type: application/json")
    );
    let init = r.json();
    assert_eq!(init["id"], 7);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["capabilities"], json!({"tools": {}}));
    assert_eq!(init["result"]["serverInfo"]["name"], "katari-mcp-serve");
    let r = rpc(&url, "initialize", json!({"protocolVersion": "1999-01-01"}));
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");

    assert_eq!(rpc(&url, "ping", json!({})).json()["result"], json!({}));
    assert_eq!(
        rpc(&url, "resources/list", json!({})).json()["error"]["code"],
        -32601
    );

    let list = rpc(&url, "tools/list", json!({})).json();
    let tools = list["result"]["tools"].as_array().expect("a tool list");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "tools/list is sorted by key");
    let add = tools.iter().find(|t| t["name"] == "add").expect("add");
    assert_eq!(add["description"], "Adds two integers.");
    assert_eq!(add["inputSchema"]["type"], "object");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert!(
        add.get("outputSchema").is_none(),
        "integer output: no outputSchema"
    );
    let info = tools.iter().find(|t| t["name"] == "info").expect("info");
    assert_eq!(info["outputSchema"]["type"], "object");

    let r = call(&url, "add", json!({"a": 20, "b": 22})).json();
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "42"}]})
    );
    let r = call(&url, "info", json!({"name": "ada"})).json();
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "{\"name\":\"ada\",\"size\":3}"}],
               "structuredContent": {"name": "ada", "size": 3}})
    );
    let r = call(&url, "test_simple_text", json!({})).json();
    assert_eq!(
        r["result"]["content"][0]["text"],
        "This is a simple text response for testing."
    );

    let r = call(&url, "nope", json!({})).json();
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["message"], "unknown tool \"nope\"");

    // Bad arguments are refused before the agent runs: `crash` would panic (and say so on
    // stderr) if it ran.
    let r = call(&url, "crash", json!({"n": "x"})).json();
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "server.crash: the argument does not conform to the input schema — $.n: expected a value of type integer, got a value of type string"
    );
    let r = call(&url, "add", json!({"a": {"$redacted": true}, "b": 1})).json();
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "server.add: the argument cannot be decoded — $.a: a redacted value cannot be decoded"
    );
    let r = call(&url, "add", json!({"a": 1})).json();
    assert_eq!(
        r["error"]["message"],
        "server.add: the argument does not conform to the input schema — $: missing required field \"b\""
    );

    let r = call(&url, "test_error_handling", json!({})).json();
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["content"][0]["text"],
        r#"{"$constructor":"prelude.mcp.server_error","value":{"message":"This tool intentionally returns an error for testing"}}"#
    );

    let r = call(&url, "crash", json!({"n": 1})).json();
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["message"], "the tool call failed");

    // A served agent that calls this endpoint again and waits for the answer: only concurrent
    // serving lets it finish.
    let r = call(&url, "relay", json!({"url": url, "depth": 3}));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("bottom"), "{}", r.body);

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5 * 1024 * 1024)
    );
    assert_eq!(post(&url, &big).status, 413);

    let r = request(
        "POST",
        &url,
        Some("evil.example.com"),
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(r.status, 403);
    let r = request(
        "POST",
        &url,
        Some("localhost"),
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(r.status, 200);

    drop(served);
}

#[test]
fn a_panic_is_reported_on_the_server_side_only() {
    let served = Served::fixture(2);
    let r = call(&served.url, "crash", json!({"n": 1})).json();
    assert_eq!(r["error"]["message"], "the tool call failed");
    let stderr = served.finish();
    assert!(
        stderr.contains("mcp.serve: tool \"crash\" failed: panic: division by zero"),
        "{stderr}"
    );
}

#[test]
fn a_call_still_running_when_the_subscriber_ends_gets_410_and_the_token_is_released() {
    let served = Served::fixture(2);
    let url = served.url.clone();
    let r = call(&url, "slow", json!({"milliseconds": 30_000}));
    assert_eq!(r.status, 410);
    assert_eq!(r.json()["error"]["code"], -32000);
    let stderr = served.finish();
    assert_eq!(stderr, "");
    // The run is over; a fresh serve mints another token, so the old one is unknown.
    let again = Served::fixture(30);
    assert_ne!(again.url, url);
    let (_, token) = url.rsplit_once('/').expect("a token");
    let (base, _) = again.url.rsplit_once('/').expect("a token");
    assert_eq!(token.len(), 32, "24 bytes in base64url without padding");
    let r = post(
        &format!("{base}/{token}"),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(r.status, 404);
}

fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new(peers::python_mcp())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run the Python SDK client");
    assert!(
        out.status.success(),
        "Python client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const PY_CLIENT: &str = r#"
import asyncio, json, sys
from mcp.client import Client

async def main(url, mode):
    async with Client(url, mode=mode) as c:
        tools = await c.list_tools()
        add = await c.call_tool("add", {"a": 2, "b": 3})
        info = await c.call_tool("info", {"name": "ada"})
        err = await c.call_tool("test_error_handling", {})
        # The SDK validates structured content against an advertised output schema: a redacted
        # private field must not make the reply invalid.
        keep = await c.call_tool("keep", {"name": "ada", "token": "s3cret"})
        schemas = {t.name: t.output_schema is not None for t in tools.tools}
        print(json.dumps({
            "names": [t.name for t in tools.tools],
            "add": [b.text for b in add.content],
            "info": info.structured_content,
            "error": err.is_error,
            "keep": keep.structured_content,
            "output schemas": [schemas["info"], schemas["keep"]],
        }))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"#;

#[test]
fn the_python_sdk_client_lists_and_calls_with_both_handshakes() {
    let served = Served::fixture(120);
    for mode in ["auto", "legacy"] {
        let out: Value = serde_json::from_str(&python(PY_CLIENT, &[&served.url, mode]))
            .expect("the client prints JSON");
        assert_eq!(
            out,
            json!({
                "names": ["add", "crash", "info", "keep", "relay", "slow", "test_error_handling",
                          "test_image_content", "test_simple_text"],
                "add": ["5"],
                "info": {"name": "ada", "size": 3},
                "error": true,
                "keep": {"name": "ada", "token": {"$redacted": true}},
                "output schemas": [true, false],
            }),
            "mode {mode}"
        );
    }
}

fn inspector(args: &[&str]) -> String {
    let cli = peers::peer_path("npm/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
    let out = Command::new(peers::node())
        .arg(cli)
        .arg("--cli")
        .args(args)
        .output()
        .expect("run the MCP Inspector CLI");
    assert!(
        out.status.success(),
        "Inspector failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn the_inspector_cli_lists_and_calls() {
    let served = Served::fixture(120);
    // Inspector 0.15 replaces a path that does not end in `/mcp` with `/mcp`; the listener
    // accepts `<url>/mcp` for such clients.
    let url = format!("{}/mcp", served.url);
    let list: Value = serde_json::from_str(&inspector(&[&url, "--method", "tools/list"]))
        .expect("the Inspector prints JSON");
    assert_eq!(list["tools"][0]["name"], "add");
    let called: Value = serde_json::from_str(&inspector(&[
        &url,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=1",
        "b=2",
    ]))
    .expect("the Inspector prints JSON");
    assert_eq!(called["content"][0]["text"], "3");
}

#[test]
fn the_conformance_suite_passes_except_its_baseline() {
    let served = Served::fixture(120);
    let baseline = peers::repo_root().join("tests/conformance/server-baseline.yml");
    let out = Command::new(peers::node22())
        .arg(peers::conformance())
        .args(["server", "--url", &served.url, "--expected-failures"])
        .arg(&baseline)
        .output()
        .expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Baseline check passed"),
        "conformance suite:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
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

// ---------------------------------------------------------------------------------------------
// webhook.inbound
// ---------------------------------------------------------------------------------------------

const HOOK: &str = r#"
data refused(reason: string)

@"Doubles the delivered value."
agent double(value: integer) -> integer { value * 2 }

agent pick(value: integer) -> { doubled: integer } with prelude.throw[refused] {
  if (value == 0) {
    prelude.throw(error = refused(reason = "zero"))
  } else {
    if (value < 0) { { doubled = math.floor(value = value / 0) } } else { { doubled = value * 2 } }
  }
}

// Short sleeps: a stopped subscriber notices at its next call (time.sleep itself only wakes for
// an interrupt).
agent hold(url: string, seconds: integer) -> string {
  console.print(text = url)
  let waited = for (let i in array.range(start = 0, end = seconds * 10)) { time.sleep(milliseconds = 100) }
  "released"
}

agent main(seconds: integer) -> string {
  use handler { request prelude.throw(error: refused) -> never { break "caught outside" } }
  webhook.inbound(callback = pick, subscriber = hold(seconds = seconds, url = _))
}
"#;

fn scratch_script(name: &str, text: &str) -> katari_tests::e2e::ScratchFile {
    katari_tests::e2e::ScratchFile::new("mcp-serve", name, text)
}

#[test]
fn webhook_deliveries_answer_every_row_of_their_table() {
    let script = scratch_script("hook.kt", HOOK);
    let served = Served::start(&script, &["-a", "seconds=120"], &[]);
    let url = served.url.clone();
    assert!(url.contains("/inbound/"), "{url}");

    let r = post(&url, r#"{"value": 21}"#);
    assert_eq!((r.status, r.body.as_str()), (200, r#"{"doubled":42}"#));
    let r = post(&url, "{nope");
    assert_eq!(r.status, 400);
    assert_eq!(r.json(), json!({"error": "the body is not JSON"}));
    let r = post(&url, r#"{"value": "x"}"#);
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json(),
        json!({"error": "hook.pick: the argument does not conform to the input schema — $.value: expected a value of type integer, got a value of type string"})
    );
    let r = post(&url, r#"{"value": {"$agent": "hook.nowhere"}}"#);
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json(),
        json!({"error": "hook.pick: the argument cannot be decoded — $.value: unknown agent \"hook.nowhere\""})
    );
    let r = post(&url, r#"{"value": -1}"#);
    assert_eq!((r.status, r.json()), (500, json!({"error": "panic"})));
    assert_eq!(request("GET", &url, None, b"").status, 405);
    let (base, _) = url.rsplit_once('/').expect("a token");
    assert_eq!(post(&format!("{base}/unknown"), "{}").status, 404);
    let r = request("POST", &url, Some("evil.example.com"), br#"{"value": 1}"#);
    assert_eq!(r.status, 403);

    // A delivery's throw reaches the handler around `inbound`, whose clause breaks out of the
    // handled computation: the subscriber is abandoned, the delivery answered 410, and the run
    // continues with the clause's value, as if the callback had run at the call site.
    let r = post(&url, r#"{"value": 0}"#);
    assert_eq!(r.status, 410, "{}", r.body);
    let (out, err) = served.finish_with_stdout();
    assert_eq!(out, "caught outside\n");
    assert_eq!(
        err, "webhook.inbound: the callback failed: panic: division by zero\n",
        "only the panicking delivery is reported on the server side"
    );
}

const UNCAUGHT: &str = r#"
data refused(reason: string)

agent pick(value: integer) -> integer with prelude.throw[refused] {
  if (value == 0) { prelude.throw(error = refused(reason = "zero")) } else { value }
}

agent hold(url: string) -> string {
  console.print(text = url)
  time.sleep(milliseconds = 120000)
  "released"
}

agent main() -> string {
  webhook.inbound(callback = pick, subscriber = hold)
}
"#;

#[test]
fn a_webhook_throw_answers_500_with_its_payload() {
    let script = scratch_script("uncaught.kt", UNCAUGHT);
    let served = Served::start(&script, &[], &[]);
    let r = post(&served.url, r#"{"value": 0}"#);
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json(),
        json!({"error": "throw", "payload": {"$constructor": "uncaught.refused", "value": {"reason": "zero"}}})
    );
}

#[test]
fn the_public_url_replaces_the_base_and_lifts_the_host_guard() {
    let port = peers::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let served = Served::start(
        &server_fixture(),
        &["-a", "seconds=120"],
        &[
            ("KATARI_LISTEN", &listen),
            ("KATARI_PUBLIC_URL", "https://mcp.example.org/"),
        ],
    );
    let token = served
        .url
        .strip_prefix("https://mcp.example.org/mcp/")
        .unwrap_or_else(|| panic!("a URL under the public base, got {}", served.url));
    let local = format!("http://{listen}/mcp/{token}");
    let r = request(
        "POST",
        &local,
        Some("mcp.example.org"),
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(
        r.status, 200,
        "a proxy's Host is accepted when a public URL is set"
    );
}

const FENCED: &str = r#"
agent fail() -> string with prelude.throw[mcp.server_error] {
  prelude.throw(error = mcp.server_error(message = "no"))
}

agent boom(value: integer) -> integer { value % 0 }

agent hold(url: string, seconds: integer) -> string {
  console.print(text = url)
  let waited = for (let i in array.range(start = 0, end = seconds * 10)) { time.sleep(milliseconds = 100) }
  "released"
}

data refused(reason: string)

agent main(seconds: integer) -> string with io | prelude.throw[refused] {
  use handler {
    request prelude.throw(error: refused) -> never { break f"caught outside: ${error.reason}" }
    request panic(msg: string) { break f"panic caught outside: ${msg}" }
  }
  mcp.serve(tools = { fail = fail, boom = boom }, subscriber = hold(seconds = seconds, url = _))
}
"#;

// A served tool's throw is the reply of its call (`isError` with the payload), never a request
// for the handlers around `serve`: its `prelude.throw` row is not part of `serve`'s, so those
// handlers were checked against other payloads (here `refused`). Its panic is the −32603 reply,
// not the ambient clause around `serve`. The subscriber runs on, undisturbed.
#[test]
fn a_served_tools_throw_and_panic_are_its_replies_not_the_handlers_around_serve() {
    let script = scratch_script("fenced.kt", FENCED);
    let served = Served::start(&script, &["-a", "seconds=2"], &[]);
    let r = call(&served.url, "fail", json!({})).json();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["content"][0]["text"],
        r#"{"$constructor":"prelude.mcp.server_error","value":{"message":"no"}}"#
    );
    let r = call(&served.url, "boom", json!({"value": 1})).json();
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["message"], "the tool call failed");
    let (out, err) = served.finish_with_stdout();
    assert_eq!(out, "released\n");
    assert_eq!(
        err,
        "mcp.serve: tool \"boom\" failed: panic: modulo by zero\n"
    );
}

const CLOSURES: &str = r#"
agent hold(url: string) -> null {
  console.print(text = url)
  let waited = for (let i in array.range(start = 0, end = 1200)) { time.sleep(milliseconds = 100) }
  null
}

agent main() -> null {
  @"Multiplies two integers." agent times(a: integer, b: integer ?= 2) -> integer { a * b }
  let greet = agent (name: string) -> string { f"hello ${name}" }
  mcp.serve(tools = { times = times, greet = greet }, subscriber = hold)
}
"#;

#[test]
fn local_and_anonymous_agents_are_served_with_their_typed_schemas() {
    let script = scratch_script("closures.kt", CLOSURES);
    let served = Served::start(&script, &[], &[]);
    let list = rpc(&served.url, "tools/list", json!({})).json();
    let tools = list["result"]["tools"].as_array().expect("a tool list");
    let times = tools.iter().find(|t| t["name"] == "times").expect("times");
    assert_eq!(times["description"], "Multiplies two integers.");
    assert_eq!(
        times["inputSchema"]["properties"],
        json!({"a": {"type": "integer"}, "b": {"type": "integer"}})
    );
    assert_eq!(times["inputSchema"]["required"], json!(["a"]));
    let greet = tools.iter().find(|t| t["name"] == "greet").expect("greet");
    assert_eq!(
        greet["inputSchema"]["properties"],
        json!({"name": {"type": "string"}})
    );

    let r = call(&served.url, "times", json!({"a": 21})).json();
    assert_eq!(r["result"]["content"][0]["text"], "42", "{r}");
    // Validated against the closure's types before it runs.
    let r = call(&served.url, "greet", json!({"name": 7})).json();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = call(&served.url, "greet", json!({"name": "ada"})).json();
    assert_eq!(r["result"]["content"][0]["text"], "hello ada", "{r}");
}

const PRIVATE: &str = r#"
agent hold(url: string) -> null {
  console.print(text = url)
  let waited = for (let i in array.range(start = 0, end = 1200)) { time.sleep(milliseconds = 100) }
  null
}

@"Echoes its argument."
agent echo(o: { token: string of private, user: string }, keys: array[string of private]) -> unknown {
  { o = o, keys = keys }
}

agent main() -> null {
  mcp.serve(tools = { echo = echo }, subscriber = hold)
}
"#;

#[test]
fn a_served_call_marks_every_position_its_parameters_declare_private() {
    let script = scratch_script("private.kt", PRIVATE);
    let served = Served::start(&script, &[], &[]);
    let r = call(
        &served.url,
        "echo",
        json!({"o": {"token": "s3cret", "user": "ada"}, "keys": ["k1"]}),
    )
    .json();
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {r}"));
    assert!(!text.contains("s3cret") && !text.contains("k1"), "{text}");
    let expected =
        json!({"o": {"token": {"$redacted": true}, "user": "ada"}, "keys": [{"$redacted": true}]});
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("the result is JSON"),
        expected
    );
    assert_eq!(r["result"]["structuredContent"], expected, "{r}");
}
