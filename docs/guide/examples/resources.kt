// docs/guide/examples/resources.kt
// Resources and prompts of the reference MCP server "everything" (configured in .mcp.json).

@"The first line of each text item of a resource."
agent first_lines(contents: array[mcp.resource_contents]) -> array[string] {
  for (let item in contents) {
    next match (item) {
      case mcp.text_contents(text) -> match (array.get(target = string.split(value = text, separator = "\n"), index = 0)) {
        case null -> ""
        case line -> line
      }
      case mcp.blob_contents(mime_type) -> f"(binary ${json.to_text(value = mime_type)})"
    }
  }
}

@"The URI of each item of a resource."
agent uris(contents: array[mcp.resource_contents]) -> array[string] {
  for (let item in contents) {
    next match (item) {
      case mcp.text_contents(uri) -> uri
      case mcp.blob_contents(uri) -> uri
    }
  }
}

@"Lists resources and templates, reads a resource and a template, and renders a prompt."
agent main() -> array[unknown] with io | prelude.throw[mcp.server_error | mcp.auth_error] {
  let server = "mcp:everything"
  let auth = mcp.headers(values = record.empty())
  let listed = mcp.resources(url = server, auth = auth)
  let templates = array.filter(target = listed, keep = agent (value: mcp.resource) -> boolean { value.template })
  let readme = mcp.read(url = server, auth = auth, uri = "demo://resource/static/document/features.md")
  let dynamic = mcp.read(
    url = server,
    auth = auth,
    uri = "demo://resource/dynamic/text/{resourceId}",
    arguments = record.set(target = record.empty(), key = "resourceId", value = "7"),
  )
  let messages = mcp.prompt(
    url = server,
    auth = auth,
    name = "args-prompt",
    arguments = record.set(target = record.empty(), key = "city", value = "Lisbon"),
  )
  [
    f"${string.to_string(value = array.length(target = listed))} resources, ${string.to_string(value = array.length(target = templates))} of them templates",
    first_lines(contents = readme),
    uris(contents = dynamic),
    array.map(target = messages, apply = agent (value: mcp.prompt_message) -> unknown { [value.role, value.content] }),
  ]
}
