// Calls one tool of an OAuth-protected MCP server with a stored credential (host/tests/mcp_login.rs).
agent main(url: string, tool: string, cred: string) -> string {
  let reply = mcp.call(url = url, auth = mcp.oauth(name = cred), tool = tool, arguments = json.json_object(entries = record.empty()))
  json.to_text(value = reply)
}
