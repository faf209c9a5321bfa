// The katari side of bench/mcp_client.py: `n` sequential calls of server-everything's `echo` over
// one cached connection, after one warm-up call that connects. `minted` calls the tool minted by
// `mcp.tools` through `reflection.call_agent` (validation included); otherwise `mcp.call`.
// Prints "<n> <milliseconds>".
agent main(url: string, n: integer, minted: boolean ?= false) -> string {
  let auth = mcp.headers(values = record.empty())
  let args = json.parse(text = "{\"message\": \"hi\"}")
  let elapsed = if (minted) {
    let tools = mcp.tools(url = url, auth = auth)
    match (record.get(target = tools, key = "echo")) {
      case null -> -1.0
      case tool -> {
        let warm = reflection.call_agent(target = tool, args = { message = "hi" })
        let start = time.now()
        for (let i in array.range(start = 0, end = n)) {
          reflection.call_agent(target = tool, args = { message = "hi" })
        }
        time.now() - start
      }
    }
  } else {
    let warm = mcp.call(url = url, auth = auth, tool = "echo", arguments = args)
    let start = time.now()
    for (let i in array.range(start = 0, end = n)) {
      mcp.call(url = url, auth = auth, tool = "echo", arguments = args)
    }
    time.now() - start
  }
  f"${string.to_string(value = n)} ${string.to_string(value = elapsed)}"
}
