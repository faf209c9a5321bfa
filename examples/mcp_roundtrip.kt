// MCP in both directions, with no sidecar: the script publishes two of its agents as an MCP
// server on the loopback listener, then acts as its own client — it lists the served tools,
// reads their metadata, calls them through `reflection.call_agent`, and catches a server error.
// Run it with `katari run examples/mcp_roundtrip.kt`. Point `mcp.tools` at any other MCP server
// URL (or `mcp:NAME` for a server in your config.toml) and the client half works the same.

@"Converts a temperature in degrees Celsius to degrees Fahrenheit."
agent to_fahrenheit(celsius: number) -> number { celsius * 9 / 5 + 32 }

@"Splits a sentence into words and counts them."
agent words(sentence: string) -> { words: array[string], count: integer } {
  let parts = string.split(value = sentence, separator = " ")
  { words = parts, count = array.length(target = parts) }
}

@"Calls the tool `name` of a toolbox with `args` and shows the result, or the error, as JSON text."
agent call(tools: mcp.toolbox, name: string, args: unknown) -> string with io {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error | reflection.call_error) -> never {
      break f"error: ${json.to_text(value = error)}"
    }
  }
  match (record.get(target = tools, key = name)) {
    case null -> f"${name} is missing"
    case tool -> json.to_text(value = reflection.call_agent(target = tool, args = args))
  }
}

@"Lists the served tools and calls them."
agent client(url: string) -> array[string] {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break [f"cannot list the tools: ${json.to_text(value = error)}"]
    }
  }
  let tools = mcp.tools(url = url, auth = mcp.headers(values = record.empty()))
  let described = for (let name in record.keys(target = tools)) {
    next match (record.get(target = tools, key = name)) {
      case null -> f"${name}: missing"
      case tool -> f"${name}: ${reflection.get_metadata(value = tool).description}"
    }
  }
  let results = [
    // A number result travels as text, so the client receives the string "212".
    call(tools = tools, name = "to_fahrenheit", args = { celsius = 100 }),
    // A record result also travels as structured content and comes back as a record.
    call(tools = tools, name = "words", args = { sentence = "tools are agents" }),
    // An argument that does not match the tool's input schema is refused before the server is
    // contacted.
    call(tools = tools, name = "words", args = { sentence = 42 }),
  ]
  array.concat(left = described, right = results)
}

agent main() -> string {
  let lines = mcp.serve(tools = { to_fahrenheit = to_fahrenheit, words = words }, subscriber = client)
  string.join(parts = lines, separator = "\n")
}
