//! The MCP client (`prelude.md` §14.2–14.5) against a hostile server, beyond the faults of
//! `mcp_client.rs`: odd tool listings (duplicate names, non-object or cyclic or deeply nested
//! schemas, control characters in names) and odd call results (non-object `structuredContent`,
//! unknown content blocks, invalid base64 images). Each gives a value or a typed
//! `server_error`, never a panic, and the next call works. The server is a fake written here for
//! fault injection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;

use katari_tests::e2e::Outcome;
use serde_json::{Value, json};

/// The fake server (fault injection): `POST /<listing>` answers `tools/list` with the listing
/// named by the path and `tools/call` with the reply named by the tool.
fn start() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake server");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            // A big stack: the deeply nested listing is built and written recursively.
            let _ = std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || serve(stream));
        }
    });
    format!("http://127.0.0.1:{port}")
}

fn deep_schema(depth: usize) -> Value {
    let mut s = json!({"type": "string"});
    for _ in 0..depth {
        s = json!({"type": "object", "properties": {"a": s}});
    }
    s
}

fn listing(path: &str) -> Value {
    let tool = |name: &str, schema: Value| json!({"name": name, "description": "d", "inputSchema": schema});
    let object = json!({"type": "object"});
    match path {
        "/dup" => json!([
            {"name": "a", "description": "first", "inputSchema": object},
            tool("b", object.clone()),
            {"name": "a", "description": "second", "inputSchema": object},
        ]),
        "/nonobject" => json!([tool("s", json!("x"))]),
        "/nonobject-array" => json!([tool("s", json!([1]))]),
        "/ref" => json!([tool(
            "r",
            json!({"type": "object", "properties": {"x": {"$ref": "#"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}})
        )]),
        "/deep" => json!([tool("d", deep_schema(300))]),
        "/deep-ok" => json!([tool("d", deep_schema(20))]),
        "/control" => json!([
            tool("bad\u{7}name\u{1b}[31m", object),
            tool("ok", json!({"type": "object"}))
        ]),
        "/noname" => json!([{"description": "x", "inputSchema": object}]),
        _ => json!([tool("ok", object)]),
    }
}

fn call_result(tool: &str) -> Value {
    match tool {
        "structured_array" => {
            json!({"content": [{"type": "text", "text": "[1,2]"}], "structuredContent": [1, 2]})
        }
        "structured_string" => {
            json!({"content": [{"type": "text", "text": "s"}], "structuredContent": "s"})
        }
        "unknown_block" => {
            json!({"content": [{"type": "widget", "knob": 1}, {"type": "text", "text": "hi"}]})
        }
        "bad_image" => {
            json!({"content": [{"type": "image", "data": "!!not base64!!", "mimeType": "image/png"}]})
        }
        "bad_mime" => {
            json!({"content": [{"type": "image", "data": "aGk=", "mimeType": "\u{1b}[31m/../x"}]})
        }
        "no_content" => json!({}),
        "content_string" => json!({"content": "x"}),
        "block_not_object" => json!({"content": [1, null]}),
        _ => json!({"content": [{"type": "text", "text": "fine"}]}),
    }
}

fn serve(stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line.split(' ').nth(1).unwrap_or("/").to_string();
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
        let respond = |stream: &mut TcpStream, status: &str, body: &[u8]| {
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream
                .write_all(head.as_bytes())
                .and_then(|()| stream.write_all(body))
        };
        if !request_line.starts_with("POST") {
            let _ = respond(&mut stream, "405 Method Not Allowed", b"");
            continue;
        }
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let id = message["id"].clone();
        let result = match message["method"].as_str().unwrap_or("") {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fault-injector", "version": "0"}
            }),
            "tools/list" => json!({"tools": listing(&path)}),
            "tools/call" => call_result(message["params"]["name"].as_str().unwrap_or("")),
            _ if id.is_null() => {
                let _ = stream.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
                continue;
            }
            _ => json!({}),
        };
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        if respond(&mut stream, "200 OK", reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn run(dir: &Path) -> Outcome {
    katari_tests::e2e::run(env!("CARGO_BIN_EXE_katari"), dir, &["main.kt"], &[])
}

const SCRIPT: &str = r#"
agent list(path: string) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) { case mcp.server_error(message => m) -> f"${path}: server_error: ${m}" case mcp.auth_error(message => m) -> f"${path}: auth_error: ${m}" }
    }
  }
  let tools = mcp.tools(url = f"BASE${path}", auth = mcp.headers(values = record.empty()))
  let names = json.to_text(value = record.keys(target = tools))
  let described = match (record.get(target = tools, key = "a")) {
    case null -> ""
    case tool -> f" a=${reflection.get_metadata(value = tool).description}"
  }
  f"${path}: ${names}${described}"
}
agent try(tool: string) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) { case mcp.server_error(message => m) -> f"${tool}: server_error: ${m}" case mcp.auth_error(message => m) -> f"${tool}: auth_error: ${m}" }
    }
  }
  let reply = mcp.call(url = "BASE/calls", auth = mcp.headers(values = record.empty()), tool = tool, arguments = json.json_null())
  f"${tool}: ${json.stringify(value = reply)}"
}
agent main() -> string {
  string.join(parts = [
    list(path = "/dup"), list(path = "/nonobject"), list(path = "/nonobject-array"), list(path = "/ref"),
    list(path = "/deep"), list(path = "/deep-ok"), list(path = "/control"), list(path = "/noname"), list(path = "/fine"),
    try(tool = "structured_array"), try(tool = "structured_string"), try(tool = "unknown_block"),
    try(tool = "bad_image"), try(tool = "bad_mime"), try(tool = "no_content"), try(tool = "content_string"),
    try(tool = "block_not_object"), try(tool = "ok"),
  ], separator = "\n")
}
"#;

#[test]
fn a_hostile_server_gives_values_or_server_errors_and_the_next_call_works() {
    let base = start();
    let dir = katari_tests::e2e::scratch(
        "mcp-client-hardening",
        &[("main.kt", &SCRIPT.replace("BASE", &base))],
    );
    let out = run(&dir);
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    let unexpected = |path: &str, method: &str| {
        format!(
            "{path}: server_error: MCP server '{base}{path}' sent an unexpected reply to {method}"
        )
    };
    let calls = |tool: &str| {
        format!(
            "{tool}: server_error: MCP server '{base}/calls' sent an unexpected reply to tools/call \"{tool}\""
        )
    };
    let expected = [
        // A name listed twice keeps its first position and its last definition (§14.3).
        r#"/dup: ["a","b"] a=second"#.to_string(),
        unexpected("/nonobject", "tools/list"),
        unexpected("/nonobject-array", "tools/list"),
        r#"/ref: ["r"]"#.to_string(),
        format!("/deep: server_error: MCP server '{base}/deep' failed during tools/list: unexpected server response: could not parse JSON response as ServerJsonRpcMessage: recursion limit exceeded"),
        r#"/deep-ok: ["d"]"#.to_string(),
        r#"/control: ["bad\u0007name\u001b[31m","ok"]"#.to_string(),
        unexpected("/noname", "tools/list"),
        r#"/fine: ["ok"]"#.to_string(),
        "structured_array: [1,2]".to_string(),
        r#"structured_string: "s""#.to_string(),
        // Regression: rmcp refused the whole reply; §14.4 wants the line `(<type> content)`.
        r#"unknown_block: "(widget content)\nhi""#.to_string(),
        format!("bad_image: server_error: MCP server '{base}/calls' sent image content for tool \"bad_image\" whose data is not base64"),
        r#"bad_mime: {"text":"","files":[{"$ref":"sha256-8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4","semanticKind":"file"}]}"#.to_string(),
        r#"no_content: """#.to_string(),
        calls("content_string"),
        calls("block_not_object"),
        r#"ok: "fine""#.to_string(),
    ];
    assert_eq!(lines.len(), expected.len(), "{}", out.stdout);
    for (line, want) in lines.iter().zip(&expected) {
        assert!(line.starts_with(want.as_str()), "got  {line}\nwant {want}");
    }
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
