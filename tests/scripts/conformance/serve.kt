// C31 of language.md §13.
@"Doubles a number."
agent double(value: integer) -> integer { value * 2 }
@"Describes a name."
agent info(name: string) -> { name: string, size: integer } { { name = name, size = string.length(value = name) } }

agent client(url: string) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error | reflection.call_error) -> never { break "mcp failed" }
  }
  let tools = mcp.tools(url = url, auth = mcp.headers(values = record.empty()))
  let doubled = match (record.get(target = tools, key = "double")) {
    case null -> "missing"
    case tool -> json.to_text(value = reflection.call_agent(target = tool, args = { value = 21 }))
  }
  let described = match (record.get(target = tools, key = "info")) {
    case null -> "missing"
    case tool -> json.to_text(value = reflection.call_agent(target = tool, args = { name = "ada" }))
  }
  f"${json.to_text(value = record.keys(target = tools))} ${doubled} ${described}"
}
agent main() -> string { mcp.serve(tools = { double = double, info = info }, subscriber = client) }
