//! Resources and prompts from scripts (`docs/mcp-extensions.md`) end to end: `katari run`
//! scripts that call `mcp.resources`, `mcp.read`, `mcp.prompts` and `mcp.prompt` against real
//! servers — the paginating legacy build of server-everything, the current server-everything,
//! and servers written with the Python SDK — and check what the script prints.
//!
//! Every script runs in a fresh folder with its own `KATARI_HOME`.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use katari_tests::e2e::Outcome;
use katari_tests::peers::{Peer, free_port, python_mcp, start_everything};

/// A fresh folder holding `files`, with an empty `home/` for `KATARI_HOME`.
fn scratch(files: &[(&str, &str)]) -> katari_tests::e2e::Scratch {
    katari_tests::e2e::scratch("mcp-ext", files)
}

fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    katari_tests::e2e::run(env!("CARGO_BIN_EXE_katari"), dir, args, env)
}

/// Runs `LIB` plus `source` (with `URL` replaced by `url`) as `main.kt`; expects success and
/// returns the printed result, one line per part the script joined.
fn run_ok(url: &str, source: &str) -> Vec<String> {
    let text = format!("{LIB}\n{}", source.replace("URL", url));
    let dir = scratch(&[("main.kt", &text)]);
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
    assert!(!out.stdout.contains("s3cret"), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
    out.stdout.lines().map(str::to_string).collect()
}

/// Agents the scripts share: one line per content item or prompt message, and `attempt`, which
/// turns the MCP errors and panics of its body into a line.
const LIB: &str = r#"
agent item(value: mcp.resource_contents) -> string {
  match (value) {
    case mcp.text_contents(uri, mime_type, text) -> f"text ${uri} ${json.to_text(value = mime_type)} ${text}"
    case mcp.blob_contents(uri, mime_type, file => f) -> f"blob ${uri} ${json.to_text(value = mime_type)} ${file.content_type(value = f)} ${file.read_base64(value = f)}"
  }
}

agent items(values: array[mcp.resource_contents]) -> string {
  string.join(parts = array.map(target = values, apply = agent (value: mcp.resource_contents) -> string { item(value = value) }), separator = " | ")
}

agent message(value: mcp.prompt_message) -> string {
  let content = match (value.content) {
    case string(s) -> s
    case file(f) -> f"file ${file.content_type(value = f)} ${file.read_base64(value = f)}"
  }
  f"${value.role} ${value.kind} ${json.to_text(value = value.uri)} ${content}"
}

agent messages(values: array[mcp.prompt_message]) -> string {
  string.join(parts = array.map(target = values, apply = agent (value: mcp.prompt_message) -> string { message(value = value) }), separator = " | ")
}

agent prompt_line(value: mcp.prompt_info) -> string {
  let arguments = array.map(target = value.arguments, apply = agent (value: mcp.prompt_argument) -> string {
    if (value.required) { f"${value.name}!" } else { f"${value.name}?" }
  })
  f"${value.name}(${string.join(parts = arguments, separator = ",")})"
}

agent attempt(body: agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error]) -> string with io {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) {
        case mcp.server_error(message => m) -> f"server_error: ${m}"
        case mcp.auth_error(message => m) -> f"auth_error: ${m}"
      }
    }
    request panic(msg: string) { break f"panic: ${msg}" }
  }
  body()
}
"#;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

// -------------------------------------------------------------------------------------------
// server-everything, the paginating legacy build
// -------------------------------------------------------------------------------------------

#[test]
fn legacy_everything_lists_every_page_and_reads_text_and_blobs() {
    let server = start_everything("streamableHttp", true);
    let lines = run_ok(
        &format!("{}/mcp", server.base()),
        r#"
agent main() -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
  let auth = mcp.headers(values = record.empty())
  let listed = mcp.resources(url = "URL", auth = auth)
  let resources = array.filter(target = listed, keep = agent (value: mcp.resource) -> boolean { value.template == false })
  let templates = array.filter(target = listed, keep = agent (value: mcp.resource) -> boolean { value.template })
  let second = array.get(target = resources, index = 1)
  string.join(parts = [
    json.to_text(value = array.length(target = listed)),
    string.join(parts = array.map(target = resources, apply = agent (value: mcp.resource) -> string { value.uri }), separator = " "),
    json.to_text(value = second),
    string.join(parts = array.map(target = templates, apply = agent (value: mcp.resource) -> string { f"${value.uri} ${value.name}" }), separator = " "),
    items(values = mcp.read(url = "URL", auth = auth, uri = "test://static/resource/1")),
    items(values = mcp.read(url = "URL", auth = auth, uri = "test://static/resource/2")),
    items(values = mcp.read(url = "URL", auth = auth, uri = "test://static/resource/{id}", arguments = { id = "99" })),
  ], separator = "\n")
}
"#,
    );
    assert_eq!(lines.len(), 7, "{lines:#?}");
    // 100 resources (ten pages of ten) and one template.
    assert_eq!(lines[0], "101");
    let expected: Vec<String> = (1..=100)
        .map(|i| format!("test://static/resource/{i}"))
        .collect();
    assert_eq!(lines[1], expected.join(" "));
    assert_eq!(
        lines[2],
        r#"{"$constructor":"prelude.mcp.resource","value":{"uri":"test://static/resource/2","name":"Resource 2","title":null,"description":null,"mime_type":"application/octet-stream","size":null,"template":false}}"#
    );
    assert_eq!(lines[3], "test://static/resource/{id} Static Resource");
    // Odd ids are text, even ids binary blobs that become files with the server's bytes.
    assert_eq!(
        lines[4],
        r#"text test://static/resource/1 "text/plain" Resource 1: This is a plaintext resource"#
    );
    assert_eq!(
        lines[5],
        format!(
            r#"blob test://static/resource/2 "application/octet-stream" application/octet-stream {}"#,
            b64(b"Resource 2: This is a base64 blob")
        )
    );
    assert_eq!(
        lines[6],
        r#"text test://static/resource/99 "text/plain" Resource 99: This is a plaintext resource"#
    );
}

// -------------------------------------------------------------------------------------------
// server-everything, the current build
// -------------------------------------------------------------------------------------------

#[test]
fn current_everything_templates_expand_and_refuse_beyond_level_1() {
    let server = start_everything("streamableHttp", false);
    let url = format!("{}/mcp", server.base());
    let lines = run_ok(
        &url,
        r#"
agent main() -> string with io {
  let auth = mcp.headers(values = record.empty())
  let text = "demo://resource/dynamic/text/{resourceId}"
  string.join(parts = [
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      let templates = array.filter(target = mcp.resources(url = "URL", auth = auth), keep = agent (value: mcp.resource) -> boolean { value.template })
      string.join(parts = array.map(target = templates, apply = agent (value: mcp.resource) -> string { f"${value.uri} ${json.to_text(value = value.mime_type)}" }), separator = " ")
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = text, arguments = { resourceId = "7", unused = "x" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = text, arguments = { resourceId = "a b/c?é" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "demo://resource/{+path}", arguments = { path = "a/b" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = text))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "demo://resource/static/document/no-such.md"))
    }),
  ], separator = "\n")
}
"#,
    );
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert_eq!(
        lines[0],
        r#"demo://resource/dynamic/text/{resourceId} "text/plain" demo://resource/dynamic/blob/{resourceId} "application/octet-stream""#
    );
    assert!(
        lines[1].starts_with(r#"text demo://resource/dynamic/text/7 "text/plain" Resource 7: This is a plaintext resource created at "#),
        "{}",
        lines[1]
    );
    // The server names the URI it could not resolve: the value arrived percent-encoded.
    assert_eq!(
        lines[2],
        format!(
            "server_error: MCP server '{url}' refused resources/read \"demo://resource/dynamic/text/a%20b%2Fc%3F%C3%A9\": Unknown resource: demo://resource/dynamic/text/a%20b%2Fc%3F%C3%A9 (code -32603)"
        )
    );
    assert_eq!(
        lines[3],
        "panic: mcp.read: Resource template 'demo://resource/{+path}' uses '{+path}', which needs RFC 6570 beyond level 1; only simple {name} substitution is supported."
    );
    assert_eq!(
        lines[4],
        "panic: mcp.read: Resource template 'demo://resource/dynamic/text/{resourceId}' needs a value for 'resourceId' in arguments."
    );
    assert!(
        lines[5].starts_with(&format!(
            "server_error: MCP server '{url}' refused resources/read \"demo://resource/static/document/no-such.md\": "
        )),
        "{}",
        lines[5]
    );
}

#[test]
fn current_everything_prompts_are_listed_checked_and_rendered() {
    let server = start_everything("streamableHttp", false);
    let url = format!("{}/mcp", server.base());
    let lines = run_ok(
        &url,
        r#"
agent main() -> string with io {
  let auth = mcp.headers(values = record.empty())
  string.join(parts = [
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      string.join(parts = array.map(target = mcp.prompts(url = "URL", auth = auth), apply = agent (value: mcp.prompt_info) -> string { prompt_line(value = value) }), separator = " ")
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      let args = array.get(target = mcp.prompts(url = "URL", auth = auth), index = 1)
      json.to_text(value = args)
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "args-prompt", arguments = { city = "Paris" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "args-prompt", arguments = { city = "Austin", state = "Texas" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "args-prompt", arguments = { state = "Texas" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "args-prompt", arguments = { city = "Paris", country = "France" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "no-such-prompt"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "resource-prompt", arguments = { resourceType = "Text", resourceId = "5" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "simple-prompt"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "resource-prompt", arguments = { resourceType = "Blob", resourceId = "3" }))
    }),
  ], separator = "\n")
}
"#,
    );
    assert_eq!(lines.len(), 10, "{lines:#?}");
    assert_eq!(
        lines[0],
        "simple-prompt() args-prompt(city!,state?) completable-prompt(department!,name!) resource-prompt(resourceType!,resourceId!)"
    );
    assert_eq!(
        lines[1],
        r#"{"$constructor":"prelude.mcp.prompt_info","value":{"name":"args-prompt","title":"Arguments Prompt","description":"A prompt with two arguments, one required and one optional","arguments":[{"$constructor":"prelude.mcp.prompt_argument","value":{"name":"city","description":"Name of the city","required":true}},{"$constructor":"prelude.mcp.prompt_argument","value":{"name":"state","description":null,"required":false}}]}}"#
    );
    assert_eq!(lines[2], "user text null What's weather in Paris?");
    assert!(
        lines[3].starts_with("user text null ") && lines[3].contains("Austin, Texas"),
        "{}",
        lines[3]
    );
    // Required arguments are checked before the prompt is fetched.
    assert_eq!(
        lines[4],
        format!(
            "server_error: Prompt 'args-prompt' on MCP server '{url}' is missing required arguments: city"
        )
    );
    assert_eq!(
        lines[5],
        format!(
            "server_error: Prompt 'args-prompt' on MCP server '{url}' has no argument 'country'. Its arguments: city (required), state."
        )
    );
    assert_eq!(
        lines[6],
        format!("server_error: MCP server '{url}' has no prompt 'no-such-prompt'.")
    );
    // An embedded text resource keeps its URI and contributes its text.
    let parts: Vec<&str> = lines[7].split(" | ").collect();
    assert_eq!(parts.len(), 2, "{}", lines[7]);
    assert!(parts[0].starts_with("user text null "), "{}", parts[0]);
    assert!(
        parts[1].starts_with(
            r#"user resource "demo://resource/dynamic/text/5" Resource 5: This is a plaintext resource created at "#
        ),
        "{}",
        parts[1]
    );
    assert!(lines[8].starts_with("user text null "), "{}", lines[8]);
    // An embedded blob resource becomes a file holding the server's bytes.
    let parts: Vec<&str> = lines[9].split(" | ").collect();
    assert_eq!(parts.len(), 2, "{}", lines[9]);
    let data = parts[1]
        .strip_prefix(r#"user resource "demo://resource/dynamic/blob/3" file text/plain "#)
        .unwrap_or_else(|| panic!("{}", parts[1]));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("the file's bytes as base64");
    assert!(
        bytes.starts_with(b"Resource 3: This is a base64 blob created at "),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
}

// -------------------------------------------------------------------------------------------
// Servers written with the Python SDK
// -------------------------------------------------------------------------------------------

/// A text resource, a bytes resource, a template and a prompt (the high-level `MCPServer`).
const PY_RESOURCES: &str = r#"
import sys
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("katari-resources")

@server.resource("text://greeting", name="greeting", title="Greeting", description="A friendly text.", mime_type="text/plain")
def greeting() -> str:
    return "Hello from Python"

@server.resource("bytes://logo", name="logo", mime_type="image/x-test")
def logo() -> bytes:
    return bytes([0, 1, 2, 250, 251, 252, 253, 254, 255])

@server.resource("echo://{word}/tail", name="echo", description="Echoes the decoded word.", mime_type="text/plain")
def echo(word: str) -> str:
    return f"word=[{word}]"

@server.resource("auth://{what}", name="check", mime_type="text/plain")
def check(what: str, ctx: Context) -> str:
    """Says whether the request carried the expected API key (without echoing it)."""
    headers = ctx.headers or {}
    return "key ok" if headers.get("x-api-key") == "s3cret-value" else "key missing"

@server.prompt(description="Asks about a topic.")
def ask(topic: str, tone: str = "plain") -> str:
    return f"Tell me about {topic} ({tone})."

server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
"#;

/// A server with tools only: the low-level `Server` declares only the capabilities it has
/// handlers for (the high-level `MCPServer` always declares resources and prompts).
const PY_TOOLS_ONLY: &str = r#"
import sys
import uvicorn
from mcp import types
from mcp.server import Server

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="answer", description="Returns the answer.", input_schema={"type": "object"})])

async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="42")])

server = Server("katari-tools-only", on_list_tools=list_tools, on_call_tool=call_tool)
uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"#;

/// A Python server from `source`, on a free port.
fn start_python(source: &str) -> (Peer, katari_tests::e2e::Scratch) {
    let dir = scratch(&[("server.py", source)]);
    let port = free_port();
    let mut command = Command::new(python_mcp());
    command.arg(dir.join("server.py")).arg(port.to_string());
    (Peer::start(command, port), dir)
}

#[test]
fn python_sdk_resources_templates_and_prompts() {
    let (server, dir) = start_python(PY_RESOURCES);
    let url = format!("{}/mcp", server.base());
    let lines = run_ok(
        &url,
        r#"
agent main() -> string {
  let auth = mcp.headers(values = { "X-Api-Key" = env.get_secret(key = "KATARI_TEST_API_KEY") })
  string.join(parts = [
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      json.to_text(value = mcp.resources(url = "URL", auth = auth))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "text://greeting"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "bytes://logo"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "echo://{word}/tail", arguments = { word = "a b/é?&x=1~" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      string.join(parts = array.map(target = mcp.prompts(url = "URL", auth = auth), apply = agent (value: mcp.prompt_info) -> string { f"${prompt_line(value = value)} ${json.to_text(value = value.description)}" }), separator = " ")
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "ask", arguments = { topic = "owls" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "ask", arguments = { topic = "owls", tone = "curious" }))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "ask"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "auth://check"))
    }),
  ], separator = "\n")
}
"#,
    );
    assert_eq!(lines.len(), 9, "{lines:#?}");
    // Resources, then templates, each in the server's order.
    let positions: Vec<usize> = [
        r#"{"$constructor":"prelude.mcp.resource","value":{"uri":"text://greeting","name":"greeting","title":"Greeting","description":"A friendly text.","mime_type":"text/plain","size":null,"template":false}}"#,
        r#"{"$constructor":"prelude.mcp.resource","value":{"uri":"bytes://logo","name":"logo","#,
        r#"{"$constructor":"prelude.mcp.resource","value":{"uri":"echo://{word}/tail","name":"echo","title":null,"description":"Echoes the decoded word.","mime_type":"text/plain","size":null,"template":true}}"#,
        r#"{"$constructor":"prelude.mcp.resource","value":{"uri":"auth://{what}","name":"check","#,
    ]
    .iter()
    .map(|entry| {
        lines[0]
            .find(entry)
            .unwrap_or_else(|| panic!("{entry} is not in {}", lines[0]))
    })
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{}", lines[0]);
    assert_eq!(
        lines[0].matches("prelude.mcp.resource").count(),
        4,
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        r#"text text://greeting "text/plain" Hello from Python"#
    );
    assert_eq!(
        lines[2],
        format!(
            r#"blob bytes://logo "image/x-test" image/x-test {}"#,
            b64(&[0, 1, 2, 250, 251, 252, 253, 254, 255])
        )
    );
    // The server decodes the percent-encoded value back to what the script gave.
    assert_eq!(
        lines[3],
        r#"text echo://a%20b%2F%C3%A9%3F%26x%3D1~/tail "text/plain" word=[a b/é?&x=1~]"#
    );
    assert_eq!(lines[4], r#"ask(topic!,tone?) "Asks about a topic.""#);
    assert_eq!(lines[5], "user text null Tell me about owls (plain).");
    assert_eq!(lines[6], "user text null Tell me about owls (curious).");
    assert_eq!(
        lines[7],
        format!(
            "server_error: Prompt 'ask' on MCP server '{url}' is missing required arguments: topic"
        )
    );
    // The private header value reached the server (and only through the header).
    assert_eq!(lines[8], r#"text auth://check "text/plain" key ok"#);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_server_without_resources_or_prompts_says_so() {
    let (server, dir) = start_python(PY_TOOLS_ONLY);
    let url = format!("{}/mcp", server.base());
    let lines = run_ok(
        &url,
        r#"
agent main() -> string with io {
  let auth = mcp.headers(values = record.empty())
  string.join(parts = [
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      json.to_text(value = mcp.resources(url = "URL", auth = auth))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      items(values = mcp.read(url = "URL", auth = auth, uri = "text://anything"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      json.to_text(value = mcp.prompts(url = "URL", auth = auth))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      messages(values = mcp.prompt(url = "URL", auth = auth, name = "ask"))
    }),
    attempt(body = agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
      json.to_text(value = record.keys(target = mcp.tools(url = "URL", auth = auth)))
    }),
  ], separator = "\n")
}
"#,
    );
    let resources = format!(
        "server_error: MCP server '{url}' does not offer resources: its initialize reply declares no resources capability"
    );
    let prompts = format!(
        "server_error: MCP server '{url}' does not offer prompts: its initialize reply declares no prompts capability"
    );
    assert_eq!(
        lines,
        [
            resources.as_str(),
            resources.as_str(),
            prompts.as_str(),
            prompts.as_str(),
            r#"["answer"]"#
        ]
    );
    let _ = std::fs::remove_dir_all(dir);
}
