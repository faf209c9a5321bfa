// The `mcp` module (`prelude.md` §14): an MCP client (listing and calling tools) and an MCP
// server that publishes agents for the extent of a subscriber.

@"An MCP server rejected a listing or call, returned a tool error, or the transport failed."
data server_error(message: string)

@"An OAuth credential is missing or cannot be refreshed; a person must log in again with the command the message names."
data auth_error(message: string)

@"Header-based access to an MCP server; the header values may be secrets. Use an empty record for anonymous access."
data headers(values: record[string of private])

@"A named OAuth credential from the host's credential store, filled by `katari mcp login`."
data oauth(name: string)

// How a client authenticates to an MCP server.
type auth = headers | oauth

// The top type of self-contained callables: agents whose effects are at most io and the two MCP errors.
type tool = agent never -> unknown with io | prelude.throw[server_error | auth_error]

// A record of tools keyed by name, as listed by `tools` and published by `serve`.
type toolbox = record[tool]

@"Lists the tools of the MCP server at `url` and returns one callable per tool, keyed by tool name."
external agent tools(url: string, auth: auth) -> toolbox with prelude.throw[server_error | auth_error] from "mcp"

@"Calls the tool `tool` of the MCP server at `url` with literal JSON `arguments`, without client-side validation, and returns the reply as a literal tree."
external agent call(url: string, auth: auth, tool: string, arguments: json.json) -> json.json with prelude.throw[server_error | auth_error] from "mcp"

@"Publishes the agents of `tools` as an MCP server at a fresh URL while `subscriber` runs; the subscriber's outcome is the result."
external agent serve[R, effect E](tools: toolbox, subscriber: agent (url: string) -> R with E) -> R with E from "mcp"
