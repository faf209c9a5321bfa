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

// Resources and prompts (extension, `docs/mcp-extensions.md`).

@"A resource or resource template listed by an MCP server (`resources`)."
data resource(
  @"The resource's URI; for a template, its RFC 6570 URI template (read it with `read` and `arguments`)."
  uri: string,
  @"The server's name for the resource."
  name: string,
  @"A display title, or null when the server gave none."
  title: string | null,
  @"What the resource holds, or null when the server gave no description."
  description: string | null,
  @"The MIME type, or null when the server gave none."
  mime_type: string | null,
  @"The size in bytes, or null when unknown (always null for a template)."
  size: integer | null,
  @"Whether this entry is a resource template rather than a resource."
  template: boolean,
)

@"A text item of a resource read with `read`."
data text_contents(
  @"The URI of this item (the read URI or a sub-resource)."
  uri: string,
  @"The MIME type, or null when the server gave none."
  mime_type: string | null,
  text: string,
)

@"A binary item of a resource read with `read`, saved as a file whose content type is `mime_type` (empty when null)."
data blob_contents(
  @"The URI of this item (the read URI or a sub-resource)."
  uri: string,
  @"The MIME type, or null when the server gave none."
  mime_type: string | null,
  file: file,
)

// One item of a resource read with `read`.
type resource_contents = text_contents | blob_contents

@"An argument a server prompt declares."
data prompt_argument(
  name: string,
  @"What the argument means, or null when the server gave no description."
  description: string | null,
  required: boolean,
)

@"A prompt listed by an MCP server (`prompts`)."
data prompt_info(
  @"The name to pass to `prompt`."
  name: string,
  @"A display title, or null when the server gave none."
  title: string | null,
  @"What the prompt is for, or null when the server gave no description."
  description: string | null,
  arguments: array[prompt_argument],
)

@"One message of a rendered server prompt (`prompt`)."
data prompt_message(
  @"\"user\" or \"assistant\"."
  role: string,
  @"\"text\", \"image\", \"audio\", \"resource\" (an embedded resource) or \"resource_link\"."
  kind: string,
  @"The text, or a file for an image, audio or binary embedded resource; a resource link is the text \"(resource: URI)\"."
  content: string | file,
  @"The URI of an embedded resource or resource link, otherwise null."
  uri: string | null,
)

@"Lists the resources of the MCP server at `url`, then its resource templates, each in the server's order with every page followed."
external agent resources(url: string, auth: auth) -> array[resource] with prelude.throw[server_error | auth_error] from "mcp"

@"Reads the resource `uri` of the MCP server at `url`. A `uri` containing `{` is an RFC 6570 level-1 template whose `{name}` placeholders are replaced by the percent-encoded `arguments`."
external agent read(
  url: string,
  auth: auth,
  uri: string,
  @"Values for the template's placeholders; unused ones are ignored."
  arguments: record[string] | null ?= null,
) -> array[resource_contents] with prelude.throw[server_error | auth_error] from "mcp"

@"Lists the prompts of the MCP server at `url` with their arguments, in the server's order with every page followed."
external agent prompts(url: string, auth: auth) -> array[prompt_info] with prelude.throw[server_error | auth_error] from "mcp"

@"Renders the prompt `name` of the MCP server at `url` with string `arguments`, checked first against the prompt's declared arguments; returns its messages in order."
external agent prompt(
  url: string,
  auth: auth,
  name: string,
  @"The prompt's arguments by name; every required one must be given."
  arguments: record[string] | null ?= null,
) -> array[prompt_message] with prelude.throw[server_error | auth_error] from "mcp"
