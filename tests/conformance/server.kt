// The fixture server of host/tests/mcp_serve.rs and the MCP conformance suite
// (`conformance server --url URL`): agents published with `mcp.serve` under the suite's tool
// names, plus tools that exercise the endpoint's error paths. The subscriber prints the URL and
// keeps the endpoint open for `seconds` seconds.

@"Returns a fixed text."
agent test_simple_text() -> string { "This is a simple text response for testing." }

@"Returns an image (served as text: mcp.serve has no image content)."
agent test_image_content() -> string { "image" }

@"Always fails with a tool error."
agent test_error_handling() -> string with prelude.throw[mcp.server_error] {
  prelude.throw(error = mcp.server_error(message = "This tool intentionally returns an error for testing"))
}

@"Adds two integers."
agent add(a: integer, b: integer) -> integer { a + b }

@"Describes a name."
agent info(name: string) -> { name: string, size: integer } { { name = name, size = string.length(value = name) } }

@"Echoes a name and a token; the token is private, so replies redact it."
agent keep(name: string, token: string of private) -> { name: string, token: string of private } { { name = name, token = token } }

@"Divides by zero."
agent crash(n: integer) -> number { n / 0 }

@"Sleeps, then answers."
agent slow(milliseconds: integer) -> string {
  time.sleep(milliseconds = milliseconds)
  "slept"
}

@"Calls itself over this endpoint `depth` times: answers only when calls are served concurrently."
agent relay(url: string, depth: integer) -> string {
  use handler { request prelude.throw(error: http.fetch_error) -> never { break "fetch failed" } }
  if (depth == 0) {
    "bottom"
  } else {
    let call = { jsonrpc = "2.0", id = depth, method = "tools/call", params = { name = "relay", arguments = { url = url, depth = depth - 1 } } }
    let reply = http.fetch(url = url, method = "POST", headers = record.empty(), body = json.to_text(value = call))
    reply.body
  }
}

agent hold(url: string, seconds: integer) -> string {
  console.print(text = url)
  time.sleep(milliseconds = seconds * 1000)
  "released"
}

agent main(seconds: integer ?= 600) -> string {
  mcp.serve(
    tools = { test_simple_text = test_simple_text, test_image_content = test_image_content, test_error_handling = test_error_handling, add = add, info = info, keep = keep, crash = crash, slow = slow, relay = relay },
    subscriber = hold(seconds = seconds, url = _),
  )
}
