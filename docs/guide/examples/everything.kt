// docs/guide/examples/everything.kt
// Calls the reference MCP server "everything", which .mcp.json beside this file configures.

@"Calls the tool `name` with `args`, validated against the tool's input schema, and shows the result as JSON."
agent call(tools: mcp.toolbox, name: string, args: unknown) -> string
    with io | prelude.throw[mcp.server_error | mcp.auth_error | reflection.call_error] {
  match (record.get(target = tools, key = name)) {
    case null -> f"there is no tool ${name}"
    case tool -> json.to_text(value = reflection.call_agent(target = tool, args = args))
  }
}

@"Lists the server's tools and calls two of them."
agent main() -> string with io | prelude.throw[mcp.server_error | mcp.auth_error | reflection.call_error] {
  let tools = mcp.tools(url = "mcp:everything", auth = mcp.headers(values = record.empty()))
  let names = record.keys(target = tools)
  string.join(parts = [
    f"${string.to_string(value = array.length(target = names))} tools, among them ${string.join(parts = array.slice(target = names, start = 0, end = 3), separator = ", ")}",
    call(tools = tools, name = "echo", args = { message = "hello from katari" }),
    call(tools = tools, name = "get-sum", args = { a = 2, b = 40 }),
  ], separator = "\n")
}
