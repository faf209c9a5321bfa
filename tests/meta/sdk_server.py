"""A test MCP server for katari's chat meta-functions (host/src/meta/tests.rs), written with the
Python SDK (mcp==2.3.0): tools (a small echo, 300,000 bytes of multi-byte text, structured
content over 204,800 bytes, an image), text and binary resources (a 1 MB log with known
matching lines, 600 KB of multi-byte text, a blob that is UTF-8 text, a PNG blob, a resource
for the user only), a template, and prompts (two messages, two required arguments, an image).

Usage: sdk_server.py stdio | sdk_server.py streamable-http PORT, optionally followed by
--fail-prompt-listing, which makes prompts/list fail (a listing that fails, host.md §10.3.3).
"""

import sys

from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import AssistantMessage, Image, UserMessage
from mcp_types import Annotations

FAIL_PROMPTS = "--fail-prompt-listing" in sys.argv


class Server(MCPServer):
    async def list_prompts(self):
        if FAIL_PROMPTS:
            raise RuntimeError("prompt storage is down")
        return await super().list_prompts()


server = Server("katari-meta-test", instructions="Use the log resource for incidents.")

# The known lines of the log: "ERROR" every 1000th line, everything else "INFO".
LOG = "".join(
    f"{i:06d} {'ERROR disk full on node' if i % 1000 == 0 else 'INFO request served in'} {i % 97} ms\n"
    for i in range(1, 30001)
)
# 600,000 bytes of 1-, 2-, 3- and 4-byte characters.
MULTIBYTE = "aé€😀" * 60000
PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bytes(range(256)) * 4


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return f"Echo: {text}"


@server.tool(description="Return 300,000 bytes of multi-byte text.")
def big_text() -> str:
    return "€" * 100000


class Bulk(BaseModel):
    data: str


@server.tool(description="Return structured content larger than 204,800 bytes.")
def big_structured() -> Bulk:
    return Bulk(data="x" * 250000)


@server.tool(description="Return a small PNG image.")
def picture() -> Image:
    return Image(data=PNG, format="png")


@server.resource("file:///logs/app.log", name="app.log", description="The application log", mime_type="text/plain")
def app_log() -> str:
    return LOG


@server.resource("data://multibyte", name="multibyte", mime_type="text/plain")
def multibyte() -> str:
    return MULTIBYTE


@server.resource("data://utf8-blob", name="utf8-blob", mime_type="application/octet-stream")
def utf8_blob() -> bytes:
    return ("plain text in a blob: ç € 😀\n" * 3).encode()


@server.resource("data://chart.png", name="chart", mime_type="image/png")
def chart() -> bytes:
    return PNG


@server.resource(
    "data://for-user", name="for-user", mime_type="text/plain", annotations=Annotations(audience=["user"])
)
def for_user() -> str:
    return "only for the person"


@server.resource("greeting://{name}/hello", name="greeting", description="A greeting", mime_type="text/plain")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


@server.prompt(description="Ask and answer about a topic.")
def two_step(topic: str) -> list:
    return [UserMessage(f"Tell me about {topic}."), AssistantMessage(f"{topic} is a fine topic.")]


@server.prompt(description="Show a picture.")
def picture_prompt() -> list:
    return ["Look at this:", Image(data=PNG, format="png")]


@server.prompt(description="Summarise a pull request.")
def summarize_pr(repo: str, number: str, style: str = "short") -> str:
    return f"Summarise pull request {number} of {repo} in a {style} style."


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
