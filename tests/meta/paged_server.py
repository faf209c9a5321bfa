"""A paginating MCP server for the benchmarks of katari's meta-functions
(host/src/meta/bench.rs, run by bench/meta.sh), written with the Python SDK's low-level `Server`
(mcp==2.3.0), whose list handlers honour the cursor (the high-level `MCPServer` ignores it).

It serves a generated catalog, the same for the same counts (fixed seed): tools with names such
as `create_invoice_batch`, titles, descriptions of 12 to 30 words and input schemas of two to
five properties; text resources (`file:///workspace/...`); resource templates; prompts with one
to three arguments. Every listing is paginated, PAGE items at a time (`nextCursor` is the next
offset as a string, absent on the last page). Pages are built once at start-up, so a listing
costs only the SDK's own work (validation, serialisation, stdio). A kind with a count of 0 is
not advertised (the low-level server derives its capabilities from the handlers it has).
`tools/call` answers with the tool's name.

Usage: paged_server.py [--tools N] [--resources N] [--templates N] [--prompts N] [--page N]
(stdio; defaults: 1000 tools, nothing else, pages of 50).
"""

import argparse
import random

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

VERBS = ["get", "list", "create", "update", "delete", "search", "sync", "export", "import", "archive",
         "restore", "approve", "assign", "close", "merge", "render", "schedule", "validate", "publish",
         "summarize", "translate", "upload", "download", "rotate", "tag", "share", "comment", "forecast"]
NOUNS = ["issue", "pull_request", "invoice", "customer", "order", "shipment", "ticket", "repository",
         "branch", "commit", "deployment", "calendar_event", "document", "spreadsheet", "message",
         "channel", "user", "team", "project", "task", "report", "dashboard", "alert", "metric",
         "backup", "certificate", "domain", "bucket", "table", "query", "payment", "refund",
         "subscription", "contract", "lead", "campaign", "playlist", "recipe", "flight", "booking",
         "warehouse", "supplier", "employee", "timesheet", "expense", "budget", "webhook", "secret",
         "cluster", "pipeline", "incident", "runbook", "survey", "invoice_line", "coupon", "review"]
QUALIFIERS = ["", "_by_id", "_batch", "_details", "_history", "_status", "_comments", "_labels",
              "_attachments", "_permissions", "_summary", "_draft", "_v2", "_for_team", "_archive",
              "_preview", "_metadata", "_links", "_owners", "_revisions", "_tags", "_settings",
              "_events", "_stats", "_export"]
WORDS = ("quickly securely returns the matching records from workspace including pagination filters "
         "timestamps owner state recent changes for a given identifier with optional sorting and "
         "limits only visible to caller region currency language format as JSON CSV Markdown when "
         "available otherwise empty list fails if missing permission rate limited retry later open "
         "closed pending overdue monthly weekly daily archived shared private public default "
         "primary secondary billing shipping support engineering marketing sales finance legal "
         "compliance audit trail attachment preview thumbnail revision author reviewer assignee "
         "priority severity label milestone sprint quarter fiscal year total count average latency "
         "error budget threshold notification email webhook slack calendar timezone locale "
         "signature approval workflow template checklist inventory stock price discount tax").split()
EXTENSIONS = [("md", "text/markdown"), ("csv", "text/csv"), ("json", "application/json"),
              ("txt", "text/plain"), ("log", "text/plain"), ("yaml", "application/yaml")]
PROPERTIES = [("id", "string", "The identifier."), ("query", "string", "Words to match."),
              ("limit", "integer", "The most results to return."),
              ("cursor", "string", "Where the previous page ended."),
              ("owner", "string", "The owner's login."), ("since", "string", "An ISO 8601 date."),
              ("dry_run", "boolean", "Only report what would change."),
              ("labels", "array", "Labels to filter by."), ("region", "string", "The region code."),
              ("amount", "number", "An amount in the account's currency.")]


def words(rng, low, high):
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def spaced(identifier):
    return identifier.strip("_").replace("_", " ")


def catalog(counts):
    rng = random.Random(7)
    tools, names = [], set()
    while len(tools) < counts["tools"]:
        verb, noun, qualifier = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(QUALIFIERS)
        name = f"{verb}_{noun}{qualifier}"
        if name in names:
            name = f"{name}_{len(tools)}"
        names.add(name)
        chosen = rng.sample(PROPERTIES, rng.randint(2, 5))
        properties = {}
        for pname, ptype, pdesc in chosen:
            schema = {"type": ptype, "description": pdesc}
            if ptype == "array":
                schema["items"] = {"type": "string"}
            properties[pname] = schema
        tools.append(types.Tool(
            name=name,
            title=f"{verb.capitalize()} {spaced(noun)} {spaced(qualifier)}".strip(),
            description=f"{verb.capitalize()} a {spaced(noun)}: {words(rng, 12, 30)}.",
            input_schema={"type": "object", "properties": properties, "required": [chosen[0][0]]},
        ))
    resources = []
    for i in range(counts["resources"]):
        noun = rng.choice(NOUNS)
        ext, mime = rng.choice(EXTENSIONS)
        resources.append(types.Resource(
            uri=f"file:///workspace/{noun}s/{noun}-{i}.{ext}",
            name=f"{noun}-{i}.{ext}",
            description=f"The {spaced(noun)} file {i}: {words(rng, 6, 18)}.",
            mime_type=mime,
            size=rng.randint(200, 200_000),
        ))
    templates = []
    for i in range(counts["templates"]):
        noun, qualifier = rng.choice(NOUNS), rng.choice(QUALIFIERS)
        templates.append(types.ResourceTemplate(
            uri_template=f"api://{noun}s/{{id}}/{qualifier.strip('_') or 'view'}/{i}",
            name=f"{noun}{qualifier}_{i}",
            description=f"One {spaced(noun)} by id, {spaced(qualifier) or 'as a view'}: {words(rng, 6, 18)}.",
            mime_type="application/json",
        ))
    prompts = []
    for i in range(counts["prompts"]):
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        arguments = [
            types.PromptArgument(name=pname, description=pdesc, required=j == 0)
            for j, (pname, _, pdesc) in enumerate(rng.sample(PROPERTIES, rng.randint(1, 3)))
        ]
        prompts.append(types.Prompt(
            name=f"{verb}_{noun}_prompt_{i}",
            description=f"Ask the model to {verb} a {spaced(noun)}: {words(rng, 8, 20)}.",
            arguments=arguments,
        ))
    return tools, resources, templates, prompts


def paged(items, size, make):
    pages = {}
    for start in range(0, max(len(items), 1), size):
        end = start + size
        pages[str(start)] = make(items[start:end], str(end) if end < len(items) else None)

    async def handler(ctx, params):
        cursor = (params.cursor if params else None) or "0"
        page = pages.get(cursor)
        if page is None:
            raise ValueError(f"unknown cursor {cursor!r}")
        return page

    return handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--resources", type=int, default=0)
    parser.add_argument("--templates", type=int, default=0)
    parser.add_argument("--prompts", type=int, default=0)
    parser.add_argument("--page", type=int, default=50)
    args = parser.parse_args()
    counts = {k: getattr(args, k) for k in ("tools", "resources", "templates", "prompts")}
    tools, resources, templates, prompts = catalog(counts)
    handlers = {}
    if tools:
        handlers["on_list_tools"] = paged(
            tools, args.page, lambda items, cursor: types.ListToolsResult(tools=items, next_cursor=cursor))

        async def call_tool(ctx, params):
            return types.CallToolResult(content=[types.TextContent(text=params.name)])

        handlers["on_call_tool"] = call_tool
    if resources or templates:
        handlers["on_list_resources"] = paged(
            resources, args.page,
            lambda items, cursor: types.ListResourcesResult(resources=items, next_cursor=cursor))
        handlers["on_list_resource_templates"] = paged(
            templates, args.page,
            lambda items, cursor: types.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor))
    if prompts:
        handlers["on_list_prompts"] = paged(
            prompts, args.page, lambda items, cursor: types.ListPromptsResult(prompts=items, next_cursor=cursor))
    server = Server("katari-bench-paged", **handlers)

    async def run():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
