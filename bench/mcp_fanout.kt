// The script of bench/mcp_fanout.sh and host/tests/mcp_fanout.rs: an `n`-way `parallel for` of MCP
// tool calls. The server is this script's own `mcp.serve` (one `add` tool, loopback, stateless
// Streamable HTTP); the subscriber mints the tool with `mcp.tools`, makes one warm-up call, then
// calls it once per element of a `parallel for` over `n` elements. Each iteration handles the MCP
// and call errors itself and counts them, so one failure cannot cancel the others.
// Prints "<n> <errors> <wrong results> <milliseconds>".

@"Adds two integers."
agent add(a: integer, b: integer) -> integer { a + b }

// 0: the right sum; 1: the call threw; 2: a wrong result.
agent one(tool: mcp.tool, i: integer) -> integer {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error | reflection.call_error) -> never { break 1 }
  }
  let sum = reflection.call_agent(target = tool, args = { a = i, b = 1 })
  // A served integer comes back as its text (prelude.md §14.6), so `add` answers the string "i + 1".
  if (json.to_text(value = sum) == json.to_text(value = string.to_string(value = i + 1))) { 0 } else { 2 }
}

agent fan(url: string, n: integer) -> string {
  let tools = mcp.tools(url = url, auth = mcp.headers(values = record.empty()))
  match (record.get(target = tools, key = "add")) {
    case null -> "no add tool"
    case tool -> {
      let warm = one(tool = tool, i = 0)
      let start = time.now()
      let outcomes = parallel for (let i in array.range(start = 0, end = n)) { next one(tool = tool, i = i) }
      let elapsed = time.now() - start
      let errors = array.length(target = array.filter(target = outcomes, keep = agent (value: integer) -> boolean { value == 1 }))
      let wrong = array.length(target = array.filter(target = outcomes, keep = agent (value: integer) -> boolean { value == 2 }))
      let counted = string.to_string(value = array.length(target = outcomes))
      f"${counted} ${string.to_string(value = errors + warm)} ${string.to_string(value = wrong)} ${string.to_string(value = elapsed)}"
    }
  }
}

agent main(n: integer ?= 1000) -> string {
  mcp.serve(tools = { add = add }, subscriber = fan(n = n, url = _))
}
