// `mcp.call` sends its arguments literally, but MCP carries a tool's arguments as an object: any
// other tree is refused as the server would refuse it, with a `server_error` the script handles
// (not a panic), and the server is not called.
@"Doubles a number."
agent double(value: integer) -> integer { value * 2 }

agent attempt(url: string, arguments: json.json) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      match (error) {
        case mcp.server_error(message) -> {
          let at = string.index_of(value = message, search = "': ")
          break match (at) {
            case null -> message
            case i -> f"server_error: ${string.slice(value = message, start = i + 3, end = string.length(value = message))}"
          }
        }
        case mcp.auth_error(message) -> { break f"auth_error: ${message}" }
      }
    }
  }
  json.stringify(value = mcp.call(url = url, auth = mcp.headers(values = record.empty()), tool = "double", arguments = arguments))
}

agent client(url: string) -> array[string] {
  [
    attempt(url = url, arguments = json.json_array(items = [json.json_number(value = 21)])),
    attempt(url = url, arguments = json.json_string(value = "21")),
    attempt(url = url, arguments = json.json_number(value = 21)),
    attempt(url = url, arguments = json.json_boolean(value = true)),
    attempt(url = url, arguments = json.json_object(entries = { value = json.json_number(value = 21) })),
  ]
}

agent main() -> array[string] { mcp.serve(tools = { double = double }, subscriber = client) }
