"""The Python SDK side of bench/mcp_serve.sh: the same `add` tool on MCPServer (mcp 2.3.0),
stateless Streamable HTTP with JSON replies, on 127.0.0.1:PORT/mcp."""
import sys

from mcp.server import MCPServer

server = MCPServer("bench")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), stateless_http=True, json_response=True)
